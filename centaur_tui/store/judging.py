"""Provides the rows of an expert's judging in the session database: places, drafts, judgments, revisions.

`JudgingRows` reads and writes them for one expert and returns records (`AssignedComparison`,
`AssignmentPlace`, `StoredExpertJudgment`, `Draft`); what a seat may do with them (completeness,
practice and gold, revisions, skip and flag) is decided in `services.judging`, the one place
every seat (the app, the HTML seat, a packet) goes through.
"""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.domain.blinding import Draft
from centaur_tui.domain.records import JudgmentRecord
from centaur_tui.domain.seat import FlagNote, PlaceState
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store

_JUDGED = (
    "EXISTS (SELECT 1 FROM judgments j WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert"
    " AND j.presentation = a.presentation AND j.judge_kind = 'expert')"
)
"""SQL: the assignment `a` has a stored expert judgment (it is done; there is no "done" state to disagree)."""


@dataclass(frozen=True)
class AssignedComparison:
    """One place of an expert's queue with its comparison: what to show, and how (flipped or not)."""

    id: int
    comparison_id: str
    presentation: int
    flipped: bool
    task: str
    candidate_a: str
    candidate_b: str
    output_a: str
    output_b: str
    prompt: str | None = None
    """The comparison's own prompt text (a generic task's question, `comparisons.prompt`); None: the task's."""

    @property
    def presented_candidates(self) -> tuple[str, str]:
        """The candidates shown as option 1 and option 2."""
        return (self.candidate_b, self.candidate_a) if self.flipped else (self.candidate_a, self.candidate_b)

    @property
    def presented_outputs(self) -> tuple[str, str]:
        """The outputs shown as option 1 and option 2."""
        return (self.output_b, self.output_a) if self.flipped else (self.output_a, self.output_b)


@dataclass(frozen=True)
class AssignmentPlace:
    """One comparison place of an expert's queue as the queue lists it."""

    id: int
    position: int
    state: str
    task: str
    done: bool


@dataclass(frozen=True)
class StoredExpertJudgment:
    """The latest revision of an expert's stored judgment of one place."""

    id: int
    revision: int
    option1: str
    option2: str
    winner: str | None
    rationale: str
    seconds: float
    active_seconds: float | None
    scores: tuple[tuple[str, str, int], ...]
    """(candidate, dimension, score) rows."""


class JudgingRows:
    """One expert's judging rows in the session database.

    Args:
        store: The session database.
        expert_id: Whose places; every read and write is limited to them.
    """

    def __init__(self, store: Store, expert_id: str) -> None:
        self.store = store
        self.expert_id = expert_id

    def assignment(self, assignment_id: int) -> AssignedComparison | None:
        """A place of this expert's queue with its comparison; None when it is not theirs."""
        rows = self.store.read(
            "SELECT a.id, a.comparison_id, a.presentation, a.flipped, c.task, c.candidate_a, c.candidate_b,"
            " c.output_a, c.output_b, c.prompt FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE a.id = ? AND a.expert = ?",
            (assignment_id, self.expert_id),
        )
        if not rows:
            return None
        r = rows[0]
        return AssignedComparison(
            r["id"],
            r["comparison_id"],
            r["presentation"],
            bool(r["flipped"]),
            r["task"],
            r["candidate_a"],
            r["candidate_b"],
            r["output_a"],
            r["output_b"],
            r["prompt"],
        )

    def places(self) -> list[AssignmentPlace]:
        """The expert's comparison places in queue order, each with its state and whether it is judged."""
        rows = self.store.read(
            f"SELECT a.id, a.position, a.state, c.task, {_JUDGED} AS done"
            " FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE a.expert = ? ORDER BY a.position",
            (self.expert_id,),
        )
        return [AssignmentPlace(r["id"], r["position"], r["state"], r["task"], bool(r["done"])) for r in rows]

    def output_texts(self, output_ids: tuple[str, ...]) -> dict[str, tuple[str, bool]]:
        """The stored texts of some outputs, by id, each with whether the provider cut it off at max_tokens."""
        marks = ", ".join("?" * len(output_ids))
        return {
            r["id"]: (r["text"], bool(r["cut_off"]))
            for r in self.store.read(f"SELECT id, text, cut_off FROM outputs WHERE id IN ({marks})", output_ids)
        }

    def draft(self, assignment_id: int) -> Draft | None:
        """The saved draft of one of the expert's places, if any."""
        rows = self.store.read(
            "SELECT d.scores, d.winner, d.rationale, d.seconds, d.active_seconds, d.pasted_chars FROM expert_drafts d"
            " JOIN expert_assignments a ON a.id = d.assignment_id WHERE d.assignment_id = ? AND a.expert = ?",
            (assignment_id, self.expert_id),
        )
        if not rows:
            return None
        r = rows[0]
        return Draft(
            Draft.scores_from_json(r["scores"]),
            r["winner"],
            r["rationale"],
            r["seconds"],
            r["active_seconds"],
            pasted_chars=r["pasted_chars"],
        )

    def resume_id(self) -> int | None:
        """The open place whose draft was saved last (highest version); None when no open place has a draft."""
        value = self.store.read_value(
            "SELECT d.assignment_id FROM expert_drafts d JOIN expert_assignments a ON a.id = d.assignment_id"
            f" WHERE a.expert = ? AND NOT {_JUDGED} ORDER BY d.version DESC LIMIT 1",
            (self.expert_id,),
        )
        return None if value is None else int(value)

    def draft_version(self, assignment_id: int) -> int:
        """The version of a place's stored draft; 0 when it has none."""
        value = self.store.read_value(
            "SELECT d.version FROM expert_drafts d JOIN expert_assignments a ON a.id = d.assignment_id"
            " WHERE d.assignment_id = ? AND a.expert = ?",
            (assignment_id, self.expert_id),
        )
        return 0 if value is None else int(value)

    def save_draft(self, assignment_id: int, draft: Draft, version: int, base: int | None = None) -> bool:
        """Save a draft of one of the expert's places; whether it was stored.

        Not stored: a version no higher than the stored one, or (`base` given) a stored version
        other than `base` (0: no draft), read in the same write transaction as the save, so a
        page that loaded an older draft can never overwrite a newer one.
        """
        with self.store.write() as c:
            if base is not None:
                row = c.execute(
                    "SELECT version FROM expert_drafts WHERE assignment_id = ?", (assignment_id,)
                ).fetchone()
                if (0 if row is None else int(row[0])) != base:
                    return False
            cur = c.execute(
                "INSERT INTO expert_drafts (assignment_id, scores, winner, rationale, seconds, active_seconds,"
                " pasted_chars, version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (assignment_id)"
                " DO UPDATE SET scores = excluded.scores, winner = excluded.winner, rationale = excluded.rationale,"
                " seconds = excluded.seconds, active_seconds = excluded.active_seconds,"
                " pasted_chars = excluded.pasted_chars,"
                " version = excluded.version, updated_at = excluded.updated_at"
                " WHERE excluded.version > expert_drafts.version",
                (
                    assignment_id,
                    draft.to_json(),
                    draft.winner,
                    draft.rationale,
                    draft.seconds,
                    draft.active_seconds,
                    draft.pasted_chars,
                    version,
                    utc_now(),
                ),
            )
        return cur.rowcount > 0

    def add_flag_note(self, place: str, note: str) -> None:
        """Keep the expert's note on a place they flagged (a row of `expert_flag_notes`; earlier notes stay)."""
        with self.store.write() as c:
            c.execute(
                "INSERT INTO expert_flag_notes (expert, place, note, noted_at) VALUES (?, ?, ?, ?)",
                (self.expert_id, place, note, utc_now()),
            )

    def flag_notes(self, place: str) -> list[str]:
        """The expert's notes on one place, oldest first."""
        return [
            str(r["note"])
            for r in self.store.read(
                "SELECT note FROM expert_flag_notes WHERE expert = ? AND place = ? ORDER BY id",
                (self.expert_id, place),
            )
        ]

    def store_judgment(self, assignment_id: int, record: JudgmentRecord) -> bool:
        """Store a judgment of a place and delete its draft; False when that revision is stored already."""
        if self.store.save_judgment(record) is None:
            return False
        with self.store.write() as c:
            c.execute("DELETE FROM expert_drafts WHERE assignment_id = ?", (assignment_id,))
        return True

    def set_state(self, assignment_id: int, state: PlaceState) -> bool:
        """Mark one of the expert's places; False when it is not theirs."""
        with self.store.write() as c:
            cur = c.execute(
                "UPDATE expert_assignments SET state = ? WHERE id = ? AND expert = ?",
                (state, assignment_id, self.expert_id),
            )
        return cur.rowcount > 0

    def latest_judgment(self, a: AssignedComparison) -> StoredExpertJudgment | None:
        """The latest revision of the expert's stored judgment of a place; None when it is not judged."""
        rows = self.store.read(
            "SELECT id, winner, rationale, seconds, active_seconds, revision, option1, option2 FROM judgments"
            " WHERE comparison_id = ? AND judge = ? AND presentation = ? AND judge_kind = 'expert'"
            " ORDER BY revision DESC LIMIT 1",
            (a.comparison_id, self.expert_id, a.presentation),
        )
        if not rows:
            return None
        r = rows[0]
        scores = tuple(
            (s["candidate"], s["dimension"], s["score"])
            for s in self.store.read("SELECT candidate, dimension, score FROM scores WHERE judgment_id = ?", (r["id"],))
        )
        return StoredExpertJudgment(
            r["id"],
            r["revision"],
            r["option1"],
            r["option2"],
            r["winner"],
            r["rationale"] or "",
            r["seconds"] or 0.0,
            r["active_seconds"],
            scores,
        )

    def judged_latest_first(self) -> list[int]:
        """The expert's judged places, the one whose latest judgment (or revision) was stored last first."""
        rows = self.store.read(
            "SELECT a.id, max(j.id) AS last FROM expert_assignments a JOIN judgments j"
            " ON j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
            " AND j.judge_kind = 'expert' WHERE a.expert = ? GROUP BY a.id ORDER BY last DESC",
            (self.expert_id,),
        )
        return [int(r["id"]) for r in rows]


def flag_note_rows(store: Store) -> list[FlagNote]:
    """Every expert's flag notes, oldest first, each with its place's task (the report's seat section)."""
    rows = store.read(
        "SELECT n.expert, n.place, n.note, n.noted_at, coalesce(c.task, k.task) AS task"
        " FROM expert_flag_notes n"
        " LEFT JOIN expert_assignments a ON n.place = CAST(a.id AS TEXT) AND a.expert = n.expert"
        " LEFT JOIN comparisons c ON c.id = a.comparison_id"
        " LEFT JOIN expert_checks k ON k.token = n.place AND k.expert = n.expert"
        " ORDER BY n.id"
    )
    return [FlagNote(r["expert"], r["place"], r["task"], r["note"], r["noted_at"]) for r in rows]
