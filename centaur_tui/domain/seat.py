"""Provides the records and pure rules of an expert's seat: place states, a complete draft's judgment, work records.

Every seat (the app's screens, the HTML seat, a judging packet, a packet merged back) applies
these through `services.judging` and `services.writing`; the store reads and writes the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from centaur_tui.domain.blinding import Draft, QueueItem
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
from centaur_tui.domain.task import Rubric

PlaceState = Literal["pending", "skipped", "flagged"]
STATES: tuple[PlaceState, ...] = ("pending", "skipped", "flagged")
"""The states an expert can give an open place; "done" comes from its stored judgment."""


class JudgingError(CentaurError):
    """Expert work that cannot be stored as asked (incomplete, unknown, already judged)."""

    title = "Cannot submit"


class WorkError(CentaurError):
    """Expert work that cannot be assigned or stored as asked."""

    title = "Cannot store work"


def check_state(state: str) -> PlaceState:
    """`state` as a place state; JudgingError unless it is one of STATES."""
    if state not in STATES:
        raise JudgingError(f"unknown state {state!r} (known: {', '.join(STATES)})")
    return state


def queue_state(state: str, done: bool) -> Literal["pending", "skipped", "flagged", "done"]:
    """The state a queue shows: "done" once judged, else the stored state (an unknown one shows as pending)."""
    if done:
        return "done"
    return state if state in STATES else "pending"


def queue_item(key: str, position: int, state: str, done: bool, task_title: str, practice: bool = False) -> QueueItem:
    """One place of a queue as a screen lists it."""
    return QueueItem(key, position, queue_state(state, done), task_title, practice=practice)


def lower_average(winner: str | None, means: tuple[float, float]) -> bool:
    """Whether the chosen winner (option_1 / option_2) has the lower rubric average of the two."""
    if winner == "option_1":
        return means[0] < means[1]
    if winner == "option_2":
        return means[1] < means[0]
    return False


def stored_lower_average(
    winner: str | None, option1: str, option2: str, option1_mean: float | None, option2_mean: float | None
) -> bool:
    """Whether a stored judgment's winner (an output id) has the lower rubric average of its two options."""
    if option1_mean is None or option2_mean is None:
        return False
    side = "option_1" if winner == option1 else "option_2" if winner == option2 else None
    return lower_average(side, (option1_mean, option2_mean))


def lower_average_confirmed(draft: Draft, means: tuple[float, float]) -> bool | None:
    """The stored fact: True, a lower-average winner confirmed; False, not the lower; None, not confirmed."""
    if not lower_average(draft.winner, means):
        return False
    return True if draft.confirmed_lower else None


def expert_record(
    comparison_id: str, expert: str, presentation: int, first: str, second: str, rubric: Rubric, draft: Draft
) -> JudgmentRecord:
    """The judgments-table record of a complete expert draft (scores in presented order).

    Args:
        comparison_id: The comparison judged.
        expert: The expert's id (the judge).
        presentation: 0, or 1 for a swapped repeat.
        first: The candidate shown as option 1.
        second: The candidate shown as option 2.
        rubric: The task's rubric; every dimension is scored in a complete draft.
        draft: The complete draft (see `domain.blinding.missing`).
    """
    scores: list[ScoreRecord] = []
    for d in rubric.all:
        s1, s2 = draft.score(d.id, 1), draft.score(d.id, 2)
        assert s1 is not None and s2 is not None
        scores.append(ScoreRecord(first, d.id, rubric.kind(d.id), s1))
        scores.append(ScoreRecord(second, d.id, rubric.kind(d.id), s2))
    n = len(rubric.all)
    winner = {"option_1": first, "option_2": second}.get(draft.winner or "", "tie")
    means = (sum(s.score for s in scores[0::2]) / n, sum(s.score for s in scores[1::2]) / n)
    return JudgmentRecord(
        comparison_id=comparison_id,
        judge=expert,
        judge_kind="expert",
        judge_family=None,
        presentation=presentation,
        option1=first,
        option2=second,
        winner=winner,
        option1_mean=means[0],
        option2_mean=means[1],
        valid=True,
        invalid_reason=None,
        rationale=draft.rationale.strip(),
        call_key=None,
        attempts=1,
        scores=tuple(scores),
        seconds=round(draft.seconds, 1),
        active_seconds=None if draft.active_seconds is None else round(min(draft.active_seconds, draft.seconds), 1),
        lower_average_confirmed=lower_average_confirmed(draft, means),
        pasted_chars=None
        if draft.pasted_chars is None
        else max(0, min(int(draft.pasted_chars), len(draft.rationale.strip()))),
    )


# -- expert as worker ------------------------------------------------------------------------


def word_count(text: str) -> int:
    """Words of a deliverable (whitespace-separated), as the work screen and the work report count them."""
    return len(text.split())


@dataclass
class WorkDraft:
    """A deliverable in progress: text and the productivity measures recorded with it."""

    text: str = ""
    seconds: float = 0.0
    edits: int = 0
    pastes: int = 0
    locked: bool = False


MAX_FLAG_NOTE = 2000
"""Characters of a flag note kept (a longer note is cut)."""


@dataclass(frozen=True)
class FlagNote:
    """An expert's note on a place they flagged, for the researcher (`expert_flag_notes`)."""

    expert: str
    place: str
    """The seat's key of the place: an assignment id, or a practice or gold check's token."""
    task: str | None
    """The place's task (None: the place is gone)."""
    note: str
    noted_at: str


@dataclass(frozen=True)
class WorkQueueItem:
    """One place in an expert's work queue. `key` is an opaque handle (the assignment id)."""

    key: int
    position: int
    task_title: str
    locked: bool


@dataclass(frozen=True)
class HumanOutput:
    """A submitted expert deliverable as the human-worker arm's tournament sees it (`condition`: its candidate)."""

    id: str
    run: int
    task: str
    condition: str
    expert: str
    text: str


@dataclass(frozen=True)
class ProductivityRecord:
    """One submitted deliverable's effort (`WorkStore.productivity_rows`): the human arm's productivity input."""

    expert: str
    task: str
    condition: str
    seconds: float
    edits: int
    pastes: int
    words: int
    characters: int


@dataclass(frozen=True)
class WorkItem:
    """What the work screen shows: the task and the masked assistance text, never who wrote it."""

    key: int
    task_title: str
    task_prompt: str
    deliverable: str
    assistance: str | None
