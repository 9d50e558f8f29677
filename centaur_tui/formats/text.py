"""Provides the checks of single values read from files: texts, names, whole numbers, rationales."""

from __future__ import annotations

import re
from typing import Any

from centaur_tui.domain.blinding import MAX_RATIONALE_CHARS
from centaur_tui.domain.untrusted import find_control, visible_length

__all__ = ["MAX_RATIONALE_CHARS"]

MAX_TEXT_CHARS = 200_000
"""Longest output or assistance text (characters): about 30,000 words, 3x the longest deliverable tested."""
MAX_LABEL_CHARS = 200
"""Longest name (candidate, worker, judge), as in session files."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(value: Any, *, limit: int, allow_empty: bool = False) -> str | None:
    """Why a text value cannot be imported (not a string, empty, too long, a control character), or None.

    Control characters, escape sequences and bidirectional overrides are refused, not cleaned, so
    what experts and judges read is exactly what the file holds.
    """
    if not isinstance(value, str):
        return f"a JSON {type(value).__name__}, not a string"
    if (not value or value.isspace()) and not allow_empty:  # isspace: no copy of a 200,000-character text
        return "empty"
    if len(value) > limit:
        return f"{len(value):,} characters, more than {limit:,}"
    bad = find_control(value) or _SURROGATE.search(value)
    if bad is not None:
        char = bad.group()
        what = (
            "an escape sequence"
            if char == "\x1b"
            else "a lone surrogate"
            if "\ud800" <= char <= "\udfff"
            else "a bidirectional override"
            if char >= "\u2000"
            else "a control character"
        )
        return f"{what} (U+{ord(char):04X}) at character {bad.start() + 1:,}; remove it"
    return None


def brief(value: Any) -> str:
    """A value as a message quotes it: its repr (control characters escaped), at most about 40 characters."""
    if isinstance(value, str) and len(value) > 40:
        return repr(value[:37]) + "..."
    text = repr(value)
    return text if len(text) <= 43 else text[:40] + "..."


def label_problem(value: Any) -> str | None:
    """Why a name (candidate, worker, judge) cannot be imported, or None."""
    problem = text_problem(value, limit=MAX_LABEL_CHARS)
    if problem is None and value != value.strip():
        return f"{value!r} has leading or trailing space"
    return problem


def rationale_problem(value: Any, minimum: int) -> str | None:
    """Why an expert's rationale cannot be stored (not text, controls, too long, too few visible), or None."""
    if not isinstance(value, str):
        return "not text"
    problem = text_problem(value, limit=MAX_RATIONALE_CHARS, allow_empty=True)
    if problem is not None:
        return problem
    seen = visible_length(value)
    if seen < minimum:
        hidden = len(value.strip()) - seen
        note = f" ({hidden:,} invisible character(s) not counted)" if hidden else ""
        return f"{seen} characters{note}; the session requires at least {minimum} (judging.expert_min_rationale)"
    return None


def int_value(value: Any, low: int, high: int) -> int:
    """An integer in [low, high] from a CSV string or a JSON integer; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        n = value
    elif isinstance(value, str) and re.fullmatch(r"[0-9]{1,18}", value.strip()):
        n = int(value.strip())
    else:
        raise ValueError
    if not low <= n <= high:
        raise ValueError
    return n
