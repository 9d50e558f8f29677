"""Provides the stopping rule: anytime-valid confidence sequences on a pair's expert win-rate difference.

Each expert comparison of candidates i and j (in one task and mode) gives one observation
z = +1 (i won), -1 (j won) or 0 (a tie); several experts on one comparison are averaged into
that comparison's one observation, so they are not counted as independent. The mean of z is
the win-rate difference d = P(i beats j) - P(j beats i), in [-1, 1].

The confidence sequence is the two-sided normal-mixture boundary of Howard, Ramdas, McAuliffe
and Sekhon (2021, "Time-uniform, nonparametric, nonasymptotic confidence sequences", eq. (14)
and Proposition 2): observations bounded in [-1, 1] are 1-sub-Gaussian, so after n of them
the intrinsic time is V = n and, for every n at once with probability >= 1 - alpha,

    |S_n - n d| <= sqrt((V + rho) * (log(1 + V / rho) + 2 log(1 / alpha)))

with rho = n_opt / (2 log(1 / alpha) + log(1 + 2 log(1 / alpha))), the mixture tuned to be
tightest near n_opt comparisons (confseq's `TwoSidedNormalMixture::best_rho`). Because the
bound holds uniformly in n, an organiser may look after every judgment without inflating the
chance of a false "separated". Pure standard-library code: the app's process may call it
without loading numpy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

N_OPT = 100
"""Comparisons of one pair at which the boundary is tightest (the mixture's tuning; any value is valid)."""

MAX_COMPARISONS = 10_000_000
"""Beyond this many comparisons of one pair a prediction says "more than" instead of a number."""

Verdict = Literal["separated", "equivalent", "continue"]


def best_rho(v_opt: float, alpha: float) -> float:
    """The mixture's precision rho that makes the two-sided boundary tightest at intrinsic time `v_opt`."""
    if not v_opt > 0 or not 0 < alpha < 1:
        raise ValueError(f"v_opt must be > 0 and alpha in (0, 1) (got {v_opt}, {alpha})")
    log_a = math.log(1 / alpha)
    return v_opt / (2 * log_a + math.log(1 + 2 * log_a))


def normal_mixture_bound(v: float, alpha: float, v_opt: float, alpha_opt: float | None = None) -> float:
    """Two-sided normal-mixture uniform boundary on |S_t| at intrinsic time `v` (confseq's, `is_one_sided=False`).

    Args:
        v: Intrinsic time (sum of the observations' variance proxies), >= 0.
        alpha: Crossing probability of the boundary over all times.
        v_opt: Intrinsic time at which the boundary is tightest.
        alpha_opt: Alpha the tuning assumes (default: `alpha`).

    Returns:
        The boundary value: P(exists t: |S_t| >= bound(V_t)) <= alpha.
    """
    rho = best_rho(v_opt, alpha if alpha_opt is None else alpha_opt)
    return math.sqrt((v + rho) * (math.log(1 + v / rho) + 2 * math.log(1 / alpha)))


def half_width(n: int, alpha: float, n_opt: float = N_OPT) -> float:
    """Half-width of the confidence sequence on the mean of n observations in [-1, 1] (inf for n = 0)."""
    if n <= 0:
        return math.inf
    return normal_mixture_bound(float(n), alpha, float(n_opt)) / n


def comparisons_for_width(width: float, alpha: float, n_opt: float = N_OPT, start: int = 1) -> int | None:
    """The fewest n >= start whose half-width is below `width` (None: more than MAX_COMPARISONS).

    The half-width decreases in n beyond a few comparisons; a doubling search then a bisection
    finds the crossing (it rises only for n well below rho, which is below 20 for the defaults).
    """
    if width <= 0:
        return None
    n = max(1, start)
    if half_width(n, alpha, n_opt) < width:
        return n
    high = n
    while half_width(high, alpha, n_opt) >= width:
        if high > MAX_COMPARISONS:
            return None
        high *= 2
    low = max(n, high // 2)
    while low < high:
        mid = (low + high) // 2
        if half_width(mid, alpha, n_opt) < width:
            high = mid
        else:
            low = mid + 1
    return low


@dataclass(frozen=True)
class PairStatus:
    """Where one pair of candidates stands: the verdict and the confidence sequence it rests on."""

    n: int
    """Expert comparisons of the pair (each averaged over its experts)."""
    judgments: int
    """Expert judgments behind them."""
    difference: float
    """Mean of the observations: estimated win-rate difference (NaN with none)."""
    low: float
    high: float
    """The confidence sequence at n, clipped to [-1, 1]."""
    verdict: Verdict
    more: int | None
    """For "continue": about how many more expert comparisons reach a verdict (None: more than MAX_COMPARISONS)."""
    goal: Literal["separated", "equivalent", ""]
    """The verdict `more` aims at: the nearer of the two ("" with no comparison yet: nothing to extrapolate)."""


def pair_status(
    observations: Sequence[float],
    *,
    alpha: float,
    margin: float,
    judgments: int | None = None,
    n_opt: float = N_OPT,
) -> PairStatus:
    """The stopping rule for one pair.

    Args:
        observations: One value in [-1, 1] per expert comparison (+1: the first candidate won).
        alpha: Error level of the confidence sequence (for this pair, over every look).
        margin: Equivalence margin on the win-rate difference, in (0, 1).
        judgments: Expert judgments behind the observations (default: one each).
        n_opt: Where the boundary is tightest.

    Returns:
        "separated" when the sequence excludes 0, "equivalent" when it lies inside
        (-margin, margin), otherwise "continue" with the predicted number of further
        comparisons: the n at which the sequence's half-width, at the current estimate,
        would exclude 0 or fit inside the margin, whichever comes first, minus n.
    """
    if not 0 < margin < 1:
        raise ValueError(f"margin must be in (0, 1) (got {margin})")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1) (got {alpha})")
    bad = [x for x in observations if not (math.isfinite(x) and -1 <= x <= 1)]
    if bad:
        raise ValueError(f"observations must lie in [-1, 1] (got {bad[0]})")
    n = len(observations)
    judged = n if judgments is None else judgments
    if n == 0:
        return PairStatus(0, judged, math.nan, -1.0, 1.0, "continue", None, "")
    d = math.fsum(observations) / n
    h = half_width(n, alpha, n_opt)
    low, high = max(-1.0, d - h), min(1.0, d + h)
    if low > 0 or high < 0:
        return PairStatus(n, judged, d, low, high, "separated", None, "")
    if -margin < low and high < margin:
        return PairStatus(n, judged, d, low, high, "equivalent", None, "")
    to_separate = comparisons_for_width(abs(d), alpha, n_opt, start=n) if d != 0 else None
    to_equal = comparisons_for_width(margin - abs(d), alpha, n_opt, start=n) if abs(d) < margin else None
    options = [(m, g) for m, g in ((to_separate, "separated"), (to_equal, "equivalent")) if m is not None]
    if not options:
        return PairStatus(n, judged, d, low, high, "continue", None, "separated")
    best, goal = min(options)
    return PairStatus(n, judged, d, low, high, "continue", max(1, best - n), goal)  # type: ignore[arg-type]
