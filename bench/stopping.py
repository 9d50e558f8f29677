"""The stopping rule on planted truth: false "separated" under repeated looks, and how good "about N more" is.

Each simulated study is one pair of candidates judged by experts one comparison at a time
(+1, -1 or a tie, 20% ties). Two experiments:

1. No true difference, 30 looks (after 10, 20, ..., 300 comparisons): the share of studies
   ever called "separated" by the confidence sequence (`stats.stopping`), beside a naive
   fixed-n two-sided z-test repeated at every look (the daily peek the rule replaces). And
   with the true difference on the margin, the share ever called "equivalent".
2. A true difference d: looks every 5 comparisons until the sequence separates the pair at
   n*; at every look where the study is at least halfway by its own estimate (predicted
   "more" <= comparisons so far), the predicted total n + more against n*.

    .venv/bin/python bench/stopping.py [studies]

Measured (2,000 studies, alpha 0.05, margin 0.1, 62 s on the shared 2-core machine at load 13):

    no true difference, 30 looks: false 'separated' 0.0055 (CS) vs 0.3180 (naive z-test)
    difference = margin (0.1), 30 looks: false 'equivalent' 0.0000 (CS); naive TOST 0.0820
    pooled over tasks at +0.6 / -0.6 (60 each), random draws without replacement, 30 looks: false 'separated' 0.0000
    pooled over five tasks at -0.8 ... +0.8 (40 each): false 'separated' 0.0020
    predicted / needed comparisons (at looks >= halfway by the rule's own estimate):
      d = 0.20: median 1.06, p10 0.64, p90 1.35, within 25%: 0.66 (n = 36,912 predictions; n* median 210)
      d = 0.30: median 1.03, p10 0.66, p90 1.31, within 25%: 0.71 (n = 17,346 predictions; n* median 95)
      d = 0.50: median 0.97, p10 0.69, p90 1.23, within 25%: 0.77 (n = 7,625 predictions; n* median 40)
    a prediction that knows d (the n where the boundary's half-width reaches |d|), / needed:
      d = 0.20: n = 237, median 1.13, p10 0.58, p90 2.96, within 25%: 0.33
      d = 0.30: n = 103, median 1.08, p10 0.57, p90 2.29, within 25%: 0.38
      d = 0.50: n = 40, median 1.00, p10 0.62, p90 1.60, within 25%: 0.48
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy import stats as sps

from centaur_tui.stats.stopping import half_width, pair_status

ALPHA = 0.05
MARGIN = 0.1
TIES = 0.2


def draws(rng: np.random.Generator, d: float, size: tuple[int, int]) -> np.ndarray:
    """Observations with mean d: +1 with p, -1 with q, 0 with TIES, p - q = d."""
    p = (1 - TIES + d) / 2
    u = rng.random(size)
    return np.where(u < p, 1.0, np.where(u < 1 - TIES, -1.0, 0.0))


def null_looks(studies: int, seed: int) -> tuple[float, float, float, float]:
    rng = np.random.default_rng(seed)
    looks = np.arange(10, 301, 10)
    z = np.cumsum(draws(rng, 0.0, (studies, looks[-1])), axis=1)
    h = np.array([half_width(int(n), ALPHA) for n in looks])
    mean = z[:, looks - 1] / looks
    cs_sep = (np.abs(mean) > h).any(axis=1).mean()
    obs = draws(np.random.default_rng(seed + 1), 0.0, (studies, looks[-1]))
    csum, csq = np.cumsum(obs, axis=1), np.cumsum(obs**2, axis=1)
    m = csum[:, looks - 1] / looks
    sd = np.sqrt(np.maximum(csq[:, looks - 1] / looks - m**2, 1e-12) * looks / (looks - 1))
    crit = sps.norm.ppf(1 - ALPHA / 2)
    naive = (np.abs(m) / (sd / np.sqrt(looks)) > crit).any(axis=1).mean()
    # With the difference on the margin, "equivalent" is a false claim: the CS vs a naive TOST per look.
    eq = np.cumsum(draws(np.random.default_rng(seed + 2), MARGIN, (studies, looks[-1])), axis=1)
    me = eq[:, looks - 1] / looks
    cs_eq = ((np.abs(me) + h) < MARGIN).any(axis=1).mean()
    one = sps.norm.ppf(1 - ALPHA)
    obs2 = draws(np.random.default_rng(seed + 2), MARGIN, (studies, looks[-1]))
    s2 = np.sqrt(np.maximum(np.cumsum(obs2**2, axis=1)[:, looks - 1] / looks - me**2, 1e-12))
    se = s2 / np.sqrt(looks)
    tost = ((me - one * se > -MARGIN) & (me + one * se < MARGIN)).any(axis=1).mean()
    return float(cs_sep), float(naive), float(cs_eq), float(tost)


def pooled_tasks(studies: int, seed: int, task_d: tuple[float, ...], per_task: int) -> float:
    """Tasks whose differences average 0, pooled, drawn at random without replacement: share ever 'separated'.

    Each study holds per_task comparisons of the pair in each task (its difference task_d[t]),
    shuffled (uniform-random assignment draws without replacement), looked at 30 times up to
    every comparison: the pooled rows of `centaur status`.
    """
    rng = np.random.default_rng(seed)
    pool = np.concatenate([draws(rng, d, (studies, per_task)) for d in task_d], axis=1)
    pool = np.take_along_axis(pool, np.argsort(rng.random(pool.shape), axis=1), axis=1)
    total = pool.shape[1]
    looks = np.unique(np.linspace(total / 30, total, 30).round().astype(int))
    h = np.array([half_width(int(n), ALPHA) for n in looks])
    mean = np.cumsum(pool, axis=1)[:, looks - 1] / looks
    return float((np.abs(mean) > h).any(axis=1).mean())


def prediction(studies: int, d: float, seed: int) -> tuple[list[float], list[int]]:
    rng = np.random.default_rng(seed)
    ratios: list[float] = []
    needed: list[int] = []
    for _ in range(studies):
        obs: list[float] = []
        guesses: list[int] = []
        while True:
            obs.extend(draws(rng, d, (1, 5))[0].tolist())
            st = pair_status(obs, alpha=ALPHA, margin=MARGIN)
            if st.verdict != "continue":
                break
            if st.more is not None and st.goal == "separated" and st.more <= st.n:
                guesses.append(st.n + st.more)
        if st.verdict == "separated":
            needed.append(st.n)
            ratios.extend(g / st.n for g in guesses)
    return ratios, needed


def oracle_n(d: float) -> int:
    """The n at which the boundary's half-width falls to the true |d|: the prediction of one who knew d."""
    n = 1
    while half_width(n, ALPHA) >= abs(d):
        n += 1
    return n


def main(studies: int = 2000) -> None:
    started = time.perf_counter()
    cs_sep, naive, cs_eq, tost = null_looks(studies, 1)
    print(f"{studies} studies, alpha {ALPHA}, margin {MARGIN}, ties {TIES:.0%}")
    print(f"no true difference, 30 looks: false 'separated' {cs_sep:.4f} (CS) vs {naive:.4f} (naive z-test)")
    print(f"difference = margin ({MARGIN}), 30 looks: false 'equivalent' {cs_eq:.4f} (CS); naive TOST {tost:.4f}")
    for task_d, per_task in (((0.6, -0.6), 60), ((-0.8, -0.4, 0.0, 0.4, 0.8), 40)):
        rate = pooled_tasks(studies, 3, task_d, per_task)
        print(
            f"pooled over tasks with differences {task_d} ({per_task} comparisons each; pooled 0), drawn at "
            f"random without replacement, 30 looks: false 'separated' {rate:.4f}"
        )
    print("predicted / needed comparisons (at looks >= halfway by the rule's own estimate):")
    for i, d in enumerate((0.2, 0.3, 0.5)):
        ratios, needed = prediction(studies, d, 10 + i)
        r = np.array(ratios)
        within = float(np.mean(np.abs(r - 1) <= 0.25)) if len(r) else math.nan
        print(
            f"  d = {d:.2f}: median {np.median(r):.2f}, p10 {np.quantile(r, 0.1):.2f}, p90 {np.quantile(r, 0.9):.2f}, "
            f"within 25%: {within:.2f} (n = {len(r):,} predictions; n* median {int(np.median(needed))}, "
            f"{len(needed)} of {studies} studies separated)"
        )
        # The same question asked of a prediction that knows d: how much of the spread is the study's own luck.
        o = oracle_n(d) / np.array(needed, dtype=float)
        close = float(np.mean(np.abs(o - 1) <= 0.25))
        print(
            f"           knowing d: n = {oracle_n(d)}, / needed median {np.median(o):.2f}, "
            f"p10 {np.quantile(o, 0.1):.2f}, p90 {np.quantile(o, 0.9):.2f}, within 25%: {close:.2f}"
        )
    print(f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
