"""Snapshot tests of the judging screen at 120x40 (side by side) and 80x24 (one deliverable), and the overview.

The 80x24 judging snapshot was out for a while: the picture differed 1 run in 3. The cause: on
opening a comparison the screen asked the rubric to scroll home and the rubric panel, taking
focus, asked to scroll its highlighted dimension into view; both scrolls were deferred to after
the next refresh and measured the dimension's row before or after its anchors were laid out,
so whichever ran last, on whichever layout, won. Now the screen scrolls home at once and the
panel scrolls after the refresh, on the current layout (RubricPanel._scroll_current): 6 of 6
pictures alike at each size and state (measured before recording these).
"""

from __future__ import annotations

from pathlib import Path

from centaur_tui.ui.app import create_app
from tests.support.experts import judged_session
from tests.support.judging import FrozenClock, assign, settle


def judging_app(tmp_path: Path):
    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    return create_app(sessions_dir=path.parent, session=path, expert="ann", clock=FrozenClock())


def test_judging_screen_120x40_partly_scored(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("7", "3", "8")

    assert snap_compare(judging_app(tmp_path), terminal_size=(120, 40), run_before=run_before)


def test_judging_screen_80x24_one_option(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(judging_app(tmp_path), terminal_size=(80, 24), run_before=run_before)


def test_judging_screen_80x24_partly_scored(snap_compare, tmp_path: Path) -> None:
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("7", "3", "8")

    assert snap_compare(judging_app(tmp_path), terminal_size=(80, 24), run_before=run_before)


def test_session_overview_120x40_with_expert_work(snap_compare, tmp_path: Path) -> None:
    from centaur_tui.ui.screens.session import SessionScreen
    from tests.support.waits import wait_for
    from tests.support.work import work_session

    path = work_session(tmp_path)  # two experts, two tasks each to write, nothing judged yet

    async def run_before(pilot) -> None:
        app = pilot.app
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None,
            "the session overview",
        )
        await pilot.pause()

    assert snap_compare(
        create_app(sessions_dir=path.parent, session=path), terminal_size=(120, 40), run_before=run_before
    )
