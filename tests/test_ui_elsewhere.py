"""Tests issue 14 item 8 ("Elsewhere"): the rank matrix scrolls with its cursor, the audit pane
scrolls by keyboard, the overview counts invalid judgments, the last pipeline error stays, a
submitted deliverable can be read, and Quit and Help stay in every footer at 80x24."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Static, TextArea

from centaur_tui.catalog import load_session
from centaur_tui.domain.plan import summarize
from centaur_tui.report.document import MatrixCell, ModeReport
from centaur_tui.store import Store
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.audit import AuditScreen, mean_text
from centaur_tui.ui.screens.results import ResultsScreen
from centaur_tui.ui.screens.session import SessionScreen
from centaur_tui.ui.screens.work import ConfirmSubmit, SubmittedView, WorkScreen
from centaur_tui.ui.widgets.document import DocumentView
from centaur_tui.ui.widgets.rank_matrix import RankMatrix
from tests.support.experts import judged_session
from tests.support.judging import assign, settle
from tests.support.waits import wait_for
from tests.support.work import work_session

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


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_rank_matrix_scrolls_its_columns_with_the_cursor(size: tuple[int, int]) -> None:
    app = MatrixApp()
    async with app.run_test(size=size) as pilot:
        matrix = app.query_one(RankMatrix)
        matrix.focus()
        await pilot.pause()
        assert matrix.size.width <= size[0]
        shown = matrix.render().plain.splitlines()[0]
        assert CANDIDATES[0] in shown and CANDIDATES[-1] not in shown and shown.rstrip().endswith(">")
        await pilot.press(*["right"] * 9, "down")
        await wait_for(pilot, lambda: matrix.cursor == (1, 9), "the cursor on the last candidate")
        await pilot.pause()
        lines = matrix.render().plain.splitlines()
        assert CANDIDATES[-1] in lines[0] and "<" in lines[0]
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


async def open_audit(pilot: Any) -> AuditScreen:
    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the session overview"
    )
    await pilot.press("s")
    await wait_for(
        pilot,
        lambda: isinstance(app.screen, ResultsScreen) and app.screen.results is not None and not app.screen.computing,
        "the results",
        tries=1000,
    )
    await wait_for(pilot, lambda: isinstance(app.screen.focused, RankMatrix), "the rank matrix focused")
    await pilot.press("enter")
    await wait_for(
        pilot, lambda: isinstance(app.screen, AuditScreen) and app.screen.audit is not None, "the audit trail"
    )
    await pilot.pause()
    return app.screen  # type: ignore[return-value]


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_audit_detail_scrolls_by_keyboard_and_names_missing_means(tmp_path: Path, size: tuple[int, int]) -> None:
    path = judged_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=size) as pilot:
        audit = await open_audit(pilot)
        pane = audit.query_one("#audit-detail-pane", VerticalScroll)
        table = audit.query_one("#audit-judgments", DataTable)
        assert audit.focused is table and pane.max_scroll_y > 0
        # at 80 columns the detail pane is readable, not 15 columns
        assert pane.size.width >= size[0] // 2 - 4
        # from the judgments table, without leaving it: a burst of page keys
        await pilot.press("ctrl+down", "ctrl+down", "ctrl+down")
        await wait_for(pilot, lambda: pane.scroll_y >= 3 * (pane.size.height - 1), "three pages down")
        assert audit.focused is table and table.cursor_row == 0
        await pilot.press("shift+end")
        await wait_for(pilot, lambda: pane.scroll_y == pane.max_scroll_y, "the end of the detail")
        await pilot.press("shift+home")
        await wait_for(pilot, lambda: pane.scroll_y == 0, "the top of the detail")
        # tab into the pane, then its own keys
        await pilot.press("tab", "pagedown", "down")
        await wait_for(pilot, lambda: audit.focused is pane and pane.scroll_y > 1, "the pane scrolled")
        row = audit.shown[0]
        assert row.judgment is not None
        blank = replace(row, judgment=dataclasses.replace(row.judgment, option1_mean=None, option2_mean=None))
        text = audit.detail(blank).plain
        assert "None" not in text and "not stated" in text
        assert f"{row.judgment.option1_mean:.2f}" in audit.detail(row).plain
    assert mean_text(float("nan")) == "not stated" and mean_text(7.0) == "7.00"


async def test_overview_counts_invalid_judgments_and_keeps_the_last_error(write_session) -> None:
    # every judge reply invalid (re-asks too), and transient errors that are retried: the run completes
    path = write_session(faults="invalid_reply_rate = 1.0\nerror_rate = 0.2", tasks=("counseling",))
    planned = summarize(load_session(path).session).total_judgments

    async def check(size: tuple[int, int]) -> None:
        app = create_app(sessions_dir=path.parent, session=path, run=size == (120, 40))
        async with app.run_test(size=size) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "the session overview")
            screen: SessionScreen = app.screen  # type: ignore[assignment]
            table = screen.query_one("#stages", DataTable)
            status = screen.query_one("#run-status", Static)
            if size == (120, 40):
                await wait_for(pilot, lambda: screen.last_outcome is not None, "the run's end", tries=1200)
                assert screen.last_outcome.startswith("Finished")
                await wait_for(pilot, lambda: "calls stored" in str(status.render()), "the stored counts")
                text = str(status.render())
                assert "Last error of the run: simulated/" in text, text
                assert "\\[" not in text
            await wait_for(
                pilot,
                lambda: table.get_cell("judging", "invalid") == f"{planned:,}",
                f"{planned} invalid judgments in the overview",
            )
            assert table.get_cell("judging", "done") == f"{planned:,}"
            assert table.get_cell("worker", "invalid") == ""
            if size == (80, 24):
                # a new screen (no run in it) shows no stale error
                assert "Last error" not in str(status.render())

    await check((120, 40))  # runs the session
    await check((80, 24))  # a new app on the stored run


def keys(text: str) -> list[str]:
    named = {" ": "space", "\n": "enter", ".": "full_stop", "#": "number_sign"}
    return [named.get(c, c) for c in text]


async def test_a_submitted_deliverable_can_be_read_but_not_edited(tmp_path: Path) -> None:
    path = work_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the session overview",
        )
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkScreen) and not app.screen.busy, "the work screen")
        screen: WorkScreen = app.screen  # type: ignore[assignment]
        assert screen.check_action("submitted", ()) is None  # nothing submitted yet: dimmed
        first_title = screen.item.task_title
        await pilot.press(*keys("# Draft one\nLine one.\nLine two."), "ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmSubmit), "the confirmation")
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: app.screen is screen and not screen.busy and screen.check_action("submitted", ()),
            "submitted",
        )
        second = screen.current.key
        await pilot.press(*keys("Unsent"), "ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SubmittedView), "the submitted deliverables")
        view: SubmittedView = app.screen  # type: ignore[assignment]
        doc = view.query_one("#submitted-text", DocumentView)
        await wait_for(pilot, lambda: "Line two." in doc.rendered_text, "the submitted text")
        assert "Unsent" not in doc.rendered_text
        assert "SUBMITTED" in str(view.query_one("#submitted-mark", Static).render())
        assert first_title in str(doc.border_title) and "read only" in str(doc.border_title)
        # typing here changes nothing: no editor on this screen
        assert not view.query(TextArea)
        await pilot.press(*keys("xyz"), "tab", "backspace", "delete")
        await pilot.pause()
        assert "Line two." in doc.rendered_text and "xyz" not in doc.rendered_text
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "back to writing")
        assert screen.current.key == second and screen.draft.text == "Unsent"
    study = load_session(path)
    with Store(study.database) as store:
        outputs = [o for o in store.outputs().values() if o.worker_kind == "expert"]
    assert [o.text for o in outputs] == ["# Draft one\nLine one.\nLine two."]


def footer_keys(app: Any) -> set[str]:
    """The keys whose footer entry is wholly on screen (a too long footer is cut at the right)."""
    footer = app.screen.query_one(Footer)
    area = footer.region
    return {
        key.key  # type: ignore[attr-defined]
        for key in footer.query("FooterKey")  # by name: FooterKey is not in textual.widgets' public names
        if key.region.width and area.x <= key.region.x and key.region.right <= min(area.right, app.size.width)
    }


def assert_quit_and_help(app: Any, where: str) -> None:
    shown = footer_keys(app)
    assert {"ctrl+q", "f1"} <= shown, f"{where}: footer shows {sorted(shown)}"
    last = app.screen_text().splitlines()[-1]
    assert "Quit" in last and "Help" in last, f"{where}: {last!r}"


async def test_quit_and_help_stay_in_every_footer_at_80x24(tmp_path: Path) -> None:
    path = judged_session(tmp_path / "judged")
    assign(path, "ann", 2)
    app = create_app(sessions_dir=path.parent)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.screen.query(Footer) and footer_keys(app), "the home screen")
        await pilot.pause()
        assert_quit_and_help(app, "home")
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(80, 24)) as pilot:
        audit = await open_audit(pilot)
        await wait_for(pilot, lambda: footer_keys(app), "the audit footer")
        assert_quit_and_help(app, "audit")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ResultsScreen) and footer_keys(app), "the results")
        await pilot.pause()
        assert_quit_and_help(app, "results")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and footer_keys(app), "the overview")
        await pilot.pause()
        assert_quit_and_help(app, "session")
        del audit
    app = create_app(sessions_dir=path.parent, session=path, expert="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.pause()
        assert_quit_and_help(app, "judging")
        judging = app.screen
        await pilot.press("f1")  # the help is a dialog over the screen: it says how to close it
        await wait_for(pilot, lambda: app.screen is not judging, "the help dialog")
        assert "escape or f1 closes" in app.screen_text()
        await pilot.press("f1")
        await wait_for(pilot, lambda: app.screen is judging, "the help closed")
        assert_quit_and_help(app, "judging after help")
    work = work_session(tmp_path / "work")
    app = create_app(sessions_dir=work.parent, session=work)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the overview"
        )
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkScreen) and not app.screen.busy, "the work screen")
        await pilot.pause()
        assert_quit_and_help(app, "work")
        await pilot.press(*keys("Done."), "ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmSubmit), "the confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkScreen) and not app.screen.busy, "the next task")
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, SubmittedView) and footer_keys(app), "submitted")
        await pilot.pause()
        assert_quit_and_help(app, "submitted deliverables")
