"""Provides the alternative annotator test (Calderon, Reichart and Dror, 2025): could an LLM judge replace an expert?

The procedure of the paper ("The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs", ACL 2025) and of its reference
implementation, for nominal verdicts:

1. Keep the items the LLM judged and at least `min_humans_per_item` humans judged.
2. For each human h (leave-one-out): on the kept items h judged, the alignment of an
   annotation with the *other* humans is the share of them it equals (accuracy). Per item,
   W_f = 1 if the LLM's alignment >= h's, W_h = 1 if h's >= the LLM's (both 1 on a tie).
3. One-sided one-sample t-test of d = W_h - W_f against epsilon:
   H0: rho_h - rho_f >= epsilon (the human is better by at least the cost-benefit margin),
   H1: rho_h - rho_f < epsilon (the LLM is as good, up to epsilon). Humans with fewer than
   `min_items` items are not tested (the t-test's normality needs about 30).
4. Benjamini-Yekutieli over the tested humans at level q controls the false discovery rate
   under any dependence (the tests share items and the LLM).
5. Winning rate = share of tested humans whose H0 is rejected; the LLM passes when it is at
   least 0.5. Advantage probability rho = mean over humans of rho_f = mean W_f.

Epsilon: the paper's rule of thumb is 0.2 for experts (reliable, expensive), 0.15 for skilled
annotators, 0.1 for crowd workers; this program judges against domain experts, so 0.2 is the
default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

EPSILON = 0.2
"""Cost-benefit margin for expert annotators (the paper's recommendation)."""
FDR_Q = 0.05
MIN_ITEMS = 30
"""Fewest items per tested human (the paper's reference implementation skips humans below it)."""
MIN_HUMANS = 3
"""Fewest tested humans for a winning rate (the paper recommends at least three annotators)."""


def benjamini_yekutieli(p_values: np.ndarray, q: float = FDR_Q) -> np.ndarray:
    """Benjamini-Yekutieli step-up procedure: which hypotheses are rejected at FDR level q.

    With m p-values sorted ascending, reject the k smallest where k is the largest i with
    p_(i) <= i / m * q / H_m, and H_m = 1 + 1/2 + ... + 1/m.

    Args:
        p_values: One p-value per hypothesis (NaN is never rejected).
        q: False discovery rate.

    Returns:
        Boolean array, True where rejected.
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    rejected = np.zeros(m, dtype=bool)
    if m == 0:
        return rejected
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    harmonic = float(np.sum(1.0 / np.arange(1, m + 1)))
    thresholds = np.arange(1, m + 1) / m * q / harmonic
    below = np.flatnonzero(p[order] <= thresholds)
    if below.size:
        rejected[order[: below[-1] + 1]] = True
    return rejected


def one_sided_t_p(d: np.ndarray, epsilon: float) -> float:
    """p-value of H0: mean(d) >= epsilon against H1: mean(d) < epsilon (one-sample t-test).

    Constant d (no variance) has no t statistic; its mean then decides: p = 0 when it is
    below epsilon, else 1.
    """
    d = np.asarray(d, dtype=float)
    n = len(d)
    if n < 2:
        return math.nan
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return 0.0 if mean < epsilon else 1.0
    t = (mean - epsilon) / (sd / math.sqrt(n))
    return float(stats.t.cdf(t, df=n - 1))


@dataclass
class AltTestResult:
    """The alt-test of one LLM judge against a panel of humans.

    Attributes:
        winning_rate: Share of tested humans the LLM beats (NaN when fewer than `MIN_HUMANS` are tested).
        advantage_probability: Mean over tested humans of rho_f (NaN when none is tested).
        passed: winning_rate >= 0.5 (None when the winning rate is NaN).
        items: Items kept (LLM verdict and enough human verdicts).
        humans: Per human: name, n, rho_f, rho_h, p, rejected, reason.
        reason: Why the winning rate is NaN, if it is.
    """

    winning_rate: float
    advantage_probability: float
    passed: bool | None
    items: int
    humans: list[dict[str, object]] = field(default_factory=list)
    reason: str | None = None


def alt_test(
    humans: np.ndarray,
    llm: np.ndarray,
    names: list[str],
    *,
    epsilon: float = EPSILON,
    q: float = FDR_Q,
    min_items: int = MIN_ITEMS,
    min_humans_per_item: int = 2,
    min_humans: int = MIN_HUMANS,
) -> AltTestResult:
    """Run the alternative annotator test with accuracy alignment on nominal codes.

    Args:
        humans: Humans x items codes (NaN = not judged).
        llm: The LLM judge's code per item (NaN = not judged).
        names: One name per human row.
        epsilon: Cost-benefit margin (0.2 for experts).
        q: FDR level of the Benjamini-Yekutieli procedure.
        min_items: Fewest kept items for a human to be tested.
        min_humans_per_item: Fewest human verdicts on an item for it to be kept (2 leaves at
            least one other human after leaving one out; 3 leaves a majority of two).
        min_humans: Fewest tested humans for a winning rate.

    Returns:
        The result; never raises on degenerate data.
    """
    min_humans_per_item = max(2, min_humans_per_item)  # leaving one out must leave someone
    h = np.asarray(humans, dtype=float)
    f = np.asarray(llm, dtype=float)
    rated = np.isfinite(h)
    keep = np.isfinite(f) & (rated.sum(axis=0) >= min_humans_per_item)
    h, f, rated = h[:, keep], f[keep], rated[:, keep]
    n_items = int(keep.sum())
    # Per item and code: how many humans gave it; leaving human i out subtracts its own vote.
    counts = np.stack([(h == c).sum(axis=0) for c in (0, 1, 2)])  # (3, items)
    total = rated.sum(axis=0)
    rows: list[dict[str, object]] = []
    p_values: list[float] = []
    for i, name in enumerate(names):
        mine = rated[i]
        n = int(mine.sum())
        if n < min_items:
            rows.append(
                {
                    "expert": name,
                    "n": n,
                    "rho_f": math.nan,
                    "rho_h": math.nan,
                    "p": math.nan,
                    "rejected": False,
                    "tested": False,
                    "reason": f"fewer than {min_items} comparisons with the LLM judge and >= "
                    f"{min_humans_per_item} experts (n = {n})",
                }
            )
            continue
        own = h[i, mine].astype(int)
        others = total[mine] - 1
        cols = np.flatnonzero(mine)
        human_score = (counts[own, cols] - 1) / others
        llm_code = f[mine].astype(int)
        llm_score = (counts[llm_code, cols] - (llm_code == own)) / others
        w_f = (llm_score >= human_score).astype(float)
        w_h = (human_score >= llm_score).astype(float)
        p = one_sided_t_p(w_h - w_f, epsilon)
        rows.append(
            {
                "expert": name,
                "n": n,
                "rho_f": float(w_f.mean()),
                "rho_h": float(w_h.mean()),
                "p": p,
                "rejected": False,
                "tested": True,
                "reason": None,
            }
        )
        p_values.append(p)
    tested = [r for r in rows if r["tested"]]
    for r, rej in zip(tested, benjamini_yekutieli(np.array(p_values), q), strict=True):
        r["rejected"] = bool(rej)
    advantage = float(np.mean([r["rho_f"] for r in tested])) if tested else math.nan
    if len(tested) < min_humans:
        reason = (
            f"needs at least {min_humans} experts with >= {min_items} comparisons each that the LLM judge and "
            f">= {min_humans_per_item} experts judged (found {len(tested)})"
        )
        return AltTestResult(math.nan, advantage, None, n_items, rows, reason)
    rate = sum(bool(r["rejected"]) for r in tested) / len(tested)
    return AltTestResult(rate, advantage, rate >= 0.5, n_items, rows, None)
