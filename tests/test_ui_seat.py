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
from tests.support.seat import judge_checks, judge_comparisons, with_judging
from tests.support.waits import wait_for, wait_until


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


# -- practice, gold checks, guidelines ----------------------------------------------------------


async def complete(pilot, screen, winner: str = "option_1") -> None:
    """Fill the open place through its widgets (the keyboard path is tested in test_ui_judging.py)."""
    from centaur_tui.ui.widgets.rubric import WinnerPicker

    panel = screen.query_one(RubricPanel)
    for row in panel.rows():
        for option in (1, 2):
            panel.set_place(row.index, option)
            panel.action_set_score(6)
    screen.query_one("#winner", WinnerPicker).action_pick(winner)
    screen.query_one("#rationale").load_text(RATIONALE)
    # The scores reach the draft through messages: one pause was not always enough for all of
    # them on a busy machine ("22 scores" still lacking), so wait for the draft itself.
    await wait_until(pilot, lambda: screen.lacking() == [], "the draft complete")


def checks(path: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(load_session(path).database)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM expert_checks ORDER BY kind, ordinal").fetchall()
    finally:
        conn.close()


def visible(app) -> tuple[str, str]:
    """What the expert can see: the screen's text, and every widget's id, classes and display (its styling state)."""
    screen = app.screen
    widgets = sorted(f"{w.id}:{sorted(w.classes)}:{w.display}" for w in screen.walk_children())
    return app.screen_text(), "\n".join(widgets) + f"\nscreen classes {sorted(screen.classes)}"


async def test_gold_checks_are_mixed_in_at_the_rate_and_nothing_on_screen_tells_them_apart(tmp_path: Path) -> None:
    import re

    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.25")
    assign(path, "ann", 8)
    app, running = open_judging(path, clock=FrozenClock())
    shapes: dict[bool, set[str]] = {True: set(), False: set()}
    async with running as pilot:
        for _ in range(10):
            screen = await settle(pilot)
            gold = screen.current.key.startswith("c")  # the test knows; the screen shows no key
            text, shape = visible(app)
            bar = str(screen.query_one("#judge-bar").render())
            for word in ("gold", "degraded", "practice", "reference", "not counted"):
                assert word not in (text + shape).lower(), word
            if gold:
                assert screen.current.key not in text + shape
            assert "check" not in (bar + shape).lower()  # (the deliverables themselves may say "checked")
            assert re.search(r"\d+ of 10 ", bar), bar
            shapes[gold].add(shape)  # the same widgets, classes and display, whatever the place
            await complete(pilot, screen, "option_1")
            await pilot.press("ctrl+s")
            await pilot.pause()
        screen = await settle(pilot)
        assert screen.finished
    assert shapes[True] and shapes[True] <= shapes[False]  # (the first place differs: nothing to revise yet)
    gold_rows = [r for r in checks(path) if r["kind"] == "gold"]
    assert len(gold_rows) == 2 and all(r["judged_at"] for r in gold_rows)
    assert [r["passed"] for r in gold_rows] == [int(r["intact_option"] == 1) for r in gold_rows]
    assert len(expert_rows(path)) == 8  # the gold verdicts are not judgments


async def test_gold_verdicts_never_reach_a_statistic(tmp_path: Path) -> None:
    from centaur_tui.services.judging import open_judging
    from centaur_tui.services.judging import open_judging as open_source
    from centaur_tui.services.report import session_report
    from centaur_tui.store import Store

    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.5", "expert_practice = 1")
    assign(path, "ann", 4)
    study = load_session(path)
    with Store(study.database) as store:
        queue = open_judging(study, store, "ann").queue()
        before = session_report(study, store, judge_kinds=("llm", "expert"), bootstrap=0, permutation=False)
        from centaur_tui.domain.blinding import Draft

        for q in queue:
            if q.key.startswith("c"):  # practice and gold only
                item = open_source(study, store, "ann").item(q.key)
                draft = Draft({d.id: [7, 2] for d in item.rubric.all}, "option_2", RATIONALE, 10.0, 8.0)
                open_judging(study, store, "ann").submit(q.key, draft)
        after = session_report(study, store, judge_kinds=("llm", "expert"), bootstrap=0, permutation=False)
    assert sum(q.key.startswith("c") for q in queue) == 3  # 1 practice + 2 gold (0.5 of 4)
    b, a = before.document.to_dict(), after.document.to_dict()
    b.pop("seat", None), a.pop("seat", None)
    assert a == b  # every statistic, count and denominator the same
    seat = after.document.to_dict()["seat"]
    [ann] = [r for r in seat["rows"] if r["expert"] == "ann"]
    assert ann["gold_judged"] == 2 and ann["practice_judged"] == 1 and ann["judgments"] == 0


async def test_the_overview_shows_each_experts_gold_pass_and_lower_average_winners(tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from centaur_tui.ui.screens.session import SessionScreen

    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.5")
    assign(path, "ann", 4)
    passes = iter([True, False])
    judge_checks(path, "ann", lambda intact: f"option_{intact if next(passes) else 3 - intact}")
    judge_comparisons(path, "ann")  # 4 winners with the lower average
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "overview"
        )
        table = app.screen.query_one("#experts", DataTable)
        row = table.get_row("ann")
        assert row[4:] == ["4", "1/2"]  # low, gold
        assert table.get_row("bob")[4:] == ["0", "-"]


async def test_a_practice_comparison_comes_first_is_not_counted_and_shows_its_reference_verdict(
    tmp_path: Path,
) -> None:
    from centaur_tui.ui.screens.dialogs import HelpDialog

    path = with_judging(judged_session(tmp_path), "expert_practice = 1")
    assign(path, "ann", 2)
    app, running = open_judging(path)
    async with running as pilot:
        screen = await settle(pilot)
        assert screen.current.practice
        assert "PRACTICE 1 of 1, not counted" in str(screen.query_one("#judge-bar").render())
        await complete(pilot, screen, "option_1")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpDialog), "the reference verdict")
        [row] = [r for r in checks(path) if r["kind"] == "practice"]
        assert f"Option {row['intact_option']} should win" in app.screen.text
        assert "never counted" in app.screen.text
        assert ("You found it." in app.screen.text) == (row["intact_option"] == 1)
        await pilot.press("escape")
        screen = await settle(pilot)
        assert not screen.current.practice and "PRACTICE" not in str(screen.query_one("#judge-bar").render())
    assert expert_rows(path) == []  # the practice verdict is no judgment


async def test_guidelines_are_shown_before_the_first_comparison_and_on_a_key(tmp_path: Path) -> None:
    from centaur_tui.ui.screens.dialogs import HelpDialog

    path = with_judging(judged_session(tmp_path), 'expert_guidelines = "guide.md"')
    (path.parent / "guide.md").write_text("# How we judge\n\nA missing figure outweighs style.\n", encoding="utf-8")
    assign(path, "ann", 2)
    app, running = open_judging(path)
    async with running as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HelpDialog), "the guidelines")
        assert isinstance(app.screen, HelpDialog) and "A missing figure outweighs style." in app.screen.text
        await pilot.press("escape")
        screen = await settle(pilot)
        assert screen.check_action("guidelines", ()) is True
        assert "Guidelines" in app.screen_text()  # in the footer
        await pilot.press("f6")
        await pilot.pause()
        assert isinstance(app.screen, HelpDialog) and "How we judge" in app.screen.text
        await pilot.press("escape")
        screen = await settle(pilot)
        await complete(pilot, screen)
        await pilot.press("ctrl+s")
        await settle(pilot)
    again, running = open_judging(path)
    async with running as pilot:
        screen = await settle(pilot)
        await pilot.pause()
        assert again.screen is screen  # judging has begun: not shown again unasked


async def test_no_guidelines_key_without_guidelines(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    assign(path, "ann", 1)
    app, running = open_judging(path)
    async with running as pilot:
        screen = await settle(pilot)
        assert screen.check_action("guidelines", ()) is False
        await pilot.press("f6")
        await pilot.pause()
        assert app.screen is screen


async def test_a_packet_carries_the_guidelines_and_brings_back_active_time_and_the_confirmation(
    tmp_path: Path,
) -> None:
    from centaur_tui.services.exchange import import_packet_into as import_packet
    from centaur_tui.services.judging import PacketJudging, export_packet
    from centaur_tui.services.work import open_judging as open_source
    from centaur_tui.store import Store
    from centaur_tui.ui.screens.dialogs import HelpDialog

    path = with_judging(judged_session(tmp_path), 'expert_guidelines = "guide.md"', "expert_idle_s = 30.0")
    (path.parent / "guide.md").write_text("# Judge Alpha fairly\n\nRead both to the end.\n", encoding="utf-8")
    assign(path, "ann", 2)
    study = load_session(path)
    with Store(study.database) as store:
        export_packet(store, study, open_source(study, store, "ann").expert, tmp_path / "a.packet")
    source = PacketJudging(tmp_path / "a.packet")
    assert source.idle_seconds == 30.0 and "Alpha" not in (source.guidelines or "x")  # masked at export
    clock = FrozenClock()
    app = create_app(judging=source, clock=clock)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HelpDialog), "the guidelines")
        assert "Read both to the end." in app.screen.text
        await pilot.press("escape")
        screen = await settle(pilot)
        n = len(screen.query_one(RubricPanel).rows())
        clock.now += 100  # 30 s of it active (judging.expert_idle_s = 30)
        await pilot.press(*["8", "3"] * n, "2")
        pilot.app.post_message(events.Paste(RATIONALE))
        await pilot.pause()
        await pilot.press("ctrl+s", "y")
        await settle(pilot)
    source.close()
    with Store(study.database) as store:
        done = import_packet(store, study, tmp_path / "a.packet")
    assert done.added == 1
    [row] = expert_rows(path)
    assert (row["seconds"], row["active_seconds"], row["lower_average_confirmed"]) == (100.0, 30.0, 1)


_HOME_CHILD = """
import asyncio, sys
from pathlib import Path
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.home import HomeScreen

async def main():
    app = create_app(sessions_dir=Path(sys.argv[1]))
    async with app.run_test(size=(120, 40)):
        for _ in range(3000):
            if isinstance(app.screen, HomeScreen) and app.screen.loaded:
                break
            await asyncio.sleep(0.01)
        heavy = ("pandas", "litellm", "matplotlib", "numpy", "scipy", "markdown_it")
        print(len(app.screen.rows), " ".join(m for m in heavy if m in sys.modules) or "none")

asyncio.run(main())
"""


def test_launch_to_the_home_screen_imports_no_heavy_library(tmp_path: Path) -> None:
    """bench/tui.py measures the launch (under 0.5 s); this holds what it must not load on the way."""
    import subprocess
    import sys

    path = judged_session(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", _HOME_CHILD, str(path.parent)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["1", "none"]
