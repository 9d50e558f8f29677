"""Provider faults through litellm's real HTTP path: malformed replies, cut-off judges, Retry-After.

Each test starts an OpenAI-compatible server on 127.0.0.1 that answers with the fault under
test; litellm talks to it as `openai/<model>` with `api_base`, exactly as to a local server.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import sqlite3
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.outcomes import Outcomes
from centaur_tui.domain.records import TIMEOUT_ERRORS, CallFailure
from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.llm import CallFailed, CallRequest, Gateway
from centaur_tui.llm.gateway import MALFORMED_REPLY, retry_after_s, served_model
from centaur_tui.pipeline import Pipeline, Progress, RunOutcome
from centaur_tui.services.run import billed_twice_line
from centaur_tui.store import Store, calls_of

TASKS = Path(__file__).resolve().parent.parent / "tasks"

Reply = tuple[int, dict[str, str], Any]  # status, headers, JSON body (or raw bytes)


def completion(
    content: Any = "fine",
    finish: str | None = "stop",
    *,
    choices: bool = True,
    message: bool = True,
    usage: bool = True,
    tool_calls: bool = False,
) -> Reply:
    """A 200 chat completion, with the given parts missing or odd."""
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if message:
        choice["message"] = {"role": "assistant", "content": content}
        if tool_calls:
            choice["message"]["tool_calls"] = [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]
    body: dict[str, Any] = {
        "id": "r",
        "object": "chat.completion",
        "created": 1,
        "model": "served",
        "choices": [choice] if choices else [],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}
    return 200, {}, body


def error(status: int, headers: dict[str, str] | None = None) -> Reply:
    return status, headers or {}, {"error": {"message": f"status {status}", "type": "server_error"}}


class FaultServer:
    """Answers each request with the next scripted reply of its model, else with `respond(body)`."""

    def __init__(self) -> None:
        self.scripts: dict[str, list[Reply]] = {}
        self.respond: Callable[[dict[str, Any]], Reply] = lambda body: completion()
        self.requests: list[tuple[float, dict[str, Any]]] = []  # (monotonic time, request body)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:  # http.server's name
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with server._lock:
                    server.requests.append((time.monotonic(), body))
                    script = server.scripts.get(body.get("model", ""))
                    reply = script.pop(0) if script else None
                status, headers, payload = reply if reply is not None else server.respond(body)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def bodies(self, model: str) -> list[dict[str, Any]]:
        return [b for _, b in self.requests if b.get("model") == model]

    def times(self, model: str) -> list[float]:
        return [t for t, b in self.requests if b.get("model") == model]


@pytest.fixture
def server() -> Iterator[FaultServer]:
    fault = FaultServer()
    thread = threading.Thread(target=fault.httpd.serve_forever, daemon=True)
    thread.start()
    yield fault
    fault.httpd.shutdown()
    fault.httpd.server_close()
    thread.join(5)


def gateway(limits: Limits) -> tuple[Gateway, list[CallFailure]]:
    failures: list[CallFailure] = []
    return Gateway(limits, on_failure=failures.append), failures


def request(server: FaultServer, model: str = "x", price: bool = False) -> CallRequest:
    ep = Endpoint(
        model=f"openai/{model}",
        api_base=server.api_base,
        input_cost_per_mtok=1.0 if price else None,
        output_cost_per_mtok=2.0 if price else None,
    )
    return CallRequest(
        key=f"key-{model}",
        stage="automation",
        endpoint=ep,
        messages=[{"role": "user", "content": "write it"}],
        params={"max_tokens": 64},
        sample="s",
    )


FAST = Limits(max_retries=1, backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=10)


# -- replies that are not answers ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "error_type", "says", "finish"),
    [
        (completion(choices=False), MALFORMED_REPLY, "reply has no choices", None),
        (completion(None, "content_filter"), MALFORMED_REPLY, "reply has no text (null content)", "content_filter"),
        (completion(""), MALFORMED_REPLY, "reply text is empty", "stop"),
        (completion(" \n\t "), MALFORMED_REPLY, "whitespace only", "stop"),
        (completion(None, "tool_calls", tool_calls=True), MALFORMED_REPLY, "only tool calls", "tool_calls"),
        # litellm 1.110.2 itself refuses these bodies with an InternalServerError ("Invalid
        # response object"): transient, so they take the same retried path.
        (completion(message=False), "InternalServerError", "Invalid response object", None),
        (completion(42), "InternalServerError", "Invalid response object", None),
        ((200, {}, b"{not json"), "InternalServerError", "", None),
    ],
    ids=["no-choices", "null-content", "empty", "whitespace", "tool-calls", "no-message", "non-text", "bad-body"],
)
async def test_a_reply_that_is_not_an_answer_is_a_failed_attempt_retried_then_failed_for_good(
    server: FaultServer, reply: Reply, error_type: str, says: str, finish: str | None
) -> None:
    server.respond = lambda body: reply
    gw, failures = gateway(FAST)
    with pytest.raises(CallFailed) as info:
        await gw.complete(request(server))
    assert len(server.bodies("x")) == 2  # retried within the budget (max_retries=1), then no more
    assert info.value.attempts == 2 and info.value.error_type == error_type
    assert [f.attempt for f in failures] == [1, 2] and [f.final for f in failures] == [False, True]
    assert all(f.error_type == error_type and says in f.message for f in failures)
    assert all(f.finish_reason == finish for f in failures)
    if finish is not None:
        assert f"finish_reason={finish}" in failures[-1].message


async def test_a_malformed_reply_then_an_answer_gives_the_answer(server: FaultServer) -> None:
    server.scripts["x"] = [completion(choices=False), completion(None, "content_filter"), completion("the text")]
    gw, failures = gateway(Limits(max_retries=2, backoff_base_s=0.0, backoff_max_s=0.0))
    result = await gw.complete(request(server))
    assert result.text == "the text" and result.attempts == 3 and result.finish_reason == "stop"
    assert [f.error_type for f in failures] == [MALFORMED_REPLY, MALFORMED_REPLY]
    assert not any(f.final for f in failures)


async def test_a_reply_cut_at_max_tokens_is_returned_with_its_finish_reason(server: FaultServer) -> None:
    server.respond = lambda body: completion('{"option_1": {"scores": {"a": 3', "length")
    gw, failures = gateway(FAST)
    result = await gw.complete(request(server))
    assert result.finish_reason == "length" and result.text.startswith('{"option_1"') and failures == []


async def test_a_reply_without_usage_has_unknown_tokens_and_cost_not_zero(server: FaultServer) -> None:
    server.respond = lambda body: completion("text", usage=False)
    gw, _ = gateway(FAST)
    result = await gw.complete(request(server, price=True))
    # litellm fills a missing usage with zeros; a free call would be a false number in the report.
    assert result.text == "text"
    assert (result.prompt_tokens, result.completion_tokens, result.cost) == (None, None, None)


# -- Retry-After ------------------------------------------------------------------------------------


def gap(server: FaultServer, model: str = "x") -> float:
    first, second = server.times(model)[:2]
    return second - first


async def test_retry_after_seconds_is_a_lower_bound_on_the_backoff(server: FaultServer) -> None:
    server.scripts["x"] = [error(429, {"Retry-After": "1"})]
    # Without the header the retry would come after at most 10 ms.
    gw, failures = gateway(Limits(max_retries=2, backoff_base_s=0.01, backoff_max_s=10.0))
    result = await gw.complete(request(server))
    assert result.text == "fine" and result.attempts == 2
    # A lower bound only: a busy machine lengthens the gap (the jitter's cap: backoff_s, without a clock).
    assert gap(server) >= 1.0
    assert failures[0].error_type == "RateLimitError" and "retry after 1 s" in failures[0].message


async def test_retry_after_ms_is_honoured(server: FaultServer) -> None:
    server.scripts["x"] = [error(503, {"retry-after-ms": "300"})]
    gw, _ = gateway(Limits(max_retries=2, backoff_base_s=0.0, backoff_max_s=10.0))
    result = await gw.complete(request(server))
    assert result.attempts == 2 and gap(server) >= 0.3


async def test_retry_after_is_capped_by_backoff_max(server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    server.scripts["x"] = [error(429, {"Retry-After": "30"})]
    gw, _ = gateway(Limits(max_retries=2, backoff_base_s=0.0, backoff_max_s=0.2))
    asked: list[float] = []
    backoff = gw.backoff_s

    def recorded(attempt: int, hint_s: float | None = None) -> float:
        asked.append(backoff(attempt, hint_s))
        return asked[-1]

    monkeypatch.setattr(gw, "backoff_s", recorded)
    result = await gw.complete(request(server))
    # The wait asked for, not the wall time (a busy machine lengthens that): not the 30 s asked.
    assert result.attempts == 2 and asked == [0.2] and gap(server) >= 0.2


async def test_a_503_then_an_answer_is_retried(server: FaultServer) -> None:
    server.scripts["x"] = [error(503)]
    gw, failures = gateway(FAST)
    result = await gw.complete(request(server))
    assert result.text == "fine" and result.attempts == 2
    assert [(f.error_type, f.final) for f in failures] == [("ServiceUnavailableError", False)]


def failing(headers: dict[str, str] | None = None, **more: Any) -> SimpleNamespace:
    return SimpleNamespace(response=SimpleNamespace(headers=headers), **more)


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (failing({"retry-after": "2"}), 2.0),
        (failing({"Retry-After": "1.5"}), 1.5),  # a plain dict is matched case-insensitively
        (failing({"retry-after": email.utils.formatdate(NOW + 7, usegmt=True)}), 7.0),
        (failing({"retry-after": email.utils.formatdate(NOW - 7, usegmt=True)}), 0.0),  # a date gone by
        (failing({"retry-after-ms": "250", "retry-after": "9"}), 0.25),  # the finer one wins
        (failing({"retry-after": "soon"}), None),
        (failing({"retry-after": "-3"}), None),
        (failing({"retry-after": "inf"}), None),
        (failing({"retry-after-ms": "nan", "retry-after": "4"}), 4.0),
        (failing(None), None),
        (failing(None, litellm_response_headers={"retry-after": "3"}), 3.0),
        (ValueError("no response at all"), None),
    ],
)
def test_retry_after_forms(exc: BaseException, expected: float | None) -> None:
    got = retry_after_s(exc, now=NOW)
    assert got == (pytest.approx(expected, abs=1.0) if expected is not None else None)


def test_backoff_with_a_hint_never_goes_below_it_and_never_above_the_cap() -> None:
    gw = Gateway(Limits(backoff_base_s=0.1, backoff_max_s=5.0))
    draws = [gw.backoff_s(1, 2.0) for _ in range(500)]
    assert min(draws) >= 2.0 and max(draws) <= 2.2
    assert len({round(d, 4) for d in draws}) > 100  # jittered, so a burst of 429s does not return at once
    assert all(gw.backoff_s(1, 60.0) == 5.0 for _ in range(20))
    assert all(0.05 <= gw.backoff_s(1) <= 0.1 for _ in range(20))


# -- through the pipeline and the store -------------------------------------------------------------


def http_session(server: FaultServer, judging: str = "", limits: str = "") -> str:
    """Two automation candidates, one judge of another family, one task, one run: one judgment."""
    return textwrap.dedent(
        f"""
        name = "http"
        seed = 3
        runs = 1
        tasks = ["counseling"]
        tasks_dir = "{TASKS}"

        [judging]
        max_tokens = 64
        structured_output = false
        {judging}

        [limits]
        max_retries = 1
        backoff_base_s = 0.0
        backoff_max_s = 0.0
        timeout_s = 10
        {limits}

        [[models]]
        name = "A"
        model = "openai/gen-a"
        api_base = "{server.api_base}"
        family = "North"
        augmentation = false

        [[models]]
        name = "B"
        model = "openai/gen-b"
        api_base = "{server.api_base}"
        family = "South"
        augmentation = false

        [worker]
        name = "W"
        model = "openai/worker"
        api_base = "{server.api_base}"
        family = "East"

        [[judges]]
        name = "J"
        model = "openai/judge"
        api_base = "{server.api_base}"
        family = "West"
        """
    )


def valid_judgment(path: Path) -> str:
    rubric = load_session(path).rubric("counseling")
    scores = {d.id: 7 for d in rubric.all}
    return json.dumps(
        {
            "option_1": {"scores": scores},
            "option_2": {"scores": {**scores, rubric.all[0].id: 4}},
            "winner": "option_1",
            "rationale": "Option 1 covers more of the task.",
        }
    )


def judge_needing(tokens: int, path: Path) -> Callable[[dict[str, Any]], Reply]:
    """Generation models answer; the judge's reply is cut off unless max_tokens >= `tokens`."""
    full = valid_judgment(path)

    def respond(body: dict[str, Any]) -> Reply:
        if body["model"] != "judge":
            return completion(f"Deliverable of {body['model']}.")
        if body.get("max_tokens", 0) < tokens:
            return completion(full[: len(full) // 2], "length")
        return completion(full)

    return respond


def rows(path: Path, sql: str) -> list[sqlite3.Row]:
    db = sqlite3.connect(load_session(path).database)
    db.row_factory = sqlite3.Row
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def run_pipeline(path: Path) -> Pipeline:
    study = load_session(path)
    with Store(study.database) as store:
        pipe = Pipeline(study, store)
        asyncio.run(pipe.run())
    return pipe


def test_a_judge_cut_off_at_max_tokens_is_re_asked_with_a_doubled_limit(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server), encoding="utf-8")
    server.respond = judge_needing(128, path)
    run_pipeline(path)
    assert [b["max_tokens"] for b in server.bodies("judge")] == [64, 128]
    judgments = rows(path, "SELECT valid, attempts, invalid_reason FROM judgments")
    assert [tuple(j) for j in judgments] == [(1, 2, None)]
    calls = rows(path, "SELECT finish_reason, params FROM calls WHERE stage = 'judging' ORDER BY created_at")
    assert [c["finish_reason"] for c in calls] == ["length", "stop"]
    assert [json.loads(c["params"])["max_tokens"] for c in calls] == [64, 128]
    assert {c["finish_reason"] for c in rows(path, "SELECT finish_reason FROM calls WHERE stage != 'judging'")} == {
        "stop"
    }


def test_a_judge_cut_off_at_the_cap_is_invalid_with_that_reason_and_not_paid_again(
    server: FaultServer, tmp_path: Path
) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server, judging="reask_max_tokens = 100"), encoding="utf-8")
    server.respond = judge_needing(10_000, path)
    run_pipeline(path)
    # 64 -> 100 (the cap) -> no third ask: at the cap the same limit would be cut off again.
    assert [b["max_tokens"] for b in server.bodies("judge")] == [64, 100]
    (judgment,) = rows(path, "SELECT valid, attempts, invalid_reason FROM judgments")
    assert judgment["valid"] == 0 and judgment["attempts"] == 2
    # The re-ask said what it changed: the larger limit, a temperature step and a new seed.
    assert re.fullmatch(
        r"invalid after 2 attempt\(s\) \(re-ask 1: max_tokens 100, temperature 0\.2, seed \d+\): "
        r"cut off at max_tokens \(100\)",
        judgment["invalid_reason"],
    )
    assert "not valid JSON" not in judgment["invalid_reason"]
    assert "cut off at max_tokens (64)" in server.bodies("judge")[1]["messages"][-1]["content"]


def test_null_content_is_recorded_as_failed_never_as_an_empty_output_and_run_says_so(
    server: FaultServer, tmp_path: Path
) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server), encoding="utf-8")

    def respond(body: dict[str, Any]) -> Reply:
        if body["model"] == "gen-b":
            return completion(None, "content_filter")
        if body["model"] == "judge":
            return completion(valid_judgment(path))
        return completion("Deliverable A.")

    server.respond = respond
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert out.exit_code == 3, out.output  # INCOMPLETE_EXIT
    assert out.exception is None or isinstance(out.exception, SystemExit)  # no traceback
    assert "Incomplete: 1 call failed for good; run again to retry them." in out.output
    assert "automation: 1 of 2 missing (1 failed for good)" in out.output and "content_filter" in out.output
    assert len(server.bodies("gen-b")) == 2  # the budget: one try and max_retries = 1 retry
    outputs = rows(path, "SELECT candidate, text FROM outputs")
    assert [(o["candidate"], o["text"]) for o in outputs] == [("A", "Deliverable A.")]
    assert rows(path, "SELECT count(*) FROM calls WHERE model = 'openai/gen-b'")[0][0] == 0
    errors = rows(path, "SELECT * FROM call_errors WHERE model = 'openai/gen-b' ORDER BY id")
    assert [(e["attempt"], e["final"], e["error_type"], e["finish_reason"]) for e in errors] == [
        (1, 0, MALFORMED_REPLY, "content_filter"),
        (2, 1, MALFORMED_REPLY, "content_filter"),
    ]
    assert all("reply has no text (null content)" in e["message"] for e in errors)
    assert rows(path, "SELECT count(*) FROM comparisons")[0][0] == 0  # nothing judged against a non-answer


def test_empty_choices_never_crash_the_run(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server), encoding="utf-8")
    full = valid_judgment(path)
    server.respond = lambda body: completion(full) if body["model"] == "judge" else completion("D.")
    server.scripts["gen-a"] = [completion(choices=False)]  # then answers
    server.scripts["judge"] = [completion(choices=False), completion(choices=False)]  # fails for good
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert out.exception is None or isinstance(out.exception, SystemExit), out.output
    errors = rows(path, "SELECT model, attempt, final, message FROM call_errors ORDER BY id")
    assert [(e["model"], e["attempt"], e["final"]) for e in errors] == [
        ("openai/gen-a", 1, 0),
        ("openai/judge", 1, 0),
        ("openai/judge", 2, 1),
    ]
    assert all("reply has no choices" in e["message"] for e in errors)
    assert rows(path, "SELECT count(*) FROM outputs")[0][0] == 2
    # The judgment that failed for good is missing; counting it in the exit status is issue 12, item 1.
    assert rows(path, "SELECT count(*) FROM judgments")[0][0] == 0


def test_a_store_made_before_finish_reasons_gains_the_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE calls (key TEXT PRIMARY KEY, stage TEXT NOT NULL, model TEXT NOT NULL, sample TEXT NOT NULL,"
        " messages TEXT NOT NULL, params TEXT NOT NULL, response TEXT NOT NULL, prompt_tokens INTEGER,"
        " completion_tokens INTEGER, cost REAL, latency_s REAL NOT NULL, attempts INTEGER NOT NULL,"
        " simulated INTEGER NOT NULL, created_at TEXT NOT NULL);"
        "INSERT INTO calls VALUES ('k', 'judging', 'm', 's', '[]', '{}', 'old reply', 1, 1, NULL, 0.1, 1, 0, 't');"
        "CREATE TABLE call_errors (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, stage TEXT NOT NULL,"
        " model TEXT NOT NULL, attempt INTEGER NOT NULL, error_type TEXT NOT NULL, message TEXT NOT NULL,"
        " final INTEGER NOT NULL, created_at TEXT NOT NULL);"
    )
    db.close()
    with Store(path) as store:
        assert store.call_reply("k") == ("old reply", None)
        store.record_failure(CallFailure("k2", "judging", "m", 1, MALFORMED_REPLY, "no text", True, "content_filter"))
        assert store.error_rows()[0].finish_reason == "content_filter"


# -- timeouts: a timed-out request may have been billed, so it is sent again a bounded number of times -----


SLOW_S = 2.0
"""How long the server sits on a slow request: beyond the 1 s timeout and the gateway's 1.75 s guard."""


def slow_for(*models: str) -> Callable[[dict[str, Any]], Reply]:
    """Requests for `models` answer only after SLOW_S; every other request answers at once."""

    def respond(body: dict[str, Any]) -> Reply:
        if body["model"] in models:
            time.sleep(SLOW_S)
        return completion(f"Deliverable of {body['model']}.")

    return respond


@pytest.mark.parametrize("cap", [0, 1, 2])
async def test_a_timed_out_call_is_sent_again_at_most_max_timeout_retries_times(server: FaultServer, cap: int) -> None:
    server.respond = slow_for("x")
    limits = Limits(max_retries=4, max_timeout_retries=cap, backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=1.0)
    gw, failures = gateway(limits)
    with pytest.raises(CallFailed) as info:
        await gw.complete(request(server))
    # max_retries = 4 would allow 5 attempts; the timeout cap allows 1 + cap.
    assert len(server.bodies("x")) == 1 + cap == info.value.attempts
    assert all(f.error_type in TIMEOUT_ERRORS for f in failures), [f.error_type for f in failures]
    assert [f.final for f in failures] == [False] * cap + [True]
    assert f"max_timeout_retries = {cap}" in failures[-1].message and "may have been billed" in failures[-1].message


async def test_timeouts_are_capped_apart_from_other_transient_errors(server: FaultServer) -> None:
    """A 503 does not use the timeout budget, and a timeout within it is retried to an answer."""
    replies: list[str] = ["503", "slow", "fine"]

    def respond(body: dict[str, Any]) -> Reply:
        kind = replies.pop(0) if replies else "fine"
        if kind == "503":
            return error(503)
        if kind == "slow":
            time.sleep(SLOW_S)
        return completion("the text")

    server.respond = respond
    limits = Limits(max_retries=3, max_timeout_retries=1, backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=1.0)
    gw, failures = gateway(limits)
    result = await gw.complete(request(server))
    assert result.text == "the text" and result.attempts == 3
    assert failures[0].error_type == "ServiceUnavailableError" and failures[1].error_type in TIMEOUT_ERRORS
    assert not any(f.final for f in failures)


def test_the_run_counts_timeouts_and_says_how_many_calls_may_have_been_billed_twice(
    server: FaultServer, tmp_path: Path
) -> None:
    path = tmp_path / "http.toml"
    text = http_session(server, limits="max_timeout_retries = 1")
    path.write_text(text.replace("max_retries = 1", "max_retries = 3").replace("timeout_s = 10", "timeout_s = 1.0"))
    server.respond = slow_for("gen-b")
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert out.exit_code == 3, out.output  # gen-b's output failed for good: incomplete
    assert len(server.bodies("gen-b")) == 2  # one timeout retried once, not max_retries = 3 times
    assert "1 call may have been billed twice (1 timed out and was sent again, 0 were in flight" in out.output
    assert "2 failed attempts logged (2 timed out)." in out.output
    errors = rows(path, "SELECT error_type, final FROM call_errors WHERE model = 'openai/gen-b' ORDER BY id")
    assert [e["final"] for e in errors] == [0, 1] and all(e["error_type"] in TIMEOUT_ERRORS for e in errors)

    # The same in-process: the run's counters.
    server.respond = slow_for("gen-b")
    study = load_session(path)
    with Store(study.database) as store:
        pipe = Pipeline(study, store)
        outcome = asyncio.run(pipe.run())
    assert (outcome.progress.timeouts, outcome.progress.timeouts_resent) == (2, 1)
    # The first run did not complete, so its re-sent timeout is still said, with this run's own.
    assert outcome.resent_earlier == 1
    assert billed_twice_line(outcome) == (
        "2 calls may have been billed twice (2 timed out and were sent again, "
        "0 were in flight when an earlier run stopped)."
    )


def test_a_run_without_timeouts_or_interrupted_calls_says_nothing_about_double_billing(
    server: FaultServer, tmp_path: Path
) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server), encoding="utf-8")
    server.respond = lambda body: completion(valid_judgment(path)) if body["model"] == "judge" else completion("D.")
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert out.exit_code == 0, out.output
    assert "billed" not in out.output and "timed out" not in out.output


# -- the served model: a provider may answer with another model than the one asked for ----------------------


def test_the_served_model_is_stored_for_every_call_and_shown_in_the_audit(server: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "http.toml"
    path.write_text(http_session(server), encoding="utf-8")
    full = valid_judgment(path)

    def respond(body: dict[str, Any]) -> Reply:
        status, headers, payload = completion(full if body["model"] == "judge" else "D.")
        # gen-b's provider falls back to another model (and names it with an escape sequence).
        payload["model"] = "fallback-\x1b]0;pwned\x07model" if body["model"] == "gen-b" else body["model"]
        return status, headers, payload

    server.respond = respond
    run_pipeline(path)
    served = {r["model"]: r["served_model"] for r in rows(path, "SELECT model, served_model FROM calls")}
    assert served == {
        "openai/gen-a": "gen-a",
        "openai/gen-b": "fallback-model",  # the terminal title sequence removed whole
        "openai/judge": "judge",
    }
    study = load_session(path)
    with Store(study.database) as store:
        key = rows(path, "SELECT key FROM calls WHERE model = 'openai/gen-b'")[0]["key"]
        (call,) = calls_of(store, [key]).values()
    assert call.model == "openai/gen-b" and call.served_model == "fallback-model"
    assert call.finish_reason == "stop"


def test_the_served_model_names_a_router_deployment_and_is_none_when_the_reply_names_none() -> None:
    reply = SimpleNamespace(model="gpt-4.1-mini", _hidden_params={"model_id": "dep-7"})
    assert served_model(reply) == "gpt-4.1-mini (deployment dep-7)"
    assert served_model(SimpleNamespace(model="m", _hidden_params={"model_id": None})) == "m"
    assert served_model(SimpleNamespace(model=None)) is None and served_model(SimpleNamespace()) is None
    assert served_model(SimpleNamespace(model="x" * 5000)) is not None
    assert len(served_model(SimpleNamespace(model="x" * 5000)) or "") <= 200


@pytest.mark.parametrize(
    ("resent", "interrupted", "says"),
    [
        (0, 0, None),
        (2, 0, "2 calls may have been billed twice (2 timed out and were sent again, 0 were in flight"),
        (0, 1, "1 call may have been billed twice (0 timed out and were sent again, 1 was in flight"),
        (1, 3, "4 calls may have been billed twice (1 timed out and was sent again, 3 were in flight"),
    ],
)
def test_the_billed_twice_line_adds_both_causes(resent: int, interrupted: int, says: str | None) -> None:
    progress = Progress("s", simulated=False, timeouts=resent + 5, timeouts_resent=resent)
    line = billed_twice_line(RunOutcome(progress, Outcomes(), interrupted))
    assert line == (None if says is None else f"{says} when an earlier run stopped).")
