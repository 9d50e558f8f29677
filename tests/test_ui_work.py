"""The work screen through Pilot: an expert writes two deliverables by keyboard, drafts survive a kill, blinding."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from textual import events

from centaur_tui.catalog import load_session
from centaur_tui.domain.session import PLAIN
from centaur_tui.store import Store, WorkStore
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.session import SessionScreen
from centaur_tui.ui.screens.work import ConfirmSubmit, DeliverableEditor, WorkScreen
from centaur_tui.ui.widgets.document import DocumentView
from tests.support.experts import CANDIDATES, FAMILIES, HOSTILE_SPELLINGS, HOSTILE_TEXT, judged_session
from tests.support.waits import wait_for, workers_done
from tests.support.work import WORK_ARM as ARM
from tests.support.work import work_session


def keys(text: str) -> list[str]:
    named = {" ": "space", "\n": "enter", ".": "full_stop", ",": "comma", "#": "number_sign"}
    return [named.get(c, c) for c in text]


async def open_work(pilot, expert_row: int = 0) -> WorkScreen:
    app = pilot.app
    await wait_for(
        pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the session overview"
    )
    app.screen.query_one("#experts").move_cursor(row=expert_row)
    await pilot.pause()
    await pilot.press("w")
    await wait_for(pilot, lambda: isinstance(app.screen, WorkScreen) and not app.screen.busy, "the work screen")
    return app.screen


@pytest.mark.slow
async def test_expert_writes_two_deliverables_by_keyboard(tmp_path: Path) -> None:
    path = work_session(tmp_path)
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        overview = app.screen
        screen = await open_work(pilot)
        assert screen.check_action("submit", ()) is None  # nothing written yet: submit is dimmed
        for n in (1, 2):
            first = screen.current.key
            await pilot.press(*keys(f"# Plan {n}\nStep one is done. Step two follows"))
            app.post_message(events.Paste(" and a pasted line."))  # the terminal's bracketed paste reaches the app
            await wait_for(pilot, lambda: screen.draft.pastes == 1, "the paste to be counted")
            assert screen.words == 14
            assert f"{screen.words} words" in app.screen_text()
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmSubmit), "the confirmation")
            await pilot.press("y")
            await wait_for(
                pilot,
                lambda first=first: (
                    app.screen is screen and not screen.busy and (screen.finished or screen.current.key != first)
                ),
                "the next task",
            )
        assert screen.finished and "All 2 task(s) are submitted" in app.screen_text()
        await pilot.press("escape")
        # The overview's experts table counts the deliverables written (submitted / assigned).
        await wait_for(
            pilot,
            lambda: app.screen is overview and overview.state.work.get("ann") == (2, 2),
            "the overview read again",
        )
        table = overview.query_one("#experts")
        assert str(table.get_cell("ann", "written")) == "2/2"
    study = load_session(path)
    with Store(study.database) as store:
        outputs = [o for o in store.outputs().values() if o.worker_kind == "expert"]
        rows = WorkStore(store).productivity_rows()
    assert len(outputs) == 2 and {o.worker for o in outputs} == {"ann"}
    assert all(o.text.endswith("Step two follows and a pasted line.") for o in outputs)
    assert len(rows) == 2 and all(r.pastes == 1 and r.edits >= 30 and r.words == 14 for r in rows)


@pytest.mark.slow
async def test_draft_is_intact_after_a_kill_and_restored_on_restart(tmp_path: Path, monkeypatch) -> None:
    path = work_session(tmp_path)
    study = load_session(path)
    text = "Half a deliverable, not submitted"
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_work(pilot)
        key = screen.current.key
        await pilot.press(*keys(text))
        await pilot.pause(WorkScreen.SAVE_DELAY + 0.1)
        await workers_done(pilot)
        # What a kill -9 leaves: only committed transactions, read by another connection.
        with sqlite3.connect(study.database) as conn:
            saved = conn.execute("SELECT text, locked FROM work_drafts WHERE assignment_id = ?", (key,)).fetchone()
        assert saved == (text, 0)
        # No clean shutdown: the flush on quit and unmount is what a killed process never runs.
        monkeypatch.setattr(WorkScreen, "flush", lambda self: None)
        monkeypatch.setattr(WorkScreen, "on_unmount", lambda self: None)
    monkeypatch.undo()
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_work(pilot)
        assert screen.current.key == key
        assert screen.query_one(DeliverableEditor).text == text
        await pilot.press(*keys(" more"))
        await pilot.press("escape")  # leaving saves at once, without waiting for the delay
        assert isinstance(app.screen, SessionScreen)
    with sqlite3.connect(study.database) as conn:
        assert conn.execute("SELECT text FROM work_drafts WHERE assignment_id = ?", (key,)).fetchone() == (
            text + " more",
        )


async def test_worker_never_sees_which_model_wrote_the_assistance_text(tmp_path: Path) -> None:
    path = work_session(tmp_path)
    study = load_session(path)
    with sqlite3.connect(study.database) as conn:
        # Plant identities the blinding must mask, and markup that must stay text.
        conn.execute(
            "UPDATE assistance_texts SET text = 'Advice from Alpha (North family, simulated/alpha): "
            "as an AI language model I suggest [@click=app.quit]this[/]. Gamma of South agrees.' || ? || '\n\n'"
            " || text",
            (HOSTILE_TEXT,),
        )
    conn.close()
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await open_work(pilot)
        seen = 0
        for _ in range(2):
            view = screen.query_one("#work-assistance", DocumentView)
            await wait_for(pilot, lambda view=view: view.ready, "the assistance text to be laid out")
            shown = (app.screen_text() + "\n" + view.rendered_text).lower()
            assert "advice from" in shown or "write the deliverable on your own" in shown
            seen += "advice from" in shown
            for name in (*CANDIDATES, *FAMILIES, "language model", PLAIN, *HOSTILE_SPELLINGS, "通义"):
                assert name.lower() not in shown.replace("write the deliverable on your own", ""), name
            if "advice from" in shown:
                assert "[@click=app.quit]" in shown  # markup shown as text, not a live action
            await pilot.press(*keys("x"))
            await pilot.press("ctrl+b")
            await wait_for(pilot, lambda: not screen.busy, "the next task")
        assert seen >= 1


async def test_opening_work_assigns_the_arm_when_nothing_is_assigned_yet(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + ARM, encoding="utf-8")
    app = create_app(sessions_dir=path.parent, session=path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_work(pilot, expert_row=1)
        assert len(screen.queue) == 2 and screen.source.expert.id == "bob"
    study = load_session(path)
    with Store(study.database) as store:
        assert len(WorkStore(store).assignments()) == 4  # the whole arm, as assign-work stores it


def test_draft_is_intact_after_kill_9_of_the_app_process(tmp_path: Path) -> None:
    """The real thing: the app in a pseudo-terminal, killed with SIGKILL mid-draft."""
    import os
    import pty
    import re
    import select
    import signal
    import subprocess
    import sys
    import time

    path = work_session(tmp_path)
    study = load_session(path)
    code = (
        "from pathlib import Path; from centaur_tui.ui.app import create_app; "
        f"create_app(sessions_dir=Path({str(path.parent)!r}), session=Path({str(path)!r})).run()"
    )
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    screen = ""

    def read_until(needle: str, timeout: float) -> None:
        nonlocal screen
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    screen += re.sub(
                        r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][0-9A-B]", "", os.read(master, 65536).decode(errors="replace")
                    )
                except OSError:
                    break
            if needle in screen:
                return
        raise AssertionError(f"{needle!r} never appeared")

    text = "Typed before the crash"
    try:
        read_until("Experts", 60)
        time.sleep(0.5)
        os.write(master, b"w")
        read_until("Your deliverable", 60)
        time.sleep(0.3)
        os.write(master, text.encode())
        deadline = time.monotonic() + 60  # a ceiling: the loop ends when the draft holds the text
        saved = None
        while time.monotonic() < deadline and saved != text:
            time.sleep(0.1)
            with sqlite3.connect(study.database) as conn:
                row = conn.execute("SELECT text FROM work_drafts").fetchone()
            conn.close()
            saved = row[0] if row else None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        os.close(master)
    assert proc.returncode == -signal.SIGKILL
    with Store(study.database) as store:  # opens cleanly after the kill (WAL recovered)
        rows = [r for r in WorkStore(store).assignments() if r.expert == "ann"]
        drafts = [WorkStore(store).draft(r.id) for r in rows]
    assert [d.text for d in drafts if d is not None] == [text]
