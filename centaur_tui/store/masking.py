"""Provides a session's blinding (identity terms, blinding file) and the masking log of what experts were shown.

Every identity phrase masked in a text an expert sees is logged in `expert_maskings` (which
assignment, which option, which output, the term, how often), so an audit can tell what was
hidden from whom; the log is never shown to experts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from centaur_tui.domain.blinding import Blinding, blinding_for
from centaur_tui.domain.errors import StoreError
from centaur_tui.domain.study import Study
from centaur_tui.store import chain
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


def read_blinding_file(study: Study) -> str:
    """Text of the session's blinding file (`NAME.blinding.txt` beside the session file), or ''."""
    path = study.session_file.with_name(study.session_file.stem + ".blinding.txt")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the blinding file ({exc.strerror})") from None


def session_blinding(study: Study) -> Blinding:
    """The blinding of a session: defaults, its identity terms, and its blinding file."""
    return blinding_for(study.session, read_blinding_file(study))


def log_maskings(store: Store, entries: Iterable[tuple[int, int, str, str, int]]) -> None:
    """Log masked phrases: (assignment id, option 1 or 2, output id, term, occurrences); a repeat is ignored."""
    rows = [(*entry, utc_now()) for entry in entries]
    if not rows:
        return
    with store.write() as c:
        for row in rows:
            cur = c.execute(
                "INSERT OR IGNORE INTO expert_maskings (assignment_id, option, output_id, term, occurrences,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                row,
            )
            if cur.rowcount:  # each logged phrase is an audit event of the chain
                chain.append(c, "expert_maskings", cur.lastrowid)


def log_work_maskings(store: Store, entries: Iterable[tuple[int, str, str, int]]) -> None:
    """Log phrases masked on the work screen: (work assignment, assistance id, term, occurrences); repeats ignored."""
    rows = [(*entry, utc_now()) for entry in entries]
    if not rows:
        return
    with store.write() as c:
        for row in rows:
            cur = c.execute(
                "INSERT OR IGNORE INTO work_maskings (assignment_id, assistance_id, term, occurrences, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                row,
            )
            if cur.rowcount:
                chain.append(c, "work_maskings", cur.lastrowid)


@dataclass(frozen=True)
class WorkMasking:
    """One entry of the work screen's masking log (`work_masking_log`): a term masked in an assistance text."""

    id: int
    expert: str
    task: str
    assistance_id: str
    term: str
    occurrences: int
    created_at: str


@dataclass(frozen=True)
class Masking:
    """One entry of the judging masking log (`masking_log`): a term masked in one option of a comparison."""

    id: int
    expert: str
    comparison_id: str
    option: int
    output_id: str
    term: str
    occurrences: int
    created_at: str


def work_masking_log(store: Store) -> list[WorkMasking]:
    """The work screen's masking log, oldest first, with the expert and task of each entry (for audits)."""
    table = store.read_table(
        "SELECT m.id, a.expert, a.task, m.assistance_id, m.term, m.occurrences, m.created_at"
        " FROM work_maskings m JOIN work_assignments a ON a.id = m.assignment_id ORDER BY m.id"
    )
    return [WorkMasking(*row) for row in table.rows]


def masking_log(store: Store) -> list[Masking]:
    """The masking log, oldest first, with the expert and comparison of each entry (for audits)."""
    table = store.read_table(
        "SELECT m.id, a.expert, a.comparison_id, m.option, m.output_id, m.term, m.occurrences, m.created_at"
        " FROM expert_maskings m JOIN expert_assignments a ON a.id = m.assignment_id ORDER BY m.id"
    )
    return [Masking(*row) for row in table.rows]
