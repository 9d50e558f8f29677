"""Provides RankMatrix: one mode's rank-of-ranks matrix (tasks x candidates), coloured by rank, one focusable cell each.

The colours live in app.tcss: each cell carries a class `-rank-0` (best) to `-rank-4` (worst)
by its place among the mode's candidates, or `-rank-none` when the rank is NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.message import Message
from textual.widgets import Static

RANK_CLASSES = 5
"""Colour steps from best to worst rank."""


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def rank_class(rank: Any, candidates: int) -> str:
    """The tcss class of a rank among `candidates`: -rank-0 (best) .. -rank-4 (worst), -rank-none for NaN."""
    if _missing(rank):
        return "-rank-none"
    if candidates <= 1:
        return "-rank-0"
    step = (float(rank) - 1) / (candidates - 1)
    return f"-rank-{min(RANK_CLASSES - 1, max(0, int(step * RANK_CLASSES)))}"


def mean_se_text(cell: dict[str, Any]) -> str:
    """'2.30±0.15', formatted as `centaur report` prints it (render.py's mean rank ± SE table)."""
    from centaur_tui.stats.render import num

    return "NaN" if _missing(cell.get("mean_rank")) else f"{cell['mean_rank']:.2f}±{num(cell['se'])}"


def rank_text(cell: dict[str, Any] | None) -> str:
    return "NaN" if cell is None or _missing(cell.get("rank_of_ranks")) else str(int(cell["rank_of_ranks"]))


class RankCell(Static, can_focus=True):
    """One (task, candidate) cell: its rank of ranks, and its mean rank ± SE while focused."""

    @dataclass
    class Chosen(Message):
        """The user asked for the judgments behind this cell."""

        cell: RankCell

        @property
        def control(self) -> RankCell:
            return self.cell

    @dataclass
    class Focused(Message):
        cell: RankCell

        @property
        def control(self) -> RankCell:
            return self.cell

    BINDINGS = [
        Binding("enter", "choose", "Audit", tooltip="The comparisons and judgments behind this cell."),
    ]

    def __init__(self, mode: str, task: str, candidate: str, cell: dict[str, Any] | None, candidates: int,
                 *, id: str | None = None) -> None:
        super().__init__(rank_text(cell), markup=False, id=id, classes=f"rank-cell {rank_class(cell and cell.get('rank_of_ranks'), candidates)}")
        self.mode_name, self.task_id, self.candidate_name = mode, task, candidate
        self.cell = cell or {}

    @property
    def rank(self) -> str:
        return rank_text(self.cell or None)

    @property
    def mean_se(self) -> str:
        return mean_se_text(self.cell)

    def on_focus(self) -> None:
        self.update(self.mean_se)
        self.post_message(self.Focused(self))

    def on_blur(self) -> None:
        self.update(self.rank)

    def action_choose(self) -> None:
        self.post_message(self.Chosen(self))


class RankMatrix(Grid):
    """Rows = tasks, columns = candidates; arrows move between cells, enter opens the audit trail."""

    DEFAULT_CSS = """
    RankMatrix {
        height: auto;
        grid-gutter: 0 1;
    }
    RankMatrix .rank-cell, RankMatrix .rank-head {
        width: 1fr;
        height: 1;
        content-align: center middle;
    }
    RankMatrix .rank-task {
        height: 1;
    }
    """

    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
    ]

    def __init__(self, mode_doc: dict[str, Any], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = mode_doc["mode"]
        self.tasks: list[str] = list(mode_doc["tasks"])
        self.candidates: list[str] = list(mode_doc["candidates"])
        self.cells = {(r["task"], r["candidate"]): r for r in mode_doc["matrix"]}
        self.styles.grid_size_columns = len(self.candidates) + 1
        self.styles.grid_columns = f"{max([len(t) for t in self.tasks] + [4]) + 1} " + " ".join(
            f"{max(len(c), 10)}" for c in self.candidates)

    def compose(self) -> ComposeResult:
        yield Static("task", classes="rank-head rank-corner", markup=False)
        for c in self.candidates:
            yield Static(c, classes="rank-head", markup=False)
        for i, t in enumerate(self.tasks):
            yield Static(t, classes="rank-task", markup=False)
            for j, c in enumerate(self.candidates):
                yield RankCell(self.mode, t, c, self.cells.get((t, c)), len(self.candidates), id=f"cell-{self.mode}-{i}-{j}")

    def cell_at(self, row: int, column: int) -> RankCell:
        return self.query_one(f"#cell-{self.mode}-{row}-{column}", RankCell)

    def action_move(self, dr: int, dc: int) -> None:
        focused = self.screen.focused
        if not isinstance(focused, RankCell) or not self.tasks:
            return
        _, _, r, c = (focused.id or "").rsplit("-", 3)
        row = min(len(self.tasks) - 1, max(0, int(r) + dr))
        col = min(len(self.candidates) - 1, max(0, int(c) + dc))
        self.cell_at(row, col).focus()
