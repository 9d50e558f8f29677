"""Provides Gateway: bounded, retried, timed provider calls through litellm, with usage recorded.

Retries happen here and only here: each litellm call gets `num_retries=0`, because SDK and
litellm retries compound (5 attempts for `num_retries=2`, NOTES.md). A reply that is not an
answer (no choices, no message, no text) is a failed attempt like a 5xx, never an empty output;
a server's `Retry-After` is a lower bound on the backoff. A timed-out request may have been
processed and billed by the provider, so a call is sent again after a timeout at most
`max_timeout_retries` times (default 1), within `max_retries`. Every error text that leaves here (to
`call_errors`, the progress line, the CLI) went through `describe_failure`: controls stripped,
keys redacted, the endpoint named when unreachable, a hint when the cause is known.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from centaur_tui.domain.errors import MissingKeyError
from centaur_tui.domain.records import TIMEOUT_ERRORS, CallFailure
from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.domain.untrusted import clean_untrusted
from centaur_tui.llm.costing import price_of
from centaur_tui.llm.errors import describe_failure, secrets_in_env
from centaur_tui.llm.pacing import AdaptiveLimit, Pacer
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
    prompt_tokens: int | None = None
    """Counted prompt tokens (for tpm pacing); None: estimated from the characters."""
    cache_prefix: int = 0
    """Characters of the last user message shared by many calls (judge prompts: system, task, rubric):
    marked with `cache_control` for providers that need it (Anthropic). Not part of the content address."""


@dataclass(frozen=True)
class CallResult:
    """One answered call. Token counts are None when the provider did not report them.

    `finish_reason` is the provider's stop reason ("stop", "length" when cut off at
    `max_tokens`, ...), None when it gave none. `served_model` is the model the reply says
    answered (a provider's fallback may differ from the one asked for), None when it names none.
    """

    text: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float | None
    latency_s: float
    attempts: int
    finish_reason: str | None = None
    served_model: str | None = None
    cached_tokens: int | None = None
    deployment: str | None = None
    """The deployment that answered (its name; "default" for the entry's own), None for an entry without deployments."""


class NotSent(Exception):
    """Raised by an `on_send` hook to keep a request from leaving (a budget): not retried, not logged as an attempt."""


class CallFailed(Exception):
    """A call that failed for good: retries exhausted or a non-transient error."""

    def __init__(self, message: str, error_type: str, attempts: int, finish_reason: str | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.attempts = attempts
        self.finish_reason = finish_reason


class FatalProviderError(CallFailed):
    """An error every call of that model would hit (bad key, unknown model): stop the run."""


_TRANSIENT = (
    "RateLimitError",
    "Timeout",
    "APIConnectionError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "APIError",
    "TimeoutError",
)
_FATAL = ("AuthenticationError", "PermissionDeniedError", "NotFoundError")

MALFORMED_REPLY = "MalformedReply"
"""`error_type` of an attempt whose reply was not an answer (stored in call_errors)."""


class MalformedReply(Exception):
    """A provider reply that is not an answer: retried like a transient error, never stored as text."""

    def __init__(self, reason: str, finish_reason: str | None) -> None:
        super().__init__(reason if finish_reason is None else f"{reason} (finish_reason={finish_reason})")
        self.finish_reason = finish_reason


def reply_text(response: Any) -> tuple[str, str | None]:
    """The text of a completion and its finish reason.

    Raises:
        MalformedReply: no choices, a choice without a message, or content that is null,
            empty, whitespace only or not a string (a content filter or a refusal gives null
            content; a reply with only tool calls gives no text either).
    """
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedReply("reply has no choices", None)
    choice = choices[0]
    finish = getattr(choice, "finish_reason", None)
    finish = clean_untrusted(str(finish), limit=40, one_line=True) if finish is not None else None  # server text
    message = getattr(choice, "message", None)
    if message is None:
        raise MalformedReply("reply choice has no message", finish)
    content = getattr(message, "content", None)
    if content is None:
        what = "only tool calls" if getattr(message, "tool_calls", None) else "null content"
        raise MalformedReply(f"reply has no text ({what})", finish)
    if not isinstance(content, str):
        raise MalformedReply(f"reply content is not text ({type(content).__name__})", finish)
    if not content.strip():
        raise MalformedReply("reply text is empty" if not content else "reply text is whitespace only", finish)
    return content, finish


def reply_usage(response: Any) -> tuple[int | None, int | None]:
    """(prompt, completion) tokens, or (None, None) when the provider reported no usage.

    litellm fills a missing `usage` with zeros; a real call never has 0 prompt tokens, so zeros
    mean "not reported", stored as unknown rather than as a free call.
    """
    usage = getattr(response, "usage", None)
    p_tok, c_tok = sane_usage(getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))
    if not p_tok and not c_tok:
        return None, None
    return p_tok, c_tok


_NEVER_REACHED = frozenset(
    {"ConnectError", "ConnectTimeout", "ClientConnectorError", "ConnectionRefusedError", "gaierror", "NotSent"}
)
"""Causes that mean the request never reached the provider (nothing to bill)."""
_LOST_ANSWER = frozenset(
    {
        "ReadError",
        "ReadTimeout",
        "RemoteProtocolError",
        "ContentLengthError",
        "ClientPayloadError",
        "ServerDisconnectedError",
        "ConnectionResetError",
        "JSONDecodeError",
        "APITimeoutError",
        "Timeout",
        "TimeoutError",
    }
)
"""Causes that mean the request was received and its answer lost or broken on the way back."""


def maybe_billed(exc: BaseException) -> bool:
    """Whether a failed attempt may have been billed: the provider received it and no usable answer came back.

    A timeout, a connection reset or a body cut short after the request was sent, a body that is
    no JSON, a reply that is no answer (`MalformedReply`): yes. A refused connection, an unknown
    host, an HTTP error status (429, 5xx, 4xx): no. litellm reports a reset, a cut body and a
    refused connection alike as InternalServerError "Connection error." with status 500, so the
    exception chain decides (measured with litellm 1.110.2 on tests/support/fault_server.py).
    """
    if isinstance(exc, (MalformedReply, TimeoutError)):
        return True
    names: set[str] = set()
    node: BaseException | None = exc
    for _ in range(10):  # a bounded walk: chains are 3-6 deep
        if node is None:
            break
        names.add(type(node).__name__)
        node = node.__cause__ or node.__context__
    return not (names & _NEVER_REACHED) and bool(names & _LOST_ANSWER)


def sane_usage(p_tok: Any, c_tok: Any) -> tuple[int | None, int | None]:
    """Reported token counts a cost can be computed from: non-negative integers (a bool, a float, a
    negative or absurd count is no count: it is stored as not reported, and the call is settled at
    its reservation rather than at a cost a hostile or broken server made up)."""

    def one(value: Any) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**12:
            return None
        return value

    return one(p_tok), one(c_tok)


def reply_cached_tokens(response: Any) -> int | None:
    """Prompt tokens the provider served from its prompt cache (`usage.prompt_tokens_details.cached_tokens`,
    or Anthropic's `cache_read_input_tokens`); None when it reports none."""
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached is None:
        cached = getattr(usage, "cache_read_input_tokens", None)
    return int(cached) if isinstance(cached, (int, float)) and cached > 0 else None


def needs_cache_control(model: str) -> bool:
    """Whether prompt caching needs explicit `cache_control` marks for this model (Anthropic's Claude).

    OpenAI, Gemini and DeepSeek cache a repeated prefix by themselves.
    """
    provider = model.split("/", 1)[0]
    return provider == "anthropic" or (provider in ("bedrock", "vertex_ai") and "claude" in model)


def with_cache_control(messages: list[dict[str, Any]], prefix_chars: int) -> list[dict[str, Any]]:
    """The messages with the system prompt and the first `prefix_chars` of the first user message marked cacheable.

    The text sent is the same; only its split into content blocks differs.
    """
    out: list[dict[str, Any]] = []
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), -1)
    mark = {"type": "ephemeral"}
    for i, m in enumerate(messages):
        content = m.get("content")
        if not isinstance(content, str) or not content:
            out.append(m)
        elif m.get("role") == "system":
            out.append({**m, "content": [{"type": "text", "text": content, "cache_control": mark}]})
        elif i == first_user and 0 < prefix_chars < len(content):
            blocks = [
                {"type": "text", "text": content[:prefix_chars], "cache_control": mark},
                {"type": "text", "text": content[prefix_chars:]},
            ]
            out.append({**m, "content": blocks})
        else:
            out.append(m)
    return out


def served_model(response: Any) -> str | None:
    """The model a reply says answered it, plus the deployment when litellm names one (a Router's `model_id`).

    Server text, so cleaned and cut to 200 characters; None when the reply names no model.
    """
    model = getattr(response, "model", None)
    hidden = getattr(response, "_hidden_params", None)
    deployment = hidden.get("model_id") if isinstance(hidden, dict) else None
    if not model:
        return None
    text = str(model) if not deployment else f"{model} (deployment {deployment})"
    return clean_untrusted(text, limit=200, one_line=True)


def _header(headers: Any, name: str) -> str | None:
    if headers is None:
        return None
    try:
        value = headers.get(name)
        if value is None and isinstance(headers, dict):  # a plain dict is case-sensitive
            value = next((v for k, v in headers.items() if str(k).lower() == name), None)
    except Exception:  # noqa: BLE001 - a header object we cannot read gives no hint
        return None
    return None if value is None else str(value).strip()


def retry_after_s(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds the server asked us to wait before retrying, from the error's response headers.

    Reads `retry-after-ms` (milliseconds, OpenAI's), then `retry-after` in seconds or as an
    HTTP date. litellm 1.110.2 keeps the provider's headers on `exc.litellm_response_headers`
    and `exc.response.headers` (`exc.headers` holds only proxy-supplied ones); all are tried.
    Returns None when there is no usable hint.
    """
    sources = (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
    )
    for headers in sources:
        ms = _header(headers, "retry-after-ms")
        if ms:
            try:
                value = float(ms) / 1000
            except ValueError:
                value = math.nan
            if math.isfinite(value) and value >= 0:
                return value
        raw = _header(headers, "retry-after")
        if not raw:
            continue
        try:
            value = float(raw)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(raw)
            except (TypeError, ValueError, IndexError):
                continue
            if when.tzinfo is None:
                continue
            value = max(0.0, when.timestamp() - (time.time() if now is None else now))
        if math.isfinite(value) and value >= 0:
            return value
    return None


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


@dataclass
class Target:
    """One place a call can go: an entry's own endpoint or one of its deployments, with its pacing."""

    label: str | None
    model: str
    api_base: str | None
    api_key_env: str | None
    params: dict[str, Any]
    pacer: Pacer
    slots: AdaptiveLimit
    pending: int = 0
    """Calls sent here or waiting to be: how `Gateway._choose` spreads a burst."""

    @property
    def identity(self) -> tuple[str, str | None, str | None]:
        return (self.model, self.api_base, self.api_key_env)


class Gateway:
    """Sends calls with bounded concurrency (overall and per model), pacing, retries and a timeout.

    Per model (each deployment apart) calls are paced to the session's `rpm`/`tpm` and held to an
    adaptive concurrency that halves on a 429 and grows back (llm/pacing.py). An entry with
    `deployments` has its calls spread over them (the entry's own endpoint first, named
    "default"): each attempt goes to the one that can send soonest, a retry preferably to
    another than the one that just failed. All deployments serve the same entry, so there is no
    fallback to another model family (leave-family-out holds); litellm's Router is not used
    because its rpm limits wait for the minute window and its own retries would compound ours.

    Args:
        limits: Concurrency, timeout and retry settings of the session.
        on_failure: Called with every failed attempt, for the audit log.
        sleep: Injected for tests; defaults to asyncio.sleep.
        on_send: Called when a request of a call is about to leave (its concurrency slot
            taken), every attempt: the in-flight record (pipeline/calls.py). If it returns an
            awaitable, the request leaves only once it is done (the record is then committed
            before anything can be billed).
    """

    def __init__(
        self,
        limits: Limits,
        on_failure: Callable[[CallFailure], None] | None = None,
        sleep: Callable[[float], Any] | None = None,
        on_send: Callable[[CallRequest], Awaitable[None] | None] | None = None,
    ) -> None:
        self.limits = limits
        self._on_send = on_send
        self._overall = asyncio.Semaphore(limits.concurrency)
        self._targets: dict[tuple[str, str | None, str | None], Target] = {}
        self._entry_targets: dict[int, list[Target]] = {}
        self._on_failure = on_failure
        self._sleep = sleep or asyncio.sleep
        self._llm = litellm()
        self._key_envs: set[str] = set()  # every api_key_env seen: their values are redacted from errors
        self.in_flight = 0

    def register_endpoints(self, endpoints: list[Endpoint]) -> None:
        """Remember the key variables of the session's endpoints, so that any of their values is redacted."""
        self._key_envs.update(ep.api_key_env for ep in endpoints if ep.api_key_env)

    def register_prices(self, endpoints: list[Endpoint]) -> None:
        """Take note of the session's endpoints before the first call (their key variables are redacted).

        The session's token prices are applied here, per call (`_cost`), and no longer registered
        in litellm's process-wide price map: registered there they outlived the session (a second
        session in the same process, or the app opening another one, found a model "priced"
        that its own file leaves unpriced).
        """
        self.register_endpoints(endpoints)

    def _target(
        self,
        label: str | None,
        model: str,
        api_base: str | None,
        key_env: str | None,
        params: dict[str, Any],
        rpm: int | None,
        tpm: int | None,
    ) -> Target:
        identity = (model, api_base, key_env)
        target = self._targets.get(identity)
        if target is None:
            target = self._targets[identity] = Target(
                label,
                model,
                api_base,
                key_env,
                params,
                Pacer(rpm, tpm),
                AdaptiveLimit(self.limits.per_model_concurrency),
            )
        return target

    def targets(self, ep: Endpoint) -> list[Target]:
        """Where an entry's calls can go: its own endpoint, then its deployments (cached per entry)."""
        found = self._entry_targets.get(id(ep))
        if found is None:
            own = self._target(
                "default" if ep.deployments else None, ep.model, ep.api_base, ep.api_key_env, {}, ep.rpm, ep.tpm
            )
            found = [own]
            for d in ep.deployments:
                if d.api_key_env:
                    self._key_envs.add(d.api_key_env)
                found.append(
                    self._target(
                        d.name,
                        d.model or ep.model,
                        d.api_base or ep.api_base,
                        d.api_key_env or ep.api_key_env,
                        dict(d.params),
                        d.rpm or ep.rpm,
                        d.tpm or ep.tpm,
                    )
                )
            self._entry_targets[id(ep)] = found
        return found

    def _choose(self, req: CallRequest, tokens: int, avoid: Target | None) -> Target:
        options = self.targets(req.endpoint)
        if len(options) == 1:
            return options[0]
        if avoid is not None and len(options) > 1:
            options = [t for t in options if t is not avoid]
        # Soonest to send (its pacing and the calls queued before), then the least loaded, then file order.
        return min(
            options,
            key=lambda t: (t.pacer.delay(tokens) + t.pacer.backlog_s(t.pending, tokens), t.pending / t.slots.limit),
        )

    def _kwargs(self, req: CallRequest, target: Target | None = None) -> dict[str, Any]:
        ep = req.endpoint
        model = target.model if target is not None else ep.model
        api_base = target.api_base if target is not None else ep.api_base
        key_env = target.api_key_env if target is not None else ep.api_key_env
        messages: list[dict[str, Any]] = list(req.messages)
        if req.cache_prefix and needs_cache_control(model):
            messages = with_cache_control(messages, req.cache_prefix)
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": messages,
            "timeout": self.limits.timeout_s,
            "num_retries": 0,
            "max_retries": 0,
            **ep.params,
            **(target.params if target is not None else {}),
            **req.params,
        }
        if api_base:
            kwargs["api_base"] = api_base
        if key_env:
            self._key_envs.add(key_env)
            kwargs["api_key"] = os.environ.get(key_env, "")
        elif api_base and not ep.simulated:
            kwargs.setdefault("api_key", "none")
        if req.metadata:
            kwargs["metadata"] = req.metadata
        return kwargs

    @staticmethod
    def _tokens(req: CallRequest) -> int:
        """What a request counts against a tokens-per-minute limit: prompt tokens + max_tokens."""
        prompt = req.prompt_tokens
        if prompt is None:  # about 4 characters a token in English
            prompt = sum(len(str(m.get("content") or "")) for m in req.messages) // 4 + 1
        return prompt + int(req.params.get("max_tokens") or 0)

    def _cost(
        self, response: Any, req: CallRequest, p_tok: int | None, c_tok: int | None, cached: int | None = None
    ) -> float | None:
        if p_tok is None and c_tok is None:
            return None  # no usage reported: litellm's cost of its zero-filled usage would be a false $0
        ep = req.endpoint
        if ep.priced and p_tok is not None:  # the session's prices win (cached input at its cached price)
            price = price_of(ep)
            assert price is not None
            return price.cost(p_tok, c_tok or 0, cached or 0)
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        if not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
            return None  # litellm's cost of a usage we refused (negative, absurd) is no cost either
        if cost > 0 or not p_tok:  # litellm#36999: an unpriced model costs a false $0
            return float(cost)
        return None

    def backoff_s(self, attempt: int, hint_s: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based).

        Exponential from `backoff_base_s` with jitter in [0.5, 1.0] of the step. A server's
        `Retry-After` (`hint_s`) is a lower bound, plus up to 10% (at most 1 s) of jitter so
        that calls told the same wait do not all return at once; `backoff_max_s` caps both.
        """
        limits = self.limits
        delay = min(limits.backoff_max_s, limits.backoff_base_s * 2 ** (attempt - 1)) * (0.5 + random.random() / 2)
        if hint_s is not None:
            delay = max(delay, hint_s + random.random() * min(1.0, 0.1 * hint_s))
        return min(limits.backoff_max_s, delay)

    async def complete(self, req: CallRequest) -> CallResult:
        """Send one call, retrying transient errors with exponential backoff and jitter.

        A reply that is not an answer (see `reply_text`) is a failed attempt of type
        MalformedReply, retried like a transient error. A timeout is retried at most
        `max_timeout_retries` times per call (the provider may have processed the request).

        Raises:
            FatalProviderError: authentication, permission or unknown-model errors.
            CallFailed: a non-transient error, or retries exhausted.
        """
        attempt = 0
        timeouts = 0
        tokens = self._tokens(req)
        failed_at: Target | None = None
        while True:
            attempt += 1
            started = time.perf_counter()
            target = self._choose(req, tokens, failed_at)
            kwargs = self._kwargs(req, target)
            target.pending += 1
            try:
                async with target.slots:
                    await target.pacer.acquire(tokens)
                    async with self._overall:
                        started = time.perf_counter()  # latency of the call itself, not of the queue
                        if self._on_send is not None:
                            sent = self._on_send(req)
                            if sent is not None:
                                await sent
                        self.in_flight += 1
                        try:
                            # litellm enforces `timeout` itself; this guard only catches a provider
                            # path that ignores it, so it sits a little beyond.
                            response = await asyncio.wait_for(
                                self._llm.acompletion(**kwargs), timeout=self.limits.timeout_s * 1.25 + 0.5
                            )
                        finally:
                            self.in_flight -= 1
                latency = time.perf_counter() - started
                text, finish = reply_text(response)
            except (asyncio.CancelledError, NotSent):
                target.pending -= 1
                raise
            except Exception as exc:  # classified below, never swallowed
                target.pending -= 1
                malformed = isinstance(exc, MalformedReply)
                kind = MALFORMED_REPLY if malformed else type(exc).__name__
                finish = exc.finish_reason if isinstance(exc, MalformedReply) else None
                message = describe_failure(exc, kind, req.endpoint, secrets_in_env(self._key_envs))
                fatal = kind in _FATAL
                transient = malformed or (
                    not fatal and (kind in _TRANSIENT or isinstance(exc, (asyncio.TimeoutError, TimeoutError)))
                )
                timed_out = kind in TIMEOUT_ERRORS or isinstance(exc, TimeoutError)
                if timed_out:
                    timeouts += 1
                capped = timed_out and timeouts > self.limits.max_timeout_retries
                final = not transient or attempt > self.limits.max_retries or capped
                if capped and attempt <= self.limits.max_retries:
                    message = (
                        f"{message} [not sent again: {timeouts} timeout(s), max_timeout_retries = "
                        f"{self.limits.max_timeout_retries}; a timed-out request may have been billed]"
                    )
                hint = retry_after_s(exc)
                if kind == "RateLimitError":
                    target.slots.rate_limited()  # this model's concurrency backs off
                    # Everything queued for this deployment waits too, at most backoff_max_s.
                    target.pacer.pause(min(self.limits.backoff_max_s, hint if hint is not None else 0.0))
                hint = None if final else hint
                if hint is not None:
                    message = f"{message} [server asked to retry after {hint:g} s]"
                if target.label is not None:
                    message = f"{message} [deployment {target.label}]"
                failed_at = target
                if self._on_failure is not None:
                    self._on_failure(
                        CallFailure(
                            req.key,
                            req.stage,
                            req.endpoint.model,
                            attempt,
                            kind,
                            message,
                            final,
                            finish,
                            maybe_billed(exc),
                        )
                    )
                if fatal:
                    raise FatalProviderError(f"{req.endpoint.model}: {kind}: {message}", kind, attempt) from exc
                if final:
                    raise CallFailed(f"{req.endpoint.model}: {kind}: {message}", kind, attempt, finish) from exc
                await self._sleep(self.backoff_s(attempt, hint))
                continue
            target.pending -= 1
            await target.slots.answered()
            p_tok, c_tok = reply_usage(response)
            cached = reply_cached_tokens(response)
            cost = self._cost(response, req, p_tok, c_tok, cached)
            return CallResult(
                text, p_tok, c_tok, cost, latency, attempt, finish, served_model(response), cached, target.label
            )


def supports_json_mode(endpoint: Endpoint) -> bool:
    """Whether litellm can pass `response_format` for this model (else we ask in the prompt only)."""
    if endpoint.simulated or endpoint.api_base:
        return True
    try:
        params = litellm().get_supported_openai_params(model=endpoint.model) or []
    except Exception:  # noqa: BLE001 - unknown model: do not send the parameter
        return False
    return "response_format" in params


def supports_seed(endpoint: Endpoint) -> bool:
    """Whether litellm passes `seed` for this model (an OpenAI-compatible server takes it; Anthropic does not)."""
    if endpoint.simulated or endpoint.api_base:
        return True
    try:
        params = litellm().get_supported_openai_params(model=endpoint.model) or []
    except Exception:  # noqa: BLE001 - unknown model: do not send the parameter
        return False
    return "seed" in params


TRANSIENT_ERRORS = _TRANSIENT
"""Exception type names retried as transient (shared with the batch client, llm/batch.py)."""
FATAL_ERRORS = _FATAL
"""Exception type names that stop the run: every call of that model would fail (shared with llm/batch.py)."""
