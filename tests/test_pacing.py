"""Pacing to rpm/tpm limits, AIMD concurrency on 429, deployments and prompt caching, through litellm's HTTP path.

The servers run in the test's own process: a stall of the machine delays their handling of
requests paced correctly and then counts them in a clump, so the tests allow a few 429s (the
benchmark, bench/ratelimit.py, runs its server in a process of its own and holds 1%)."""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.session import Deployment, Endpoint, Limits
from centaur_tui.llm import CallFailed, CallRequest, Gateway
from centaur_tui.llm.gateway import needs_cache_control, with_cache_control
from centaur_tui.llm.pacing import AdaptiveLimit, Pacer
from tests.support.hostile_server import hostile_server
from tests.support.provider_server import http_session, provider_server


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_requests_leave_evenly_at_the_rpm_after_a_half_second_burst() -> None:
    t = FakeTime()
    pacer = Pacer(rpm=600, tpm=None, clock=t.clock, sleep=t.sleep)  # 10 a second, burst of 5

    async def go() -> list[float]:
        times = []
        for _ in range(25):
            await pacer.acquire()
            times.append(t.now)
        return times

    times = asyncio.run(go())
    assert times[:5] == [0.0] * 5
    assert times[-1] == pytest.approx(2.0)
    gaps = [b - a for a, b in itertools.pairwise(times[5:])]
    assert all(g == pytest.approx(0.1) for g in gaps)


def test_tokens_per_minute_count_prompt_plus_max_tokens_and_a_large_call_goes_into_debt() -> None:
    t = FakeTime()
    pacer = Pacer(rpm=None, tpm=6000, clock=t.clock, sleep=t.sleep)  # 100 tokens/s, bucket of 50

    async def go() -> None:
        await pacer.acquire(200)  # larger than the bucket: leaves with a full bucket, into debt
        assert t.now == 0.0
        await pacer.acquire(10)  # waits for the debt (150) and its own 10
        assert t.now == pytest.approx(1.6)

    asyncio.run(go())


@pytest.mark.parametrize("seconds", [-5.0, 0.0, float("nan"), float("inf")])
def test_a_pause_that_is_not_a_positive_finite_time_is_ignored(seconds: float) -> None:
    t = FakeTime()
    pacer = Pacer(rpm=None, tpm=None, clock=t.clock, sleep=t.sleep)
    pacer.pause(seconds)
    assert pacer.delay(0) == 0.0


def test_concurrency_halves_on_429_once_per_cooldown_and_grows_back() -> None:
    t = FakeTime()
    limit = AdaptiveLimit(8, cooldown_s=1.0, clock=t.clock)

    async def go() -> None:
        limit.rate_limited()
        limit.rate_limited()  # the same burst: not halved twice
        assert limit.limit == 4
        t.now = 2.0
        for _ in range(10):
            limit.rate_limited()
            t.now += 2.0
        assert limit.limit == 1  # never below one
        for _ in range(100):
            await limit.answered()
        assert limit.limit == 8

    asyncio.run(go())


def request(ep: Endpoint, i: int, max_tokens: int = 50) -> CallRequest:
    return CallRequest(
        key=f"k{i}",
        stage="automation",
        endpoint=ep,
        messages=[{"role": "user", "content": f"write item {i}"}],
        params={"max_tokens": max_tokens},
        sample="s",
    )


async def send_all(gateway: Gateway, ep: Endpoint, n: int) -> list[Any]:
    return await asyncio.gather(*(gateway.complete(request(ep, i)) for i in range(n)), return_exceptions=True)


def test_paced_calls_meet_almost_no_429_from_a_provider_enforcing_the_limit() -> None:
    with provider_server(rpm=1200, words=5) as server:  # 20 a second
        ep = Endpoint(model="openai/paced", api_base=server.api_base, rpm=1200)
        gateway = Gateway(Limits(concurrency=16, per_model_concurrency=16, backoff_base_s=0.05, backoff_max_s=1.0))
        started = time.monotonic()
        results = asyncio.run(send_all(gateway, ep, 60))
        elapsed = time.monotonic() - started
    assert all(not isinstance(r, BaseException) for r in results)
    assert server.rejected <= 3  # 5 %; see the module docstring
    assert elapsed >= (60 - 10) / 20 * 0.9  # paced: not faster than the limit allows


def test_unpaced_calls_back_off_on_429_honour_retry_after_and_all_get_through() -> None:
    with provider_server(rpm=600, words=5) as server:  # no rpm in the session: the provider's 429s pace us
        ep = Endpoint(model="openai/unpaced", api_base=server.api_base)
        gateway = Gateway(Limits(concurrency=16, per_model_concurrency=16, max_retries=20, backoff_base_s=0.01))
        results = asyncio.run(send_all(gateway, ep, 30))
        slots = gateway.targets(ep)[0].slots
    assert all(not isinstance(r, BaseException) for r in results), results
    assert server.rejected > 0 and slots.decreases >= 1
    assert slots.limit < 16  # backed off; grows back by 1/limit per answer


@pytest.mark.parametrize(
    "retry_after",
    ["soon", "-5", "99999999", "1e400", "nan", "http-date-tomorrow", ""],
)
def test_a_provider_that_429s_forever_ends_the_run_with_recorded_outcomes(
    tmp_path: Path, retry_after: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The HTTP date is made here, not in the parametrize list: a test id holding the clock differs
    # between pytest-xdist workers that collect in different seconds, and xdist refuses the run.
    if retry_after == "http-date-tomorrow":
        retry_after = email.utils.formatdate(time.time() + 86400, usegmt=True)
    # Every wait the gateway asks for, recorded rather than timed: a busy machine slows the run,
    # never lengthens a wait it asked for.
    waits: list[float] = []
    pause, backoff = Pacer.pause, Gateway.backoff_s

    def recorded_pause(self: Pacer, seconds: float) -> None:
        waits.append(seconds)
        pause(self, seconds)

    def recorded_backoff(self: Gateway, attempt: int, hint_s: float | None = None) -> float:
        waits.append(backoff(self, attempt, hint_s))
        return waits[-1]

    monkeypatch.setattr(Pacer, "pause", recorded_pause)
    monkeypatch.setattr(Gateway, "backoff_s", recorded_backoff)
    with provider_server(always_429=True, retry_after=retry_after) as server:
        limits = "max_retries = 2"
        path = tmp_path / "forever.toml"
        path.write_text(
            http_session(server.api_base, limits=limits).replace("backoff_max_s = 0.0", "backoff_max_s = 0.05")
        )
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert result.exit_code == 3, result.output
    assert "Incomplete" in result.output and "Traceback" not in result.output
    assert waits and max(waits) <= 0.05  # Retry-After is capped at backoff_max_s, whatever it says
    assert "automation: 2 of 2 missing (2 failed for good)" in result.output
    assert server.answered == 0 and server.rejected == len(server.requests) >= 3


def test_deployments_take_over_from_one_that_429s_and_each_call_records_its_deployment(tmp_path: Path) -> None:
    with provider_server(always_429=True, retry_after="0") as first, provider_server(words=20) as second:
        extra = f'deployments = [{{ name = "second", api_base = "{second.api_base}" }}]'
        path = tmp_path / "deploy.toml"
        path.write_text(http_session(first.api_base, extra=extra, limits="max_retries = 3"))
        result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert result.exit_code == 0, result.output
        study = load_session(path)
        with sqlite3.connect(study.database) as conn:
            rows = conn.execute("SELECT deployment, served_model, model FROM calls").fetchall()
    assert rows and {r[0] for r in rows} == {"second"}
    assert all(r[1] == r[2].removeprefix("openai/") for r in rows)  # the model that answered: the entry's own
    # No fallback to another entry's model: every request at either server names its own entry's model.
    for body in first.requests + second.requests:
        assert body["model"] in {"alpha", "beta", "worker", "judgeeast", "judgewest"}


def test_calls_spread_over_deployments_by_their_own_limits() -> None:
    with provider_server(rpm=600, words=5) as a, provider_server(rpm=600, words=5) as b:
        ep = Endpoint(
            model="openai/spread",
            api_base=a.api_base,
            rpm=600,
            deployments=(Deployment(name="b", api_base=b.api_base, rpm=600),),
        )
        gateway = Gateway(Limits(concurrency=16, per_model_concurrency=8))
        results = asyncio.run(send_all(gateway, ep, 40))
    assert all(not isinstance(r, BaseException) for r in results)
    assert {r.deployment for r in results} == {"default", "b"}
    # Each deployment answered its share within its own limit (a client pacing both to one
    # deployment's limit would have sent the other nothing; one ignoring the limits met 429s).
    # Counted, not timed: the wall time of this test says nothing on a busy machine.
    assert a.answered >= 12 and b.answered >= 12 and a.rejected + b.rejected <= 3  # see the module docstring


def test_claude_prompts_get_cache_control_on_the_shared_prefix_and_cached_tokens_are_priced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CENTAUR_TEST_ANTHROPIC_KEY", "test-key")
    seen: list[dict[str, Any]] = []

    def respond(body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
        seen.append(body)
        usage = {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 900}
        return (
            200,
            {},
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "text", "text": "a verdict"}],
                "stop_reason": "end_turn",
                "usage": usage,
            },
        )

    with hostile_server(respond) as server:
        ep = Endpoint(
            model="anthropic/claude-test",
            api_base=server.api_base.removesuffix("/v1"),
            api_key_env="CENTAUR_TEST_ANTHROPIC_KEY",
            input_cost_per_mtok=10.0,
            output_cost_per_mtok=20.0,
            cached_input_cost_per_mtok=1.0,
        )
        prompt = "SHARED TASK AND RUBRIC\n" * 20 + "OPTION TEXT"
        req = CallRequest(
            key="k",
            stage="judging",
            endpoint=ep,
            messages=[{"role": "system", "content": "judge"}, {"role": "user", "content": prompt}],
            params={"max_tokens": 50},
            sample="s",
            cache_prefix=prompt.index("OPTION"),
        )
        result = asyncio.run(Gateway(Limits(max_retries=0)).complete(req))
    body = seen[0]
    system = body["system"]
    assert system[0]["cache_control"] == {"type": "ephemeral"}
    blocks = body["messages"][0]["content"]
    assert blocks[0]["cache_control"] == {"type": "ephemeral"} and blocks[0]["text"].endswith("RUBRIC\n")
    assert blocks[1]["text"] == "OPTION TEXT" and "cache_control" not in blocks[1]
    assert result.cached_tokens == 900
    # litellm counts the cache reads into prompt_tokens; they are priced at the cached price.
    assert result.prompt_tokens is not None and result.prompt_tokens >= 900
    uncached = result.prompt_tokens - 900
    assert result.cost == pytest.approx((uncached * 10 + 900 * 1 + 10 * 20) / 1e6)


def test_cache_control_only_where_a_provider_needs_it_and_the_text_is_unchanged() -> None:
    assert needs_cache_control("anthropic/claude-opus-4-8")
    assert needs_cache_control("bedrock/anthropic.claude-3-5-sonnet")
    assert not needs_cache_control("openai/gpt-4.1") and not needs_cache_control("gemini/gemini-3.1-pro")
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "abcdef"}]
    for prefix in (-3, 0, 6, 10**9):  # hostile prefixes: no split, text kept
        out = with_cache_control(messages, prefix)
        assert out[1] == messages[1]
    out = with_cache_control(messages, 2)
    assert "".join(b["text"] for b in out[1]["content"]) == "abcdef"


def test_a_failing_deployment_is_named_in_the_error() -> None:
    with provider_server(always_429=True, retry_after="0") as a, provider_server(always_429=True) as b:
        ep = Endpoint(model="openai/x", api_base=a.api_base, deployments=(Deployment(name="b", api_base=b.api_base),))
        gateway = Gateway(Limits(max_retries=1, backoff_base_s=0.0, backoff_max_s=0.01))
        with pytest.raises(CallFailed) as err:
            asyncio.run(gateway.complete(request(ep, 0)))
    assert "deployment" in str(err.value)
    assert a.rejected + b.rejected == 2 and a.rejected == 1 and b.rejected == 1  # the retry went to the other
