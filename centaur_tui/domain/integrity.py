"""Provides the integrity signals of expert judging: pasted rationales, implausible speed, repeated rationales, order.

Pure functions the organiser's console and the report share (`services.console`). A signal is a
count shown to the organiser, never a rule: no judgment is dropped for it (`--min-gold-pass`
stays the one way to leave an expert out, and it says who).
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction

READING_WORDS_PER_MINUTE = 1000
"""A generous reading rate: about four times an adult's silent reading of prose (about 240 words a
minute) and above skimming rates (about 700). A judgment stored in less time than the two
deliverables' words need at this rate was not read; the signal counts those judgments."""

PASTED_SHARE = 0.5
"""A rationale counts as pasted when at least this share of its characters came from a paste."""

MIN_REPEATED_CHARS = 20
"""Identical rationales shorter than this (after normalising) are not counted: "Option 1 is better."
may honestly repeat; a repeated paragraph may not."""

ORDER_ALPHA = 0.05
"""An expert's option-1 share is reported as following the presented order when its two-sided
binomial test against 1/2 gives p below this."""


def words(text: str) -> int:
    """Whitespace-separated words of a text (as the work screen counts a deliverable's)."""
    return len(text.split())


def reading_seconds(words_one: int, words_two: int, rate: int = READING_WORDS_PER_MINUTE) -> float:
    """The least time two deliverables of these lengths need to be read at `rate` words a minute."""
    return (words_one + words_two) * 60.0 / rate


def too_fast(seconds: float | None, words_one: int, words_two: int) -> bool:
    """A judgment stored in less time than reading both deliverables needs (None: time not recorded, not counted)."""
    return seconds is not None and seconds < reading_seconds(words_one, words_two)


def pasted_share(pasted_chars: int | None, rationale: str) -> float | None:
    """The share of a rationale's characters that came from a paste (None: not recorded, or no rationale)."""
    if pasted_chars is None or not rationale:
        return None
    return min(1.0, max(0, pasted_chars) / len(rationale))


def normalised(rationale: str) -> str:
    """A rationale compared for repetition: NFKC, case folded, runs of whitespace made one space."""
    return " ".join(unicodedata.normalize("NFKC", rationale).casefold().split())


def repeated(rationales: list[tuple[str, str]]) -> int:
    """How many of an expert's judgments share their rationale with a judgment of another comparison.

    Args:
        rationales: (comparison id, rationale) of each judgment.

    Returns:
        The judgments whose normalised rationale (at least MIN_REPEATED_CHARS long) also stands on
        a different comparison (a swapped repeat of the same comparison does not count).
    """
    keys = [normalised(text) for _, text in rationales]
    comparisons: dict[str, set[str]] = {}
    for (comparison, _), key in zip(rationales, keys, strict=True):
        if len(key) >= MIN_REPEATED_CHARS:
            comparisons.setdefault(key, set()).add(comparison)
    return sum(1 for key in keys if len(comparisons.get(key, ())) > 1)


def binomial_two_sided(k: int, n: int) -> float | None:
    """The exact two-sided binomial test of k successes in n trials against p = 1/2 (None: n = 0).

    Symmetric at p = 1/2: p = min(1, 2 * P(X >= max(k, n - k))). Exact in integers (no scipy
    in the app's process); 5,000 trials take about 10 ms.
    """
    if n <= 0:
        return None
    if not 0 <= k <= n:
        raise ValueError(f"{k} successes of {n} trials")
    top = max(k, n - k)
    term, tail = 1, 0  # C(n, i) for i = n, n-1, ..., top
    for i in range(n, top - 1, -1):
        tail += term
        term = term * i // (n - i + 1)
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))
