"""Another program's database lock: the run waits for it off its event loop; read-only commands never need it.

Issue 12, item 6: a write lock held by another program for 6 s froze the run (25 false
provider timeouts), for 12 s it gave a "database is locked" traceback, and `centaur export`
and `centaur report` took the write lock too.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import DatabaseLockedError, StoreError
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.calls import DB_WAITING
from centaur_tui.store import SCHEMA_VERSION, Store
from tests.support.sessions import small_session_toml

V1 = Path(__file__).resolve().parent / "data" / "store_v1.db"

HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('held', 'yes')")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""
"""Another program: holds the write lock (BEGIN IMMEDIATE with a pending write) until its stdin gets a line."""


class Recorder:
    """A progress sink keeping (waiting, retries) of every update; counts those saying the run waits for the lock."""

    def __init__(self) -> None:
        self.updates: list[tuple[str | None, int]] = []
        self.waited = threading.Semaphore(0)

    def update(self, progress: Any) -> None:
        self.updates.append((progress.waiting, progress.retries))
        if progress.waiting == DB_WAITING:
            self.waited.release()


def _hold_lock_after_first_call(
    db: Path, ticks: int, recorder: Recorder, held: threading.Event, released_by_ticks: threading.Event
) -> threading.Thread:
    """Take the write lock once the run has answered a call; release it after `ticks` updates saying the run waits.

    Counted, not timed: a loop blocked by the database thread sends no update, so the lock is held
    until the 60 s ceiling and `released_by_ticks` stays unset (a machine's load only slows the ticks).
    """

    def hold() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the run's first answered call: calls are in flight now
            try:
                with sqlite3.connect(db, timeout=1) as probe:
                    if probe.execute("SELECT count(*) FROM calls").fetchone()[0] > 0:
                        break
            except sqlite3.OperationalError:
                pass
            time.sleep(0.005)
        conn = sqlite3.connect(db, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        if all(recorder.waited.acquire(timeout=60) for _ in range(ticks)):
            released_by_ticks.set()
        conn.execute("ROLLBACK")
        conn.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
def test_a_run_waits_for_another_program_s_lock_without_false_timeouts(write_session) -> None:
    # A foreign lock held for 20 of the run's ticks (0.05 s each: about 1 s on a quiet machine)
    # against a 0.1 s busy timeout: before, the writes blocked the loop (no tick came, the calls in
    # flight timed out) and then raised "database is locked". Provider timeouts are generous
    # (60 s): 0.5 s failed without any lock on a loaded 2-core machine (litellm's first calls).
    study = load_session(
        write_session(
            name="locked",
            tasks=("counseling",),
            faults="latency_s = 0.05",
            limits="concurrency = 16\nper_model_concurrency = 8\ntimeout_s = 60.0\nmax_retries = 0\n"
            "backoff_base_s = 0.0\nbackoff_max_s = 0.0",
        )
    )
    store = Store(study.database, busy_timeout_ms=100)
    recorder = Recorder()
    held = threading.Event()
    released_by_ticks = threading.Event()
    holder = _hold_lock_after_first_call(study.database, 20, recorder, held, released_by_ticks)
    pipe = Pipeline(study, store, sink=recorder, tick=0.05)
    outcome = asyncio.run(pipe.run())
    holder.join(timeout=120)
    assert held.is_set(), "the lock was never taken: the test proved nothing"
    # The loop kept ticking while the database thread waited: 20 updates came while the lock was held.
    assert released_by_ticks.is_set(), "the run sent no updates while it waited for the lock"
    assert outcome.complete
    assert all(s.failed == 0 for s in outcome.progress.stages.values())
    assert outcome.progress.retries == 0
    assert store.counts().call_errors == 0
    assert sum(waiting == DB_WAITING for waiting, _ in recorder.updates) >= 20
    assert recorder.updates[-1][0] is None
    store.close()


def test_a_lock_held_longer_than_the_run_waits_stops_it_with_one_clear_error(write_session) -> None:
    study = load_session(write_session(name="stuck", tasks=("counseling",)))
    Store(study.database).close()
    conn = sqlite3.connect(study.database, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        store = Store(study.database, busy_timeout_ms=50)
        pipe = Pipeline(study, store, tick=0.05)
        pipe.calls.db_wait_max_s = 0.3
        with pytest.raises(StoreError) as err:
            asyncio.run(pipe.run())
        assert "locked by another program" in str(err.value) and "run again to resume" in str(err.value)
        assert not isinstance(err.value, DatabaseLockedError)
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    store.close()


def test_any_other_writer_reports_a_foreign_lock_as_a_store_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = Store(path, busy_timeout_ms=50)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DatabaseLockedError) as err:
            store.set_meta({"a": "b"})
        assert str(path) in str(err.value) and "nothing was written" in str(err.value)
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    store.set_meta({"a": "b"})
    assert store.meta()["a"] == "b"
    store.close()


def test_a_read_only_store_reads_refuses_writes_and_needs_an_existing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no such session database"):
        Store(tmp_path / "missing.db", readonly=True)
    assert not (tmp_path / "missing.db").exists()
    Store(tmp_path / "s.db").close()
    with Store(tmp_path / "s.db", readonly=True) as store:
        assert store.counts().calls == 0
        with pytest.raises(StoreError, match="read-only"):
            store.set_meta({"a": "b"})
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError):
        Store(tmp_path / "junk.db", readonly=True)


def test_a_read_only_open_of_an_old_database_upgrades_it_once_then_reads(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    with Store(path, readonly=True) as store:
        assert store.counts().judgments == 32
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_read_only_open_of_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    Store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer"):
        Store(path, readonly=True)


@pytest.mark.slow
def test_report_and_export_work_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    session = tmp_path / "held.toml"
    session.write_text(small_session_toml(name="held", tasks=("counseling",)), encoding="utf-8")
    runner = CliRunner()
    assert runner.invoke(cli, ["run", str(session), "--quiet"]).exit_code == 0
    db = tmp_path / "held.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        # A command needing the write lock would wait the 10 s busy timeout, then fail: the exit
        # statuses say it, not a clock.
        exported = runner.invoke(cli, ["export", str(session), "--out", str(tmp_path / "out")])
        assert exported.exit_code == 0, exported.output
        reported = runner.invoke(cli, ["report", str(session)])
        assert reported.exit_code == 0, reported.output
        assert (tmp_path / "out" / "judgments.csv").stat().st_size > 0
        assert "Krippendorff" in reported.output or "judge" in reported.output.lower()
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(timeout=30)
    with sqlite3.connect(db) as conn:  # the other program's transaction was its own: rolled back, nothing of ours in it
        assert conn.execute("SELECT count(*) FROM meta WHERE key = 'held'").fetchone()[0] == 0
