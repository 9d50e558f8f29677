"""Killing a run (SIGKILL) and running again ends exactly where an uninterrupted run ends."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import centaur_here
from tests.support.sessions import small_session_toml
from tests.support.stopping import child_env, interrupt, interruptible

CENTAUR = [sys.executable, "-m", "centaur_tui.cli"]


def _count(db: Path, table: str) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def _snapshot(db: Path) -> dict[str, object]:
    with sqlite3.connect(db) as conn:
        judgments = conn.execute(
            "SELECT comparison_id, judge, presentation, option1, option2, winner, valid, invalid_reason, attempts,"
            " call_key FROM judgments ORDER BY comparison_id, judge, presentation"
        ).fetchall()
        scores = conn.execute(
            "SELECT j.comparison_id, j.judge, s.candidate, s.dimension, s.score FROM scores s"
            " JOIN judgments j ON j.id = s.judgment_id ORDER BY 1, 2, 3, 4"
        ).fetchall()
        outputs = conn.execute("SELECT id, text FROM outputs ORDER BY id").fetchall()
        calls = conn.execute("SELECT key FROM calls ORDER BY key").fetchall()
        comparisons = conn.execute("SELECT * FROM comparisons ORDER BY id").fetchall()
    return {"judgments": judgments, "scores": scores, "outputs": outputs, "calls": calls, "comparisons": comparisons}


def _in_flight(db: Path) -> int:
    """Calls sent and not answered: in `calls_in_flight` without a stored reply."""
    with sqlite3.connect(db, timeout=30) as conn:
        return conn.execute("SELECT count(*) FROM calls_in_flight WHERE key NOT IN (SELECT key FROM calls)").fetchone()[
            0
        ]


@pytest.mark.slow
def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    text = small_session_toml(
        name="killed",
        tasks=("counseling",),
        faults="latency_s = 0.01\ninvalid_reply_rate = 0.1",
        limits="concurrency = 8\nper_model_concurrency = 4\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0",
    )
    killed = tmp_path / "killed.toml"
    killed.write_text(text)
    reference = tmp_path / "reference.toml"
    reference.write_text(text.replace('name = "killed"', 'name = "reference"'))

    proc = subprocess.Popen(
        [*CENTAUR, "run", str(killed), "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    db = tmp_path / "killed.db"
    # Killed at a moment with calls in flight, chosen on the stopped process: a kill timed by a
    # count alone once found none in flight (on a busy machine the run sat between two calls).
    while True:
        assert proc.poll() is None, "the run finished before it could be killed"
        assert time.monotonic() < deadline, "the run never had 15 judgments and a call in flight at once"
        if _count(db, "judgments") >= 15:
            os.kill(proc.pid, signal.SIGSTOP)
            if _in_flight(db) >= 1:
                break
            os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    partial = _count(db, "judgments")
    assert partial >= 15
    in_flight = _in_flight(db)
    # Killed mid-run at concurrency 8: some calls were sent without an answer, never more than 8.
    assert 1 <= in_flight <= 8

    # The whole test (three runs) takes about 14 s in a full run on 2 cores: the limits only end a hang.
    resumed = centaur_here("run", str(killed), "--quiet")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    plural = "calls" if in_flight != 1 else "call"
    verb = "were" if in_flight != 1 else "was"
    # No timeouts in a simulated run: every call that may be billed twice was in flight at the kill.
    billed = f"{in_flight} {plural} may have been billed twice (0 timed out and were sent again, "
    assert billed + f"{in_flight} {verb} in flight when an earlier run stopped)." in resumed.stdout, resumed.stdout
    assert _count(db, "calls_in_flight") == 0  # counted once, and the resumed run left none behind
    # ... and each is recorded as a request that may have been billed without an answer (no budget
    # here, so no reservation to estimate it at).
    with sqlite3.connect(db) as conn:
        killed_rows = conn.execute("SELECT cause, usd FROM unanswered_spend").fetchall()
    assert killed_rows == [("killed", None)] * in_flight
    assert "were out when a run was killed): not estimated (sent without a budget)" in resumed.stdout
    full = centaur_here("run", str(reference), "--quiet")
    assert full.returncode == 0, full.stderr

    a, b = _snapshot(db), _snapshot(tmp_path / "reference.db")
    assert len(a["judgments"]) > partial
    for table in a:
        assert a[table] == b[table], table


@pytest.mark.slow
def test_sigint_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    path = tmp_path / "stopped.toml"
    path.write_text(
        small_session_toml(
            name="stopped",
            tasks=("counseling",),
            # 42 calls, 4 at a time, 2 s each: at least 21 s of run, so a poller starved on a busy
            # machine still stops it midway (at 0.05 s a call the run once finished before the signal).
            faults="latency_s = 2.0",
            limits="concurrency = 4\nper_model_concurrency = 4",
        )
    )
    proc = subprocess.Popen(
        interruptible([*CENTAUR, "run", str(path), "--quiet"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
    )
    db = tmp_path / "stopped.db"
    deadline = time.monotonic() + 60
    while _count(db, "calls") < 5 and time.monotonic() < deadline:
        time.sleep(0.05)
    out, err = (part.decode() for part in interrupt(proc))
    assert proc.returncode == 130, out + err
    assert "run the same command again to resume" in err
    assert _count(db, "calls_in_flight") == 0  # abandoned calls are not left as in flight
    # ... but recorded as requests the provider may have billed without an answer (at most 4 were out).
    with sqlite3.connect(db) as conn:
        causes = {c for (c,) in conn.execute("SELECT cause FROM unanswered_spend")}
        stopped = conn.execute("SELECT count(*) FROM unanswered_spend").fetchone()[0]
    assert causes <= {"stopped"} and stopped <= 4
