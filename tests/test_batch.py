"""Batch mode through litellm's real batch SDK against a local fake of OpenAI's Files and Batches endpoints.

Generation runs online against the fake's chat endpoint, judge calls go through batches
(`[judging] mode = "batch"`); nothing of litellm is patched. The fake (tests/support/batch_server.py)
logs every request, so "sent twice" is checked on what the provider received.
"""

from __future__ import annotations

import asyncio
import csv
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import Store, batch_rows, check_no_double_send
from tests.support.batch_server import BatchServer
from tests.support.cli import centaur_here
from tests.support.stopping import child_env, interrupt, interruptible

TASKS = Path(__file__).resolve().parent.parent / "tasks"
ROOT = Path(__file__).resolve().parent.parent


def session_text(api_base: str, mode: str = "batch", batch: str = "", name: str = "batched", runs: int = 1) -> str:
    def entry(kind: str, name: str, model: str, family: str, extra: str = "") -> str:
        return (
            f'[{kind}]\nname = "{name}"\nmodel = "openai/{model}"\napi_base = "{api_base}"\n'
            f'family = "{family}"\n{extra}\n'
        )

    return textwrap.dedent(
        f"""
        name = "{name}"
        seed = 5
        runs = {runs}
        tasks = ["counseling"]
        tasks_dir = "{TASKS}"

        [judging]
        mode = "{mode}"
        max_tokens = 400
        structured_output = false

        [batch]
        poll_interval_s = 0.02
        collect_s = 0.2
        {batch}

        [limits]
        concurrency = 8
        max_retries = 1
        backoff_base_s = 0.0
        backoff_max_s = 0.05
        timeout_s = 10.0
        """
    ) + "\n".join(
        [
            entry("[models]", "A", "gen-a", "North"),
            entry("[models]", "B", "gen-b", "South", "augmentation = false"),
            entry("[models]", "C", "gen-c", "Mid", "augmentation = false"),
            entry("worker", "W", "worker", "East"),
            entry(
                "[judges]",
                "J1",
                "gpt-4o-mini",
                "West",
                "batch_input_cost_per_mtok = 0.5\nbatch_output_cost_per_mtok = 2.0",
            ),
            entry("[judges]", "J2", "judge-two", "Central", "input_cost_per_mtok = 1.0\noutput_cost_per_mtok = 4.0"),
        ]
    )


def write(tmp_path: Path, text: str, name: str = "batched.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def run(path: Path) -> Any:
    study = load_session(path)
    with Store(study.database) as store:
        return asyncio.run(Pipeline(study, store).run())


def judgments(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(
            "SELECT j.comparison_id, j.judge, j.presentation, j.option1, j.option2, j.winner, j.valid,"
            " j.invalid_reason, j.rationale, j.attempts, c.response,"
            " (SELECT group_concat(candidate || ':' || dimension || '=' || score, ',') FROM"
            "  (SELECT * FROM scores s WHERE s.judgment_id = j.id ORDER BY candidate, dimension))"
            " FROM judgments j JOIN calls c ON c.key = j.call_key ORDER BY j.comparison_id, j.judge, j.presentation"
        ).fetchall()


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(sql).fetchall()


# -- happy path -----------------------------------------------------------------------------------


def test_a_batch_run_stores_what_the_online_path_stores(tmp_path: Path) -> None:
    with BatchServer() as server:
        batched = write(tmp_path, session_text(server.api_base))
        online = write(tmp_path, session_text(server.api_base, mode="online", name="online"), "online.toml")
        outcome = run(batched)
        assert outcome.complete, outcome.outcomes
        sent = server.all_sent()
        judge_calls_online = sum(1 for r in server.online if r["model"] in ("gpt-4o-mini", "judge-two"))
        assert judge_calls_online == 0  # every judge call went through a batch
        assert run(online).complete
    rows_b, rows_o = judgments(batched), judgments(online)
    assert rows_b and rows_b == rows_o  # same comparisons, verdicts, scores, replies
    assert len(sent) == len(set(sent)) == len(rows_b)  # one request per judgment, none twice
    assert outcome.progress.stages["judging"].batched == len(rows_b)
    # Each batch holds one judge model's calls (as many batches as the dataflow's timing gathered).
    batches = query(batched, "SELECT model, state, status, requests FROM batches ORDER BY model")
    assert {m for m, *_ in batches} == {"openai/gpt-4o-mini", "openai/judge-two"}
    assert {(s, st) for _, s, st, _ in batches} == {("collected", "completed")}
    assert (
        query(
            batched,
            "SELECT count(DISTINCT b.model) FROM batch_requests r JOIN batches b ON b.id = r.batch_id"
            " GROUP BY r.batch_id HAVING count(DISTINCT r.model) > 1",
        )
        == []
    )
    assert sum(n for *_, n in batches) == len(rows_b)
    assert query(batched, "SELECT count(*) FROM batch_requests WHERE state != 'answered' OR messages IS NOT NULL") == [
        (0,)
    ]
    # The export marks each judgment that came from a batch, the report counts them.
    out = CliRunner().invoke(cli, ["export", str(batched), "--out", str(tmp_path / "export")])
    assert out.exit_code == 0, out.output
    with (tmp_path / "export" / "judgments.csv").open(encoding="utf-8") as fh:
        assert {row["batch"] for row in csv.DictReader(fh)} == {"true"}
    report = CliRunner().invoke(cli, ["report", str(batched), "--json", str(tmp_path / "b.json")])
    assert report.exit_code == 0, report.output
    doc = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    assert doc["outcomes"]["batched_judgments"] == len(rows_b) and doc["outcomes"]["batches_in_flight"] == 0
    text = CliRunner().invoke(cli, ["report", str(batched)]).output
    assert f"{len(rows_b)} LLM judgment(s) came from provider batches" in text
    CliRunner().invoke(cli, ["report", str(online), "--json", str(tmp_path / "o.json")])
    online_report = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    assert "batched_judgments" not in online_report["outcomes"]  # a session never batched: the document is as before
    out = CliRunner().invoke(cli, ["export", str(online), "--out", str(tmp_path / "online-export")])
    with (tmp_path / "online-export" / "judgments.csv").open(encoding="utf-8") as fh:
        assert {row["batch"] for row in csv.DictReader(fh)} == {"false"}


def test_batch_prices_are_recorded_per_call(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        assert run(path).complete
    costs = dict(
        query(
            path,
            "SELECT model, round(sum(cost), 9) / count(*) FROM calls WHERE stage = 'judging' GROUP BY model",
        )
    )
    # The fake reports 1,200 prompt and 150 completion tokens per reply.
    assert costs["openai/gpt-4o-mini"] == pytest.approx((1200 * 0.5 + 150 * 2.0) / 1e6)  # the session's batch price
    assert costs["openai/judge-two"] == pytest.approx((1200 * 1.0 + 150 * 4.0) / 1e6 * 0.5)  # online price x 0.5


# -- refusing what cannot be batched ----------------------------------------------------------------


def test_check_refuses_a_batched_judge_whose_provider_has_no_batch_api(tmp_path: Path) -> None:
    text = session_text("http://127.0.0.1:9/v1").replace('model = "openai/judge-two"', 'model = "anthropic/claude-x"')
    path = write(tmp_path, text)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert "judges[1 'J2'].model" in result.output and "anthropic/claude-x" in result.output
    assert "no batch API" in result.output and "Traceback" not in result.output
    with pytest.raises(ConfigError):
        load_session(path)
    online = write(tmp_path, text.replace("[batch]", '[batch]\nunsupported = "online"'), "fallback.toml")
    study = load_session(online)
    assert not study.session.batched("judging", study.session.judge("J2"))
    assert study.session.batched("judging", study.session.judge("J1"))


# -- killed and resumed -----------------------------------------------------------------------------

CENTAUR = [sys.executable, "-m", "centaur_tui.cli"]


def _wait_for(predicate: Any, proc: subprocess.Popen[bytes], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert proc.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _states(path: Path) -> list[str]:
    db = load_session(path).database
    if not db.exists():
        return []
    try:
        return [r[0] for r in query(path, "SELECT state FROM batches")]
    except sqlite3.OperationalError:
        return []


def _submitted(path: Path) -> int:
    try:
        rows = query(path, "SELECT sum(requests) FROM batches WHERE state = 'submitted'")
    except sqlite3.OperationalError:
        return 0
    return int(rows[0][0] or 0)


@pytest.mark.slow  # two `centaur` processes each (litellm's import): about 25 s
@pytest.mark.parametrize("window", ["submitted", "creating"])
def test_killed_mid_batch_and_resumed_sends_nothing_twice(tmp_path: Path, window: str) -> None:
    """SIGKILL once the batches exist at the provider (`submitted`), or while their create is unanswered."""
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.hold.set()  # batches stay in_progress: the run is waiting when it is killed
        if window == "creating":
            server.create_delay_s = 30.0  # the batch exists, but its id never reaches the run before the kill
        proc = subprocess.Popen(
            [*CENTAUR, "run", str(path), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            _wait_for(lambda: window in _states(path) and server.created.is_set(), proc, f"a batch {window}")
            if window == "submitted":
                _wait_for(lambda: _submitted(path) == 8, proc, "every judge call in a submitted batch")
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        before = server.all_sent()
        assert before and len(before) == len(set(before))
        server.hold.clear()
        server.create_delay_s = 0.0
        resumed = centaur_here("run", str(path), "--quiet")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        after = server.all_sent()
    assert len(after) == len(set(after)), "a request was sent in two batches"
    if window == "submitted":
        assert after == before  # every request was in a batch before the kill: nothing new was sent
    else:
        assert server.count("list") >= 1  # the unanswered create was looked for, and found, in the provider's list
    assert len(after) == len(judgments(path))
    assert check_no_double_send(Store(load_session(path).database)) == []
    assert all(state == "collected" for state in _states(path))


# -- a hostile provider -----------------------------------------------------------------------------


def _wrong(line: dict[str, Any]) -> dict[str, Any]:
    """The same result line with the verdict turned around (option 2 wins): a wrong judgment if it were used."""
    out = json.loads(json.dumps(line))
    body = out["response"]["body"]
    verdict = json.loads(body["choices"][0]["message"]["content"])
    verdict["winner"] = "option_2"
    body["choices"][0]["message"]["content"] = json.dumps(verdict)
    return out


def _dump(lines: list[Any]) -> bytes:
    return b"".join((x if isinstance(x, bytes) else json.dumps(x).encode()) + b"\n" for x in lines)


def _hostile(kind: str, server: BatchServer) -> None:
    first = {"done": False}

    def once(batch: dict[str, Any]) -> bool:
        # Only the first batch of judge J1 with two requests or more is hostile; re-asks and the other
        # judge's batches are not (how the calls gather into batches depends on the dataflow's timing).
        if first["done"] or batch["_model"] != "gpt-4o-mini" or batch["_total"] < 2:
            return False
        first["done"] = True
        return True

    normal_output = server.output

    def output(batch: dict[str, Any], lines: list[dict[str, Any]]) -> bytes:
        if not once(batch):
            return normal_output(batch, lines)
        if kind == "malformed":
            return _dump([b"{not json", *lines[1:-1], b'{"custom_id": 17}', b"[1, 2]"])
        if kind == "duplicates":
            return _dump([_wrong(lines[0]), lines[0], lines[1], _wrong(lines[1]), *lines[2:]])
        if kind == "missing":
            return _dump(lines[1:])
        if kind == "never_sent":
            others = [cid for bid, ids in server.sent.items() if bid != batch["id"] for cid in ids]
            stranger = dict(_wrong(lines[0]), custom_id=others[0]) if others else None
            return _dump(
                [*lines, dict(_wrong(lines[0]), custom_id="custom-never-sent"), *([stranger] if stranger else [])]
            )
        if kind == "huge":
            return _dump(
                [
                    b'{"custom_id": "' + lines[0]["custom_id"].encode() + b'", "pad": "' + b"x" * 5_000_000 + b'"}',
                    *lines[1:],
                ]
            )
        if kind == "errors":
            bad = dict(
                lines[0], response={"status_code": 500, "body": {"error": {"message": "upstream \x1b[31mfailed"}}}
            )
            err = {
                "custom_id": lines[1]["custom_id"],
                "response": None,
                "error": {"code": "rate_limit", "message": "slow down"},
            }
            return _dump([bad, err, *lines[2:]])
        if kind == "invalid_reply":
            broken = json.loads(json.dumps(lines[0]))
            broken["response"]["body"]["choices"][0]["message"]["content"] = "I prefer the first one."
            return _dump([broken, *lines[1:]])
        raise AssertionError(kind)

    server.output = output
    if kind in ("expired", "failed"):
        server.final = lambda batch: kind if once(batch) else "completed"


HOSTILE = ["malformed", "duplicates", "missing", "never_sent", "huge", "errors", "invalid_reply", "expired", "failed"]


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_batch_ends_in_recorded_outcomes_never_a_wrong_judgment(tmp_path: Path, kind: str) -> None:
    with BatchServer() as server:
        _hostile(kind, server)
        path = write(tmp_path, session_text(server.api_base))
        outcome = run(path)
        rows = judgments(path)
        # Never a wrong judgment: every stored verdict is the fake's (option 1 wins), with its reply.
        assert rows and all(r[6] == 1 and r[5] == r[3] for r in rows), rows
        planned = outcome.outcomes.stages["judging"]
        assert planned.answered == len(rows) and planned.invalid == 0
        ended = query(
            path,
            "SELECT r.state, e.error_type, e.message FROM batch_requests r JOIN call_errors e ON e.key = r.key"
            " WHERE r.state != 'answered' AND e.final = 1",
        )
        if kind == "invalid_reply":
            # Re-asked in a new batch of its own, then valid: 3 batches, the re-ask's judgment took 2 attempts.
            assert outcome.complete and not ended
            assert [r[0] for r in query(path, "SELECT requests FROM batches ORDER BY created_at")][-1] == 1
            assert sorted(r[9] for r in rows)[-1] == 2
        elif kind == "never_sent":
            assert outcome.complete and not ended  # the strangers were ignored, every request answered
            (message,) = query(path, "SELECT message FROM batches WHERE model = 'openai/gpt-4o-mini'")[0]
            assert "was not sent in this batch; ignored" in message
        else:
            # Every planned judgment not stored is failed, with its request's end and a clear message.
            assert not outcome.complete and planned.failed == len(ended) >= 1
            assert planned.answered + planned.failed == planned.planned
            expected_state = {"expired": "expired", "failed": "failed", "errors": "errored", "duplicates": "errored"}
            assert {s for s, _, _ in ended} == {expected_state.get(kind, "missing")}
            for _, error_type, message in ended:
                assert message.startswith("batch ") and "\x1b" not in message, message
                assert error_type.startswith("Batch") or error_type == "MalformedReply"
            if kind == "duplicates":
                assert all("two results" in m for *_, m in ended)
            if kind == "huge":
                assert "over the" in ended[0][2]
        # Run again against a well-behaved provider: the requests that got no answer go in a new batch, once.
        server.output = lambda batch, lines: _dump(lines)
        server.final = lambda batch: "completed"
        again = run(path)
        assert again.complete, again.outcomes
        sent = server.all_sent()
        twice = {cid for cid in sent if sent.count(cid) > 1}
        assert twice == {
            r[0] for r in query(path, "SELECT key FROM batch_requests WHERE state NOT IN ('answered', 'pending')")
        }
        assert len(judgments(path)) == planned.planned


# -- leaving batches in flight ----------------------------------------------------------------------


def test_a_run_that_does_not_wait_exits_not_finished_and_the_next_run_collects(tmp_path: Path) -> None:
    with BatchServer(steps=0) as server:  # a batch ends at its first check once no longer held
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()
        first = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert first.exit_code == 4, first.output
        assert re.search(r"Not finished: 8 calls wait in \d+ batches at the provider", first.output), first.output
        assert "judging: 8 of 8 missing (8 waiting in batches)" in first.output
        assert "failed for good" not in first.output
        creates = server.count("create")
        assert creates >= 2 and len(server.all_sent()) == 8
        still = CliRunner().invoke(cli, ["run", str(path), "--quiet"])  # still running at the provider
        assert still.exit_code == 4, still.output
        server.hold.clear()
        last = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert last.exit_code == 0, last.output
        assert server.count("create") == creates and len(server.all_sent()) == 8  # collected, nothing sent again
    assert len(judgments(path)) == 8
    with Store(load_session(path).database) as store:
        assert {b.state for b in batch_rows(store)} == {"collected"}


# -- the app ----------------------------------------------------------------------------------------


async def test_the_pipeline_panel_shows_each_batch_and_its_state(tmp_path: Path) -> None:
    from textual.widgets import Static

    from centaur_tui.ui.app import create_app
    from centaur_tui.ui.screens.session import SessionScreen
    from tests.support.waits import wait_for

    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.hold.set()
        app = create_app(sessions_dir=path.parent, session=path)
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(
                pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the overview"
            )
            overview: SessionScreen = app.screen  # type: ignore[assignment]
            panel = overview.query_one("#batches", Static)
            assert not panel.display  # no batch yet: no line
            await pilot.press("r")

            def text() -> str:
                return str(panel.render())

            def in_progress() -> bool:
                batches = list(overview.runner.progress.batches.values()) if overview.runner.progress else []
                return sum(b.requests for b in batches) == 8 and {b.status for b in batches} == {"in_progress"}

            await wait_for(pilot, in_progress, "every judge call in a batch in progress", 1500)
            await pilot.pause(0.3)  # the panel's timer (0.25 s)
            n = len(overview.runner.progress.batches)
            assert panel.display and f"Batches: 0 of {n} collected" in text()
            assert re.search(r"batch [0-9a-f]{8} judging: in_progress, 0/\d done", text()), text()
            assert "gpt-4o-mini" not in text() and "judge-two" not in text()  # no model names on the panel
            server.hold.clear()
            await wait_for(pilot, lambda: overview.last_outcome is not None, "the run to end", 1500)
            assert overview.last_outcome.startswith("Finished"), overview.last_outcome


# -- more ways a batch goes wrong -------------------------------------------------------------------


def test_an_upload_the_provider_refuses_ends_every_request_recorded_and_the_next_run_sends_them(
    tmp_path: Path,
) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.refuse["upload"] = 400
        outcome = run(path)
        assert not outcome.complete and outcome.batches_pending == 0
        assert outcome.outcomes.stages["judging"].failed == 8 and server.count("create") == 0
        rows = query(path, "SELECT state, message FROM batch_requests")
        assert len(rows) == 8 and {s for s, _ in rows} == {"failed"}
        assert all("batch not sent: uploading the batch input file: BadRequestError" in m for _, m in rows), rows
        assert query(path, "SELECT count(*) FROM call_errors WHERE final = 1 AND error_type = 'BatchNotSent'") == [(8,)]
        del server.refuse["upload"]
        assert run(path).complete
        assert len(server.all_sent()) == 8  # the refused file was never a batch: each request sent once


def test_a_provider_refusing_the_key_stops_the_run_with_exit_status_2(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.refuse["upload"] = 401
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert result.exit_code == 2, result.output
        assert "AuthenticationError" in result.output and "Traceback" not in result.output


def test_a_session_switched_back_to_online_still_collects_its_batches_instead_of_sending_again(tmp_path: Path) -> None:
    with BatchServer(steps=0) as server:
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()
        assert run(path).batches_pending >= 2
        path.write_text(session_text(server.api_base, mode="online"), encoding="utf-8")
        server.hold.clear()
        assert run(path).complete
        assert not [r for r in server.online if r["model"] in ("gpt-4o-mini", "judge-two")]  # no judge call online
        assert len(server.all_sent()) == len(judgments(path)) == 8


def test_generation_in_batch_mode_too_every_stage_through_batches(tmp_path: Path) -> None:
    with BatchServer() as server:
        text = session_text(server.api_base).replace("[judging]", '[generation]\nmode = "batch"\n\n[judging]')
        path = write(tmp_path, text)
        outcome = run(path)
        assert outcome.complete, outcome.outcomes
        assert server.online == []  # not one online call
        stages = dict(query(path, "SELECT stage, count(*) FROM batches GROUP BY stage"))
        assert set(stages) == {"automation", "assistance", "worker", "judging"}
        assert len(server.all_sent()) == len(set(server.all_sent())) == query(path, "SELECT count(*) FROM calls")[0][0]


def test_a_batch_stored_but_never_uploaded_is_rebuilt_from_the_store_byte_for_byte(tmp_path: Path) -> None:
    """A kill between storing a batch and uploading its file: the next run uploads the same file, once."""
    with BatchServer(steps=0) as server:
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()
        assert run(path).batches_pending >= 2
        uploaded = {fid: server.files[fid] for kind, fid in server.log if kind == "upload"}
        # As if the run had died right after open_batch: nothing of these batches reached the provider.
        with sqlite3.connect(load_session(path).database) as conn:
            conn.execute(
                "UPDATE batches SET state = 'preparing', status = NULL, input_file_id = NULL, provider_batch_id = NULL"
            )
        server.sent.clear()
        server.batches.clear()
        server.hold.clear()
        assert run(path).complete
        again = [server.files[fid] for kind, fid in server.log if kind == "upload" and fid not in uploaded]
        assert sorted(again) == sorted(d for d in uploaded.values())  # the same JSONL, rebuilt from the store
        assert len(server.all_sent()) == len(set(server.all_sent())) == 8


@pytest.mark.slow  # a `centaur` process (litellm's import)
def test_ctrl_c_says_which_batches_stay_in_flight(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.hold.set()
        proc = subprocess.Popen(
            interruptible([*CENTAUR, "run", str(path), "--quiet"]),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        try:
            _wait_for(lambda: _submitted(path) == 8, proc, "every judge call in a submitted batch")
        finally:
            _, err = interrupt(proc)
        assert proc.returncode == 130, err
        assert re.search(rb"\d+ batch(es)? \(8 calls\) stay in flight at the provider", err), err


def test_check_names_the_batched_calls_and_where_their_price_comes_from(tmp_path: Path) -> None:
    text = session_text("http://127.0.0.1:9/v1").replace('model = "openai/judge-two"', 'model = "anthropic/claude-x"')
    path = write(tmp_path, text.replace("[batch]", '[batch]\nunsupported = "online"'))
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "Batch mode (provider batch APIs" in result.output
    assert (
        "J1                       openai/gpt-4o-mini: $0.5 / $2 per M input/output tokens (session batch"
        in result.output
    )
    assert "anthropic/claude-x: no batch API, sent online" in result.output


async def test_a_call_asked_after_its_resumed_batch_was_left_in_flight_does_not_wait_forever(tmp_path: Path) -> None:
    from centaur_tui.llm import CallRequest
    from centaur_tui.pipeline.batching import BatchPending
    from centaur_tui.pipeline.calls import Calls
    from centaur_tui.pipeline.progress import Progress

    with BatchServer(steps=0) as server:
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()
        assert (await Pipeline(load_session(path), Store(load_session(path).database)).run()).batches_pending
        study = load_session(path)
        with Store(study.database) as store:
            key, messages, params, sample = query(
                path, "SELECT key, messages, params, sample FROM batch_requests WHERE state = 'pending' LIMIT 1"
            )[0]
            calls = Calls(study, store, Progress("batched", False))
            await calls.batcher.resume()
            await calls.batcher.drain()  # checked once, still in progress: left in flight
            judge = study.session.judge("J1")
            request = CallRequest(key, "judging", judge, json.loads(messages), json.loads(params), sample)
            with pytest.raises(BatchPending, match="run again to collect it"):
                await asyncio.wait_for(calls.batcher.complete(request, messages, params), 60)
            calls.close()


def test_max_requests_splits_the_calls_of_one_model_into_several_batches(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base, batch="max_requests = 3"))
        assert run(path).complete
        sizes = [len(ids) for ids in server.sent.values()]
    assert max(sizes) <= 3 and sum(sizes) == 8 and len(sizes) >= 4


async def test_a_batch_cancelled_at_the_provider_keeps_its_answers_and_the_rest_is_sent_again(tmp_path: Path) -> None:
    from centaur_tui.llm.batch import BatchClient

    with BatchServer(steps=0) as server:
        path = write(tmp_path, session_text(server.api_base, batch="wait = false"))
        server.hold.set()
        study = load_session(path)
        with Store(study.database) as store:
            assert (await Pipeline(study, store).run()).batches_pending
        client = BatchClient(study.session.limits)
        victim = sorted(server.batches)[0]  # cancelled by its owner (a provider's console, say)
        status = await client.cancel(study.session.judge("J1"), victim)
        assert status.status == "cancelled" and status.completed == status.total // 2
        server.hold.clear()
        with Store(study.database) as store:
            outcome = await Pipeline(study, store).run()
        cancelled = query(path, "SELECT count(*) FROM batch_requests WHERE state = 'cancelled'")[0][0]
        assert cancelled == status.total - status.completed >= 1
        assert outcome.outcomes.stages["judging"].failed == cancelled
        assert all(
            "cancelled before answering" in m
            for (m,) in query(path, "SELECT message FROM batch_requests WHERE state = 'cancelled'")
        )
        with Store(study.database) as store:
            assert (await Pipeline(study, store).run()).complete  # the cancelled ones in a new batch
    sent = server.all_sent()
    assert len(sent) - len(set(sent)) == cancelled  # only those were sent twice, and each is recorded


def test_a_create_whose_answer_is_lost_is_found_in_the_list_not_created_twice(tmp_path: Path) -> None:
    with BatchServer() as server:
        path = write(tmp_path, session_text(server.api_base))
        server.drop_creates = 1
        assert run(path).complete
        sent = server.all_sent()
        assert len(sent) == len(set(sent)) == len(judgments(path))  # one file, one batch
        assert server.count("list") >= 1  # looked for before creating again
