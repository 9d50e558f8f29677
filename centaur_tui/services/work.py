"""Provides the expert-work entry points: open an expert's judging or work queue, assign and judge the human-worker arm.

Every seat (the app's screens, the HTML seat, `centaur judge`) opens its source here or in
`services.judging`; the rules themselves live in `services.judging` (judging: completeness,
practice and gold, revisions, skip and flag) and `services.writing` (writing). The rule "an
expert of the human-worker arm whose work queue is empty gets the arm's design assigned when
opening it" lives here, so the app, the CLI and a browser server share it. A front end
answering one request at a time opens the source per request (`open_judging(...).submit(...)`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.seat import ProductivityRecord, WorkDraft, word_count
from centaur_tui.domain.study import Study
from centaur_tui.domain.work_design import WorkAssignment
from centaur_tui.services.judging import JudgingSource, SessionJudging, open_judging
from centaur_tui.services.session import expert, require_keys
from centaur_tui.services.writing import SessionWork

if TYPE_CHECKING:
    from centaur_tui.pipeline.human_arm import HumanArmOutcome
    from centaur_tui.store import Store

__all__ = [
    "JudgingSource",
    "NoHumanArmError",
    "SessionJudging",
    "SessionWork",
    "WorkAssignResult",
    "WorkDraft",
    "assign_work",
    "judge_work",
    "open_judging",
    "open_work",
    "productivity_rows",
    "word_count",
]


class NoHumanArmError(CentaurError):
    """The session declares no `[human_workers]` arm."""

    def __init__(self, study: Study) -> None:
        super().__init__(f"session {study.session.name} has no [human_workers] section", title="No human-worker arm")


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


def productivity_rows(store: Store) -> list[ProductivityRecord]:
    """Per submitted deliverable: expert, task, condition, seconds, words, edits, pastes (the work report's input)."""
    from centaur_tui.store import WorkStore

    return WorkStore(store).productivity_rows()
