"""Provides the audit use case: every record behind one cell of the results (a candidate in a task and mode)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from centaur_tui.services.session import stored_simulated

if TYPE_CHECKING:
    from centaur_tui.domain.agreement import Label
    from centaur_tui.domain.served import ServedCall
    from centaur_tui.domain.study import Study
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


def disagreements(
    store: Store, judge_a: str, judge_b: str, dimension: str, adjudicated_reference: bool = False
) -> list[tuple[Label, Label]]:
    """Exactly the comparisons two judges labelled differently on a dimension (a cell of the agreement matrix).

    The same labels as the matrix (`domain.agreement.labels`), so the list is as long as the
    cell's `n - agree`. No pandas: the app calls it on its own process.
    """
    from centaur_tui.domain.agreement import disagreements as differing
    from centaur_tui.domain.agreement import labels
    from centaur_tui.store.adjudication import adjudicated_verdicts, scored_verdicts

    found = scored_verdicts(store)
    if adjudicated_reference:
        found += adjudicated_verdicts(store)
    return differing(labels(found), judge_a, judge_b, dimension)


def comparisons_audit(store: Store, comparison_ids: Iterable[str]) -> tuple[CellAudit, bool]:
    """Every record behind some comparisons (a drill-down or a search hit), and whether they are simulated."""
    from centaur_tui.store import comparisons_audit as read

    return read(store, comparison_ids), stored_simulated(store)


def served_flag(scheduled: str, served: str | None) -> str | None:
    """What the audit says of a call answered by another model than the one scheduled; None when it is the same.

    A provider-side fallback or an alias answers with another model string (issue 26): the
    audit names both. Whether the family differs, and the verdict is refused, is the report's
    `served` section (`served_mismatches` lists them with their family).
    """
    from centaur_tui.domain.served import normal_model

    if not served or normal_model(served) == normal_model(scheduled):
        return None
    return f"answered by {served}, not the scheduled {scheduled} (a provider-side fallback or alias)"


def served_mismatches(study: Study, store: Store) -> list[ServedCall]:
    """Every LLM judgment whose call another model answered, with its kind (alias, same_family, other_family)."""
    from centaur_tui.services.exam_report import served_calls

    return [c for c in served_calls(study, store) if c.kind not in ("same", "not_recorded")]
