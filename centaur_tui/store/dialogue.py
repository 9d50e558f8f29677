"""Provides the dialogue turns of the store: a worker's questions and its assistant's answers, in order, with times.

One dialogue is one deliverable's: the output id for a model worker (the pipeline writes its
turns with the output), the work assignment for an expert (each question is stored as it is
answered, before the deliverable exists). Turn n is the n-th question; the assistance text that
opened the dialogue is the assistance stage's own record.
"""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


@dataclass(frozen=True)
class DialogueTurn:
    """One question of a dialogue and what became of it."""

    dialogue: str
    turn: int
    worker_kind: str
    assistant: str
    question: str
    answer: str | None
    outcome: str
    """`answered`, or `failed` (the provider failed for good; `error` says why, the worker goes on)."""
    error: str | None = None
    question_key: str | None = None
    answer_key: str | None = None
    asked_at: str | None = None
    answered_at: str | None = None
    seconds: float | None = None


_COLUMNS = (
    "dialogue, turn, worker_kind, assistant, question, answer, outcome, error, question_key, answer_key,"
    " asked_at, answered_at, seconds"
)


def save_dialogue_turns(store: Store, turns: list[DialogueTurn]) -> None:
    """Store turns (one transaction); a turn stored before is kept as it was (a resumed run writes the same)."""
    now = utc_now()
    with store.write() as c:
        for t in turns:
            c.execute(
                f"INSERT OR IGNORE INTO dialogue_turns ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    t.dialogue,
                    t.turn,
                    t.worker_kind,
                    t.assistant,
                    t.question,
                    t.answer,
                    t.outcome,
                    t.error,
                    t.question_key,
                    t.answer_key,
                    t.asked_at or now,
                    t.answered_at,
                    t.seconds,
                ),
            )


def dialogue_turns(store: Store, dialogue: str) -> list[DialogueTurn]:
    """The turns of one dialogue, in order (empty for a deliverable written without a dialogue)."""
    if not _has_table(store):
        return []
    rows = store.read(f"SELECT {_COLUMNS} FROM dialogue_turns WHERE dialogue = ? ORDER BY turn", (dialogue,))
    return [DialogueTurn(**r) for r in rows]


def all_dialogue_turns(store: Store, worker_kind: str | None = None) -> list[DialogueTurn]:
    """Every stored turn (of one kind of worker, if given), by dialogue and turn."""
    if not _has_table(store):
        return []
    where, params = ("WHERE worker_kind = ?", (worker_kind,)) if worker_kind else ("", ())
    rows = store.read(f"SELECT {_COLUMNS} FROM dialogue_turns {where} ORDER BY dialogue, turn", params)
    return [DialogueTurn(**r) for r in rows]


def _has_table(store: Store) -> bool:
    # A database opened read-only at an older schema (an old fixture) has no dialogue table: no turns.
    return bool(store.read_value("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'dialogue_turns'"))


@dataclass(frozen=True)
class LivePlace:
    """A human worker's work assignment as the live assistant needs it (raw texts: the service masks them)."""

    key: int
    expert: str
    task: str
    condition: str
    assistance_id: str | None
    assistance: str | None
    locked: bool


def live_place(store: Store, key: int) -> LivePlace | None:
    """One work assignment with its condition, assistance text and whether it is submitted; None when unknown."""
    rows = store.read(
        "SELECT a.id, a.expert, a.task, a.condition, a.assistance_id, t.text AS assistance,"
        " coalesce(d.locked, 0) AS locked FROM work_assignments a"
        " LEFT JOIN assistance_texts t ON t.id = a.assistance_id"
        " LEFT JOIN work_drafts d ON d.assignment_id = a.id WHERE a.id = ?",
        (key,),
    )
    if not rows:
        return None
    r = rows[0]
    return LivePlace(
        r["id"], r["expert"], r["task"], r["condition"], r["assistance_id"], r["assistance"], bool(r["locked"])
    )


@dataclass(frozen=True)
class LiveDialogueRow:
    """One work assignment's live assistant use: its condition, questions answered and failed, answer seconds."""

    expert: str
    task: str
    condition: str
    submitted: bool
    answered: int
    failed: int
    seconds: float


def live_dialogue_rows(store: Store) -> list[LiveDialogueRow]:
    """Per work assignment with at least one question (submitted or not): what its live assistant did."""
    if not _has_table(store):
        return []
    rows = store.read(
        "SELECT a.expert, a.task, a.condition, coalesce(d.locked, 0) AS submitted,"
        " sum(t.outcome = 'answered') AS answered, sum(t.outcome = 'failed') AS failed,"
        " sum(coalesce(t.seconds, 0)) AS seconds FROM dialogue_turns t"
        " JOIN work_assignments a ON t.dialogue = 'work:' || a.id"
        " LEFT JOIN work_drafts d ON d.assignment_id = a.id"
        " WHERE t.worker_kind = 'expert' GROUP BY a.id ORDER BY a.condition, a.expert, a.task"
    )
    return [
        LiveDialogueRow(
            r["expert"],
            r["task"],
            r["condition"],
            bool(r["submitted"]),
            int(r["answered"] or 0),
            int(r["failed"] or 0),
            float(r["seconds"] or 0.0),
        )
        for r in rows
    ]
