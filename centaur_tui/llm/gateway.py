"""Provides Gateway: bounded, retried, timed provider calls through litellm, with usage recorded.

Retries happen here and only here: each litellm call gets `num_retries=0`, because SDK and
litellm retries compound (5 attempts for `num_retries=2`, NOTES.md).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from centaur_tui.domain.errors import MissingKeyError
from centaur_tui.domain.records import CallFailure
from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.llm.runtime import litellm


@dataclass(frozen=True)
class CallRequest:
    """One provider call: where to send it and its content address."""

    key: str
    stage: str
    endpoint: Endpoint
    messages: list[dict[str, str]]
    params: dict[str, Any]
    sample: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallResult:
    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    latency_s: float
    attempts: int


class CallFailed(Exception):
    """A call that failed for good: retries exhausted or a non-transient error."""

    def __init__(self, message: str, error_type: str, attempts: int) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.attempts = attempts


class FatalProviderError(CallFailed):
    """An error every call of that model would hit (bad key, unknown model): stop the run."""


_TRANSIENT = (
    "RateLimitError", "Timeout", "APIConnectionError", "InternalServerError", "ServiceUnavailableError",
    "BadGatewayError", "APIError", "TimeoutError",
)
_FATAL = ("AuthenticationError", "PermissionDeniedError", "NotFoundError")


def missing_keys(endpoint: Endpoint) -> list[str]:
    """Environment variables a real model needs but that are not set (none for simulated ones)."""
    if endpoint.simulated:
        return []
    if endpoint.api_key_env:
        return [] if os.environ.get(endpoint.api_key_env) else [endpoint.api_key_env]
    if endpoint.api_base:
        return []  # a local OpenAI-compatible server usually needs no key
    found = litellm().validate_environment(model=endpoint.model)
    return list(found.get("missing_keys") or [])


def require_keys(endpoints: list[tuple[str, Endpoint]]) -> None:
    """Raise MissingKeyError naming the model and the variable for the first key missing."""
    for name, endpoint in endpoints:
        missing = missing_keys(endpoint)
        if missing:
            raise MissingKeyError(
                f"model {name!r} ({endpoint.model}) needs the environment variable {' or '.join(missing)}; "
                "set it before running (keys are never read from session files)"
            )


class Gateway:
    """Sends calls with bounded concurrency (overall and per model), retries and a timeout.

    Args:
        limits: Concurrency, timeout and retry settings of the session.
        on_failure: Called with every failed attempt, for the audit log.
        sleep: Injected for tests; defaults to asyncio.sleep.
    """

    def __init__(
        self,
        limits: Limits,
        on_failure: Callable[[CallFailure], None] | None = None,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        self.limits = limits
        self._overall = asyncio.Semaphore(limits.concurrency)
        self._per_model: dict[str, asyncio.Semaphore] = {}
        self._on_failure = on_failure
        self._sleep = sleep or asyncio.sleep
        self._llm = litellm()
        self.in_flight = 0

    def register_prices(self, endpoints: list[Endpoint]) -> None:
        """Tell litellm the session's token prices for models it has no price for.

        Cost then comes from litellm's own calculator; for unknown models that calculator
        also took about 0.8 ms more CPU per call (measured on 1,000 calls).
        """
        for ep in endpoints:
            if ep.input_cost_per_mtok is None or ep.output_cost_per_mtok is None:
                continue
            if not ep.simulated and ep.model in self._llm.model_cost:
                continue
            provider = ep.model.split("/", 1)[0]
            self._llm.register_model({
                ep.model: {
                    "input_cost_per_token": ep.input_cost_per_mtok / 1e6,
                    "output_cost_per_token": ep.output_cost_per_mtok / 1e6,
                    "litellm_provider": provider,
                    "mode": "chat",
                }
            })

    def _model_slot(self, model: str) -> asyncio.Semaphore:
        slot = self._per_model.get(model)
        if slot is None:
            slot = self._per_model[model] = asyncio.Semaphore(self.limits.per_model_concurrency)
        return slot

    def _kwargs(self, req: CallRequest) -> dict[str, Any]:
        ep = req.endpoint
        kwargs: dict[str, Any] = {
            "model": ep.model,
            "messages": req.messages,
            "timeout": self.limits.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            **ep.params,
            **req.params,
        }
        if ep.api_base:
            kwargs["api_base"] = ep.api_base
        if ep.api_key_env:
            kwargs["api_key"] = os.environ.get(ep.api_key_env, "")
        elif ep.api_base and not ep.simulated:
            kwargs.setdefault("api_key", "none")
        if req.metadata:
            kwargs["metadata"] = req.metadata
        return kwargs

    def _cost(self, response: Any, req: CallRequest, p_tok: int | None, c_tok: int | None) -> float | None:
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        if cost is not None:
            return float(cost)
        ep = req.endpoint
        if ep.input_cost_per_mtok is not None and ep.output_cost_per_mtok is not None and p_tok is not None:
            return (p_tok * ep.input_cost_per_mtok + (c_tok or 0) * ep.output_cost_per_mtok) / 1e6
        return None

    async def complete(self, req: CallRequest) -> CallResult:
        """Send one call, retrying transient errors with exponential backoff and jitter.

        Raises:
            FatalProviderError: authentication, permission or unknown-model errors.
            CallFailed: a non-transient error, or retries exhausted.
        """
        kwargs = self._kwargs(req)
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                async with self._model_slot(req.endpoint.model), self._overall:
                    started = time.perf_counter()  # latency of the call itself, not of the queue
                    self.in_flight += 1
                    try:
                        # litellm enforces `timeout` itself; this guard only catches a provider
                        # path that ignores it, so it sits a little beyond.
                        response = await asyncio.wait_for(
                            self._llm.acompletion(**kwargs), timeout=self.limits.timeout_s * 1.25 + 0.5
                        )
                    finally:
                        self.in_flight -= 1
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below, never swallowed
                kind = type(exc).__name__
                message = str(exc).strip().splitlines()[0][:500] if str(exc).strip() else kind
                fatal = kind in _FATAL
                transient = not fatal and (kind in _TRANSIENT or isinstance(exc, (asyncio.TimeoutError, TimeoutError)))
                final = not transient or attempt > self.limits.max_retries
                if self._on_failure is not None:
                    self._on_failure(CallFailure(req.key, req.stage, req.endpoint.model, attempt, kind, message, final))
                if fatal:
                    raise FatalProviderError(f"{req.endpoint.model}: {kind}: {message}", kind, attempt) from exc
                if final:
                    raise CallFailed(f"{req.endpoint.model}: {kind}: {message}", kind, attempt) from exc
                delay = min(self.limits.backoff_max_s, self.limits.backoff_base_s * 2 ** (attempt - 1))
                await self._sleep(delay * (0.5 + random.random() / 2))
                continue
            latency = time.perf_counter() - started
            choice = response.choices[0]
            text = choice.message.content or ""
            usage = getattr(response, "usage", None)
            p_tok = getattr(usage, "prompt_tokens", None)
            c_tok = getattr(usage, "completion_tokens", None)
            return CallResult(text, p_tok, c_tok, self._cost(response, req, p_tok, c_tok), latency, attempt)


def supports_json_mode(endpoint: Endpoint) -> bool:
    """Whether litellm can pass `response_format` for this model (else we ask in the prompt only)."""
    if endpoint.simulated or endpoint.api_base:
        return True
    try:
        params = litellm().get_supported_openai_params(model=endpoint.model) or []
    except Exception:  # noqa: BLE001 - unknown model: do not send the parameter
        return False
    return "response_format" in params
