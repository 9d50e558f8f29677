"""Provides the experts' guesses of who wrote option 1 (`expert_guesses`, migration 27): facts, writes, reads."""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


@dataclass(frozen=True)
class GuessPlace:
    """What a guess on one place needs: the comparison's task and mode, every candidate of it, who wrote each option."""

    task: str
    mode: str
    candidates: tuple[str, ...]
    presented: tuple[str, str]


@dataclass(frozen=True)
class GuessRecord:
    """One stored guess (the newest of its place and option)."""

    assignment_id: int
    expert: str
    option: int
    label: str
    """The expert's own text, cleaned and cut ('': don't know)."""
    guessed: str | None
    """The one candidate the text names (None: none, or several)."""
    truth: str
    candidates: int
    families: int
    outcome: str
    """Candidate level: correct, incorrect, unmatched, family_only or dont_know (domain.guessing.score_guess)."""
    family_outcome: str
    """Family level: correct, incorrect, unmatched, dont_know or one_family."""


def guess_place(store: Store, assignment_id: int, presented: tuple[str, str]) -> GuessPlace | None:
    """The task, mode and candidates of a place's comparison (None: no such place)."""
    rows = store.read(
        "SELECT c.task, c.mode FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id WHERE a.id = ?",
        (assignment_id,),
    )
    if not rows:
        return None
    task, mode = rows[0]["task"], rows[0]["mode"]
    found = store.read("SELECT DISTINCT candidate FROM outputs WHERE task = ? AND mode = ?", (task, mode))
    return GuessPlace(task, mode, tuple(sorted(r["candidate"] for r in found)), presented)


def save_guess(store: Store, record: GuessRecord) -> None:
    """Store a guess (a new row; the newest of a place and option counts)."""
    with store.write() as c:
        c.execute(
            "INSERT INTO expert_guesses (assignment_id, expert, option, label, guessed, truth, candidates, families,"
            " outcome, family_outcome, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                record.assignment_id,
                record.expert,
                record.option,
                record.label,
                record.guessed,
                record.truth,
                record.candidates,
                record.families,
                record.outcome,
                record.family_outcome,
                utc_now(),
            ),
        )


def guess_records(store: Store, expert: str | None = None) -> list[GuessRecord]:
    """The newest guess of every place and option (of one expert, or all), oldest place first."""
    rows = store.read(
        "SELECT g.* FROM expert_guesses g WHERE g.id = (SELECT MAX(h.id) FROM expert_guesses h"
        " WHERE h.assignment_id = g.assignment_id AND h.option = g.option)"
        + (" AND g.expert = ?" if expert is not None else "")
        + " ORDER BY g.assignment_id, g.option",
        (expert,) if expert is not None else (),
    )
    return [
        GuessRecord(
            r["assignment_id"],
            r["expert"],
            r["option"],
            r["label"],
            r["guessed"],
            r["truth"],
            r["candidates"],
            r["families"],
            r["outcome"],
            r["family_outcome"],
        )
        for r in rows
    ]
