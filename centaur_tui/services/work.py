"""Provides the expert-work use cases: open judging or work queues, judge, write, assign and judge the human-worker arm.

The rule "an expert of the human-worker arm whose work queue is empty gets the arm's design
assigned when opening it" lives here, so the app, the CLI and a browser server share it. The
functions taking an expert id (queue, next item, draft, submit) are what a front end without
a long-lived source object (a browser server answering one request at a time) calls.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.domain.blinding import Draft, JudgingItem, QueueItem
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study
from centaur_tui.domain.work_design import WorkAssignment
from centaur_tui.services.session import expert, require_keys
from centaur_tui.store import JudgingSource, WorkDraft, word_count

if TYPE_CHECKING:
    from centaur_tui.pipeline.human_arm import HumanArmOutcome
    from centaur_tui.store import SessionJudging, SessionWork, Store, WorkItem, WorkQueueItem

__all__ = [
    "JudgingSource",
    "NoHumanArmError",
    "WorkAssignResult",
    "WorkDraft",
    "assign_work",
    "expert_queue",
    "judge_work",
    "next_comparison",
    "next_work",
    "open_judging",
    "open_work",
    "productivity_rows",
    "save_deliverable_draft",
    "save_judgment_draft",
    "submit_deliverable",
    "submit_judgment",
    "word_count",
    "work_queue",
]


class NoHumanArmError(CentaurError):
    """The session declares no `[human_workers]` arm."""

    def __init__(self, study: Study) -> None:
        super().__init__(f"session {study.session.name} has no [human_workers] section", title="No human-worker arm")


# -- judging -----------------------------------------------------------------------------------


def open_judging(study: Study, store: Store, expert_id: str) -> SessionJudging:
    """An expert's judging queue in the session database (what the judging screen reads and writes).

    Raises:
        CentaurError: no such expert.
    """
    from centaur_tui.store import SessionJudging

    source = SessionJudging(store, study, expert(study, store, expert_id))
    source.prepare_checks()  # practice and gold places (judging.expert_practice, expert_gold_rate)
    return source


def expert_queue(study: Study, store: Store, expert_id: str) -> list[QueueItem]:
    """The places of an expert's judging queue, in order, with their state."""
    return open_judging(study, store, expert_id).queue()


def next_comparison(study: Study, store: Store, expert_id: str) -> tuple[QueueItem, JudgingItem] | None:
    """The place to judge next (where the expert stopped, else the first open one) and its blinded comparison.

    None when all are judged.
    """
    source = open_judging(study, store, expert_id)
    queue = source.queue()
    resume = source.resume_key()
    open_items = [q for q in queue if q.state != "done"]
    place = next((q for q in open_items if q.key == resume), open_items[0] if open_items else None)
    if place is None:
        return None
    return place, source.item(place.key)


def save_judgment_draft(study: Study, store: Store, expert_id: str, key: str, draft: Draft, version: int) -> None:
    """Save an expert's judgment in progress (autosave); `version` orders concurrent saves."""
    open_judging(study, store, expert_id).save_draft(key, draft, version)


def submit_judgment(study: Study, store: Store, expert_id: str, key: str, draft: Draft) -> None:
    """Store an expert's judgment of one place of their queue.

    Raises:
        JudgingError: the place is not the expert's, or the draft is incomplete.
    """
    open_judging(study, store, expert_id).submit(key, draft)


# -- the human-worker arm ------------------------------------------------------------------------


@dataclass(frozen=True)
class WorkAssignResult:
    """The human-worker arm's design as stored: what was new, and how balanced the conditions are."""

    added: int
    design: list[WorkAssignment]
    spread: dict[str, int]
    """Largest difference in condition counts per task, per expert and overall."""

    def of(self, expert_id: str) -> list[WorkAssignment]:
        return [a for a in self.design if a.expert == expert_id]

    def conditions_of(self, expert_id: str) -> Counter[str]:
        return Counter(a.condition for a in self.of(expert_id))


def assign_work(study: Study, store: Store) -> WorkAssignResult:
    """Store the human-worker arm's design: each expert each task once, conditions balanced; idempotent.

    Raises:
        NoHumanArmError: the session has no `[human_workers]`.
    """
    from centaur_tui.domain.work_design import balance
    from centaur_tui.store import WorkStore

    arm = study.session.human_workers
    if arm is None:
        raise NoHumanArmError(study)
    added, design = WorkStore(store).assign(study)
    return WorkAssignResult(added, design, balance(design, arm.conditions))


def open_work(study: Study, store: Store, expert_id: str) -> SessionWork:
    """An expert's work queue; when it is empty, the arm's design is assigned first (as `centaur assign-work`).

    Raises:
        CentaurError: no such expert, or the expert is not a worker of the arm.
    """
    from centaur_tui.store import SessionWork

    arm = study.session.human_workers
    if arm is None:
        raise NoHumanArmError(study)
    if expert_id not in arm.experts:
        raise CentaurError(
            f"{expert_id} is not one of the human workers ({', '.join(arm.experts)})", title="Not a human worker"
        )
    source = SessionWork(store, study, expert(study, store, expert_id))
    if not source.queue():
        assign_work(study, store)
    return source


def work_queue(study: Study, store: Store, expert_id: str) -> list[WorkQueueItem]:
    """The tasks of an expert's work queue, in order (assigned first when empty)."""
    return open_work(study, store, expert_id).queue()


def next_work(study: Study, store: Store, expert_id: str) -> tuple[WorkItem, WorkDraft] | None:
    """The first task the expert has not submitted, with its draft so far; None when all are submitted."""
    source = open_work(study, store, expert_id)
    place = next((q for q in source.queue() if not q.locked), None)
    if place is None:
        return None
    return source.item(place.key), source.draft(place.key) or WorkDraft()


def save_deliverable_draft(
    study: Study, store: Store, expert_id: str, key: int, draft: WorkDraft, version: int
) -> bool:
    """Save a deliverable in progress; False when a newer version is stored already."""
    return open_work(study, store, expert_id).save_draft(key, draft, version)


def submit_deliverable(study: Study, store: Store, expert_id: str, key: int, draft: WorkDraft, version: int) -> str:
    """Submit (and lock) an expert's deliverable; returns the stored output's id.

    Raises:
        WorkError: the task is not the expert's, or it was submitted already.
    """
    return open_work(study, store, expert_id).submit(key, draft, version)


def judge_work(study: Study, store: Store) -> HumanArmOutcome:
    """Judge every submitted deliverable comparison not judged yet with the LLM judges (leave-family-out).

    Raises:
        MissingKeyError: a real judge needs a key that is not set.
        SessionBusyError: a run of the session is going on (its judge calls would be sent twice).
    """
    from centaur_tui.pipeline.human_arm import judge_human_arm
    from centaur_tui.store import SessionLock

    require_keys(study)
    with SessionLock(store.path):
        return judge_human_arm(study, store)


def productivity_rows(store: Store) -> list[dict[str, object]]:
    """Per submitted deliverable: expert, task, condition, seconds, words, edits, pastes (the work report's input)."""
    from centaur_tui.store import WorkStore

    return WorkStore(store).productivity_rows()
