"""Budget: worst-case reservations that wait for calls in flight, settling at what the provider reports,
and spend billed without an answer counted toward `max_cost_usd`.

The unit tests drive `Budget` directly; the HTTP ones run the real CLI through litellm against the
token-counting provider of tests/support/provider_server.py, made to over-report its usage or to
stall requests past the client's timeout (billed, the answer lost).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.records import CallFailure
from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.llm import CallFailed, CallRequest, Gateway, NotSent
from centaur_tui.pipeline.budget import Budget, BudgetExceeded
from centaur_tui.report import ReportDocument
from centaur_tui.services.run import BUDGET_EXIT
from tests.support.fault_server import ChaosServer
from tests.support.provider_server import PLANNED, http_session, provider_server

# -- the Budget itself -----------------------------------------------------------------------------


def test_a_call_that_could_pass_the_budget_is_refused_but_a_cheaper_one_after_it_is_sent() -> None:
    b = Budget(1.0, spent=0.4)
    b.reserve_now("a", 0.3)
    b.reserve_now("b", 0.3)  # 0.4 + 0.3 + 0.3 = 1.0: exactly the budget is allowed
    b.settle("a", 0.05)
    b.settle("b", 0.05)
    with pytest.raises(BudgetExceeded) as err:
        b.reserve_now("c", 0.6)  # 0.5 spent: 0.6 more could pass it
    assert isinstance(err.value, NotSent) and isinstance(err.value, CallFailed)
    assert "max_cost_usd = $1.00" in str(err.value)
    b.reserve_now("d", 0.5)  # not sticky: a call that fits is still sent
    assert b.stopped and b.refused == 1
    b.settle("d", None)  # no usage reported: its reservation counts as spent
    assert b.spent == pytest.approx(1.0) and b.reserved == {} and b.left == pytest.approx(0.0)


def test_a_retry_replaces_its_own_reservation_and_a_failure_frees_it() -> None:
    b = Budget(1.0)
    b.reserve_now("a", 0.6)
    b.reserve_now("a", 0.6)  # the same call again (a retry): not counted twice
    assert b.committed == pytest.approx(0.6)
    b.release("a")
    assert b.committed == 0.0
    b.release("never reserved")  # harmless
    b.reserve_now("b", 1.0)
    assert not b.stopped


def test_a_zero_budget_refuses_the_first_call_that_costs_anything() -> None:
    b = Budget(0.0)
    b.reserve_now("free", 0.0)  # a call priced at 0 passes a zero budget
    with pytest.raises(BudgetExceeded):
        b.reserve_now("paid", 1e-9)


def test_a_reservation_that_does_not_fit_waits_for_the_calls_in_flight_instead_of_stopping() -> None:
    async def main() -> list[str]:
        b = Budget(1.0)
        for key in ("a", "b", "c"):
            b.reserve_now(key, 0.3)  # 0.9 of worst cases in flight
        waiting = asyncio.ensure_future(b.reserve("d", 0.3))
        await asyncio.sleep(0)
        assert not waiting.done()  # 0.9 + 0.3 could pass: it waits, it is not refused
        b.settle("a", 0.05)  # the real cost is far below the worst case
        await waiting
        assert b.reserved.keys() == {"b", "c", "d"} and not b.stopped
        # Nothing it could wait for: refused at once, not left waiting.
        b.settle("b", 0.3)
        b.settle("c", 0.3)
        b.settle("d", 0.3)
        with pytest.raises(BudgetExceeded):
            await b.reserve("e", 0.3)
        return sorted(b.reserved)

    assert asyncio.run(main()) == []


def test_a_reservation_is_refused_without_waiting_when_the_spend_alone_leaves_no_room() -> None:
    async def main() -> None:
        b = Budget(1.0, spent=0.8)
        b.reserve_now("a", 0.1)
        with pytest.raises(BudgetExceeded):
            await b.reserve("b", 0.3)  # 0.8 + 0.3 > 1.0 whatever "a" settles at

    asyncio.run(main())


def test_an_over_report_is_settled_at_what_it_reports_and_grows_the_models_worst_case() -> None:
    b = Budget(1.0)
    b.reserve_now("a", 0.01, "m")
    b.settle("a", 0.1)  # reported 10x the worst case
    assert b.spent == pytest.approx(0.1) and b.over_reports == 1 and b.over_reported == pytest.approx(0.09)
    b.reserve_now("c", 0.01, "honest")
    b.settle("c", 0.004)
    # The model itself, and a model not answered yet (maybe the same provider), grow; an honest one does not.
    assert b.worst(0.01, "m") >= 0.1 and b.worst(0.01, "unseen") >= 0.1 and b.worst(0.01, "honest") == 0.01
    b.reserve_now("b", 0.01, "m")
    assert b.reserved["b"] >= 0.1  # reserved at what the model reports, not at the token count


def test_an_over_report_grows_the_reservations_of_the_calls_still_in_flight() -> None:
    b = Budget(1.0)
    b.reserve_now("a", 0.01, "m")
    b.reserve_now("b", 0.01, "m")  # in flight when "a" reports 10x: "b" likely will too
    b.settle("a", 0.1)
    assert b.reserved["b"] >= 0.1
    b.settle("b", 0.1)
    assert b.reserved == {} and b.spent == pytest.approx(0.2)


def test_an_attempt_billed_without_an_answer_counts_its_reservation_against_the_budget() -> None:
    b = Budget(1.0, spent=0.2, unanswered=0.1)
    assert b.used == pytest.approx(0.3)
    b.reserve_now("a", 0.25)
    assert b.unanswered_attempt("a") == pytest.approx(0.25)  # a timeout: the provider may have billed it
    assert b.used == pytest.approx(0.55) and b.reserved == {} and b.unanswered_calls == 1
    with pytest.raises(BudgetExceeded):
        b.reserve_now("b", 0.5)


# -- through litellm's HTTP path ------------------------------------------------------------------


def session_text(api_base: str, budget: float | None, *, concurrency: int = 1, runs: int = 1, timeout: str = "") -> str:
    text = http_session(api_base, limits=(f"max_cost_usd = {budget}\n" if budget is not None else "") + timeout)
    text = text.replace(
        "concurrency = 1\nper_model_concurrency = 1",
        f"concurrency = {concurrency}\nper_model_concurrency = {concurrency}",
    )
    return text.replace("runs = 1", f"runs = {runs}")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cost.toml"
    path.write_text(text, encoding="utf-8")
    return path


def query(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(sql).fetchall()


def test_an_over_reporting_provider_is_settled_at_its_report_and_no_later_call_passes_the_budget(
    tmp_path: Path,
) -> None:
    budget = 0.05
    with provider_server(words=250, report_factor=20.0) as server:
        path = write(tmp_path, session_text(server.api_base, budget))
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert result.exit_code == BUDGET_EXIT, result.output
        billed = server.billed()
        answered = server.answered
    ((spent, calls),) = query(path, "SELECT sum(cost), count(*) FROM calls")
    assert spent == pytest.approx(billed) and calls == answered  # settled at what the provider reported
    # Only the first report could surprise: from then on every call is reserved at the reported
    # ratio, so none is sent that could pass the budget (concurrency 1: nothing else was in flight).
    assert calls == 1
    assert "The provider reported more than the worst case" in result.output
    assert "Stopped at the budget" in result.output and "Traceback" not in result.output


def test_requests_that_time_out_are_counted_toward_the_budget_and_shown_apart(tmp_path: Path) -> None:
    with provider_server(words=250, stall_every=4, stall_s=2.5) as server:
        path = write(tmp_path, session_text(server.api_base, 1.0, timeout="timeout_s = 1.0\nmax_timeout_retries = 1\n"))
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert server.stall_done.wait(10)
        billed = server.billed()  # counted as each request arrives, stalled ones included
        stalled = server.answered // 4
    assert result.exit_code in (0, 3), result.output
    # Every client-side timeout (the stalled requests, and any other reply slower than 1 s on a busy
    # machine) is one request billed without an answer.
    ((timeouts,),) = query(path, "SELECT count(*) FROM call_errors WHERE error_type IN ('Timeout', 'TimeoutError')")
    unanswered = query(path, "SELECT cause, count(*), sum(usd) FROM unanswered_spend GROUP BY cause")
    assert [(c, n) for c, n, _ in unanswered] == [("timeout", timeouts)] and timeouts >= stalled >= 1, unanswered
    ((recorded,),) = query(path, "SELECT sum(cost) FROM calls")
    estimated = unanswered[0][2]
    # What the run counts covers what the provider billed (the timed-out ones at their worst case).
    assert recorded < billed <= recorded + estimated
    plural = "s" if timeouts != 1 else ""
    assert f"{timeouts} request{plural} may have been billed without an answer ({timeouts} timed out)" in result.output
    check = CliRunner().invoke(cli, ["check", str(path)])
    assert "billed without an answer" in check.output, check.output
    # The report shows the same spend apart from the answered one, with its count, in every form.
    json_file, md_file = tmp_path / "report.json", tmp_path / "report.md"
    report = CliRunner().invoke(
        cli, ["report", str(path), "--bootstrap", "0", "--json", str(json_file), "--markdown", str(md_file)]
    )
    assert report.exit_code == 0, report.output
    ((answered,),) = query(path, "SELECT count(*) FROM calls")
    spend = ReportDocument.from_json(json_file.read_text(encoding="utf-8")).outcomes
    assert spend is not None and spend.spend is not None
    assert spend.spend.unanswered == timeouts and spend.spend.unanswered_causes == {"timeout": timeouts}
    assert spend.spend.unanswered_usd == pytest.approx(estimated) and spend.spend.unanswered_unknown == 0
    assert spend.spend.answered_usd == pytest.approx(recorded) and spend.spend.answered_calls == answered
    note = f"Billed without an answer, apart: {timeouts:,} request(s) ({timeouts:,} timed out), estimated at"
    assert note in report.output and note in md_file.read_text(encoding="utf-8")
    assert f"for {answered:,} answered call(s)" in report.output


def test_the_report_of_a_session_with_no_unanswered_request_says_none(tmp_path: Path) -> None:
    with provider_server(words=50) as server:
        path = write(tmp_path, session_text(server.api_base, None))
        assert CliRunner().invoke(cli, ["run", str(path), "--quiet"]).exit_code == 0
    json_file = tmp_path / "report.json"
    report = CliRunner().invoke(cli, ["report", str(path), "--bootstrap", "0", "--json", str(json_file)])
    assert report.exit_code == 0, report.output
    assert "Billed without an answer: none." in report.output
    outcomes = ReportDocument.from_json(json_file.read_text(encoding="utf-8")).outcomes
    assert outcomes is not None and outcomes.spend is not None
    assert (outcomes.spend.unanswered, outcomes.spend.unanswered_usd, outcomes.spend.unanswered_causes) == (0, 0.0, {})


def test_a_resumed_run_with_room_for_a_call_sends_it(tmp_path: Path) -> None:
    with provider_server(words=250) as server:
        path = write(tmp_path, session_text(server.api_base, 0.012))
        first = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert first.exit_code == BUDGET_EXIT, first.output
        sent = len(server.requests)
        ((spent,),) = query(path, "SELECT sum(cost) FROM calls")
        # Room for about two more calls' worst case: the next run sends something.
        path.write_text(path.read_text().replace("max_cost_usd = 0.012", f"max_cost_usd = {spent + 0.005:.6f}"))
        again = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert len(server.requests) > sent, again.output
        ((after,),) = query(path, "SELECT sum(cost) FROM calls")
        assert after <= spent + 0.005


def test_concurrent_worst_cases_do_not_starve_the_run(tmp_path: Path) -> None:
    # 4 calls in flight at once whose worst cases together pass the budget, although each alone
    # fits: before, the first refusal stopped the run with most of the budget unspent.
    budget = 0.02
    with provider_server(words=250) as server:
        path = write(tmp_path, session_text(server.api_base, budget, concurrency=4, runs=4))
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert result.exit_code == BUDGET_EXIT, result.output
        worst = max(
            (server.count(r["messages"]) * 1.0 + int(r.get("max_tokens") or 0) * 2.0) / 1e6 for r in server.requests
        )
    ((spent,),) = query(path, "SELECT sum(cost) FROM calls")
    assert spent <= budget  # never above it with an honest provider
    assert budget - spent < 1.5 * worst  # stopped only when no call's worst case fit any more
    assert PLANNED * 4 > len(server.requests) >= 0.5 * budget / worst


def test_calls_in_flight_at_a_kill_are_estimated_on_resume_and_counted_toward_the_budget(tmp_path: Path) -> None:
    with provider_server(words=250, latency_s=1.0) as server:
        path = write(tmp_path, session_text(server.api_base, 1.0, concurrency=2))
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "centaur_tui.cli", "run", str(path), "--quiet"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        db = load_session(path).database
        deadline = time.monotonic() + 60

        def out() -> int:
            try:
                with sqlite3.connect(db) as conn:
                    return int(conn.execute("SELECT count(*) FROM calls_in_flight").fetchone()[0])
            except sqlite3.Error:
                return 0

        while out() < 2 and time.monotonic() < deadline:
            assert proc.poll() is None
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        reserved = query(path, "SELECT reserved_usd FROM calls_in_flight WHERE key NOT IN (SELECT key FROM calls)")
        assert reserved and all(r > 0 for (r,) in reserved)  # each kept its reservation
        resumed = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert resumed.exit_code == 0, resumed.output
    rows = query(path, "SELECT cause, usd FROM unanswered_spend ORDER BY usd")
    assert rows == sorted(("killed", r) for (r,) in reserved)
    n = len(rows)
    assert f"{n} request{'s' if n != 1 else ''} may have been billed without an answer ({n} were out" in resumed.output
    check = CliRunner().invoke(cli, ["check", str(path)])
    estimated = sum(u for _, u in rows)
    ((spent,),) = query(path, "SELECT sum(cost) FROM calls")
    assert f"${1.0 - spent - estimated:,.2f} left" in check.output, check.output  # the estimate counts


BILLED = {
    "reset": True,  # the request arrived; the connection was reset before the answer
    "truncated": True,  # the body was cut short
    "bad_json": True,  # a 200 whose body is no JSON
    "no_choices": True,  # a 200 that is no answer
    "null_content": True,
    "slow": True,  # past the client's timeout
    "rate_limit": False,  # HTTP error statuses: refused, not billed
    "server_error": False,
    "unavailable": False,
}


@pytest.mark.parametrize("fault", sorted(BILLED))
def test_which_failed_attempts_may_have_been_billed(fault: str) -> None:
    server = ChaosServer(lambda body: "an answer", lambda body: False, every=1, slow_s=1.0)
    server._rotation.clear()
    server._rotation.append(fault)
    failures: list[CallFailure] = []
    with server.running():
        gateway = Gateway(
            Limits(timeout_s=0.3, max_retries=0, backoff_base_s=0.0, backoff_max_s=0.0), on_failure=failures.append
        )
        request = CallRequest(
            "k",
            "automation",
            Endpoint(model="openai/x", api_base=server.api_base),
            [{"role": "user", "content": "hi"}],
            {"max_tokens": 10},
            "s",
        )
        with pytest.raises(CallFailed):
            asyncio.run(gateway.complete(request))
    assert [f.maybe_billed for f in failures] == [BILLED[fault]], failures


def test_a_refused_connection_was_not_billed() -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    failures: list[CallFailure] = []
    gateway = Gateway(Limits(timeout_s=2.0, max_retries=0), on_failure=failures.append)
    request = CallRequest(
        "k",
        "automation",
        Endpoint(model="openai/x", api_base=f"http://127.0.0.1:{port}/v1"),
        [{"role": "user", "content": "hi"}],
        {"max_tokens": 10},
        "s",
    )
    with pytest.raises(CallFailed):
        asyncio.run(gateway.complete(request))
    assert [f.maybe_billed for f in failures] == [False]


@pytest.mark.parametrize(
    ("prompt", "completion", "expected"),
    [
        (12, 5, (12, 5)),
        (-5, 10, (None, 10)),  # a negative count would refund the budget
        (True, 3, (None, 3)),
        (1.5, 3, (None, 3)),
        (10**15, 3, (None, 3)),  # absurd: no count rather than a made-up $10^9
        ("12", "5", (None, None)),
        (-1, -1, (None, None)),
        (0, 0, (None, None)),  # litellm's zero-filled usage: not reported
    ],
)
def test_reported_usage_that_is_no_count_is_not_reported(prompt: Any, completion: Any, expected: Any) -> None:
    from types import SimpleNamespace

    from centaur_tui.llm.gateway import reply_usage

    reply = SimpleNamespace(usage=SimpleNamespace(prompt_tokens=prompt, completion_tokens=completion))
    assert reply_usage(reply) == expected
