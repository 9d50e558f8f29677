"""Provides the live assistant: a human worker in an assisted condition asks the condition's assistant while writing.

The expert's process never holds a key and never calls a provider: every seat hands the question
to the organiser's process (the aiohttp server of `centaur serve`, or the app that runs the
session), which asks through `pipeline.calls.Calls`, the same path as every pipeline call: the
session's limits, its budget (`limits.max_cost_usd`, counting what the session has spent), a
content-addressed call stored in `calls` (asked again in the same state, it is read back, never
sent twice), failed attempts logged. The rules live here, once, for every seat:

- only an assisted condition has an assistant, only before the deliverable is submitted;
- a question is not empty and at most `MAX_QUESTION` characters;
- at most `[augmentation] turns - 1` answered questions per deliverable (the assistance text was
  the first turn), so `turns = 1` (the default) offers none, as in the paper's design;
- the assistant answers under the assistance prompt's constraint, repeated with every question
  (`domain.prompts.dialogue_answer_messages`): process guidance, never the deliverable;
- a provider error is one stored turn with outcome `failed` (it does not use a question), and the
  worker goes on writing;
- the expert sees "your assistant", never a model name: answers are cleaned and masked like the
  assistance text (each masked phrase logged in `work_maskings`); the raw answer is kept for the
  organiser's audit.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.domain.blinding import clean_text
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import DIALOGUE_STAGE
from centaur_tui.domain.prompts import dialogue_answer_messages
from centaur_tui.domain.seat import WorkError
from centaur_tui.domain.session import PLAIN
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.llm import Gateway
    from centaur_tui.store import DialogueTurn, LivePlace, Store

MAX_QUESTION = 4000
"""Most characters of one question (a long draft outline fits; a pasted deliverable does not)."""

ASSISTANT_NAME = "your assistant"
"""What every seat calls the assistant: never a model name or family."""


def live_dialogue_id(key: int) -> str:
    """The dialogue id of a work assignment's live assistant (`dialogue_turns.dialogue`)."""
    return f"work:{key}"


@dataclass(frozen=True)
class LiveTurn:
    """One question and its answer as the expert sees them: cleaned and masked."""

    turn: int
    question: str
    answer: str | None
    """None when the provider failed (`error` says so in words for the expert)."""
    error: str | None
    asked_at: str
    answered_at: str | None


@dataclass(frozen=True)
class LiveState:
    """What a seat shows: whether the assistant is offered here, the transcript, and the questions left."""

    offered: bool
    turns: list[LiveTurn]
    left: int
    limit: int


class LiveAssistant:
    """One expert's live assistant in the organiser's process (the server's or the app's).

    Args:
        study: The session.
        store: Its database (the organiser's, read-write).
        expert_id: The expert writing.
        gateway: Injected for tests; built from the session limits otherwise.
    """

    def __init__(self, study: Study, store: Store, expert_id: str, gateway: Gateway | None = None) -> None:
        from centaur_tui.store import session_blinding

        self.study = study
        self.store = store
        self.expert_id = expert_id
        self.gateway = gateway
        self._blinding = session_blinding(study)
        # One question at a time per expert: a second one while the first is out is refused (not queued),
        # so the limit and the turn numbers hold whichever seat or thread asks.
        self._asking = threading.Lock()
        self._loaded = False
        self._world_id: str | None = None

    @property
    def limit(self) -> int:
        """Questions a deliverable may ask: `[augmentation] turns - 1`."""
        return self.study.session.augmentation.turns - 1

    def _place(self, key: int) -> LivePlace:
        from centaur_tui.store import live_place

        place = live_place(self.store, key)
        if place is None or place.expert != self.expert_id:
            raise WorkError(f"no work assignment {key} for {self.expert_id}")
        return place

    def _mask(self, place: LivePlace, text: str) -> str:
        from centaur_tui.store.masking import log_work_maskings

        masked, found = self._blinding.mask(clean_text(text))
        if found and place.assistance_id is not None:
            log_work_maskings(self.store, [(place.key, place.assistance_id, m.term, m.occurrences) for m in found])
        return masked

    def _turns(self, key: int) -> list[DialogueTurn]:
        from centaur_tui.store import dialogue_turns

        return dialogue_turns(self.store, live_dialogue_id(key))

    def state(self, key: int) -> LiveState:
        """The transcript (masked, in order, with times) and how many questions are left (blocking).

        Raises:
            WorkError: the place is not the expert's.
        """
        place = self._place(key)
        offered = place.condition != PLAIN and place.assistance is not None and self.limit > 0
        turns = self._turns(key)
        shown = [
            LiveTurn(
                t.turn,
                self._mask(place, t.question),
                self._mask(place, t.answer) if t.answer is not None else None,
                None if t.outcome == "answered" else "Your assistant could not answer; ask again or go on writing.",
                t.asked_at or "",
                t.answered_at,
            )
            for t in turns
        ]
        answered = sum(t.outcome == "answered" for t in turns)
        return LiveState(offered, shown, max(0, self.limit - answered) if offered else 0, self.limit if offered else 0)

    def _check(self, key: int, question: object) -> tuple[LivePlace, str, list[DialogueTurn]]:
        place = self._place(key)
        if place.condition == PLAIN or place.assistance is None:
            raise WorkError("you write this deliverable without an assistant", title="No assistant here")
        if self.limit < 1:
            raise WorkError("this session offers no questions to the assistant", title="No assistant here")
        if place.locked:
            raise WorkError("this deliverable is submitted already", title="Already submitted")
        if not isinstance(question, str) or not question.strip():
            raise WorkError("the question is empty", title="Nothing to ask")
        if len(question) > MAX_QUESTION:
            raise WorkError(
                f"the question is {len(question):,} characters; at most {MAX_QUESTION:,} are sent", title="Too long"
            )
        turns = self._turns(key)
        if sum(t.outcome == "answered" for t in turns) >= self.limit:
            raise WorkError(
                f"you have asked your {self.limit} question(s) for this deliverable", title="No questions left"
            )
        return place, question.strip(), turns

    async def ask(self, key: int, question: object) -> LiveTurn:
        """Ask the condition's assistant one question; returns the turn as the expert sees it (masked).

        Runs in the organiser's process, on its event loop (database work in threads). A provider
        that fails for good gives a turn with outcome `failed`, stored, returned, not raised.

        Raises:
            WorkError: hostile or impossible input (see the module docstring); nothing is sent or stored.
            CentaurError: the session's budget would be passed (nothing is sent; the turn is stored as failed).
        """
        if not self._asking.acquire(blocking=False):
            raise WorkError("your assistant is still answering your last question", title="One at a time")
        try:
            return await self._ask(key, question)
        finally:
            self._asking.release()

    async def _ask(self, key: int, question: object) -> LiveTurn:
        from centaur_tui.llm import CallFailed
        from centaur_tui.pipeline.budget import BudgetExceeded
        from centaur_tui.pipeline.calls import Calls
        from centaur_tui.pipeline.progress import Progress, StageProgress
        from centaur_tui.store import DialogueTurn, save_dialogue_turns
        from centaur_tui.store.connection import utc_now

        place, text, turns = await asyncio.to_thread(self._check, key, question)
        rounds = [(t.question, t.answer) for t in turns if t.outcome == "answered" and t.answer is not None]
        u, task = self.study.universal, self.study.task(place.task)
        assert place.assistance is not None
        messages = dialogue_answer_messages(u, task, place.assistance, rounds, text)
        g = self.study.session.generation
        params = {"temperature": g.temperature, "max_tokens": g.max_tokens}
        progress = Progress(session=self.study.session.name, simulated=self.study.session.simulated)
        progress.stages.setdefault(DIALOGUE_STAGE, StageProgress())
        if not self._loaded:
            # litellm's import takes about 3 s: in a thread, so the server's loop keeps serving other experts.
            from centaur_tui.llm.runtime import litellm

            await asyncio.to_thread(litellm)
            self._loaded = True
        calls = Calls(self.study, self.store, progress, self.gateway)
        calls.world_id = self._world_id  # one simulation world per assistant, not one per question
        asked_at, started = utc_now(), time.monotonic()
        number = (turns[-1].turn if turns else 0) + 1
        answer: str | None = None
        error: str | None = None
        key_sent: str | None = None
        try:
            await calls.db_read(calls.load)
            key_sent, answer = await calls.call(
                DIALOGUE_STAGE, self.study.session.model(place.condition), messages, params, f"live:{place.key}"
            )
        except BudgetExceeded as exc:
            error = f"budget: {exc}"
        except CallFailed as exc:
            error = f"{exc.error_type}: {exc}"
        finally:
            calls.close()
            self._world_id = calls.world_id
        turn = DialogueTurn(
            live_dialogue_id(place.key),
            number,
            "expert",
            place.condition,
            text,
            answer,
            "answered" if answer is not None else "failed",
            error,
            None,
            key_sent,
            asked_at,
            utc_now(),
            round(time.monotonic() - started, 3),
        )
        await asyncio.to_thread(save_dialogue_turns, self.store, [turn])
        shown = await asyncio.to_thread(self.state, key)
        if error is not None and error.startswith("budget:"):
            raise CentaurError(
                "the session's budget is used up: your assistant cannot answer now; go on writing",
                title="Assistant unavailable",
            )
        return shown.turns[-1]

    def ask_blocking(self, key: int, question: object) -> LiveTurn:
        """`ask` from a thread that has no event loop (the terminal app's thread worker)."""
        return asyncio.run(self.ask(key, question))


@dataclass(frozen=True)
class LiveConditionRow:
    """The live assistant's use under one condition of the human-worker arm (`centaur work-report`)."""

    condition: str
    deliverables: int
    """Work assignments of the condition (submitted or not): the denominator."""
    submitted: int
    with_questions: int
    """Assignments where the expert asked at least one question."""
    answered: int
    failed: int
    seconds: float
    """Seconds the answers took in all (asked to answered, measured in the organiser's process)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "condition": self.condition,
            "deliverables": self.deliverables,
            "submitted": self.submitted,
            "with_questions": self.with_questions,
            "answered": self.answered,
            "failed": self.failed,
            "seconds": round(self.seconds, 3),
        }


def live_assistant_summary(study: Study, store: Store) -> list[LiveConditionRow]:
    """Per condition of the arm: deliverables, how many asked, questions answered and failed, answer time.

    Empty when the session offers no questions (`[augmentation] turns = 1`) or has no human-worker arm.
    """
    from centaur_tui.store import WorkStore, live_dialogue_rows

    arm = study.session.human_workers
    if arm is None or study.session.augmentation.turns < 2:
        return []
    rows = live_dialogue_rows(store)
    work = WorkStore(store)
    assigned: dict[str, list[bool]] = {c: [] for c in arm.conditions}
    for expert in arm.experts:
        for a in work.assignments(expert):
            assigned.setdefault(a.condition, []).append(a.locked)
    out = []
    for condition, locks in assigned.items():
        mine = [r for r in rows if r.condition == condition]
        out.append(
            LiveConditionRow(
                condition=condition,
                deliverables=len(locks),
                submitted=sum(locks),
                with_questions=len(mine),  # a row per assignment with at least one question
                answered=sum(r.answered for r in mine),
                failed=sum(r.failed for r in mine),
                seconds=sum(r.seconds for r in mine),
            )
        )
    return out


def live_assistant_text(rows: list[LiveConditionRow], limit: int) -> str:
    """The `centaur work-report` block: one line per condition, with its denominators."""
    lines = [
        "",
        f"Live assistant (questions while writing, at most {limit} per deliverable; plain has none)",
        "condition  deliverables  submitted  asked  answered  failed  answer seconds",
    ]
    for r in rows:
        lines.append(
            f"{r.condition:<10} {r.deliverables:>12}  {r.submitted:>9}  {r.with_questions:>5}  {r.answered:>8}  "
            f"{r.failed:>6}  {r.seconds:>14.1f}"
        )
    lines.append(
        "asked: deliverables with at least one question; failed: provider errors (the expert went on writing)."
    )
    return "\n".join(lines) + "\n"
