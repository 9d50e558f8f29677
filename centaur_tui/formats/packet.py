"""Provides the checks of what a judging packet brings back: each result and draft, field by field.

A packet's results are written on a machine that holds no secret, so nothing in them is
trusted: scores are JSON parsed within the reader's limits (duplicated keys refused), the
winner one of the allowed labels, the rationale text a person typed (no control character,
escape sequence or bidirectional override, at most `MAX_RATIONALE_CHARS`, and the session's
minimum counted in visible characters: 25 zero-width spaces are not a rationale), times finite
and at most `MAX_SECONDS`. Every problem names the item and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from centaur_tui.domain.blinding import Draft
from centaur_tui.domain.errors import MAX_LISTED, packet_refusal
from centaur_tui.domain.records import PacketResult
from centaur_tui.domain.task import Rubric
from centaur_tui.formats.problems import Problems
from centaur_tui.formats.reader import JsonError, loads
from centaur_tui.formats.text import rationale_problem

MAX_SECONDS = 7 * 24 * 3600.0
"""Longest time on one comparison a packet may report (a week): `seconds = 1e308` was stored before."""
MAX_VERSION = 2**63 - 1
"""Largest draft version (a counter of saves)."""


def shown(value: Any) -> str:
    """A value as the packet holds it, short and inert, for an error message."""
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and len(value) > 40:
        value = value[:37]  # cut before dumping: a 50 MB string is not copied whole
    text = json.dumps(value)  # ASCII escapes: no control character reaches a terminal
    return text if len(text) <= 40 else text[:37] + "..."


def _number(value: Any) -> float | None:
    """A finite number of seconds from 0 to MAX_SECONDS, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or not 0 <= value <= MAX_SECONDS:
        return None
    return float(value)


class _Checked:
    """The fields of one result or draft, checked against the session's rules; problems name item and field."""

    def __init__(
        self,
        problems: Problems,
        label: str,
        row: Mapping[str, Any],
        rubric: Rubric,
        allow_ties: bool,
        min_rationale: int,
        complete: bool,
    ) -> None:
        self.problems = problems
        self.before = problems.count
        self.label = label
        self.scores = self._scores(row.get("scores"), rubric, complete)
        self.winner = self._winner(row.get("winner"), allow_ties, complete)
        self.rationale = row.get("rationale")
        problem = rationale_problem(self.rationale, min_rationale if complete else 0)
        if problem is not None:
            self._error(
                "rationale", problem if isinstance(self.rationale, str) else f"{shown(self.rationale)} is {problem}"
            )
        self.seconds = self._seconds("seconds", row.get("seconds"))
        self.active_seconds = (
            None if row.get("active_seconds") is None else self._seconds("active_seconds", row.get("active_seconds"))
        )
        if self.active_seconds is not None and self.seconds is not None and self.active_seconds > self.seconds + 0.1:
            self._error("active_seconds", f"{self.active_seconds!r}: more than the time spent ({self.seconds!r})")
        self.confirmed_lower = row.get("confirmed_lower", 0)
        if self.confirmed_lower not in (0, 1) or isinstance(self.confirmed_lower, float):
            self._error("confirmed_lower", f"{shown(self.confirmed_lower)} is not 0 or 1")
        self.version = row.get("version", 0)
        if isinstance(self.version, bool) or not isinstance(self.version, int) or not 0 <= self.version <= MAX_VERSION:
            self._error("version", f"{shown(self.version)} is not a whole number of at least 0")

    def _error(self, field: str, problem: str) -> None:
        self.problems.add_at(self.label, field, problem)

    @property
    def ok(self) -> bool:
        return self.problems.count == self.before

    def _winner(self, winner: Any, allow_ties: bool, complete: bool) -> Any:
        allowed = ("option_1", "option_2", "tie") if allow_ties else ("option_1", "option_2")
        if winner is None and not complete:
            pass  # a draft may have no winner yet
        elif winner == "tie" and not allow_ties:
            self._error("winner", "a tie, but this session does not allow ties (judging.allow_ties = false)")
        elif winner not in allowed:
            self._error("winner", f"{shown(winner)} is not one of {', '.join(allowed)}")
        return winner

    def _seconds(self, field: str, value: Any) -> float | None:
        seconds = _number(value)
        if seconds is None:
            what = (
                "is not a number" if isinstance(value, bool) or not isinstance(value, (int, float)) else "out of range"
            )
            self._error(
                field, f"{shown(value)} {what}: must be a finite number of at least 0, at most {MAX_SECONDS:,.0f}"
            )
        return seconds

    def _scores(self, raw: Any, rubric: Rubric, complete: bool) -> dict[str, list[int | None]]:
        if not isinstance(raw, str):
            self._error("scores", f"{shown(raw)} is not JSON text")
            return {}
        try:
            data = loads(raw)
        except JsonError as exc:
            self._error("scores", f"not well-formed JSON ({exc})")
            return {}
        if not isinstance(data, dict):
            self._error("scores", f"a JSON object {{dimension: [option 1, option 2]}} is needed, not {shown(data)}")
            return {}
        ids = [d.id for d in rubric.all]
        unknown = sorted(set(data) - set(ids))
        if unknown:
            self._error(
                "scores",
                f"dimension(s) not in the task's rubric: {', '.join(shown(u) for u in unknown[:10])} "
                f"(the rubric has {', '.join(ids)})",
            )
        scores: dict[str, list[int | None]] = {}
        for d in ids:
            pair = data.get(d)
            if pair is None:
                if complete:
                    self._error(f"scores.{d}", "missing: every dimension of the rubric is scored for both options")
                continue
            if not isinstance(pair, list) or len(pair) != 2:
                self._error(f"scores.{d}", f"a list of two scores [option 1, option 2] is needed, not {shown(pair)}")
                continue
            for option, value in enumerate(pair, start=1):
                if value is None and not complete:
                    continue
                if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10:
                    self._error(f"scores.{d} (option {option})", f"{shown(value)} is not a whole number 1-10")
            scores[d] = list(pair)
        return scores

    def result(self, token: str, kind: str) -> PacketResult:
        draft = Draft(
            self.scores,
            self.winner,
            str(self.rationale),
            float(self.seconds or 0.0),
            self.active_seconds,
            self.confirmed_lower == 1,
        )
        return PacketResult(token, "result" if kind == "result" else "draft", self.label, draft, int(self.version))


def check_packet_rows(
    path: object,
    results: Sequence[Mapping[str, Any]],
    drafts: Sequence[Mapping[str, Any]],
    places: Mapping[str, tuple[str, str]],
    rubric: Callable[[str], Rubric],
    *,
    allow_ties: bool,
    min_rationale: int,
    owner: str,
) -> list[PacketResult]:
    """Check every result and draft of a packet, before anything is written.

    Args:
        path: The packet file, for the message.
        results: The `results` rows (token, scores, winner, rationale, seconds, active_seconds, confirmed_lower).
        drafts: The `drafts` rows (token, scores, winner, rationale, seconds, active_seconds, version).
        places: For each verified item's token: its label ("item 3 (token ...)") and task id.
        rubric: The rubric of a task.
        allow_ties: The session's `judging.allow_ties`.
        min_rationale: The session's `judging.expert_min_rationale` (visible characters).
        owner: The expert the packet belongs to, for messages.

    Returns:
        The checked results, then the drafts of places without a result.

    Raises:
        PacketRefused: listing every problem by item and field.
    """
    problems = Problems(str(path), limit=MAX_LISTED)
    out: list[PacketResult] = []
    seen: set[str] = set()
    for kind, rows in (("result", results), ("draft", drafts)):
        for row in rows:
            token = row.get("token")
            if not isinstance(token, str) or token not in places:
                problems.add_at(
                    f"{kind} (token {shown(token)})",
                    None,
                    f"not an item of this packet, so not a comparison assigned to {owner}",
                )
                continue
            label, task = places[token]
            if token in seen:
                if kind == "result":
                    problems.add_at(label, None, "more than one result")
                continue  # a draft of a judged place: the result supersedes it (`centaur judge` deletes it on submit)
            seen.add(token)
            checked = _Checked(
                problems, f"{label} {kind}", row, rubric(task), allow_ties, min_rationale, kind == "result"
            )
            if checked.ok:
                out.append(checked.result(token, kind))
    if problems.count:
        raise packet_refusal(path, problems.items, problems.count)
    return out
