"""The organiser's console screen (issue 27) through Pilot: reached from the session screen, never expert-only."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import Draft
from centaur_tui.services.judging import SessionJudging
from centaur_tui.services.session import expert
from centaur_tui.store import Store
from centaur_tui.ui.app import ExpertOnlyError, create_app
from centaur_tui.ui.screens.console import ConsoleScreen
from centaur_tui.ui.screens.session import SessionScreen
from tests.support.experts import judged_session
from tests.support.judging import assign
from tests.support.waits import wait_for

PASTED = "pasted from somewhere else entirely, every character of it"


def _planted(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    assign(path, "ann", 3)
    study = load_session(path)
    with Store(study.database) as store:
        source = SessionJudging(store, study, expert(study, store, "ann"))
        keys = [str(p.id) for p in source.rows.places()]
        for key in keys[:2]:
            rubric = source.item(key).rubric
            draft = Draft({d.id: [6, 6] for d in rubric.all}, "option_1", PASTED, 1.5, 1.5, pasted_chars=len(PASTED))  # type: ignore[misc]
            source.submit(key, draft)
        source.set_state(keys[2], "flagged", "[@click=app.quit]both texts are the same")
    return path


async def test_the_console_opens_from_the_session_screen_and_shows_the_services_figures(tmp_path: Path) -> None:
    path = _planted(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(140, 50)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "overview"
        )
        assert "console" in {b.binding.id for b in app.screen.active_bindings.values()}  # shown in the footer
        await pilot.press("o")
        await wait_for(
            pilot, lambda: isinstance(app.screen, ConsoleScreen) and app.screen.console is not None, "console"
        )
        screen = app.screen
        assert isinstance(screen, ConsoleScreen) and screen.console is not None
        ann = screen.query_one("#console-experts", DataTable).get_row("ann")
        figures = next(e for e in screen.console.experts if e.expert == "ann")
        assert ann[1] == f"{figures.per_hour:,.1f}" and ann[4] == "2/3" and ann[9] == "1"  # done, flagged
        signals = screen.query_one("#console-signals", DataTable).get_row("ann")
        # pasted, pasted chars, too fast (1.5 s), repeated (the same rationale on two comparisons)
        assert signals[2:6] == ["2/2", "100%", "2/2", "2"]
        notes = str(screen.query_one("#console-notes").render())
        assert "both texts are the same" in notes and "[@click=app.quit]" in notes  # shown as text, not markup
        burn = screen.query_one("#console-burn", DataTable)
        assert sum(int(burn.get_row_at(i)[2]) for i in range(burn.row_count)) == 2
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, SessionScreen), "back")
        assert app.is_running  # the note's markup did not quit the app


async def test_the_expert_only_app_refuses_the_console(tmp_path: Path) -> None:
    path = _planted(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path, expert="ann", expert_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        with pytest.raises(ExpertOnlyError):
            app.push_screen(ConsoleScreen(load_session(path)))
        await pilot.press("o")
        await pilot.pause()
        assert not isinstance(app.screen, ConsoleScreen)


async def test_the_terminal_seat_stores_the_characters_pasted_into_the_rationale(tmp_path: Path) -> None:
    """A scripted expert who pastes one rationale and types the next: the judgment stores what came from a paste."""
    import sqlite3

    from textual import events

    from centaur_tui.ui.widgets.rubric import DimensionRow
    from tests.support.judging import settle

    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    app = create_app(sessions_dir=path.parent, session=path, expert="ann")
    typed = "typed by hand, key by key"
    async with app.run_test(size=(120, 40)) as pilot:
        for rationale, paste in ((PASTED, True), (typed, False)):
            screen = await settle(pilot)
            for _ in screen.query(DimensionRow):
                await pilot.press("7", "4")
            await pilot.press("1")
            if paste:
                app.post_message(events.Paste(rationale))  # as the terminal driver delivers a paste
            else:
                await pilot.press(*["space" if c == " " else c for c in rationale])
            await pilot.pause()
            await pilot.press("ctrl+s")
        await settle(pilot)
    conn = sqlite3.connect(load_session(path).database)
    try:
        rows = conn.execute("SELECT rationale, pasted_chars FROM judgments WHERE judge = 'ann' ORDER BY id").fetchall()
    finally:
        conn.close()
    assert rows == [(PASTED, len(PASTED)), (typed, 0)]
