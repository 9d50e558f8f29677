"""The gateway retries transient errors with backoff, stops on fatal ones, times out, bounds concurrency."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.llm import CallFailed, CallRequest, FatalProviderError, Gateway
from centaur_tui.llm.runtime import litellm


def response(text: str = "ok") -> SimpleNamespace:
    return SimpleNamespace(
        choices=[SimpleNamespace(message=SimpleNamespace(content=text))],
        usage=SimpleNamespace(prompt_tokens=10, completion_tokens=4),
        _hidden_params={"response_cost": None},
    )


class FakeLLM:
    """Stands in for the litellm module: replays a script of exceptions and replies."""

    def __init__(self, script: list[object], delay: float = 0.0) -> None:
        self.script = list(script)
        self.calls: list[dict] = []
        self.delay = delay
        self.active = 0
        self.peak: dict[str, int] = {}
        self.peak_all = 0
        self._active_by_model: dict[str, int] = {}

    async def acompletion(self, **kwargs: object) -> object:
        self.calls.append(kwargs)
        model = str(kwargs["model"])
        self.active += 1
        self._active_by_model[model] = self._active_by_model.get(model, 0) + 1
        self.peak_all = max(self.peak_all, self.active)
        self.peak[model] = max(self.peak.get(model, 0), self._active_by_model[model])
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
            item = self.script.pop(0) if self.script else response()
            if isinstance(item, BaseException):
                raise item
            return item
        finally:
            self.active -= 1
            self._active_by_model[model] -= 1


def make(script: list[object], limits: Limits | None = None, delay: float = 0.0) -> tuple[Gateway, FakeLLM, list, list]:
    sleeps: list[float] = []
    failures: list = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    gateway = Gateway(
        limits or Limits(max_retries=3, backoff_base_s=1.0, backoff_max_s=3.0),
        on_failure=failures.append,
        sleep=fake_sleep,
    )
    fake = FakeLLM(script, delay)
    gateway._llm = fake  # type: ignore[assignment]
    return gateway, fake, sleeps, failures


def request(model: str = "openai/gpt-4.1", price: bool = False) -> CallRequest:
    ep = Endpoint(model=model, input_cost_per_mtok=1.0 if price else None, output_cost_per_mtok=2.0 if price else None)
    return CallRequest(
        key="k",
        stage="judging",
        endpoint=ep,
        messages=[{"role": "user", "content": "x"}],
        params={"temperature": 0},
        sample="judging:run1:attempt0",
    )


def errors() -> SimpleNamespace:
    llm = litellm()
    return SimpleNamespace(
        rate=llm.RateLimitError(message="slow down", llm_provider="openai", model="gpt-4.1"),
        server=llm.InternalServerError(message="boom", llm_provider="openai", model="gpt-4.1"),
        timeout=llm.Timeout(message="too slow", model="gpt-4.1", llm_provider="openai"),
        auth=llm.AuthenticationError(message="bad key", llm_provider="openai", model="gpt-4.1"),
        bad=llm.BadRequestError(message="bad request", model="gpt-4.1", llm_provider="openai"),
    )


async def test_transient_errors_are_retried_with_exponential_backoff() -> None:
    e = errors()
    gateway, fake, sleeps, failures = make([e.rate, e.server, e.timeout, response("fine")])
    result = await gateway.complete(request(price=True))
    assert result.text == "fine" and result.attempts == 4
    assert len(sleeps) == 3
    # base 1 s doubling, capped at 3 s, with jitter in [0.5, 1.0] of the delay
    for got, full in zip(sleeps, (1.0, 2.0, 3.0), strict=True):
        assert 0.5 * full <= got <= full
    assert [f.error_type for f in failures] == ["RateLimitError", "InternalServerError", "Timeout"]
    assert not any(f.final for f in failures)
    assert result.cost == pytest.approx((10 * 1.0 + 4 * 2.0) / 1e6)
    assert all(c["num_retries"] == 0 for c in fake.calls)  # retries happen only here


async def test_retries_exhausted_raise_call_failed() -> None:
    e = errors()
    gateway, fake, _sleeps, failures = make([e.rate] * 10)
    with pytest.raises(CallFailed) as info:
        await gateway.complete(request())
    assert info.value.attempts == 4 and len(fake.calls) == 4
    assert failures[-1].final


async def test_fatal_errors_are_not_retried() -> None:
    e = errors()
    gateway, fake, sleeps, _failures = make([e.auth])
    with pytest.raises(FatalProviderError):
        await gateway.complete(request())
    assert len(fake.calls) == 1 and sleeps == []


async def test_bad_request_fails_the_call_without_retry() -> None:
    e = errors()
    gateway, fake, _, _ = make([e.bad])
    with pytest.raises(CallFailed) as info:
        await gateway.complete(request())
    assert not isinstance(info.value, FatalProviderError) and len(fake.calls) == 1


async def test_per_call_timeout_is_passed_and_enforced() -> None:
    gateway, fake, _sleeps, failures = make([], Limits(timeout_s=0.01, max_retries=1, backoff_base_s=0.0), delay=10)
    with pytest.raises(CallFailed):
        await asyncio.wait_for(gateway.complete(request()), timeout=30)
    assert fake.calls[0]["timeout"] == 0.01
    assert len(fake.calls) == 2 and failures[-1].error_type == "TimeoutError"


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        (SimpleNamespace(choices=None, usage=None), "no choices"),
        (SimpleNamespace(choices=[SimpleNamespace(message=None, finish_reason="stop")]), "no message"),
        (response(None), "null content"),
        (response(["a", "list"]), "not text (list)"),  # a custom provider may hand back parts
        (response(""), "empty"),
    ],
)
async def test_replies_that_are_not_answers_are_failed_attempts_never_text(reply: object, says: str) -> None:
    gateway, _fake, sleeps, failures = make([reply, reply], Limits(max_retries=1, backoff_base_s=1.0))
    with pytest.raises(CallFailed) as info:
        await gateway.complete(request())
    assert info.value.error_type == "MalformedReply" and info.value.attempts == 2 and len(sleeps) == 1
    assert [f.final for f in failures] == [False, True] and says in failures[-1].message


async def test_concurrency_is_bounded_overall_and_per_model() -> None:
    gateway, fake, _, _ = make([], Limits(concurrency=6, per_model_concurrency=2), delay=0.01)
    models = [f"openai/m{i % 4}" for i in range(40)]
    await asyncio.gather(*(gateway.complete(request(m)) for m in models))
    assert fake.peak_all <= 6 and max(fake.peak.values()) <= 2
    assert fake.peak_all >= 4  # and the bound is actually used
