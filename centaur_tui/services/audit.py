"""Provides the audit use case: every record behind one cell of the results (a candidate in a task and mode)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from centaur_tui.services.session import stored_simulated

if TYPE_CHECKING:
    from centaur_tui.store import CellAudit, LeftOut, Store


def cell_audit(store: Store, task: str, mode: str, candidate: str) -> tuple[CellAudit, bool]:
    """(the cell's comparisons with their outputs, judgments, calls and failed attempts; whether they are simulated).

    Args:
        store: The session database.
        task: Task id.
        mode: "automation" or "augmentation".
        candidate: The candidate whose comparisons are wanted.
    """
    from centaur_tui.store import cell_audit as read_cell

    return read_cell(store, task, mode, candidate), stored_simulated(store)


def left_out(store: Store) -> LeftOut:
    """Invalid judgments (with their reasons and where they belong) and logged provider errors, newest first.

    Args:
        store: The session database.
    """
    from centaur_tui.store import left_out as read_left_out

    return read_left_out(store)
