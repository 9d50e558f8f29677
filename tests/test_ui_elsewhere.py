"""Tests issue 14 item 8 ("Elsewhere"): the rank matrix scrolls with its cursor, the audit pane
scrolls by keyboard, the overview counts invalid judgments, the last pipeline error stays, a
submitted deliverable can be read, and Quit and Help stay in every footer at 80x24."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll

from centaur_tui.report.document import MatrixCell, ModeReport
from centaur_tui.ui.widgets.rank_matrix import RankMatrix
from tests.support.waits import wait_for

CANDIDATES = [f"candidate-model-{i:02d}" for i in range(10)]
"""Ten candidates of 18 characters: the matrix needs 7 + 10 x 19 = 197 columns."""

TASKS = [f"task-{i}" for i in range(7)]


def wide_mode() -> ModeReport:
    cells = [
        MatrixCell(
            task=t,
            candidate=c,
            mean_rank=float(j + 1),
            sd=0.0,
            se=0.0,
            runs=1,
            missing_runs=0,
            rank_of_ranks=float(j + 1),
            reason=None,
        )
        for t in TASKS
        for j, c in enumerate(CANDIDATES)
    ]
    return ModeReport.model_construct(
        mode="automation",
        candidates=CANDIDATES,
        tasks=TASKS,
        runs=1,
        n=1,
        excluded={},
        missing_cells=0,
        cells=len(cells),
        matrix=cells,
        overall=[],
        bradley_terry=[],
        bradley_terry_by_task=[],
    )


class MatrixApp(App[None]):
    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield RankMatrix(wide_mode(), id="m")


async def test_rank_matrix_scrolls_its_columns_with_the_cursor() -> None:
    for size in ((120, 40), (80, 24)):
        app = MatrixApp()
        async with app.run_test(size=size) as pilot:
            matrix = app.query_one(RankMatrix)
            matrix.focus()
            await pilot.pause()
            assert matrix.size.width <= size[0]
            shown = matrix.render().plain.splitlines()[0]
            assert CANDIDATES[0] in shown and CANDIDATES[-1] not in shown and shown.rstrip().endswith("›")
            await pilot.press(*["right"] * 9, "down")
            await wait_for(pilot, lambda: matrix.cursor == (1, 9), "the cursor on the last candidate")
            await pilot.pause()
            lines = matrix.render().plain.splitlines()
            assert CANDIDATES[-1] in lines[0] and "‹" in lines[0]
            # the cursor cell shows its mean rank ± SE, within the widget's width
            assert "10.00±0.00" in lines[2] and len(lines[2].rstrip()) <= matrix.size.width
            await pilot.press(*["left"] * 9)
            await wait_for(pilot, lambda: matrix.cursor == (1, 0), "the cursor back on the first candidate")
            await pilot.pause()
            assert CANDIDATES[0] in matrix.render().plain.splitlines()[0]
            # every candidate was on screen once
            seen: set[str] = set()
            for _ in range(9):
                seen |= {c for c in CANDIDATES if c in matrix.render().plain}
                await pilot.press("right")
                await pilot.pause()
            seen |= {c for c in CANDIDATES if c in matrix.render().plain}
            assert seen == set(CANDIDATES)
