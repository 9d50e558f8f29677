"""Provides the small helpers the statistics share: guarded correlations and permutation p-values."""

from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from pydantic import BaseModel
from scipy import stats

_Row = TypeVar("_Row", bound=BaseModel)

EXACT_PERMUTATION_MAX_N = 9
"""Largest n for which the permutation p-value enumerates all n! pairings (9! = 362,880)."""

MONTE_CARLO_RESAMPLES = 100_000


def _clean(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    return x[keep], y[keep]


def correlation(
    x: np.ndarray, y: np.ndarray, kind: str = "spearman", min_n: int = 3
) -> tuple[float, float, int, str | None]:
    """Spearman or Pearson correlation that never raises.

    Pairs with a missing value are dropped.

    Args:
        x: First variable.
        y: Second variable.
        kind: "spearman" or "pearson".
        min_n: Fewest complete pairs for a correlation.

    Returns:
        (coefficient, two-sided p-value from scipy's default, n, reason); the first two are
        NaN and the reason says why when the correlation is undefined.
    """
    x, y = _clean(x, y)
    n = len(x)
    if n < min_n:
        return math.nan, math.nan, n, f"fewer than {min_n} complete pairs (n = {n})"
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan, n, "one variable is constant"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.spearmanr(x, y) if kind == "spearman" else stats.pearsonr(x, y)
    return float(res.statistic), float(res.pvalue), n, None


@lru_cache(maxsize=4)
def _all_permutations(n: int) -> np.ndarray:
    """All n! permutations of range(n) as an (n!, n) int8 array, built by inserting k into every slot."""
    perms = np.zeros((1, 1), dtype=np.int8)
    for k in range(1, n):
        m = perms.shape[0]
        out = np.empty((m * (k + 1), k + 1), dtype=np.int8)
        for slot in range(k + 1):
            block = out[slot * m : (slot + 1) * m]
            block[:, :slot] = perms[:, :slot]
            block[:, slot] = k
            block[:, slot + 1 :] = perms[:, slot:]
        perms = out
    return perms


def permutation_p_spearman(x: np.ndarray, y: np.ndarray, seed: int = 0) -> tuple[float, str]:
    """Two-sided permutation p-value of Spearman's rho: share of pairings at least as extreme.

    Exact (all n! pairings) for n <= 9; Monte Carlo with 100,000 pairings otherwise.

    Args:
        x: First variable (missing pairs are dropped).
        y: Second variable.
        seed: Seed of the Monte Carlo draw.

    Returns:
        (p-value, method) where method is "exact" or "monte carlo"; NaN p when undefined.
    """
    x, y = _clean(x, y)
    n = len(x)
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, "undefined"
    rx = stats.rankdata(x) - (n + 1) / 2
    ry = stats.rankdata(y) - (n + 1) / 2
    observed = abs(float(rx @ ry))
    # Rounding guard: statistics equal to the observed one up to float error count as extreme.
    tol = 1e-9 * max(1.0, observed)
    if n <= EXACT_PERMUTATION_MAX_N:
        null = _exact_null(tuple(sorted(rx)), tuple(sorted(ry)))
        p = float((len(null) - np.searchsorted(null, observed - tol, side="left")) / len(null))
        return p, "exact"
    rng = np.random.default_rng(seed)
    perms = np.argsort(rng.random((MONTE_CARLO_RESAMPLES, n)), axis=1)
    null = np.abs(ry[perms] @ rx)
    hits = int((null >= observed - tol).sum())
    return (hits + 1) / (len(perms) + 1), "monte carlo"


@lru_cache(maxsize=64)
def _exact_null(rx: tuple[float, ...], ry: tuple[float, ...]) -> np.ndarray:
    """Sorted |sum rx_i ry_pi(i)| over all pairings; it depends only on the two multisets of ranks,
    so without ties every call with the same n shares one cached distribution."""
    perms = _all_permutations(len(rx))
    return np.sort(np.abs(np.asarray(ry)[perms] @ np.asarray(rx)))


def se_over_runs(values: np.ndarray) -> float:
    """Standard error of a mean: sample SD (ddof 1) / sqrt(n); NaN for fewer than two values."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if len(v) < 2:
        return math.nan
    return float(np.std(v, ddof=1) / math.sqrt(len(v)))


def clean_float(value: float | None, digits: int | None = None) -> float | None:
    """A float for JSON: None for NaN/inf/None, optionally rounded."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        return None
    return round(value, digits) if digits is not None else value


MIN_DEFINED_REPLICATES = 10
"""Fewest bootstrap replicates with a defined statistic for a percentile interval."""


def bootstrap_weights(n: int, replicates: int, seed: int | tuple[int, ...]) -> np.ndarray:
    """Multinomial resampling weights: row b says how often each of n units is drawn in replicate b.

    Args:
        n: Units to resample (drawn n times with replacement per replicate).
        replicates: Bootstrap replicates B (0 gives a (0, n) array).
        seed: Seed (or seed sequence) of the draw.

    Returns:
        (B, n) float array; a statistic that is a ratio of sums over units becomes
        `(W @ numerator) / (W @ denominator)`, all replicates at once.
    """
    if n == 0 or replicates <= 0:
        return np.zeros((max(replicates, 0), n))
    rng = np.random.default_rng(seed)
    return rng.multinomial(n, np.full(n, 1.0 / n), size=replicates).astype(float)


def percentile_interval(boot: np.ndarray, ci: float = 0.95, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap replicates, ignoring undefined (NaN) replicates.

    An interval needs at least `MIN_DEFINED_REPLICATES` defined replicates and at least half
    of them defined; otherwise it is NaN (a statistic undefined in most resamples has no
    trustworthy interval).

    Args:
        boot: Replicates along `axis`.
        ci: Coverage, e.g. 0.95.
        axis: The replicate axis.

    Returns:
        (low, high), arrays of the statistic's shape without `axis` (0-d for one statistic).
    """
    boot = np.asarray(boot, dtype=float)
    if boot.shape[axis] == 0:
        shape = boot.shape[:axis] + boot.shape[axis + 1 :]
        return np.full(shape, math.nan), np.full(shape, math.nan)
    finite = np.isfinite(boot)
    count = finite.sum(axis=axis)
    enough = (count >= MIN_DEFINED_REPLICATES) & (count >= 0.5 * boot.shape[axis])
    alpha = (1.0 - ci) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # all-NaN slices: handled by `enough`
        low = np.nanquantile(boot, alpha, axis=axis)
        high = np.nanquantile(boot, 1.0 - alpha, axis=axis)
    return np.where(enough, low, np.nan), np.where(enough, high, np.nan)


def interval(boot: np.ndarray, ci: float = 0.95) -> tuple[float, float]:
    """`percentile_interval` of one statistic, as two floats."""
    low, high = percentile_interval(np.asarray(boot, dtype=float).ravel(), ci)
    return float(low), float(high)


def json_value(v: Any) -> Any:
    """A value for the JSON document: NaN/inf/NA become None, numpy scalars plain Python, containers recursed."""
    if isinstance(v, dict):
        return {str(k): json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, np.ndarray)):
        return [json_value(x) for x in v]
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return clean_float(float(v))
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    return v if isinstance(v, str) else str(v)


def records(frame: pd.DataFrame, columns: list[str] | None = None) -> list[dict[str, Any]]:
    """Rows of a frame as JSON-ready dicts (NaN becomes None, numpy scalars become Python ones)."""
    if columns is not None:
        frame = frame[columns]
    cols = list(frame.columns)
    return [
        {c: json_value(v) for c, v in zip(cols, row, strict=True)} for row in frame.itertuples(index=False, name=None)
    ]


def rows(model: type[_Row], frame: pd.DataFrame, columns: list[str] | None = None) -> list[_Row]:
    """Rows of a frame as the report document's row models (`records`, validated one row at a time).

    Args:
        model: The row model (`report.document`), strict and closed: a column it does not
            know, or a value of the wrong type, raises instead of writing an undocumented field.
        frame: The statistic's frame.
        columns: The columns to take, in order (None: all of them).
    """
    return [model.model_validate(r) for r in records(frame, columns)]
