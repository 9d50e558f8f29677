"""Provides agreement between judges on a judges x comparisons matrix of verdicts, with bootstrap intervals.

Verdicts are the canonical codes of reliability.py (0 = candidate_a wins, 1 = candidate_b
wins, 2 = tie; NaN = not judged). Every statistic here is a function of per-comparison sums,
so one (B x comparisons) matrix of resampling weights (`common.bootstrap_weights`) gives all
bootstrap replicates at once: replicate b is the statistic computed on the comparisons drawn
in resample b. Passing the same weights to every statistic makes their intervals paired.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from centaur_tui.stats.common import interval, percentile_interval
from centaur_tui.stats.reliability import alpha_nominal

CODES = (0, 1, 2)
CHANCE_WITH_TIES = 1.0 / 3.0
"""Agreement of two judges choosing uniformly among A wins, B wins, tie."""
CHANCE_DECISIVE = 0.5
"""Agreement of two judges choosing uniformly between A wins and B wins."""
KAPPA_MIN_N = 5
"""Fewest comparisons two judges share for a Cohen's kappa."""


def code_counts(matrix: np.ndarray, rows: Sequence[int]) -> np.ndarray:
    """How many of the given judges gave each code, per comparison: a (3, comparisons) array."""
    sub = matrix[list(rows)] if len(rows) else np.full((0, matrix.shape[1]), np.nan)
    return np.stack([(sub == c).sum(axis=0) for c in CODES]).astype(float)


def _ratio(num: np.ndarray, den: np.ndarray, weights: np.ndarray | None, ci: float) -> tuple[float, float, float]:
    """sum(num) / sum(den) with a bootstrap interval from the weights (NaN where the denominator is 0)."""
    total = float(den.sum())
    point = float(num.sum()) / total if total else math.nan
    if weights is None or weights.shape[0] == 0:
        return point, math.nan, math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (weights @ num) / (weights @ den)
    boot[~np.isfinite(boot)] = np.nan
    low, high = interval(boot, ci)
    return point, low, high


def pair_counts(a: np.ndarray, b: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Judge pairs and agreeing judge pairs per comparison, with and without ties.

    Args:
        a: (3, comparisons) code counts of the first group.
        b: Code counts of the second group, or None for pairs within the first group.

    Returns:
        pairs, agree (all verdicts), decisive_pairs, decisive_agree (both verdicts decisive).
    """
    if b is None:
        m = a.sum(axis=0)
        d = a[0] + a[1]
        return {
            "pairs": m * (m - 1) / 2,
            "agree": (a * (a - 1) / 2).sum(axis=0),
            "decisive_pairs": d * (d - 1) / 2,
            "decisive_agree": (a[:2] * (a[:2] - 1) / 2).sum(axis=0),
        }
    return {
        "pairs": a.sum(axis=0) * b.sum(axis=0),
        "agree": (a * b).sum(axis=0),
        "decisive_pairs": (a[0] + a[1]) * (b[0] + b[1]),
        "decisive_agree": (a[:2] * b[:2]).sum(axis=0),
    }


def block_agreement(
    matrix: np.ndarray,
    group_a: Sequence[int],
    group_b: Sequence[int] | None,
    weights: np.ndarray | None,
    ci: float = 0.95,
) -> dict[str, object]:
    """Raw agreement of the judge pairs of a block, pooled over comparisons, with and without ties.

    A block is the pairs within one group of judges (group_b None) or across two groups.
    With ties: share of judge pairs giving the same code (chance 1/3). Without ties: among
    pairs where both verdicts are decisive, the share naming the same winner (chance 1/2).

    Returns:
        units (comparisons with a pair), pairs, agreement, ci_low, ci_high, chance,
        decisive_pairs, decisive_agreement, decisive_ci_low, decisive_ci_high, decisive_chance, reason.
    """
    c = pair_counts(code_counts(matrix, group_a), None if group_b is None else code_counts(matrix, group_b))
    agree, low, high = _ratio(c["agree"], c["pairs"], weights, ci)
    d_agree, d_low, d_high = _ratio(c["decisive_agree"], c["decisive_pairs"], weights, ci)
    pairs = int(c["pairs"].sum())
    reason = None if pairs else "no comparison judged by a pair of judges of this block"
    if pairs and not int(c["decisive_pairs"].sum()):
        reason = "no pair of decisive verdicts (every pair holds a tie)"
    return {
        "units": int((c["pairs"] > 0).sum()),
        "pairs": pairs,
        "agreement": agree,
        "ci_low": low,
        "ci_high": high,
        "chance": CHANCE_WITH_TIES,
        "decisive_pairs": int(c["decisive_pairs"].sum()),
        "decisive_agreement": d_agree,
        "decisive_ci_low": d_low,
        "decisive_ci_high": d_high,
        "decisive_chance": CHANCE_DECISIVE,
        "reason": reason,
    }


def kappa_from_confusion(confusion: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (..., 9) flattened 3 x 3 confusion counts; NaN without data or expected agreement 1."""
    c = np.asarray(confusion, dtype=float).reshape(*confusion.shape[:-1], 3, 3)
    n = c.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = c / n[..., None, None]
        po = np.trace(p, axis1=-2, axis2=-1)
        pe = (p.sum(axis=-1) * p.sum(axis=-2)).sum(axis=-1)
        kappa = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (1.0 - pe > 1e-12), kappa, np.nan)


def kappa_table(
    matrix: np.ndarray,
    names: Sequence[str],
    kinds: Sequence[str],
    weights: np.ndarray | None,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Cohen's kappa (three categories: A wins, B wins, tie) and raw agreement for every pair of judges.

    Only pairs that share at least one comparison are listed. Kappa needs `KAPPA_MIN_N`
    shared comparisons and some variation in the two judges' verdicts.

    Returns:
        Columns judge_1, judge_2, kind_1, kind_2, block (expert-expert, expert-LLM, LLM-LLM),
        n, agreement, kappa, ci_low, ci_high, reason.
    """
    from scipy import sparse

    rows = []
    label = {("expert", "expert"): "expert-expert", ("llm", "llm"): "LLM-LLM"}
    # Only pairs sharing a comparison are visited: with thousands of crowd judges (a Chatbot Arena
    # set: 1,839 judges on 5,000 comparisons, one each) the pairs of all judges took 14 s, the
    # shared ones, found by a sparse product of the "judged" masks, none.
    judged = sparse.csr_matrix(np.isfinite(matrix).astype(np.int32))
    shared = sparse.triu(judged @ judged.T, k=1).tocoo()
    for i, k in sorted(zip(shared.row.tolist(), shared.col.tolist(), strict=True)):
        if True:
            both = np.isfinite(matrix[i]) & np.isfinite(matrix[k])
            n = int(both.sum())
            if n == 0:
                continue
            cell = np.where(both, np.nan_to_num(matrix[i]) * 3 + np.nan_to_num(matrix[k]), -1).astype(int)
            onehot = np.zeros((matrix.shape[1], 9))
            onehot[both, cell[both]] = 1.0
            kappa = float(kappa_from_confusion(onehot.sum(axis=0)))
            low = high = math.nan
            if weights is not None and weights.shape[0]:
                boot = kappa_from_confusion(weights @ onehot)
                boot = np.where((weights[:, both].sum(axis=1) >= KAPPA_MIN_N), boot, np.nan)
                low, high = interval(boot, ci)
            reason = None
            if n < KAPPA_MIN_N:
                kappa, low, high = math.nan, math.nan, math.nan
                reason = f"fewer than {KAPPA_MIN_N} shared comparisons (n = {n})"
            elif math.isnan(kappa):
                reason = "expected agreement is 1 (both judges gave one and the same verdict throughout)"
            rows.append(
                {
                    "judge_1": names[i],
                    "judge_2": names[k],
                    "kind_1": kinds[i],
                    "kind_2": kinds[k],
                    "block": label.get((kinds[i], kinds[k]), "expert-LLM"),
                    "n": n,
                    "agreement": float((matrix[i, both] == matrix[k, both]).mean()),
                    "kappa": kappa,
                    "ci_low": low,
                    "ci_high": high,
                    "reason": reason,
                }
            )
    columns = [
        "judge_1",
        "judge_2",
        "kind_1",
        "kind_2",
        "block",
        "n",
        "agreement",
        "kappa",
        "ci_low",
        "ci_high",
        "reason",
    ]
    return pd.DataFrame(rows, columns=columns)


def coincidences(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each comparison's contribution to Krippendorff's coincidence matrix (nominal, 3 codes).

    o_ck(u) = (n_uc n_uk - [c = k] n_uc) / (m_u - 1) for a comparison with m_u >= 2 verdicts.

    Returns:
        ((comparisons, 9) contributions, zero for m_u < 2; boolean mask of comparisons with m_u >= 2).
    """
    n = code_counts(matrix, range(matrix.shape[0])).T  # (units, 3)
    m = n.sum(axis=1)
    usable = m >= 2
    outer = n[:, :, None] * n[:, None, :] - np.eye(3)[None] * n[:, :, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        o = np.where(usable[:, None, None], outer / np.maximum(m - 1, 1)[:, None, None], 0.0)
    return o.reshape(-1, 9), usable


def alpha_from_coincidence(o: np.ndarray) -> np.ndarray:
    """Nominal alpha from (..., 9) coincidence sums: 1 - (n - 1) sum_{c != k} o_ck / sum_{c != k} n_c n_k."""
    o = np.asarray(o, dtype=float).reshape(*o.shape[:-1], 3, 3)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    off = ~np.eye(3, dtype=bool)
    observed = o[..., off].sum(axis=-1)
    expected = (n_c[..., :, None] * n_c[..., None, :])[..., off].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def group_alpha(
    matrix: np.ndarray, rows: Sequence[int], weights: np.ndarray | None, ci: float = 0.95
) -> dict[str, object]:
    """Krippendorff's nominal alpha of a group of judges with a bootstrap interval.

    The point estimate is the krippendorff package's (as in reliability.py); the replicates
    use the same formula on resampled coincidence sums (`alpha_from_coincidence` equals the
    package on the unresampled data, tested).

    Returns:
        judges, units (comparisons with >= 2 verdicts of the group), excluded_units, ratings,
        alpha, ci_low, ci_high, reason.
    """
    sub = matrix[list(rows)] if len(rows) else np.full((0, matrix.shape[1]), np.nan)
    o, usable = coincidences(sub)
    judged = np.isfinite(sub).any(axis=0)
    result: dict[str, object] = {
        "judges": int(np.isfinite(sub[:, usable]).any(axis=1).sum()) if usable.any() else 0,
        "units": int(usable.sum()),
        "excluded_units": int((judged & ~usable).sum()),
        "ratings": int(np.isfinite(sub[:, usable]).sum()),
    }
    if len(rows) < 2 or not usable.any():
        return {
            **result,
            "alpha": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "reason": "no comparison with verdicts of two or more judges of this group",
        }
    alpha, reason = alpha_nominal(sub[:, usable])
    low = high = math.nan
    if weights is not None and weights.shape[0] and reason is None:
        boot = alpha_from_coincidence(weights @ o)
        lo, hi = percentile_interval(boot, ci)
        low, high = float(lo), float(hi)
    return {**result, "alpha": alpha, "ci_low": low, "ci_high": high, "reason": reason}


def majority(counts: np.ndarray) -> np.ndarray:
    """The code most judges gave, per comparison; -1 when none was given or the top is shared.

    Args:
        counts: (3, comparisons) code counts.
    """
    top = counts.max(axis=0)
    unique = (counts == top).sum(axis=0) == 1
    return np.where((top > 0) & unique, counts.argmax(axis=0), -1)
