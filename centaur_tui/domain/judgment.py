"""Provides judge-reply validation and the judgment records shared by LLM judges and experts."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from centaur_tui.domain.cutoff import is_cut_off
from centaur_tui.domain.task import Rubric

JudgeKind = Literal["llm", "expert"]


class InvalidReply(ValueError):
    """A judge reply that cannot be used; `reason` says why, for the store and the user.

    `truncated` is set when the provider cut the reply off at `max_tokens`: re-asking with the
    same limit would pay for the same cut-off reply again (see `reask_max_tokens`).
    """

    def __init__(self, reason: str, truncated: bool = False, problems: list[str] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.truncated = truncated
        self.problems: tuple[str, ...] = tuple(problems) if problems else (reason,)
        """Every problem found (a re-ask lists them all, not only the first)."""


@dataclass(frozen=True)
class Verdict:
    """A validated judge reply in presented order: scores per dimension for options 1 and 2."""

    scores_1: dict[str, int]
    scores_2: dict[str, int]
    stated_mean_1: float | None
    stated_mean_2: float | None
    winner: Literal["option_1", "option_2", "tie"]
    rationale: str

    @property
    def mean_1(self) -> float:
        return sum(self.scores_1.values()) / len(self.scores_1)

    @property
    def mean_2(self) -> float:
        return sum(self.scores_2.values()) / len(self.scores_2)


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _extract_json(text: str) -> Any:
    stripped = _FENCE.sub("", text.strip())
    start, end = stripped.find("{"), stripped.rfind("}")
    if start < 0 or end <= start:
        raise InvalidReply("reply holds no JSON object")
    try:
        return json.loads(stripped[start : end + 1])
    except json.JSONDecodeError as exc:
        raise InvalidReply(f"reply is not valid JSON ({exc.msg} at char {exc.pos})") from None


def _score(value: Any, where: str, problems: list[str]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        problems.append(f"{where} is not a number ({value!r})")
        return None
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        problems.append(f"{where} is not an integer ({value!r})")
        return None
    score = int(value)
    if not 1 <= score <= 10:
        problems.append(f"{where} is outside 1-10 ({score})")
        return None
    return score


def _option(data: Any, label: str, rubric: Rubric, problems: list[str]) -> tuple[dict[str, int], float | None]:
    """An option's scores and stated average; every problem found is appended to `problems`."""
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        problems.append(f"{label} has no 'scores' object")
        return {}, None
    by_key = {str(k).strip().lower(): v for k, v in data["scores"].items()}
    scores: dict[str, int] = {}
    for dim in rubric.all:
        # Accept the id or the display name: real models echo either.
        value = by_key.get(dim.id, by_key.get(dim.name.lower()))
        if value is None:
            problems.append(f"{label} lacks a score for dimension '{dim.id}'")
            continue
        score = _score(value, f"{label}.{dim.id}", problems)
        if score is not None:
            scores[dim.id] = score
    known = {d.id for d in rubric.all} | {d.name.lower() for d in rubric.all}
    unknown = sorted(k for k in by_key if k not in known)
    if unknown:
        problems.append(f"{label} scores unknown dimension(s): {', '.join(unknown)}")
    stated = data.get("average")
    if stated is not None and (isinstance(stated, bool) or not isinstance(stated, (int, float))):
        problems.append(f"{label}.average is not a number ({stated!r})")
        stated = None
    return scores, (float(stated) if stated is not None else None)


_WINNERS = {
    "option_1": "option_1",
    "option 1": "option_1",
    "1": "option_1",
    "option1": "option_1",
    "option_2": "option_2",
    "option 2": "option_2",
    "2": "option_2",
    "option2": "option_2",
    "tie": "tie",
}


def parse_judge_reply(
    text: str, rubric: Rubric, allow_ties: bool, finish_reason: str | None = None, max_tokens: int | None = None
) -> Verdict:
    """Validate a judge reply; raise InvalidReply naming every problem found.

    Checks: a JSON object; every rubric dimension scored for both options with an integer
    1-10; a winner among the allowed values; a non-empty rationale. A reply the provider cut
    off (`finish_reason` "length", or a provider's variant: domain/cutoff.py) that fails these
    checks is reported as "cut off at max_tokens (N)", with `truncated` set, since that is why
    it failed; one that passes is used.
    """
    try:
        return _verdict(text, rubric, allow_ties)
    except InvalidReply as exc:
        if not is_cut_off(finish_reason):
            raise
        limit = f" ({max_tokens})" if max_tokens is not None else ""
        raise InvalidReply(f"cut off at max_tokens{limit}", truncated=True) from exc


def reask_max_tokens(max_tokens: int, cap: int) -> int | None:
    """The max_tokens for re-asking a judge whose reply was cut off at `max_tokens`.

    Doubles the limit, at most `cap` (`JudgingParams.reask_cap`). None when it cannot grow: a
    re-ask with the same limit would be paid for and cut off again.
    """
    raised = min(cap, 2 * max_tokens)
    return raised if raised > max_tokens else None


def _verdict(text: str, rubric: Rubric, allow_ties: bool) -> Verdict:
    data = _extract_json(text)
    if not isinstance(data, dict):
        raise InvalidReply("reply JSON is not an object")
    problems: list[str] = []
    scores_1, mean_1 = _option(data.get("option_1"), "option_1", rubric, problems)
    scores_2, mean_2 = _option(data.get("option_2"), "option_2", rubric, problems)
    raw_winner = data.get("winner")
    winner = _WINNERS.get(str(raw_winner).strip().lower()) if raw_winner is not None else None
    if winner is None:
        problems.append(f"winner {raw_winner!r} is not one of option_1, option_2{', tie' if allow_ties else ''}")
    elif winner == "tie" and not allow_ties:
        problems.append("winner is 'tie' but this session does not allow ties")
    rationale = data.get("rationale")
    if not isinstance(rationale, str) or not rationale.strip():
        problems.append("rationale is missing or empty")
    if problems:
        raise InvalidReply("; ".join(problems), problems=problems)
    assert isinstance(rationale, str)
    return Verdict(scores_1, scores_2, mean_1, mean_2, winner, rationale.strip())  # type: ignore[arg-type]


def winner_candidate(verdict_winner: str, option_1: str, option_2: str) -> str:
    """The winner as a candidate name (or 'tie') from a presented-order winner."""
    return {"option_1": option_1, "option_2": option_2}.get(verdict_winner, "tie")
