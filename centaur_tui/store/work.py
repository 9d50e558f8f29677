"""Provides the human-worker side of a session database: work assignments, drafts, submitted deliverables.

Tables (defined in `store.schema`):

- `work_assignments`: one row per (expert, task): the condition (an assistant's name or
  `plain`), the assistance text used (`assistance_id`, from the pipeline's run 1, see
  `ASSISTANCE_RUN`), and the place in the expert's queue;
- `work_drafts`: the deliverable so far with time on task, edits, pastes, a version (newest
  wins) and `locked` (1 once submitted).

A submitted deliverable becomes a row of the `outputs` table (worker = expert id,
worker_kind 'expert', mode 'augmentation', candidate = the condition, run = ASSISTANCE_RUN),
written in the same transaction that locks the draft, so it enters the tournaments like a
model-written output.
"""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.domain.plan import assistance_id, output_id
from centaur_tui.domain.seat import HumanOutput, ProductivityRecord, WorkDraft, WorkError, word_count
from centaur_tui.domain.session import PLAIN
from centaur_tui.domain.study import Study
from centaur_tui.domain.work_design import ASSISTANCE_RUN, WorkAssignment, design_work
from centaur_tui.store import chain
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


@dataclass(frozen=True)
class WorkAssignmentRow:
    """One stored work assignment: who writes which task under which condition, and whether it is submitted."""

    id: int
    expert: str
    task: str
    condition: str
    assistance_id: str | None
    position: int
    locked: bool


@dataclass(frozen=True)
class WorkPlaceRow:
    """One work assignment with the assistance text it shows (None under `plain`), as stored (not yet masked)."""

    id: int
    expert: str
    task: str
    assistance_id: str | None
    assistance: str | None


class WorkStore:
    """The work tables of one session database (reuses the store's connection, lock and writes)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- assignment -------------------------------------------------------------------------

    def assign(self, study: Study) -> tuple[int, list[WorkAssignment]]:
        """Store the arm's design; assignments already stored are kept. Returns (added, design).

        Raises:
            WorkError: the session has no human-worker arm, or an assistance text is missing
                (run the pipeline first).
        """
        arm = study.session.human_workers
        if arm is None:
            raise WorkError(f"{study.session_file}: the session declares no [human_workers] arm")
        design = design_work(arm, study.session.seed)
        have = {r["id"] for r in self.store.read("SELECT id FROM assistance_texts")}
        rows = []
        for a in design:
            aid = None if a.condition == PLAIN else assistance_id(ASSISTANCE_RUN, a.task, a.condition)
            if aid is not None and aid not in have:
                raise WorkError(
                    f"no assistance text of {a.condition} for task {a.task} in run {ASSISTANCE_RUN} yet: "
                    f"run the session first (`centaur run {study.session_file}`)",
                    title="Run the session first",
                )
            rows.append((a.expert, a.task, a.condition, aid, a.position, utc_now()))
        with self.store.write() as c:
            before = c.total_changes
            c.executemany(
                "INSERT OR IGNORE INTO work_assignments (expert, task, condition, assistance_id, position, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            added = c.total_changes - before
        return added, design

    def assignments(self, expert: str | None = None) -> list[WorkAssignmentRow]:
        """The stored assignments (of one expert when given), by expert and queue position."""
        rows = self.store.read(
            "SELECT a.id, a.expert, a.task, a.condition, a.assistance_id, a.position,"
            " coalesce(d.locked, 0) AS locked FROM work_assignments a"
            " LEFT JOIN work_drafts d ON d.assignment_id = a.id WHERE ?1 IS NULL OR a.expert = ?1"
            " ORDER BY a.expert, a.position",
            (expert,),
        )
        return [
            WorkAssignmentRow(
                r["id"], r["expert"], r["task"], r["condition"], r["assistance_id"], r["position"], bool(r["locked"])
            )
            for r in rows
        ]

    def place(self, key: int) -> WorkPlaceRow | None:
        """One assignment with its assistance text; None when there is no such assignment."""
        rows = self.store.read(
            "SELECT a.id, a.expert, a.task, a.assistance_id, t.text AS assistance FROM work_assignments a"
            " LEFT JOIN assistance_texts t ON t.id = a.assistance_id WHERE a.id = ?",
            (key,),
        )
        if not rows:
            return None
        r = rows[0]
        return WorkPlaceRow(r["id"], r["expert"], r["task"], r["assistance_id"], r["assistance"])

    def workload(self) -> dict[str, tuple[int, int]]:
        """Per expert: (tasks assigned, deliverables submitted)."""
        return {
            r["expert"]: (r["n"], r["done"] or 0)
            for r in self.store.read(
                "SELECT a.expert, count(*) AS n, sum(coalesce(d.locked, 0)) AS done FROM work_assignments a"
                " LEFT JOIN work_drafts d ON d.assignment_id = a.id GROUP BY a.expert"
            )
        }

    # -- drafts -----------------------------------------------------------------------------

    def draft(self, key: int) -> WorkDraft | None:
        rows = self.store.read(
            "SELECT text, seconds, edits, pastes, locked FROM work_drafts WHERE assignment_id = ?", (key,)
        )
        if not rows:
            return None
        r = rows[0]
        return WorkDraft(r["text"], r["seconds"], r["edits"], r["pastes"], bool(r["locked"]))

    def draft_version(self, key: int) -> int:
        """The version of a task's saved deliverable; 0 when nothing is saved."""
        value = self.store.read_value("SELECT version FROM work_drafts WHERE assignment_id = ?", (key,))
        return 0 if value is None else int(value)

    def save_draft(self, key: int, draft: WorkDraft, version: int, base: int | None = None) -> bool:
        """Save a draft unless a newer version is stored or it is locked. Returns whether it was written.

        With `base`, also only when the stored version is `base` (0: nothing saved), read in the
        same write transaction: a page holding an older draft never overwrites a newer one.
        """
        with self.store.write() as c:
            if base is not None:
                row = c.execute("SELECT version FROM work_drafts WHERE assignment_id = ?", (key,)).fetchone()
                if (0 if row is None else int(row[0])) != base:
                    return False
            cur = c.execute(
                "INSERT INTO work_drafts (assignment_id, text, seconds, edits, pastes, version, locked, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT (assignment_id) DO UPDATE SET text = excluded.text,"
                " seconds = excluded.seconds, edits = excluded.edits, pastes = excluded.pastes,"
                " version = excluded.version, updated_at = excluded.updated_at"
                " WHERE work_drafts.version < excluded.version AND work_drafts.locked = 0",
                (key, draft.text, draft.seconds, draft.edits, draft.pastes, version, utc_now()),
            )
            return cur.rowcount > 0

    def submit(self, key: int, draft: WorkDraft, version: int) -> str:
        """Lock the draft and store it as an output, in one transaction. Returns the output id.

        The caller (`services.writing`) checked the deliverable is complete.

        Raises:
            WorkError: unknown assignment, or already submitted.
        """
        rows = self.store.read(
            "SELECT expert, task, condition, assistance_id FROM work_assignments WHERE id = ?", (key,)
        )
        if not rows:
            raise WorkError(f"no work assignment {key}")
        a = rows[0]
        oid = output_id(ASSISTANCE_RUN, a["task"], "augmentation", a["condition"], a["expert"])
        with self.store.write() as c:
            locked = c.execute("SELECT locked FROM work_drafts WHERE assignment_id = ?", (key,)).fetchone()
            if locked and locked[0]:
                raise WorkError("this deliverable is already submitted", title="Already submitted")
            c.execute(
                "INSERT INTO work_drafts (assignment_id, text, seconds, edits, pastes, version, locked, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, 1, ?) ON CONFLICT (assignment_id) DO UPDATE SET text = excluded.text,"
                " seconds = excluded.seconds, edits = excluded.edits, pastes = excluded.pastes,"
                " version = excluded.version, locked = 1, updated_at = excluded.updated_at",
                (key, draft.text, draft.seconds, draft.edits, draft.pastes, version, utc_now()),
            )
            chain.append(c, "work_drafts", key)
            c.execute(
                "INSERT INTO outputs (id, run, task, mode, candidate, worker, worker_kind, text, assistance_id,"
                " call_key, created_at) VALUES (?, ?, ?, 'augmentation', ?, ?, 'expert', ?, ?, NULL, ?)",
                (
                    oid,
                    ASSISTANCE_RUN,
                    a["task"],
                    a["condition"],
                    a["expert"],
                    draft.text,
                    a["assistance_id"],
                    utc_now(),
                ),
            )
        return oid

    def productivity_rows(self) -> list[ProductivityRecord]:
        """One record per submitted deliverable: expert, task, condition, seconds, edits, pastes, words, characters."""
        rows = self.store.read_table(
            "SELECT a.expert, a.task, a.condition, d.seconds, d.edits, d.pastes, d.text FROM work_assignments a"
            " JOIN work_drafts d ON d.assignment_id = a.id WHERE d.locked = 1 ORDER BY a.expert, a.position"
        ).rows
        return [
            ProductivityRecord(expert, task, condition, seconds, edits, pastes, word_count(text), len(text))
            for expert, task, condition, seconds, edits, pastes, text in rows
        ]

    def expert_outputs(self) -> list[HumanOutput]:
        """Submitted expert deliverables: output id, run, task, condition (candidate), expert (worker), text."""
        rows = self.store.read(
            "SELECT id, run, task, candidate, worker, text FROM outputs WHERE worker_kind = 'expert'"
            " AND mode = 'augmentation' ORDER BY task, candidate, worker"
        )
        return [HumanOutput(r["id"], r["run"], r["task"], r["candidate"], r["worker"], r["text"]) for r in rows]
