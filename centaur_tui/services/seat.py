"""Provides the expert's seat: what one expert alone may reach (their own queues), for expert-only front ends.

The HTML seat of `centaur serve` (its home page) and the terminal app in expert-only mode read
an expert's queues from `expert_desk`; nothing here (or reachable from either) runs the
pipeline or sends a call. (A flag's note is kept by `services.judging`'s `set_state`.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.services.session import expert

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.store import Store


@dataclass(frozen=True)
class ExpertDesk:
    """One expert's queues as they stand, and where the expert was."""

    expert_id: str
    name: str
    assigned: int
    """Places in the judging queue."""
    judged: int
    worker: bool
    """The expert is one of the session's human workers (`[human_workers]`)."""
    tasks: int
    """Tasks in the work queue (0 until the arm's design is assigned on opening it)."""
    submitted: int
    resume: str | None
    """"judging" or "work": where the expert saved work last; None when they have done nothing yet."""

    @property
    def judging_open(self) -> bool:
        return self.assigned > self.judged

    @property
    def work_open(self) -> bool:
        return self.worker and (self.tasks == 0 or self.submitted < self.tasks)


def expert_desk(study: Study, store: Store, expert_id: str) -> ExpertDesk:
    """The expert's queues and where they were.

    Raises:
        CentaurError: no such expert.
    """
    from centaur_tui.store import ExpertStore, WorkStore

    spec = expert(study, store, expert_id)
    experts = ExpertStore(store)
    assigned, judged = experts.workload().get(spec.id, (0, 0))
    arm = study.session.human_workers
    worker = arm is not None and spec.id in arm.experts
    tasks, submitted = WorkStore(store).workload().get(spec.id, (0, 0)) if worker else (0, 0)
    judging_at, writing_at = experts.last_activity(spec.id)
    resume: str | None = None
    if judging_at is not None or writing_at is not None:
        resume = "work" if (writing_at or "") > (judging_at or "") else "judging"
    return ExpertDesk(spec.id, spec.name, assigned, judged, worker, tasks, submitted, resume)


PLACE_KEY_META = "serve_place_key"


def place_key(store: Store) -> bytes:
    """The key the HTML seat names queue places with (a keyed hash of each place's key), made on first need.

    Kept in the session's `meta` so a page served before a restart of `centaur serve` names the
    same places after it. It hides nothing from a reader of the database (who sees the queues
    themselves); it keeps a page from telling a gold check's key from a comparison's.
    """
    import secrets

    value = store.meta().get(PLACE_KEY_META)
    if not value:
        value = secrets.token_hex(32)
        store.set_meta({PLACE_KEY_META: value})
    return bytes.fromhex(value)
