"""Reading the deliverables as written: tables whole, line breaks kept, full-width and diff views, linked scrolling."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from rich.style import Style

from centaur_tui.catalog import load_session
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.reading import ReadingScreen
from centaur_tui.ui.widgets.document import DiffView, DocumentView, is_markdown, render_diff, render_markdown
from centaur_tui.ui.widgets.rubric import DimensionRow, RubricPanel
from tests.support.experts import CANDIDATES, FAMILIES, judged_session
from tests.support.judging import FrozenClock, assign, settle
from tests.support.waits import wait_for

HEADER = ["Line", "Item", "Draft figure", "Corrected figure", "Difference", "Source document"]
ROWS = [
    ["1a", "Wages, salaries, tips", "1,000,000.00", "1,012,345.67", "12,345.67", "W-2 box 1 (corrected)"],
    ["2b", "Taxable interest", "2,345.00", "2,354.00", "9.00", "1099-INT from Acme Savings"],
    ["8", "Adjusted gross income", "1,002,345.00", "1,014,699.67", "12,354.67", "Sum of lines 1a to 7"],
    ["12", "Standard deduction", "29,200.00", "29,200.00", "0.00", "Married filing jointly, 2024"],
]
TAX_TABLE = (
    "# Draft return against corrected figures\n\n"
    + "| "
    + " | ".join(HEADER)
    + " |\n|"
    + "---|" * len(HEADER)
    + "\n"
    + "".join("| " + " | ".join(row) + " |\n" for row in ROWS)
    + "\nThe corrected W-2 raises the refund estimate.\n"
)


def _cells_whole(rendered: str) -> None:
    """Every cell's text is on screen: each number on one line, each word of a text cell intact, no ellipsis."""
    assert "…" not in rendered
    lines = rendered.splitlines()
    for cell in [*HEADER, *(c for row in ROWS for c in row)]:
        if re.fullmatch(r"[\d,.]+", cell):
            assert any(cell in line for line in lines), f"{cell!r} is cut or missing"
        for word in cell.split():
            assert any(re.search(rf"(^|\s){re.escape(word)}(\s|$)", line) for line in lines), f"{word!r} of {cell!r}"


def _set_outputs(path: Path, texts: list[str]) -> None:
    """Give the session's outputs these texts, in turn (both options of a comparison differ when two are given)."""
    study = load_session(path)
    with sqlite3.connect(study.database) as conn:
        ids = [r[0] for r in conn.execute("SELECT rowid FROM outputs ORDER BY rowid")]
        for i, rowid in enumerate(ids):
            conn.execute("UPDATE outputs SET text = ? WHERE rowid = ?", (texts[i % len(texts)], rowid))


def _app(path: Path):
    return create_app(sessions_dir=path.parent, session=path, expert="ann", clock=FrozenClock())


# -- layout functions ----------------------------------------------------------------------------


@pytest.mark.parametrize("width", [20, 30, 36, 60, 110])
def test_a_tax_table_keeps_every_cell_whole_at_any_width(width: int) -> None:
    rendered = "\n".join(s.text for s in render_markdown(TAX_TABLE, width))
    _cells_whole(rendered)
    assert "Draft return" in rendered and "# Draft" not in rendered  # rendered as Markdown


def test_a_table_inside_a_list_folds_long_words_instead_of_cutting_them() -> None:
    text = "- figures:\n\n  | a | b |\n  |---|---|\n  | 1,000,000.00 | 2,000,000.00 |\n"
    rendered = "".join(s.text for s in render_markdown(text, 16)).replace(" ", "")
    assert "…" not in rendered
    # Folded over lines (the columns interleave), every character shown: none hidden.
    assert Counter(rendered) - Counter("•figures:ab") >= Counter("1,000,000.002,000,000.00")


def test_plain_text_keeps_its_lines() -> None:
    text = "Dear Sam,\nI am sorry about the layoff.\nWe can meet on Tuesday.\n\n    Alex Rivera\n    Counsellor"
    assert not is_markdown(text)
    lines = [s.text.rstrip() for s in render_markdown(text, 60)]
    assert lines == text.splitlines()


def test_json_is_shown_verbatim_even_when_it_looks_like_markdown() -> None:
    data = {"total": "1,000", "notes": ["# not a heading", "**not bold**"], "nested": {"a": [1, 2]}}
    text = json.dumps(data, indent=2)
    assert not is_markdown(text)
    lines = [s.text.rstrip() for s in render_markdown(text, 80)]
    assert lines == text.splitlines()


def test_markdown_is_rendered_and_keeps_single_line_breaks() -> None:
    text = "## Plan\n\n**Step one** comes first.\nStep two follows on its own line.\n\nBest regards,\nAlex"
    assert is_markdown(text)
    lines = [s.text.strip() for s in render_markdown(text, 60)]
    assert "Plan" in lines and "## Plan" not in lines
    assert "Step one comes first." in lines and "Step two follows on its own line." in lines
    assert lines[-2:] == ["Best regards,", "Alex"]


def test_long_plain_lines_wrap_without_losing_text() -> None:
    text = "x" * 95 + "\nshort"
    lines = [s.text.rstrip() for s in render_markdown(text, 40)]
    assert "".join(lines[:3]) == "x" * 95 and lines[3] == "short"


def test_the_diff_marks_lines_of_each_option_and_folds_what_is_the_same() -> None:
    same = [f"Line {i} is the same." for i in range(20)]
    first = "\n".join([*same[:10], "Refund: 1,000.00", *same[10:]])
    second = "\n".join([*same[:10], "Refund: 1,200.00", *same[10:], "Added at the end."])
    lines = [s.text.rstrip() for s in render_diff(first, second, 60, (Style(), Style(), Style()))]
    assert "1 Refund: 1,000.00" in lines and "2 Refund: 1,200.00" in lines and "2 Added at the end." in lines
    assert lines[0].startswith("1 line(s) only in Option 1") and "2 only in Option 2" in lines[0]
    assert any("line(s) the same in both" in line for line in lines)
    assert "  Line 9 is the same." in lines  # context next to the difference
    assert "  Line 0 is the same." not in lines  # folded far from it
    same_text = [s.text for s in render_diff(first, first, 60, (Style(), Style(), Style()))]
    assert same_text[0].startswith("The two deliverables are the same")


def test_the_diff_shows_hostile_text_inertly() -> None:
    lines = "\n".join(s.text for s in render_diff("a\n[@click=app.quit]x", "a\n\x1b[31mred\x07", 40, (Style(),) * 3))
    assert "[@click=app.quit]x" in lines and "[31mred" in lines and "\x1b" not in lines and "\x07" not in lines


# -- the judging screen --------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_a_tax_table_is_readable_in_the_judging_panes(tmp_path: Path, size: tuple[int, int]) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    _set_outputs(path, [TAX_TABLE])
    app = _app(path)
    async with app.run_test(size=size) as pilot:
        screen = await settle(pilot)
        one, two = screen.query(DocumentView).results(DocumentView)
        _cells_whole(one.rendered_text)
        assert one.virtual_size.width > one.scrollable_content_region.width  # wider than the pane: it scrolls
        one.focus()
        await wait_for(pilot, lambda: screen.focused is one, "option 1 focused")
        await pilot.press("down", "down", "down", "right", "right")
        assert one.scroll_x == 2 * DocumentView.COLUMN_STEP
        if size == (80, 24):
            assert not two.display
            await pilot.press("ctrl+o")
            await wait_for(pilot, lambda: two.display and two.ready, "option 2 shown and laid out")
            assert not one.display and screen.focused is two
        _cells_whole(two.rendered_text)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_each_deliverable_shows_at_least_12_lines(tmp_path: Path, size: tuple[int, int]) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app = _app(path)
    async with app.run_test(size=size) as pilot:
        screen = await settle(pilot)
        one, two = screen.query(DocumentView).results(DocumentView)
        assert one.scrollable_content_region.height >= 12
        await pilot.press("ctrl+o")  # a narrow screen shows the other; a wide one shows both already
        await wait_for(pilot, lambda: two.display and two.ready, "option 2 on screen")
        assert two.scrollable_content_region.height >= 12
        assert screen.check_action("other_option", ()) is (size == (80, 24))


async def test_plain_text_and_json_deliverables_keep_their_lines_on_screen(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    plain = "Dear Sam,\nI am sorry.\nLet us talk on Tuesday.\n\nAlex"
    data = json.dumps({"refund": "1,200.00", "lines": ["1a", "2b"]}, indent=2)
    _set_outputs(path, [plain, data])
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        for view in screen.query(DocumentView):  # the pair may hold either text, or the same one twice
            assert view.text in (plain, data)
            assert view.rendered_text.splitlines() == view.text.splitlines()


async def test_untrusted_text_in_a_table_cell_stays_inert_in_every_view(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    hostile = (
        "| Item | Amount |\n|---|---|\n| [@click=app.quit]Refund[/] | \x1b[2J\x1b]0;pwned\x071,000.00 |\n"
        "| [bold red]x[/bold red] | 2 |\n"
    )
    _set_outputs(path, [hostile, hostile.replace("2 |", "3 |")])
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        for view in screen.query(DocumentView):
            assert "[@click=app.quit]Refund[/]" in view.rendered_text
            assert "[2J]0;pwned1,000.00" in view.rendered_text and "\x1b" not in view.rendered_text
        await pilot.click("#option-1", offset=(6, 3))
        await pilot.press("f4")
        await wait_for(pilot, lambda: isinstance(app.screen, ReadingScreen) and app.screen.view.ready, "reading 2")
        assert "[@click=app.quit]Refund[/]" in app.screen.view.rendered_text
        await pilot.click("#reading-text", offset=(4, 3))
        await pilot.press("f5")
        await wait_for(pilot, lambda: app.screen.view.ready, "the differences")
        diff = app.screen.view.rendered_text
        assert "[@click=app.quit]Refund[/]" in diff and "\x1b" not in diff and "\x07" not in diff
        await pilot.click("#reading-diff", offset=(4, 3))
        assert app.is_running and isinstance(app.screen, ReadingScreen)


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_full_width_reading_and_back_keeps_the_rubric_as_it_was(tmp_path: Path, size: tuple[int, int]) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app = _app(path)
    async with app.run_test(size=size) as pilot:
        screen = await settle(pilot)
        pane_width = screen.query_one("#option-1", DocumentView).scrollable_content_region.width
        await pilot.press("7", "3", "f3")  # a burst: two scores, then read option 1
        await wait_for(pilot, lambda: isinstance(app.screen, ReadingScreen) and app.screen.view.ready, "reading 1")
        reading = app.screen
        assert isinstance(reading, ReadingScreen)
        assert reading.view.scrollable_content_region.width > pane_width
        assert reading.view.text == screen.item.option_1
        await pilot.press("pagedown", "f4")
        await wait_for(pilot, lambda: reading.view.ready and reading.view.text == screen.item.option_2, "option 2")
        await pilot.press("escape", "8")  # back, and the next digit goes on where the expert was
        assert app.screen is screen and isinstance(screen.focused, RubricPanel)
        first = screen.query(DimensionRow).first()
        second = list(screen.query(DimensionRow))[1]
        assert (first.value(1), first.value(2), second.value(1)) == (7, 3, 8)
        assert screen.draft.score(first.dimension.id, 1) == 7


async def test_reading_keys_work_while_typing_the_rationale(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        rationale = screen.query_one("#rationale")
        rationale.focus()
        await wait_for(pilot, lambda: screen.focused is rationale, "the rationale focused")
        await pilot.press("a", "b", "f5")
        await wait_for(pilot, lambda: isinstance(app.screen, ReadingScreen), "the differences")
        assert app.screen.showing == "diff"
        await pilot.press("escape", "c")
        assert app.screen is screen and screen.query_one("#rationale").text == "abc"


async def test_the_diff_view_is_blind(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, ReadingScreen) and app.screen.view.ready, "the diff")
        view = app.screen.view
        assert isinstance(view, DiffView)
        blob = view.rendered_text + app.screen_text()
        for name in (*CANDIDATES, *FAMILIES, "simulated/"):
            assert name not in blob
        assert "Option 1" in blob and "Option 2" in blob


async def test_linked_scrolling_moves_both_deliverables_together(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    long_text = "\n".join(f"Line {i}: the same words here." for i in range(200))
    _set_outputs(path, [long_text, long_text.replace("Line 50:", "Line fifty:")])
    app = _app(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        one, two = screen.query(DocumentView).results(DocumentView)
        one.focus()
        await wait_for(pilot, lambda: screen.focused is one, "option 1 focused")
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: one.scroll_y > 0, "option 1 scrolled")
        await pilot.pause()
        assert two.scroll_y == 0  # separately, by default
        await pilot.press("ctrl+g", "pagedown", "down", "down")
        await wait_for(pilot, lambda: two.scroll_y == one.scroll_y, "option 2 following option 1")
        assert screen.linked and "scrolling together" in str(one.border_title)
        two.focus()
        await wait_for(pilot, lambda: screen.focused is two, "option 2 focused")
        await pilot.press("end")
        try:
            # The follower goes as far as it goes: the two texts' heights may differ by a line.
            await wait_for(
                pilot,
                lambda: two.scroll_y == two.max_scroll_y and one.scroll_y == min(two.scroll_y, one.max_scroll_y),
                "option 1 following option 2",
            )
        except AssertionError as exc:  # say where each stood: a failure on a busy machine must be readable
            raise AssertionError(
                f"{exc}: option 1 at {one.scroll_y} (max {one.max_scroll_y}), option 2 at {two.scroll_y} "
                f"(max {two.max_scroll_y}), linked={screen.linked}"
            ) from None
        bottom = one.scroll_y
        await pilot.press("ctrl+g", "home")
        await wait_for(pilot, lambda: two.scroll_y == 0, "option 2 at its top")
        await pilot.pause()
        assert one.scroll_y == bottom and not screen.linked  # separately again


# -- the work screen -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_assistance_text_shows_tables_whole_and_plain_lines_kept(tmp_path: Path, size) -> None:
    from centaur_tui.ui.screens.session import SessionScreen
    from centaur_tui.ui.screens.work import WorkScreen
    from tests.support.work import work_session

    path = work_session(tmp_path)
    study = load_session(path)
    with sqlite3.connect(study.database) as conn:
        conn.execute("UPDATE assistance_texts SET text = ?", (TAX_TABLE,))
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "home")
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkScreen) and not app.screen.busy, "the work screen")
        for _ in range(2):  # one of the two tasks may be the plain condition (no assistance text)
            view = app.screen.query_one("#work-assistance", DocumentView)
            await wait_for(pilot, lambda view=view: view.ready, "the assistance text laid out")
            if "Draft return" in view.rendered_text:
                _cells_whole(view.rendered_text)
                return
            await pilot.press("ctrl+b")
            await wait_for(pilot, lambda: not app.screen.busy, "the next task")
        raise AssertionError("no task showed the assistance text")
