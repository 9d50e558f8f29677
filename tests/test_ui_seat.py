"""The expert's seat (issue 14): active time without idle periods, lower-average winners stored, guidelines,
practice and gold checks, themes and the mouse, through Pilot."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual import events

from centaur_tui.catalog import load_session
from centaur_tui.ui.app import create_app
from centaur_tui.ui.widgets.rubric import RubricPanel
from tests.support.experts import judged_session
from tests.support.judging import RATIONALE, FrozenClock, assign, settle


def open_judging(path: Path, expert: str = "ann", size=(120, 40), **kwargs: object):
    app = create_app(sessions_dir=path.parent, session=path, expert=expert, **kwargs)  # type: ignore[arg-type]
    return app, app.run_test(size=size)


def expert_rows(path: Path, columns: str = "*") -> list[sqlite3.Row]:
    conn = sqlite3.connect(load_session(path).database)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(f"SELECT {columns} FROM judgments WHERE judge_kind = 'expert' ORDER BY id").fetchall()
    finally:
        conn.close()


async def test_active_time_leaves_out_idle_periods_and_both_times_are_stored(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    clock = FrozenClock()
    _app, running = open_judging(path, clock=clock)
    async with running as pilot:
        screen = await settle(pilot)
        n = len(screen.query_one(RubricPanel).rows())
        clock.now += 20  # reading: 20 s active
        await pilot.press("8", "3")
        clock.now += 600  # away from the desk: only 60 s (the default judging.expert_idle_s) count
        await pilot.press(*["8", "3"] * (n - 1), "1")
        clock.now += 10
        pilot.app.post_message(events.Paste(RATIONALE))
        await pilot.pause()
        clock.now += 5
        await pilot.press("ctrl+s")
        await settle(pilot)
    [row] = expert_rows(path)
    assert row["seconds"] == 635.0
    assert row["active_seconds"] == 20 + 60 + 10 + 5
    assert row["lower_average_confirmed"] == 0  # option 1 won with the higher average


async def test_active_time_survives_leaving_and_reopening_a_comparison(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    clock = FrozenClock()
    _app, running = open_judging(path, clock=clock)
    async with running as pilot:
        screen = await settle(pilot)
        clock.now += 30
        await pilot.press("7")
        clock.now += 1000  # idle, then quit: the draft keeps 1030 s of time, 90 s of it active
        screen.flush()
        await pilot.pause()
    clock2 = FrozenClock()
    _app, running = open_judging(path, clock=clock2)
    async with running as pilot:
        screen = await settle(pilot)
        assert screen.draft.active_seconds == 90.0 and screen.draft.seconds == 1030.0
        clock2.now += 4
        assert round(screen.active_seconds, 1) == 94.0


async def test_a_lower_average_winner_confirmed_is_stored_with_the_judgment(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    _app, running = open_judging(path)
    async with running as pilot:
        screen = await settle(pilot)
        n = len(screen.query_one(RubricPanel).rows())
        await pilot.press(*["8", "3"] * n, "2")
        pilot.app.post_message(events.Paste(RATIONALE))
        await pilot.pause()
        await pilot.press("ctrl+s", "y")
        screen = await settle(pilot)
        await pilot.press(*["3", "8"] * n, "2")  # the second: winner with the higher average
        pilot.app.post_message(events.Paste(RATIONALE))
        await pilot.pause()
        await pilot.press("ctrl+s")
        await settle(pilot)
    rows = expert_rows(path)
    assert [r["lower_average_confirmed"] for r in rows] == [1, 0]
