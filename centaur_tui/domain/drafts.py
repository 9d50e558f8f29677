"""Provides parse_draft: an expert's draft from untrusted JSON (a page, an HTML packet's results), each field checked.

What a page sends is never trusted: scores must be whole numbers 1-10 on the place's own rubric
dimensions, the winner one of the three words, the texts text, the times finite numbers. A
problem raises DraftFieldError naming the field ("draft.scores.clarity: option 1's score ...").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from centaur_tui.domain.blinding import Draft

MAX_TEXT = 200_000
"""Characters of a rationale accepted (a 10,000-word deliverable is about 70,000)."""
MAX_SECONDS = 10_000_000.0
"""Seconds on one comparison accepted (about 115 days); more is clipped."""


class DraftFieldError(ValueError):
    """A field of a draft that is not what the page or packet should send; the message names it."""


def seconds_field(value: object, where: str) -> float:
    """A time in seconds: a finite number, clipped to 0..MAX_SECONDS; None is 0."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DraftFieldError(f"{where} must be a number of seconds")
    return min(max(float(value), 0.0), MAX_SECONDS)


def parse_draft(value: object, dimensions: Sequence[str], where: str = "draft") -> Draft:
    """A Draft from JSON-like data; scores on `dimensions` only (DraftFieldError names the bad field)."""
    if not isinstance(value, dict):
        raise DraftFieldError(f"{where} must be an object")
    draft = Draft()
    scores = value.get("scores", {})
    if not isinstance(scores, dict):
        raise DraftFieldError(f"{where}.scores must be an object")
    for dim, pair in scores.items():
        if dim not in dimensions:
            raise DraftFieldError(f"{where}.scores: {str(dim)[:40]!r} is not a dimension of this task")
        if not isinstance(pair, list) or len(pair) != 2:
            raise DraftFieldError(f"{where}.scores.{dim}: two scores (option 1, option 2) expected")
        for option, score in enumerate(pair, start=1):
            if score is None:
                continue
            if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 10:
                raise DraftFieldError(f"{where}.scores.{dim}: option {option}'s score must be a whole number 1-10")
            draft.set_score(dim, option, score)
    winner = value.get("winner")
    if winner not in (None, "option_1", "option_2", "tie"):
        raise DraftFieldError(f"{where}.winner must be option_1, option_2, tie or null")
    draft.winner = winner
    rationale = value.get("rationale", "")
    if not isinstance(rationale, str) or len(rationale) > MAX_TEXT:
        raise DraftFieldError(f"{where}.rationale must be text of at most {MAX_TEXT} characters")
    draft.rationale = rationale
    draft.seconds = seconds_field(value.get("seconds"), f"{where}.seconds")
    active = value.get("active_seconds")
    draft.active_seconds = (
        None if active is None else min(seconds_field(active, f"{where}.active_seconds"), draft.seconds)
    )
    confirmed = value.get("confirmed_lower", False)
    if not isinstance(confirmed, bool):
        raise DraftFieldError(f"{where}.confirmed_lower must be true or false")
    draft.confirmed_lower = confirmed
    pasted = value.get("pasted_chars")
    if pasted is not None and (isinstance(pasted, bool) or not isinstance(pasted, int) or not 0 <= pasted <= MAX_TEXT):
        raise DraftFieldError(f"{where}.pasted_chars must be a whole number 0-{MAX_TEXT} or null")
    draft.pasted_chars = pasted
    return draft
