"""Provides the writing use cases every seat calls: an expert worker's queue, task, assistance text, draft, submit.

The one home of an expert worker's rules: the assistance text is shown cleaned and masked
(every masked phrase logged), never who wrote it; a draft is saved only when newer than the
stored one and not submitted; an empty deliverable is not submitted; a submitted deliverable
is locked and enters the tournaments as an output. The app's work screen and the HTML seat
both open it with `services.work.open_work`; the store only reads and writes the rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from centaur_tui.domain.blinding import clean_text
from centaur_tui.domain.seat import WorkDraft, WorkError, WorkItem, WorkQueueItem, word_count
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.services.live_assistant import LiveAssistant
    from centaur_tui.store import Store, WorkStore

__all__ = [
    "SessionWork",
    "WorkDraft",
    "WorkError",
    "WorkItem",
    "WorkQueueItem",
    "WorkSource",
    "require_deliverable",
    "word_count",
]


class WorkSource(Protocol):
    """Where a seat gets an expert worker's queue and puts their deliverables (`SessionWork`)."""

    expert_name: str
    simulated: bool

    def queue(self) -> list[WorkQueueItem]:
        """The expert's tasks in queue order, each with whether it is submitted."""
        ...

    def item(self, key: int) -> WorkItem:
        """The task and its assistance text, cleaned and masked."""
        ...

    def draft(self, key: int) -> WorkDraft | None:
        """The deliverable so far (locked once submitted); None when nothing was saved."""
        ...

    def draft_version(self, key: int) -> int:
        """The version of a task's saved deliverable (0: none), for a seat that refuses saves made on an older one."""
        ...

    def save_draft(self, key: int, draft: WorkDraft, version: int, base: int | None = None) -> bool:
        """Save a deliverable in progress; False when a newer version is stored, it is submitted, or the
        stored version is not `base` (when given; 0: nothing saved)."""
        ...

    def submit(self, key: int, draft: WorkDraft, version: int) -> str:
        """Submit (and lock) a deliverable; returns the stored output's id."""
        ...


def require_deliverable(draft: WorkDraft) -> None:
    """Raise WorkError when a deliverable cannot be submitted yet (it is empty)."""
    if not draft.text.strip():
        raise WorkError("the deliverable is empty", title="Not complete yet")


class SessionWork:
    """One expert's work queue in the session database: what the work screen and the HTML seat read and write.

    Args:
        store: The session database.
        study: The session (tasks, blinding, simulated).
        expert: The expert writing.
    """

    def __init__(self, store: Store, study: Study, expert: ExpertSpec) -> None:
        from centaur_tui.store import WorkStore, session_blinding

        self.store = store
        self.work: WorkStore = WorkStore(store)
        self.study = study
        self.expert = expert
        self.expert_name = expert.name
        self.simulated = study.session.simulated
        self._blinding = session_blinding(study)
        self.masked = 0
        """Masks inserted into the assistance texts shown so far (the log keeps one row per phrase)."""
        self._assistant: LiveAssistant | None = None

    def queue(self) -> list[WorkQueueItem]:
        """The expert's tasks in queue order, each with whether it is submitted."""
        return [
            WorkQueueItem(r.id, r.position, self.study.task(r.task).title, r.locked)
            for r in self.work.assignments(self.expert.id)
        ]

    def next_place(self) -> WorkQueueItem | None:
        """The first task the expert has not submitted; None when all are."""
        return next((q for q in self.queue() if not q.locked), None)

    def item(self, key: int) -> WorkItem:
        """The task and its assistance text, cleaned and masked (each masked phrase logged).

        Raises:
            WorkError: no such task in the expert's queue.
        """
        from centaur_tui.store.masking import log_work_maskings

        place = self.work.place(key)
        if place is None or place.expert != self.expert.id:
            raise WorkError(f"no work assignment {key} for {self.expert.id}")
        task = self.study.task(place.task)
        assistance = place.assistance
        if assistance is not None and place.assistance_id is not None:
            assistance, masked = self._blinding.mask(clean_text(assistance))
            self.masked += sum(m.occurrences for m in masked)
            log_work_maskings(self.store, [(key, place.assistance_id, m.term, m.occurrences) for m in masked])
        return WorkItem(key, task.title, clean_text(task.prompt), task.deliverable, assistance)

    def _own(self, key: int) -> None:
        if not any(q.key == key for q in self.queue()):
            raise WorkError(f"no work assignment {key} for {self.expert.id}")

    def draft(self, key: int) -> WorkDraft | None:
        """The deliverable so far (locked once submitted); None when nothing was saved."""
        self._own(key)
        return self.work.draft(key)

    def draft_version(self, key: int) -> int:
        """The version of a task's saved deliverable; 0 when nothing is saved."""
        self._own(key)
        return self.work.draft_version(key)

    def save_draft(self, key: int, draft: WorkDraft, version: int, base: int | None = None) -> bool:
        """Save a deliverable in progress; False when a newer version is stored, it is submitted, or the
        stored version is not `base` (when given; 0: nothing saved)."""
        self._own(key)
        return self.work.save_draft(key, draft, version, base)

    def submit(self, key: int, draft: WorkDraft, version: int) -> str:
        """Submit (and lock) a deliverable; returns the stored output's id.

        Raises:
            WorkError: the deliverable is empty, the task is not the expert's, or it was submitted already.
        """
        require_deliverable(draft)
        self._own(key)
        return self.work.submit(key, draft, version)

    def assistant(self) -> LiveAssistant:
        """The expert's live assistant (issue 28), asking from this process: the app that runs the session."""
        if self._assistant is None:
            from centaur_tui.services.live_assistant import LiveAssistant

            self._assistant = LiveAssistant(self.study, self.store, self.expert.id)
        return self._assistant

    def close(self) -> None:
        """The store belongs to the caller; nothing to release here."""
