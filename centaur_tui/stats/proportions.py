"""Provides the one Wilson score interval of a proportion the statistics share (standard library only).

Standard library only, so modules the app's process loads (the admission exam, blinding) may
use it without numpy.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""The standard normal's 97.5 % quantile (two-sided 95 % intervals)."""


def wilson_interval(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval of a proportion p observed on n > 0 items (z: the normal quantile of each tail)."""
    if not n > 0:
        raise ValueError(f"a proportion needs n > 0 items (got {n})")
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def wilson(successes: float, n: float, z: float = Z95) -> tuple[float | None, float | None]:
    """Wilson's score interval of `successes` (may be fractional) in n trials; (None, None) for n = 0."""
    if n <= 0:
        return None, None
    return wilson_interval(successes / n, n, z)
