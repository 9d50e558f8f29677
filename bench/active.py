"""Active allocation against uniform allocation on planted truth: expert comparisons for the same rank-set size.

Vectorised studies (`stats.active.active_studies`): 8 candidates (evenly spaced over 3 logits,
or three close leaders and the rest 0.4 logits apart), 40 round-robin tournaments (1,120
comparisons), an LLM panel of three judges in both presented orders. Per cell, the uniform
design draws n_u expert comparisons at random (without replacement) and the active design
draws f x n_u in 10 batches, each weighted by the residual model fitted on the verdicts drawn
before it and steered towards candidates whose rank-sets overlap
(`stats.active.staged_draws`, 15% uniform floor); both are estimated by the
same estimator (`stats.active.active_estimate`, Des Raj + control variate). `f*` is the
share of n_u at which active allocation reaches uniform allocation's mean rank-set size
(linear interpolation between the f measured; "> 1" when it never does). Today's PPR
(`stats.ppr.ppr_estimate` on the uniform draws) is shown for reference.

    .venv/bin/python bench/active.py [studies] [--quick] [--held-out] [--chatzi]

--quick: 60 studies, alpha 0.1 only (about a minute). --held-out: the worlds on seeds 900+
instead of 100+ (the floor and the steering were tuned there, never on the reported seeds).
Rank-sets: step-down max-t (2,000 draws), as the report's `active` section gives them by
default; --chatzi: the chi-square ellipsoid (the table before max-t was the report's default).

The numbers measured are in docs/statistics.md ("Active allocation").
"""

from __future__ import annotations

import sys
import time

import numpy as np

from centaur_tui.stats import active, ppr, ppr_panel

LEADERS = (1.5, 1.4, 1.3, -0.2, -0.6, -1.0, -1.4, -1.8)
"""Three close leaders, the rest 0.4 logits apart: where overlap steering has somewhere to steer."""
WORLDS: dict[str, dict[str, object]] = {
    "noisy experts, temperature-0 judges": {"expert_scale": 1.0},
    "noisy experts, sampling judges": {"expert_scale": 1.0, "deterministic": False},
    "consistent experts, temperature-0 judges": {"expert_scale": 3.0},
    "consistent experts, sampling judges": {"expert_scale": 3.0, "deterministic": False},
    "close leaders, noisy experts, temperature-0 judges": {"expert_scale": 1.0, "qualities": LEADERS},
    "close leaders, noisy experts, sampling judges": {
        "expert_scale": 1.0,
        "deterministic": False,
        "qualities": LEADERS,
    },
    "close leaders, consistent experts, temperature-0 judges": {"expert_scale": 3.0, "qualities": LEADERS},
    "close leaders, consistent experts, sampling judges": {
        "expert_scale": 3.0,
        "deterministic": False,
        "qualities": LEADERS,
    },
}
FRACTIONS = (0.7, 0.8, 0.9, 1.0)


METHOD = "maxt"
"""The rank-sets the report's `active` section gives by default (`--ppr-method`); `--chatzi` for the ellipsoid."""


def sets(theta: np.ndarray, sigma: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    if METHOD == "maxt":
        return ppr_panel.rank_sets_maxt(theta, sigma, alpha, draws=2000)
    return ppr.rank_sets(theta, sigma, alpha)


def cell(st: active.ActiveStudies, n: int, draw: str, alpha: float, seed: int) -> tuple[float, float]:
    """(coverage, mean rank-set size) of one design at n expert comparisons."""
    rng = np.random.default_rng(seed)
    if draw == "uniform":
        idx, p = active.successive_draws(np.ones_like(st.yhat), n, rng)
    else:
        idx, p = active.staged_draws(st.yhat, st.y, n, 10, rng, pairs=(st.a, st.b, st.k))
    est = active.active_estimate(st.a, st.b, st.k, st.yhat, idx, p, np.take_along_axis(st.y, idx, -1))
    low, high = sets(est.theta, est.sigma, alpha)
    truth = ppr.ranks_of(st.theta)
    return float(ppr.covers(low, high, truth).mean()), float(ppr.set_sizes(low, high).mean())


def today(st: active.ActiveStudies, n: int, alpha: float, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    idx, _ = active.successive_draws(np.ones_like(st.yhat), n, rng)
    labeled = np.zeros(st.yhat.shape, dtype=bool)
    np.put_along_axis(labeled, idx, True, -1)
    est = ppr.ppr_estimate(st.a, st.b, st.k, st.yhat, st.y, labeled)
    low, high = sets(est.theta, est.sigma, alpha)
    return float(ppr.covers(low, high, ppr.ranks_of(st.theta)).mean()), float(ppr.set_sizes(low, high).mean())


def f_star(target: float, sizes: list[float]) -> str:
    """The fraction at which the active sizes (decreasing in f) reach the target, interpolated."""
    for (f0, s0), (f1, s1) in zip(
        zip(FRACTIONS, sizes, strict=False), zip(FRACTIONS[1:], sizes[1:], strict=False), strict=False
    ):
        if s0 >= target >= s1:
            return f"{f0 + (f1 - f0) * (s0 - target) / (s0 - s1 or 1.0):.2f}"
    return "< 0.70" if sizes[0] <= target else "> 1"


def main(studies: int = 500, quick: bool = False, held_out: bool = False) -> None:
    started = time.perf_counter()
    print(f"{studies} studies per cell; {METHOD} rank-sets; coverage (mean rank-set size of 8)")
    head = ["world", "alpha", "n_u", "uniform", "PPR today"] + [f"active {f:.1f}n" for f in FRACTIONS] + ["f*"]
    print(" | ".join(head))
    for w, (name, params) in enumerate(WORLDS.items()):
        st = active.active_studies(studies, spread=3.0, seed=(900 if held_out else 100) + w, **params)  # type: ignore[arg-type]
        for alpha in (0.1,) if quick else (0.05, 0.1):
            for n in (200, 400):
                cov_u, size_u = cell(st, n, "uniform", alpha, n)
                cov_t, size_t = today(st, n, alpha, n)
                act = [cell(st, round(f * n), "active", alpha, n + 1) for f in FRACTIONS]
                cells = [f"{c:.3f} ({s:.2f})" for c, s in act]
                print(
                    " | ".join(
                        [
                            name,
                            f"{alpha}",
                            f"{n}",
                            f"{cov_u:.3f} ({size_u:.2f})",
                            f"{cov_t:.3f} ({size_t:.2f})",
                            *cells,
                            f_star(size_u, [s for _, s in act]),
                        ]
                    ),
                    flush=True,
                )
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    if "--chatzi" in sys.argv:
        METHOD = "chatzi"
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    main(int(args[0]) if args else 60 if quick else 500, quick, "--held-out" in sys.argv)
