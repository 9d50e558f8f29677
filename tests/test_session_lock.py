"""One run per session at a time: a second run refuses at once and names the holder; a dead holder blocks nothing.

Issue 12, item 7: two `centaur run` on one session at once sent every call twice (980
requests for 490 calls).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.errors import SessionBusyError
from centaur_tui.services.run import PipelineRun
from centaur_tui.store import SessionLock, Store, lock_holder, lock_path
from tests.support.cli import centaur_here
from tests.support.sessions import small_session_toml

CENTAUR = [sys.executable, "-m", "centaur_tui.cli"]


def test_a_second_lock_on_one_session_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with SessionLock(db) as first:
        assert first.held and lock_path(db).name == "s.db.lock"
        holder = lock_holder(db)
        assert holder is not None and holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        with pytest.raises(SessionBusyError) as err:
            SessionLock(db).acquire()  # another open file: refused even inside one process
        message = str(err.value)
        assert f"process {os.getpid()} on {socket.gethostname()} since {holder['since']}" in message
        assert str(db) in message and err.value.exit_code == 2
    with SessionLock(db):  # released: the next one gets it
        pass
    assert lock_path(db).exists() and lock_holder(db) is None  # kept, emptied


def test_a_lock_file_holding_garbage_is_no_obstacle(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    lock_path(db).write_bytes(b"\xff\xfe not json")
    with SessionLock(db) as lock:
        assert lock.held and lock_holder(db) == {**(lock_holder(db) or {}), "pid": os.getpid()}
    lock_path(db).write_text(json.dumps(["a", "list"]))
    assert lock_holder(db) is None


def test_a_pipeline_run_refuses_while_another_holds_the_session_and_sends_nothing(write_session) -> None:
    study = load_session(write_session(name="busy", tasks=("counseling",)))
    store = Store(study.database)
    with SessionLock(study.database), pytest.raises(SessionBusyError):
        PipelineRun(study, lambda: store).run()
    assert store.counts().calls == 0
    outcome = PipelineRun(study, lambda: store).run()
    assert outcome is not None and outcome.complete
    store.close()


def _calls(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT count(*) FROM calls").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_a_second_centaur_run_exits_2_naming_the_first_and_a_killed_first_blocks_nothing(tmp_path: Path) -> None:
    session = tmp_path / "twice.toml"
    # About 50 calls at 0.2 s each, 2 at a time: about 5 s of run, far longer than the second start.
    session.write_text(
        small_session_toml(
            name="twice",
            tasks=("counseling",),
            faults="latency_s = 0.2",
            limits="concurrency = 2\nper_model_concurrency = 2\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0",
        ),
        encoding="utf-8",
    )
    db = tmp_path / "twice.db"
    first = subprocess.Popen(
        [*CENTAUR, "run", str(session), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 60
        while _calls(db) < 2:
            assert first.poll() is None, "the first run ended before the second could start"
            assert time.monotonic() < deadline, "the first run never answered a call"
            time.sleep(0.05)
        second = subprocess.run([*CENTAUR, "run", str(session), "--quiet"], capture_output=True, text=True, timeout=120)
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"process {first.pid} on {socket.gethostname()}" in second.stderr
        assert "being run already" in second.stderr and "Traceback" not in second.stderr
        assert first.poll() is None, "the first run must still be running when the second is refused"
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait(timeout=30)
    assert lock_holder(db) is not None  # the dead holder's details are still in the file...
    third = centaur_here("run", str(session), "--quiet")
    assert third.returncode == 0, third.stdout + third.stderr  # ...but the OS released its lock
    with Store(db) as store:
        judgments = store.counts().judgments
    assert judgments == 29
