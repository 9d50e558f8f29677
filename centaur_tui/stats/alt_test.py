"""Provides the alternative annotator test (Calderon, Reichart and Dror, 2025): could an LLM judge replace an expert?

The procedure of the paper ("The Alternative Annotator Test for LLM-as-a-Judge: How to
Statistically Justify Replacing Human Annotators with LLMs", ACL 2025) and of its reference
implementation, for categorical labels (any number of declared categories, accuracy
alignment) and for numeric annotations such as rubric scores (negative RMSE alignment):

1. Keep the items the LLM judged and at least `min_humans_per_item` humans judged.
2. For each human h (leave-one-out): on the kept items h judged, the alignment of an
   annotation with the *other* humans is the share of them it equals (accuracy), or minus
   the root mean squared difference from their annotations (negative RMSE; over every
   coordinate of a vector annotation, e.g. both options' rubric averages). Per item,
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
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from centaur_tui.domain.report_options import REPORT_DEFAULTS

EPSILON = REPORT_DEFAULTS.alt_epsilon
"""Cost-benefit margin for expert annotators (the paper's recommendation)."""
FDR_Q = 0.05
MIN_ITEMS = 30
"""Fewest items per tested human (the paper's reference implementation skips humans below it)."""
MIN_HUMANS = 3
"""Fewest tested humans for a winning rate (the paper recommends at least three annotators)."""
MIN_HUMANS_PER_ITEM = 3
"""Fewest human annotations on an item (the paper allows 2; 3 leaves two to agree with after leaving one out)."""
METRICS = ("accuracy", "rmse")


class AltTestLabelError(ValueError):
    """An annotation outside the declared label set (never read as a tie or as missing)."""


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


def encode_labels(values: np.ndarray, labels: Sequence[object], who: Sequence[str] | str) -> np.ndarray:
    """Codes 0..K-1 of categorical annotations in a declared label set; None/NaN = not annotated.

    Args:
        values: Annotations (any shape; rows are annotators when `who` is a list).
        labels: The declared categories, in code order.
        who: Annotator name per row (or one name), for the error message.

    Raises:
        AltTestLabelError: an annotation that is not one of `labels`.
    """
    arr = np.asarray(values, dtype=object)
    index = {label: i for i, label in enumerate(labels)}
    if len(index) != len(labels):
        raise AltTestLabelError(f"declared labels repeat a category: {list(labels)!r}")
    out = np.full(arr.shape, np.nan)
    for pos, v in np.ndenumerate(arr):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if v not in index:
            name = who if isinstance(who, str) else who[pos[0]]
            raise AltTestLabelError(
                f"{name}: label {v!r} (item {pos[-1]}) is not one of the declared labels {list(labels)!r}"
            )
        out[pos] = index[v]
    return out


def _check_codes(codes: np.ndarray, categories: int, who: str) -> None:
    finite = codes[np.isfinite(codes)]
    bad = finite[(finite != np.round(finite)) | (finite < 0) | (finite >= categories)]
    if bad.size:
        raise AltTestLabelError(
            f"{who}: code {bad[0]!r} is outside the {categories} declared categories (0..{categories - 1})"
        )


def _accuracy_scores(
    h: np.ndarray, f: np.ndarray, rated: np.ndarray, i: int, categories: int
) -> tuple[np.ndarray, ...]:
    """Per item human i rated: (h_i's alignment, the LLM's alignment) with the other humans (share equal)."""
    counts = np.stack([(h == c).sum(axis=0) for c in range(categories)])  # (K, items)
    total = rated.sum(axis=0)
    mine = rated[i]
    cols = np.flatnonzero(mine)
    own = h[i, mine].astype(int)
    others = total[mine] - 1
    llm_code = f[mine].astype(int)
    human_score = (counts[own, cols] - 1) / others
    llm_score = (counts[llm_code, cols] - (llm_code == own)) / others
    return human_score, llm_score


def _rmse_scores(h: np.ndarray, f: np.ndarray, rated: np.ndarray, i: int) -> tuple[np.ndarray, ...]:
    """Per item human i rated: minus the RMSE of h_i's and of the LLM's annotation from the other humans'."""
    mine = rated[i]
    others = rated[:, mine].copy()
    others[i] = False
    hv = np.nan_to_num(h[:, mine])  # (H, items, D)
    n_others = others.sum(axis=0)

    def neg_rmse(x: np.ndarray) -> np.ndarray:
        sq = ((x[None] - hv) ** 2).mean(axis=-1)  # (H, items)
        return -np.sqrt((sq * others).sum(axis=0) / n_others)

    return neg_rmse(hv[i]), neg_rmse(np.nan_to_num(f[mine]))


def alt_test(
    humans: np.ndarray,
    llm: np.ndarray,
    names: list[str],
    *,
    metric: str = "accuracy",
    categories: int = 3,
    epsilon: float = EPSILON,
    q: float = FDR_Q,
    min_items: int = MIN_ITEMS,
    min_humans_per_item: int = 2,
    min_humans: int = MIN_HUMANS,
) -> AltTestResult:
    """Run the alternative annotator test of one LLM judge against a panel of humans.

    Args:
        humans: For "accuracy", humans x items codes in 0..categories-1 (NaN = not judged;
            `encode_labels` turns declared labels into codes). For "rmse", humans x items
            numbers, or humans x items x D vectors (an item is annotated when all D are finite).
        llm: The LLM judge's annotation per item (items, or items x D), NaN = not judged.
        names: One name per human row.
        metric: "accuracy" (categorical labels) or "rmse" (negative RMSE, numeric annotations).
        categories: K, the number of declared categories ("accuracy" only).
        epsilon: Cost-benefit margin (0.2 for experts).
        q: FDR level of the Benjamini-Yekutieli procedure.
        min_items: Fewest kept items for a human to be tested.
        min_humans_per_item: Fewest human annotations on an item for it to be kept (2 leaves at
            least one other human after leaving one out; 3 leaves a majority of two).
        min_humans: Fewest tested humans for a winning rate.

    Returns:
        The result; never raises on degenerate data.

    Raises:
        AltTestLabelError: a code outside the declared categories, or an unknown metric.
    """
    if metric not in METRICS:
        raise AltTestLabelError(f"unknown alignment metric {metric!r} (known: {', '.join(METRICS)})")
    min_humans_per_item = max(2, min_humans_per_item)  # leaving one out must leave someone
    h = np.asarray(humans, dtype=float)
    f = np.asarray(llm, dtype=float)
    if metric == "accuracy":
        if categories < 2:
            raise AltTestLabelError(f"a categorical alt-test needs at least 2 categories, got {categories}")
        for i, name in enumerate(names):
            _check_codes(h[i], categories, name)
        _check_codes(f, categories, "the LLM judge")
        rated, f_ok = np.isfinite(h), np.isfinite(f)
    else:
        if h.ndim == 2:
            h, f = h[..., None], f[..., None]
        rated, f_ok = np.isfinite(h).all(axis=-1), np.isfinite(f).all(axis=-1)
    keep = f_ok & (rated.sum(axis=0) >= min_humans_per_item)
    h, f, rated = h[:, keep], f[keep], rated[:, keep]
    n_items = int(keep.sum())
    rows: list[dict[str, object]] = []
    p_values: list[float] = []
    for i, name in enumerate(names):
        n = int(rated[i].sum())
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
        if metric == "accuracy":
            human_score, llm_score = _accuracy_scores(h, f, rated, i, categories)
        else:
            human_score, llm_score = _rmse_scores(h, f, rated, i)
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
