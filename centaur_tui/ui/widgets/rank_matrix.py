"""Provides RankMatrix: one mode's rank-of-ranks matrix (tasks x candidates) coloured by rank, with a cell cursor.

One widget draws the whole matrix (the paper's 7 x 10 matrices in two modes as one widget per
cell took about 0.2 s to mount). Colours live in app.tcss, as component classes:
`rank-matrix--rank-0` (best) to `rank-matrix--rank-4` (worst) by the cell's place among the
mode's candidates, `rank-matrix--rank-none` for NaN, `rank-matrix--cursor` for the cell under
the cursor while the matrix has focus, which then shows its mean rank ± SE instead of its rank.

A matrix wider than its container (10 candidates of 18 characters need 196 columns) scrolls
its candidate columns with the cursor: the task column stays, `<` and `>` mark hidden columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from centaur_tui.report.document import MatrixCell, ModeReport
from centaur_tui.report.render import num

RANK_CLASSES = 5
"""Colour steps from best to worst rank."""

CELL_WIDTH = 10
"""Narrowest cell: '10.00±0.00' fits."""


def _missing(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def rank_class(rank: float | None, candidates: int) -> str:
    """The colour step of a rank among `candidates`: -rank-0 (best) .. -rank-4 (worst), -rank-none for NaN."""
    if rank is None or _missing(rank):
        return "-rank-none"
    if candidates <= 1:
        return "-rank-0"
    step = (float(rank) - 1) / (candidates - 1)
    return f"-rank-{min(RANK_CLASSES - 1, max(0, int(step * RANK_CLASSES)))}"


def mean_se_text(cell: MatrixCell | None) -> str:
    """'2.30±0.15', formatted as `centaur report` prints it (the mean rank ± SE section)."""
    if cell is None or _missing(cell.mean_rank):
        return "NaN"
    return f"{cell.mean_rank:.2f}±{num(cell.se)}"


def rank_text(cell: MatrixCell | None) -> str:
    """The rank of ranks as the text report prints it."""
    rank = None if cell is None else cell.rank_of_ranks
    return "NaN" if rank is None or math.isnan(rank) else str(int(rank))


@dataclass(frozen=True)
class CellRef:
    """One cell: where it is and its record of the report document (None when absent)."""

    mode: str
    task: str
    candidate: str
    cell: MatrixCell | None


class RankMatrix(Widget, can_focus=True):
    """Rows = tasks, columns = candidates; arrows move the cursor, enter opens the audit trail of its cell."""

    COMPONENT_CLASSES = {
        "rank-matrix--head",
        "rank-matrix--task",
        "rank-matrix--cursor",
        "rank-matrix--rank-none",
        *(f"rank-matrix--rank-{i}" for i in range(RANK_CLASSES)),
    }

    DEFAULT_CSS = """
    RankMatrix {
        height: auto;
        width: auto;
        max-width: 100%;
    }
    """

    BINDINGS = [
        Binding("up", "move(-1, 0)", "Up", show=False),
        Binding("down", "move(1, 0)", "Down", show=False),
        Binding("left", "move(0, -1)", "Left", show=False),
        Binding("right", "move(0, 1)", "Right", show=False),
        Binding("enter", "choose", "Audit", tooltip="The comparisons and judgments behind this cell."),
    ]

    cursor: reactive[tuple[int, int]] = reactive((0, 0))

    @dataclass
    class Moved(Message):
        """The cursor is on another cell, or the matrix got focus."""

        matrix: RankMatrix
        ref: CellRef

        @property
        def control(self) -> RankMatrix:
            return self.matrix

    @dataclass
    class Chosen(Message):
        """The user asked for the judgments behind the cell under the cursor."""

        matrix: RankMatrix
        ref: CellRef

        @property
        def control(self) -> RankMatrix:
            return self.matrix

    def __init__(self, mode_doc: ModeReport, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode_name: str = mode_doc.mode
        self.tasks: list[str] = list(mode_doc.tasks)
        self.candidates: list[str] = list(mode_doc.candidates)
        self.cells: dict[tuple[str, str], MatrixCell] = {(r.task, r.candidate): r for r in mode_doc.matrix}
        self.task_width = max([len(t) for t in self.tasks] + [4]) + 1
        self.widths = [max(len(c), CELL_WIDTH) for c in self.candidates]
        self.first_column = 0
        """The leftmost candidate column drawn (> 0 once the cursor went right of a too narrow widget)."""

    # -- cells --------------------------------------------------------------------------------

    def ref(self, row: int, column: int) -> CellRef:
        task, candidate = self.tasks[row], self.candidates[column]
        return CellRef(self.mode_name, task, candidate, self.cells.get((task, candidate)))

    @property
    def current(self) -> CellRef | None:
        if not self.tasks or not self.candidates:
            return None
        return self.ref(*self.cursor)

    def place(self, task: str, candidate: str) -> None:
        """Put the cursor on a cell by name (kept across recomputes)."""
        if task in self.tasks and candidate in self.candidates:
            self.cursor = (self.tasks.index(task), self.candidates.index(candidate))

    def shown_text(self, row: int, column: int) -> str:
        """What the cell shows now: its mean rank ± SE under the focused cursor, else its rank."""
        cell = self.ref(row, column).cell
        return mean_se_text(cell) if self.has_focus and (row, column) == self.cursor else rank_text(cell)

    # -- drawing ------------------------------------------------------------------------------

    def get_content_width(self, container: Any, viewport: Any) -> int:
        return self.task_width + sum(w + 1 for w in self.widths)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return len(self.tasks) + 1

    def _fits(self, first: int, last: int, width: int) -> bool:
        """Whether columns first..last (and the task column, and a `>` if more follow) fit in `width`."""
        more = 1 if last < len(self.widths) - 1 else 0
        return self.task_width + sum(w + 1 for w in self.widths[first : last + 1]) + more <= width

    def visible_columns(self) -> range:
        """The candidate columns drawn now: as many as fit from `first_column`, moved so the cursor is among them."""
        if not self.widths:
            return range(0)
        width = self.content_size.width or self.get_content_width(None, None)
        cursor = self.cursor[1]
        first = min(self.first_column, cursor)
        while first < cursor and not self._fits(first, cursor, width):
            first += 1
        last = first
        while last + 1 < len(self.widths) and self._fits(first, last + 1, width):
            last += 1
        self.first_column = first
        return range(first, last + 1)

    def render(self) -> Text:
        style = self.get_component_rich_style
        head, task_style = style("rank-matrix--head"), style("rank-matrix--task")
        out = Text(no_wrap=True, overflow="crop")
        columns = self.visible_columns()
        more_left = bool(columns) and columns.start > 0
        more_right = bool(columns) and columns.stop < len(self.widths)
        out.append("task".ljust(self.task_width - 1) + ("<" if more_left else " "), head)
        for c in columns:
            out.append(" ")
            out.append(self.candidates[c].center(self.widths[c]), head)
        if more_right:
            out.append(">", head)
        n = len(self.candidates)
        for r, task in enumerate(self.tasks):
            out.append("\n")
            out.append(task.ljust(self.task_width), task_style)
            for c in columns:
                w = self.widths[c]
                out.append(" ")
                cell = self.ref(r, c).cell
                cell_style = style(f"rank-matrix-{rank_class(cell.rank_of_ranks if cell else None, n)}")
                if self.has_focus and (r, c) == self.cursor:
                    cell_style += style("rank-matrix--cursor")
                out.append(self.shown_text(r, c).center(w), cell_style)
        return out

    # -- keys and mouse -----------------------------------------------------------------------

    def watch_cursor(self) -> None:
        ref = self.current
        if ref is not None:
            self.post_message(self.Moved(self, ref))
        if self.is_mounted and self.parent is not None:
            # the row under the cursor into view when the matrix is below the fold (80x24)
            self.scroll_visible(animate=False)

    def on_focus(self) -> None:
        self.refresh()
        self.watch_cursor()

    def on_blur(self) -> None:
        self.refresh()

    def action_move(self, dr: int, dc: int) -> None:
        if not self.tasks or not self.candidates:
            return
        r, c = self.cursor
        self.cursor = (min(len(self.tasks) - 1, max(0, r + dr)), min(len(self.candidates) - 1, max(0, c + dc)))

    def action_choose(self) -> None:
        ref = self.current
        if ref is not None:
            self.post_message(self.Chosen(self, ref))

    def on_click(self, event: events.Click) -> None:
        row = event.y - 1
        x = event.x - self.task_width
        if not 0 <= row < len(self.tasks) or x < 0:
            return
        for c in self.visible_columns():
            w = self.widths[c]
            if x < w + 1:
                self.cursor = (row, c)
                return
            x -= w + 1
