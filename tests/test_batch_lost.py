"""A batch whose output file is gone, that expired, that the provider forgot, or whose files are garbage.

Each ends in recorded outcomes (every request a final failure with its reason), the run goes on
with exit status 3 (never 2 with a hint about the model string), and the next run sends those
requests again in a new batch. Through the real CLI and litellm's batch SDK, against the fake of
OpenAI's endpoints (tests/support/batch_server.py).
"""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.llm.batch import BatchClient
from centaur_tui.pipeline import batching
from centaur_tui.pipeline.batching import MAX_UNREADABLE_POLLS
from tests.support.batch_server import BatchServer
from tests.test_batch import session_text, write

JUDGMENTS = 8
"""Planned judgments of the test session (two judges, batched)."""


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(sql).fetchall()


def spoil(server: BatchServer, kind: str) -> None:
    if kind == "output_gone":
        server.lose_files = True
    elif kind == "expired_output_gone":
        server.lose_files = True
        server.final = lambda batch: "expired"
    elif kind == "batch_gone":
        server.forget_batches = True
    elif kind == "garbage_output":
        server.garbage.add("content")
    else:
        raise AssertionError(kind)


def heal(server: BatchServer) -> None:
    server.lose_files = server.forget_batches = False
    server.garbage.clear()
    server.final = lambda batch: "completed"


ENDS = {
    "output_gone": ("missing", "BatchOutputUnreadable", "its output file"),
    "expired_output_gone": ("expired", "BatchExpired", "expired before answering this request; its output file"),
    "batch_gone": ("missing", "BatchLost", "no longer knows batch"),
    "garbage_output": ("missing", "BatchMissingResult", "not JSON"),
}


@pytest.mark.parametrize("kind", sorted(ENDS))
def test_a_spoiled_batch_ends_recorded_and_the_next_run_sends_its_requests_again(tmp_path: Path, kind: str) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        spoil(server, kind)
        first = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert first.exit_code == 3, first.output
        assert f"judging: {JUDGMENTS} of {JUDGMENTS} missing ({JUDGMENTS} failed for good)" in first.output
        assert "model string" not in first.output and "Traceback" not in first.output
        state, error_type, words = ENDS[kind]
        ended = rows(
            path,
            "SELECT r.state, e.error_type, e.message FROM batch_requests r JOIN call_errors e ON e.key = r.key"
            " WHERE e.final = 1",
        )
        assert len(ended) == JUDGMENTS and {(s, t) for s, t, _ in ended} == {(state, error_type)}, ended
        assert all(words in m and "model string" not in m for *_, m in ended), ended
        assert rows(path, "SELECT count(*) FROM batch_requests WHERE state = 'pending'") == [(0,)]
        assert {s for (s,) in rows(path, "SELECT state FROM batches")} == {"collected"}

        heal(server)
        second = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert second.exit_code == 0, second.output
    sent = server.all_sent()
    assert len(sent) == 2 * JUDGMENTS and len(set(sent)) == JUDGMENTS  # each request once in each run
    assert rows(path, "SELECT count(*) FROM judgments") == [(JUDGMENTS,)]


def test_a_batch_left_in_flight_whose_output_is_gone_when_collected_does_not_block_the_session(
    tmp_path: Path,
) -> None:
    with BatchServer(steps=0) as server:
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()
        first = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert first.exit_code == 4, first.output  # left in flight: collected by the next run
        server.hold.clear()
        server.lose_files = True
        second = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert second.exit_code == 3, second.output
        assert "Traceback" not in second.output and "model string" not in second.output
        server.lose_files = False
        third = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert third.exit_code == 0, third.output
    assert rows(path, "SELECT count(*) FROM judgments") == [(JUDGMENTS,)]
    assert len(set(server.all_sent())) == JUDGMENTS


def test_a_refused_key_on_reading_the_output_still_stops_the_run(tmp_path: Path) -> None:
    # Every request would fail with that key: the batch stays in flight for a run with a good key.
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.refuse["retrieve"] = 401
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert result.exit_code == 2, result.output
        assert "AuthenticationError" in result.output
        del server.refuse["retrieve"]
        assert CliRunner().invoke(cli, ["run", str(path), "--quiet"]).exit_code == 0
    assert len(server.all_sent()) == JUDGMENTS  # nothing sent twice


def test_a_request_cancelled_in_litellms_thread_step_leaves_no_coroutine_unawaited(tmp_path: Path) -> None:
    with BatchServer() as server:
        study = load_session(write(tmp_path, session_text(server.api_base)))
        judge = study.session.judge("J1")
        server.files["file-x"] = b"{}\n"

        async def main() -> None:
            client = BatchClient(study.session.limits)
            for _ in range(5):
                task = asyncio.ensure_future(client.content(judge, "file-x"))
                await asyncio.sleep(0)  # started: litellm's sync step runs in its thread
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            await client.aclose()

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            asyncio.run(main())
            gc.collect()
    never = [w for w in caught if "never awaited" in str(w.message)]
    assert never == []


# -- a status that keeps coming back as garbage (issue 23) -------------------------------------


def _retrieves(server: BatchServer) -> int:
    return sum(1 for kind, _ in server.log if kind == "retrieve")


def test_a_batch_whose_status_stays_garbage_ends_after_the_limit_and_is_sent_again(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.garbage.add("retrieve")
        first = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert first.exit_code == 3, first.output  # ended, recorded: never "not finished" for good
        assert f"judging: {JUDGMENTS} of {JUDGMENTS} missing ({JUDGMENTS} failed for good)" in first.output
        assert "Traceback" not in first.output and "\x1b" not in first.output
        batches = rows(path, "SELECT state, status, unreadable_polls FROM batches")
        assert batches and all(b == ("collected", "unreadable", MAX_UNREADABLE_POLLS) for b in batches), batches
        assert _retrieves(server) == MAX_UNREADABLE_POLLS * len(batches)
        ended = rows(
            path,
            "SELECT r.state, e.error_type, e.message FROM batch_requests r JOIN call_errors e ON e.key = r.key"
            " WHERE e.final = 1",
        )
        assert len(ended) == JUDGMENTS and {(s, t) for s, t, _ in ended} == {("missing", "BatchStatusUnreadable")}
        assert all(f"came back unreadable {MAX_UNREADABLE_POLLS} times in a row" in m for *_, m in ended), ended
        heal(server)
        second = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert second.exit_code == 0, second.output
    sent = server.all_sent()
    assert len(sent) == 2 * JUDGMENTS and len(set(sent)) == JUDGMENTS  # each request once in each run
    assert rows(path, "SELECT count(*) FROM judgments") == [(JUDGMENTS,)]


def test_unreadable_statuses_are_counted_across_runs_and_a_readable_one_resets_the_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batching, "MAX_UNREADABLE_POLLS", 3)
    with BatchServer(steps=0) as server:
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()  # in progress until released

        def run(exit_code: int) -> str:
            result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
            assert result.exit_code == exit_code, result.output
            assert "Traceback" not in result.output
            return result.output

        def counts() -> set[int]:
            return {n for (n,) in rows(path, "SELECT unreadable_polls FROM batches WHERE state != 'collected'")}

        run(4)  # submitted, in progress: left in flight
        server.garbage.add("retrieve")
        assert "1 of 3 unreadable answers in a row" in run(4) and counts() == {1}
        run(4)
        assert counts() == {2}
        server.garbage.clear()  # one readable answer: the batch is alive
        run(4)
        assert counts() == {0}
        server.garbage.add("retrieve")
        run(4)
        run(4)
        assert counts() == {2}
        run(3)  # the third in a row ends every batch, recorded
        assert counts() == set()
        assert {s for (s,) in rows(path, "SELECT status FROM batches")} == {"unreadable"}
        heal(server)
        server.hold.clear()
        run(0)  # sent again in new batches, which end at their first check
    assert rows(path, "SELECT count(*) FROM judgments") == [(JUDGMENTS,)]
    sent = server.all_sent()
    assert len(sent) == 2 * JUDGMENTS and len(set(sent)) == JUDGMENTS
