"""Provides BatchClient: a provider's Files and Batches APIs through litellm's batch SDK, and batch results parsed.

litellm's batch SDK (`acreate_file`, `acreate_batch`, `aretrieve_batch`, `alist_batches`,
`afile_content`, `acancel_batch`) moves files and batch objects; the JSONL is ours to build
(`request_line`: one `custom_id` per request, the chat-completions body) and to read
(`parse_results`). A batch's output is untrusted text: a line that is not JSON, a `custom_id`
not asked for, two results for one request, a line over `MAX_RESULT_LINE` bytes, a body that
is not a completion: none of them becomes an answer. Each request gets one `BatchResult`
(an answer or an error message), never a guess.

litellm's async batch functions (`afile_content`, `aretrieve_batch`, ...) run their sync twin in
a thread, which returns a coroutine to await: a task cancelled while that thread runs (a stopped
run, another batch's fatal error) leaves the coroutine never awaited, and Python warns so (issue
23). So each request runs in a task of its own that a caller's cancel does not reach; `aclose`
lets those finish (bounded by the timeout) before the run ends. `alist_batches` drops its
`metadata` argument, so `find` filters the pages itself.

Cost: litellm's batch cost tracking is unreliable (litellm#27944, NOTES.md), so `batch_cost`
computes it from the tokens the result reports and a batch price: the session's
`batch_input_cost_per_mtok`/`batch_output_cost_per_mtok` of the model, else litellm's price
map batch price (`input_cost_per_token_batches`, 609 of 4,877 models in 1.110.2), else its
online price times `[batch] discount` (0.5 by default), else the session's online price times
the discount, else unknown (None).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, TypeVar

from centaur_tui.domain.session import Endpoint, Limits
from centaur_tui.domain.untrusted import clean_untrusted
from centaur_tui.llm.errors import describe_failure, secrets_in_env

# The gateway's classification of litellm's and the OpenAI SDK's exception type names, shared
# so a batch upload retries exactly what an online call retries.
from centaur_tui.llm.gateway import FATAL_ERRORS, TRANSIENT_ERRORS, MalformedReply, reply_text, retry_after_s
from centaur_tui.llm.runtime import litellm

T = TypeVar("T")

MAX_RESULT_LINE = 4 * 1024 * 1024
"""Bytes of one output line at most (a judge reply is a few KB): a longer line is skipped unread, with a message."""

FINAL_STATUSES = frozenset({"completed", "failed", "expired", "cancelled"})
KNOWN_STATUSES = FINAL_STATUSES | {"validating", "in_progress", "finalizing", "cancelling"}
"""Every status of OpenAI's batch object (the others follow it); anything else is not a batch status."""
"""Provider statuses after which a batch changes no more (OpenAI's batch object)."""

METADATA_KEY = "centaur_batch"
"""Metadata key of a created batch naming our batch id: a run killed while creating it finds it in the list."""

MAYBE_CREATED = frozenset({*TRANSIENT_ERRORS, "APITimeoutError", "ConnectError", "ReadTimeout"})
"""Errors after which a create may have reached the provider (the reply was lost, not refused)."""

LIST_PAGES = 10
"""Pages of 100 batches searched for a batch whose creation was cut off (the newest 1,000)."""


def provider_of(endpoint: Endpoint) -> str:
    """The litellm provider of a model string (its prefix: `openai/gpt-4.1` is `openai`)."""
    return endpoint.model.split("/", 1)[0]


def body_model(endpoint: Endpoint) -> str:
    """The model named in a request body of the batch file (the model string without its provider prefix)."""
    return endpoint.model.split("/", 1)[1]


def request_line(custom_id: str, endpoint: Endpoint, messages: list[dict[str, str]], params: dict[str, Any]) -> bytes:
    """One JSONL line of a batch input file: a chat completion with its `custom_id`."""
    body: dict[str, Any] = {"model": body_model(endpoint), "messages": messages, **endpoint.params, **params}
    line = {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}
    # Sorted keys: a batch rebuilt from the store after a kill (messages as canonical JSON) is the same file.
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode() + b"\n"


@dataclass(frozen=True)
class BatchStatus:
    """What the provider says of a batch (cleaned: provider text)."""

    batch_id: str
    status: str
    input_file_id: str | None
    output_file_id: str | None
    error_file_id: str | None
    total: int
    completed: int
    failed: int
    errors: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def readable(self) -> bool:
        """The answer was a batch object: a known status (a JSON body of something else reads as "unknown")."""
        return self.status in KNOWN_STATUSES


def _text(value: Any, limit: int = 200) -> str | None:
    return None if value is None else clean_untrusted(str(value), limit=limit, one_line=True)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def batch_status(batch: Any) -> BatchStatus:
    """A provider's batch object (litellm's LiteLLMBatch) as a BatchStatus; missing parts become None or 0."""
    counts = getattr(batch, "request_counts", None)
    errors = getattr(batch, "errors", None)
    error_data = getattr(errors, "data", None) or []
    error_text = "; ".join(
        f"{_text(getattr(e, 'code', None)) or 'error'}: {_text(getattr(e, 'message', None), 300) or ''}"
        + (f" (line {getattr(e, 'line', None)})" if getattr(e, "line", None) is not None else "")
        for e in error_data[:5]
    )
    metadata = getattr(batch, "metadata", None)
    return BatchStatus(
        batch_id=_text(getattr(batch, "id", None)) or "",
        status=_text(getattr(batch, "status", None), 40) or "unknown",
        input_file_id=_text(getattr(batch, "input_file_id", None)),
        output_file_id=_text(getattr(batch, "output_file_id", None)),
        error_file_id=_text(getattr(batch, "error_file_id", None)),
        total=_count(getattr(counts, "total", 0)),
        completed=_count(getattr(counts, "completed", 0)),
        failed=_count(getattr(counts, "failed", 0)),
        errors=error_text or None,
        metadata={str(k): str(v) for k, v in metadata.items()} if isinstance(metadata, dict) else {},
    )


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchAnswer:
    """One request answered in a batch: its text, finish reason, tokens and served model."""

    text: str
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    served_model: str | None


@dataclass(frozen=True)
class BatchResult:
    """The result of one request of a batch: an answer, or the error that ended it (`error_type`, `message`)."""

    custom_id: str
    answer: BatchAnswer | None = None
    error_type: str | None = None
    message: str | None = None


@dataclass
class ParsedResults:
    """Every request's result found in a batch's output and error files, and what was wrong with the files.

    Attributes:
        results: custom_id -> result, only for requests of the batch.
        problems: One line per problem found (malformed line, unknown or repeated custom_id, long line).
    """

    results: dict[str, BatchResult] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    duplicates: set[str] = field(default_factory=set)

    def note(self, problem: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(problem)
        elif len(self.problems) == 50:
            self.problems.append("(further problems not listed)")


def _namespace(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): _namespace(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_namespace(v) for v in value]
    return value


def _usage(body: dict[str, Any]) -> tuple[int | None, int | None]:
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return None, None
    p_tok, c_tok = usage.get("prompt_tokens"), usage.get("completion_tokens")
    p = p_tok if isinstance(p_tok, int) and not isinstance(p_tok, bool) and p_tok >= 0 else None
    c = c_tok if isinstance(c_tok, int) and not isinstance(c_tok, bool) and c_tok >= 0 else None
    if not p and not c:
        return None, None  # as online: zeros mean "not reported"
    return p, c


def _result_of(custom_id: str, line: dict[str, Any]) -> BatchResult:
    error = line.get("error")
    response = line.get("response")
    if error:
        code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        return BatchResult(
            custom_id, error_type="BatchRequestError", message=f"{_text(code) or 'error'}: {_text(message, 500)}"
        )
    if not isinstance(response, dict):
        return BatchResult(custom_id, error_type="MalformedReply", message="result line has no response")
    status = response.get("status_code")
    body = response.get("body")
    if status != 200:
        detail = body.get("error") if isinstance(body, dict) else body
        if isinstance(detail, dict):
            detail = detail.get("message")
        return BatchResult(
            custom_id, error_type="BatchRequestError", message=f"status {_text(status, 20)}: {_text(detail, 500)}"
        )
    if not isinstance(body, dict):
        return BatchResult(custom_id, error_type="MalformedReply", message="response body is not a JSON object")
    try:
        text, finish = reply_text(_namespace(body))
    except MalformedReply as exc:
        return BatchResult(custom_id, error_type="MalformedReply", message=str(exc))
    p_tok, c_tok = _usage(body)
    return BatchResult(
        custom_id,
        answer=BatchAnswer(text, finish, p_tok, c_tok, _text(body.get("model")) if body.get("model") else None),
    )


def parse_results(content: bytes, expected: Iterable[str], parsed: ParsedResults | None = None) -> ParsedResults:
    """Read a batch output (or error) file into one result per expected custom_id found in it.

    Lines over `MAX_RESULT_LINE` bytes are skipped unread; a line that is not a JSON object with
    a string `custom_id` is noted; a custom_id not in `expected` is noted and ignored (a result
    for a request never sent); a custom_id seen twice (here or in an earlier file passed as
    `parsed`) is noted and gets no answer at all: which of two replies is the judge's cannot be told.
    """
    out = parsed if parsed is not None else ParsedResults()
    wanted = set(expected)
    for number, raw in enumerate(content.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if len(raw) > MAX_RESULT_LINE:
            out.note(f"line {number}: {len(raw):,} bytes, over the {MAX_RESULT_LINE:,} a result may have; skipped")
            continue
        try:
            line = json.loads(raw)
        except (ValueError, RecursionError):
            out.note(f"line {number}: not JSON; skipped")
            continue
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str):
            out.note(f"line {number}: no custom_id; skipped")
            continue
        shown = _text(custom_id, 80)
        if custom_id not in wanted:
            out.note(f"line {number}: custom_id {shown!r} was not sent in this batch; ignored")
            continue
        if custom_id in out.results or custom_id in out.duplicates:
            out.note(f"line {number}: a second result for custom_id {shown!r}; neither is used")
            out.duplicates.add(custom_id)
            out.results.pop(custom_id, None)
            continue
        out.results[custom_id] = _result_of(custom_id, line)
    for custom_id in out.duplicates:
        out.results[custom_id] = BatchResult(
            custom_id, error_type="BatchDuplicateResult", message="the batch output held two results for this request"
        )
    return out


# -- cost ---------------------------------------------------------------------------------------


def batch_prices(endpoint: Endpoint, discount: float) -> tuple[float, float, str] | None:
    """(USD per input token, per output token, where the price comes from) of a batch call, or None when unknown."""
    if endpoint.batch_input_cost_per_mtok is not None and endpoint.batch_output_cost_per_mtok is not None:
        return (
            endpoint.batch_input_cost_per_mtok / 1e6,
            endpoint.batch_output_cost_per_mtok / 1e6,
            "session batch price",
        )
    info: dict = {}
    if not endpoint.simulated:
        cost_map = litellm().model_cost
        info = cost_map.get(endpoint.model) or cost_map.get(body_model(endpoint)) or {}
        batch_in, batch_out = info.get("input_cost_per_token_batches"), info.get("output_cost_per_token_batches")
        if batch_in is not None and batch_out is not None:
            return float(batch_in), float(batch_out), "litellm price map batch price"
    # The session's online price wins over litellm's map (as for online calls, llm/costing.py).
    if endpoint.input_cost_per_mtok is not None and endpoint.output_cost_per_mtok is not None:
        return (
            endpoint.input_cost_per_mtok / 1e6 * discount,
            endpoint.output_cost_per_mtok / 1e6 * discount,
            f"session price x {discount:g}",
        )
    online_in, online_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    # A price of 0 in the map is a model litellm does not price (litellm#36999): unknown, never $0.
    if online_in is not None and online_out is not None and (online_in or online_out):
        return float(online_in) * discount, float(online_out) * discount, f"litellm price map x {discount:g}"
    return None


def batch_cost(prices: tuple[float, float, str] | None, p_tok: int | None, c_tok: int | None) -> float | None:
    """USD of one batch answer from its tokens; None when the price or the usage is unknown."""
    if prices is None or (p_tok is None and c_tok is None):
        return None
    return (p_tok or 0) * prices[0] + (c_tok or 0) * prices[1]


# -- the provider's Files and Batches APIs ------------------------------------------------------


AUTH_ERRORS = frozenset({"AuthenticationError", "PermissionDeniedError"})
"""Errors that say the key is refused: every request of that provider would fail."""


class BatchApiError(Exception):
    """A Files or Batches request that failed for good (retries exhausted, or refused).

    Attributes:
        fatal: Every request to this provider would fail (a refused key, an unknown model or endpoint).
        transient: The provider may answer later (a 5xx, a timeout, a lost connection, retries exhausted).
    """

    def __init__(self, message: str, error_type: str, fatal: bool = False, transient: bool = False) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.fatal = fatal
        self.transient = transient

    @property
    def not_found(self) -> bool:
        """The provider does not know the batch or file asked for (404)."""
        return self.error_type == "NotFoundError"

    @property
    def unreadable(self) -> bool:
        """The provider answered, with something that is not what was asked (garbage bytes, a body that is no
        batch): not a refused key, not a 404, not a transient failure; asking again gets the same."""
        return not (self.fatal or self.transient or self.not_found or self.error_type in AUTH_ERRORS)


class BatchClient:
    """One provider's Files and Batches endpoints through litellm, retried like online calls.

    Args:
        limits: Timeout and retries of each request (`timeout_s`, `max_retries`, backoff).
        sleep: Injected for tests; defaults to asyncio.sleep.
    """

    def __init__(self, limits: Limits, sleep: Callable[[float], Awaitable[Any]] | None = None) -> None:
        self.limits = limits
        self._sleep = sleep or asyncio.sleep
        self._llm = litellm()
        self.requests = 0
        """HTTP requests sent (each attempt), for the benchmark."""
        self._orphans: set[asyncio.Task[Any]] = set()

    def _orphaned(self, task: asyncio.Task[Any]) -> None:
        self._orphans.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: its caller is gone, and its failure was a stopped run's

    async def _request(self, send: Callable[[], Awaitable[T]]) -> T:
        """One request in a task of its own, so that a caller's cancel never cuts litellm's thread step short."""
        inner: asyncio.Task[T] = asyncio.ensure_future(send())
        try:
            return await asyncio.shield(inner)
        except asyncio.CancelledError:
            self._orphans.add(inner)
            inner.add_done_callback(self._orphaned)
            raise

    async def aclose(self) -> None:
        """Let the requests whose callers were cancelled finish (at most the timeout), then cancel what is left."""
        if not self._orphans:
            return
        _, left = await asyncio.wait(set(self._orphans), timeout=self.limits.timeout_s)
        for task in left:  # past litellm's thread step by now: awaiting the HTTP reply, safe to cancel
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    def _kwargs(self, endpoint: Endpoint) -> dict[str, Any]:
        provider = provider_of(endpoint)
        kwargs: dict[str, Any] = {"custom_llm_provider": provider, "timeout": self.limits.timeout_s, "max_retries": 0}
        if endpoint.api_base:
            kwargs["api_base"] = endpoint.api_base
        if endpoint.api_key_env:
            kwargs["api_key"] = os.environ.get(endpoint.api_key_env, "")
        elif endpoint.api_base:
            kwargs["api_key"] = "none"  # a local OpenAI-compatible server usually needs no key
        if provider in ("bedrock", "vertex_ai"):
            kwargs["model"] = endpoint.model  # litellm loads their provider config from the model
        return kwargs

    async def _retried(
        self,
        what: str,
        endpoint: Endpoint,
        send: Callable[[], Awaitable[T]],
        retries: int | None = None,
        model_named: bool = True,
    ) -> T:
        """`send()`, retried like an online call.

        `model_named`: whether a 404 can mean an unknown model or endpoint (uploading, creating,
        listing: fatal, every request would fail) rather than a batch or file that is gone
        (checking a batch, reading its results: the batch's requests end, the run goes on).
        """
        retries = self.limits.max_retries if retries is None else retries
        attempt = 0
        while True:
            attempt += 1
            self.requests += 1
            try:
                return await self._request(send)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - classified below, never swallowed
                name = type(exc).__name__
                secrets = secrets_in_env([endpoint.api_key_env] if endpoint.api_key_env else [])
                message = describe_failure(exc, name, endpoint, secrets)
                if name == "NotFoundError" and not model_named:
                    # A batch or file id the provider does not know: not a hint about the model string.
                    message = message.split(" - hint: ", 1)[0]
                fatal = name in FATAL_ERRORS and (model_named or name != "NotFoundError")
                transient = name in TRANSIENT_ERRORS or name in ("APITimeoutError", "ConnectError", "ReadTimeout")
                if fatal or not transient or attempt > retries:
                    raise BatchApiError(f"{what}: {name}: {message}", name, fatal, transient) from None
                step = self.limits.backoff_base_s * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
                delay = min(self.limits.backoff_max_s, max(step, retry_after_s(exc) or 0.0))
                await self._sleep(delay if math.isfinite(delay) else self.limits.backoff_max_s)

    async def upload(self, endpoint: Endpoint, name: str, content: bytes) -> str:
        """Upload a batch input file; returns its file id."""
        kwargs = self._kwargs(endpoint)
        kwargs.pop("model", None)
        response = await self._retried(
            "uploading the batch input file",
            endpoint,
            lambda: self._llm.acreate_file(file=(name, content, "application/jsonl"), purpose="batch", **kwargs),
        )
        file_id = _text(getattr(response, "id", None))
        if not file_id:
            raise BatchApiError("uploading the batch input file: the provider returned no file id", "MalformedReply")
        return file_id

    async def create(self, endpoint: Endpoint, input_file_id: str, batch_id: str) -> BatchStatus:
        """Create a batch of an uploaded file, tagged with our batch id in its metadata.

        A create that timed out or lost its connection may have created the batch: before it
        is sent again, the provider's list is searched for it (`find`), so one file never
        becomes two batches.
        """
        kwargs = self._kwargs(endpoint)
        attempt = 0
        while True:
            attempt += 1
            try:
                response = await self._retried(
                    "creating the batch",
                    endpoint,
                    lambda: self._llm.acreate_batch(
                        completion_window="24h",
                        endpoint="/v1/chat/completions",
                        input_file_id=input_file_id,
                        metadata={METADATA_KEY: batch_id},
                        **kwargs,
                    ),
                    retries=0,
                )
                break
            except BatchApiError as exc:
                if exc.fatal or exc.error_type not in MAYBE_CREATED or attempt > self.limits.max_retries:
                    raise
                found = await self.find(endpoint, batch_id)
                if found is not None:
                    return found
                await self._sleep(min(self.limits.backoff_max_s, self.limits.backoff_base_s * 2 ** (attempt - 1)))
        status = batch_status(response)
        if not status.batch_id:
            raise BatchApiError("creating the batch: the provider returned no batch id", "MalformedReply")
        return status

    async def find(self, endpoint: Endpoint, batch_id: str) -> BatchStatus | None:
        """The provider's batch tagged with our batch id, among its newest `LIST_PAGES` x 100; None if not there."""
        kwargs = self._kwargs(endpoint)
        kwargs.pop("model", None)
        after: str | None = None
        for _ in range(LIST_PAGES):
            page = await self._retried(
                "listing batches",
                endpoint,
                lambda after=after: self._llm.alist_batches(after=after, limit=100, **kwargs),  # type: ignore[misc]
            )
            data = list(getattr(page, "data", None) or [])
            for item in data:
                status = batch_status(item)
                if status.metadata.get(METADATA_KEY) == batch_id and status.batch_id:
                    return status
            if not data or not getattr(page, "has_more", False):
                return None
            after = _text(getattr(data[-1], "id", None))
        return None

    async def retrieve(self, endpoint: Endpoint, provider_batch_id: str) -> BatchStatus:
        kwargs = self._kwargs(endpoint)
        kwargs.pop("model", None)
        response = await self._retried(
            "checking the batch",
            endpoint,
            lambda: self._llm.aretrieve_batch(batch_id=provider_batch_id, **kwargs),
            model_named=False,
        )
        return batch_status(response)

    async def content(self, endpoint: Endpoint, file_id: str) -> bytes:
        kwargs = self._kwargs(endpoint)
        response = await self._retried(
            "downloading the batch results",
            endpoint,
            lambda: self._llm.afile_content(file_id=file_id, **kwargs),
            model_named=False,
        )
        data = getattr(response, "content", None)
        if isinstance(data, str):
            return data.encode()
        if not isinstance(data, bytes | bytearray):
            raise BatchApiError("downloading the batch results: the provider returned no content", "MalformedReply")
        return bytes(data)

    async def cancel(self, endpoint: Endpoint, provider_batch_id: str) -> BatchStatus:
        kwargs = self._kwargs(endpoint)
        kwargs.pop("model", None)
        response = await self._retried(
            "cancelling the batch",
            endpoint,
            lambda: self._llm.acancel_batch(batch_id=provider_batch_id, **kwargs),
        )
        return batch_status(response)
