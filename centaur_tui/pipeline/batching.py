"""Provides Batcher: the calls of a stage in batch mode, gathered into provider batches, resumed and collected.

`Calls` hands each call of a batched stage (`Session.batched`) to `Batcher.complete`, which
awaits its answer like the gateway would. Calls to one endpoint gather into one batch until
none has joined for `[batch] collect_s` (or it holds `max_requests`, or its file would pass
`MAX_FILE_BYTES`); the batch is then stored with every request (store/batches.py), uploaded,
created and polled every `poll_interval_s` until it ends; its results are validated like
online replies (`llm.batch.parse_results`, then `Judging` parses judgments as always) and
stored in one transaction. A judge reply that stays invalid is re-asked in a new batch (the
re-ask is a new call, and every call of a batched stage goes through a batch): re-asks are
priced like batch calls and do not wait for the online limits.

Resume: at the start of a run every batch not collected is driven on from its stored state:
`preparing` is uploaded again (a file costs nothing), `creating` is first looked for in the
provider's list by its metadata (a kill may have come after the provider created it), the
others are polled. A call whose content address is pending in such a batch waits for that
batch instead of joining a new one, so nothing is sent twice.

With `[batch] wait = false`, a batch still running after its first status check leaves its
callers a `BatchPending` (counted as `in_batch`, not failed): the run ends "not finished"
and the next `centaur run` collects the batch.

A batch the provider no longer knows (404 on its status), whose status comes back as no batch
status `MAX_UNREADABLE_POLLS` times in a row (counted across runs), or whose output or error file
is gone (404), unreadable or garbage, ends its requests as `missing` with the reason, each with a
final failure in `call_errors`; the next run sends them again in a new batch. Only a refused
key stops the run (every request would fail); a transient error leaves the batch in flight for
the next run to ask again. Before, a 404 on an output file stopped every run with exit status
2 and a hint about the model string, and its requests stayed pending for good (issue 23).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from centaur_tui.domain.records import CallFailure, CallRecord
from centaur_tui.domain.session import Endpoint
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, CallRequest, CallResult, FatalProviderError
from centaur_tui.llm.batch import (
    AUTH_ERRORS,
    MAYBE_CREATED,
    BatchApiError,
    BatchClient,
    BatchResult,
    BatchStatus,
    ParsedResults,
    batch_cost,
    batch_prices,
    parse_results,
    provider_of,
    request_line,
)
from centaur_tui.pipeline.progress import BatchProgress, Progress
from centaur_tui.store import (
    BatchRequest,
    BatchRequestRow,
    BatchRow,
    Store,
    collect_batch,
    open_batch,
    pending_keys,
    requests_of,
    unfinished_batches,
    update_batch,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_FILE_BYTES = 190 * 1024 * 1024
"""Bytes of one batch input file at most (OpenAI accepts up to 200 MB)."""

MAX_UNREADABLE_POLLS = 10
"""Status answers in a row, across runs, that are no batch status before the batch ends like a lost one.

A provider (or a proxy before it) that answers a batch's status with garbage bytes left every run
"not finished" (exit 4) for good (issue 23). Ten answers are 5 minutes at the default 30 s poll
interval, or ten runs under `wait = false`; one readable answer sets the count back to 0.
"""
BATCH_PENDING = "BatchPending"


class BatchPending(CallFailed):
    """A call left waiting in a batch at the provider: the run stops without its answer, the next run collects it."""

    def __init__(self, message: str) -> None:
        super().__init__(message, BATCH_PENDING, 1)


def endpoint_identity(endpoint: Endpoint) -> dict[str, Any]:
    """Where a batch goes: model, api_base and the name of the key's variable (never a key)."""
    return {"model": endpoint.model, "api_base": endpoint.api_base, "api_key_env": endpoint.api_key_env}


class _StatusUnreadable(Exception):
    """A batch's status came back unreadable `MAX_UNREADABLE_POLLS` times in a row: it ends like a lost batch."""

    def __init__(self, polls: int, last: str) -> None:
        super().__init__(last)
        self.polls = polls
        self.last = last


@dataclass
class _Queued:
    request: CallRequest
    line: bytes
    messages_json: str
    params_json: str


@dataclass
class _Group:
    endpoint: Endpoint
    stage: str
    queued: list[_Queued] = field(default_factory=list)
    size: int = 0
    last: float = 0.0
    timer: asyncio.Task[None] | None = None


class Batcher:
    """Sends a session's batched calls through provider batches and resolves each caller with its result.

    Args:
        study: The session ([batch] settings, endpoints and their prices).
        store: The session database.
        progress: The run's counters; each batch shows in `progress.batches`.
        db: Runs one store write off the event loop (`Calls.db`).
        on_answered: Told each content address answered by a batch (so `Calls` never sends it again).
        client: Injected for tests; built on first need (it imports litellm).
    """

    def __init__(
        self,
        study: Study,
        store: Store,
        progress: Progress,
        db: Callable[..., Awaitable[Any]],
        on_answered: Callable[[str], None],
        client: BatchClient | None = None,
    ) -> None:
        self.study = study
        self.session = study.session
        self.settings = study.session.batch
        self.store = store
        self.progress = progress
        self._db = db
        self._on_answered = on_answered
        self._client = client
        self._waiters: dict[str, asyncio.Future[CallResult]] = {}
        self._pending: dict[str, str] = {}  # content address -> batch id, for batches in flight
        # Calls whose batch this run stopped driving while they were pending (left in flight): a
        # caller asking for one later gets the same answer at once instead of waiting forever.
        self._left: dict[str, BatchPending] = {}
        self._groups: dict[str, _Group] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def client(self) -> BatchClient:
        if self._client is None:
            self._client = BatchClient(self.session.limits)
        return self._client

    def handles(self, stage: str, endpoint: Endpoint) -> bool:
        """Whether calls of this stage to this endpoint go through batches (the session's mode)."""
        return self.session.batched(stage, endpoint)

    def waits_for(self, key: str) -> bool:
        """Whether a call is pending in a batch in flight (its answer comes from there, whatever the mode)."""
        return key in self._pending

    # -- resume ---------------------------------------------------------------------------------

    async def resume(self) -> int:
        """Drive on every batch a previous run left uncollected; returns how many there are."""
        rows = await self._db(unfinished_batches, self.store)
        if not rows:
            return 0
        self._pending.update(await self._db(pending_keys, self.store))
        for row in rows:
            endpoint = self._endpoint_of(row)
            self._view(row.id, row.stage, endpoint.model, row.requests, row.state, row.status)
            self._spawn(self._drive(row.id, row.stage, endpoint, row))
        log.info("%d batch(es) left by a previous run are collected", len(rows))
        return len(rows)

    def _endpoint_of(self, row: BatchRow) -> Endpoint:
        try:
            ident = json.loads(row.endpoint)
        except (TypeError, ValueError):
            ident = {"model": row.model}
        worker = [] if self.session.worker is None else [self.session.worker]
        entries: list[Endpoint] = [*self.session.judges, *self.session.models, *worker]
        for entry in entries:
            if endpoint_identity(entry) == ident:
                return entry  # with the session's prices
        return Endpoint(model=ident["model"], api_base=ident.get("api_base"), api_key_env=ident.get("api_key_env"))

    # -- sending --------------------------------------------------------------------------------

    async def complete(self, request: CallRequest, messages_json: str, params_json: str) -> CallResult:
        """The answer of one call, through a batch (one already in flight for its content address, or a new one).

        Raises:
            BatchPending: the run does not wait ([batch] wait = false) and the batch has not ended.
            CallFailed: the batch ended without an answer for it (error, expiry, cancel, failure).
            FatalProviderError: the provider refused the batch (bad key, unknown model).
        """
        left = self._left.get(request.key)
        if left is not None:
            raise left
        waiter = self._waiters.get(request.key)
        if waiter is None:
            waiter = self._waiters[request.key] = asyncio.get_running_loop().create_future()
            waiter.add_done_callback(lambda f: f.cancelled() or f.exception())
            if request.key not in self._pending:
                self._enqueue(request, messages_json, params_json)
        return await asyncio.shield(waiter)

    def _enqueue(self, request: CallRequest, messages_json: str, params_json: str) -> None:
        ep = request.endpoint
        gk = f"{request.stage}\0{json.dumps(endpoint_identity(ep), sort_keys=True)}"
        group = self._groups.get(gk)
        if group is None:
            group = self._groups[gk] = _Group(ep, request.stage)
        line = request_line(request.key, ep, request.messages, request.params)
        if group.queued and group.size + len(line) > MAX_FILE_BYTES:
            self._flush(group)
        group.queued.append(_Queued(request, line, messages_json, params_json))
        group.size += len(line)
        group.last = time.monotonic()
        if len(group.queued) >= self.settings.max_requests:
            self._flush(group)
        elif group.timer is None or group.timer.done():
            group.timer = asyncio.create_task(self._timer(group))

    async def _timer(self, group: _Group) -> None:
        # Sent once no call has joined for collect_s: the dataflow hands in judge calls as
        # tournaments finish, so a batch gathers what is ready rather than waiting for the end.
        while group.queued:
            wait = group.last + self.settings.collect_s - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue
            self._flush(group)

    def _flush(self, group: _Group) -> None:
        queued, group.queued, group.size = group.queued, [], 0
        if not queued:
            return
        batch_id = uuid.uuid4().hex
        for q in queued:
            self._pending[q.request.key] = batch_id
        self._spawn(self._send_new(batch_id, group.stage, group.endpoint, queued))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task: asyncio.Task[None] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_new(self, batch_id: str, stage: str, endpoint: Endpoint, queued: list[_Queued]) -> None:
        rows = [
            BatchRequestRow(
                q.request.key, q.request.key, stage, endpoint.model, q.request.sample, q.messages_json, q.params_json
            )
            for q in queued
        ]
        try:
            await self._db(
                open_batch, self.store, batch_id, stage, endpoint_identity(endpoint), provider_of(endpoint), rows
            )
        except BaseException as exc:
            self._fail_waiters([q.request.key for q in queued], exc)
            raise
        self._view(batch_id, stage, endpoint.model, len(rows), "preparing", None)
        content = b"".join(q.line for q in queued)
        await self._drive(batch_id, stage, endpoint, None, content)

    # -- driving one batch ----------------------------------------------------------------------

    async def _drive(
        self, batch_id: str, stage: str, endpoint: Endpoint, row: BatchRow | None, content: bytes | None = None
    ) -> None:
        """Drive one batch to its end from where it stands (`row`: as stored; None: a new batch, preparing)."""
        view = self.progress.batches[batch_id]
        requests = await self._db(requests_of, self.store, batch_id)
        pending = {r.custom_id: r for r in requests if r.state == "pending"}
        keys = [r.key for r in pending.values()]
        started = time.monotonic()
        try:
            state = row.state if row is not None else "preparing"
            provider_batch = row.provider_batch_id if row is not None else None
            input_file_id = row.input_file_id if row is not None else None
            if state == "creating":
                found = await self.client.find(endpoint, batch_id)
                if found is not None:  # created before the previous run died: adopted, not sent again
                    provider_batch = found.batch_id
                    await self._set(batch_id, state="submitted", provider_batch_id=found.batch_id, status=found.status)
                    state = "submitted"
                else:
                    state = "uploaded"
            if state == "preparing":
                if content is None:
                    content = b"".join(
                        request_line(r.custom_id, endpoint, json.loads(r.messages or ""), json.loads(r.params or ""))
                        for r in pending.values()
                    )
                file_id = await self.client.upload(endpoint, f"centaur-{batch_id}.jsonl", content)
                await self._set(batch_id, state="uploaded", input_file_id=file_id)
                input_file_id = file_id
                state = "uploaded"
            if state == "uploaded":
                await self._set(batch_id, state="creating")  # committed before the batch can exist
                created = await self.client.create(endpoint, input_file_id or "", batch_id)
                provider_batch = created.batch_id
                await self._set(batch_id, state="submitted", provider_batch_id=created.batch_id, status=created.status)
                state = "submitted"
            try:
                status = await self._poll(
                    batch_id, endpoint, provider_batch, row.unreadable_polls if row is not None else 0
                )
            except _StatusUnreadable as exc:
                await self._end_all(
                    batch_id,
                    pending,
                    f"the status of batch {provider_batch} came back unreadable {exc.polls} times in a row "
                    f"(last: {exc.last}); sent again in a new batch by the next run",
                    end="missing",
                    error_type="BatchStatusUnreadable",
                    status="unreadable",
                )
                self.progress.last_error = f"{endpoint.model}: batch {batch_id[:8]}'s status is unreadable"
                return
            except BatchApiError as exc:
                if not exc.not_found:
                    raise
                await self._end_all(
                    batch_id,
                    pending,
                    f"the provider no longer knows batch {provider_batch} ({exc}); sent again in a new batch "
                    "by the next run",
                    end="missing",
                    error_type="BatchLost",
                    status="lost",
                )
                self.progress.last_error = f"{endpoint.model}: batch {batch_id[:8]} is lost at the provider"
                return
            if status is None:
                self._leave_pending(keys, f"batch {batch_id[:8]} is {view.status or view.state} at the provider")
                return
            await self._collect(batch_id, stage, endpoint, status, pending, time.monotonic() - started)
        except BatchApiError as exc:
            refused = not self._maybe_created(batch_id) or exc.error_type not in MAYBE_CREATED
            if exc.fatal:
                self._fail_waiters(keys, FatalProviderError(str(exc), exc.error_type, 1))
            elif state in ("preparing", "uploaded") and refused:
                # Nothing was created: the requests end here, a later run sends them in a new batch.
                await self._end_all(batch_id, pending, f"batch not sent: {exc}")
            else:  # created (or maybe created): left in flight, the next run asks the provider again
                self._leave_pending(keys, f"batch {batch_id[:8]}: {exc}")
            self.progress.last_error = f"{endpoint.model}: {exc}"
        except asyncio.CancelledError:
            self._cancel_waiters(keys)
            raise
        except BaseException as exc:
            self._fail_waiters(keys, exc)
            raise

    def _maybe_created(self, batch_id: str) -> bool:
        # 'creating' is committed before the create request leaves: from then on the batch may
        # exist at the provider, and only a later look in its list can tell.
        return self.progress.batches[batch_id].state == "creating"

    async def _set(self, batch_id: str, **fields: Any) -> None:
        await self._db(functools.partial(update_batch, self.store, batch_id, **fields))
        view = self.progress.batches[batch_id]
        for name in ("state", "status", "completed", "failed", "message"):
            if name in fields:
                setattr(view, name, fields[name])

    async def _poll(
        self, batch_id: str, endpoint: Endpoint, provider_batch: str | None, unreadable: int = 0
    ) -> BatchStatus | None:
        """The batch's final status, or None when the run does not wait and it has not ended.

        An answer that is no batch status (garbage bytes, a JSON body of something else) is
        counted in `batches.unreadable_polls`, across runs; a readable one sets the count back to 0.

        Raises:
            _StatusUnreadable: the count reached `MAX_UNREADABLE_POLLS`: the caller ends the batch.
            BatchApiError: any other failure, or an unreadable answer below the limit when the run
                does not wait (the batch stays in flight for the next run).
        """
        if not provider_batch:
            raise BatchApiError(f"batch {batch_id[:8]} has no provider batch id", "MalformedReply")
        seen: tuple[str, int, int] | None = None
        while True:
            try:
                status = await self.client.retrieve(endpoint, provider_batch)
                problem = None if status.readable else f"checking the batch: {status.status!r} is not a batch status"
            except BatchApiError as exc:
                if not exc.unreadable:
                    raise
                problem = str(exc)
            if problem is not None:
                unreadable += 1
                await self._set(batch_id, unreadable_polls=unreadable)
                if unreadable >= MAX_UNREADABLE_POLLS:
                    raise _StatusUnreadable(unreadable, problem[:500])
                if not self.settings.wait:
                    raise BatchApiError(
                        f"{problem[:500]} ({unreadable} of {MAX_UNREADABLE_POLLS} unreadable answers in a row; at "
                        f"{MAX_UNREADABLE_POLLS} the batch ends and its requests are sent again)",
                        "BatchStatusUnreadable",
                    )
                await asyncio.sleep(self.settings.poll_interval_s)
                continue
            if unreadable:
                unreadable = 0
                await self._set(batch_id, unreadable_polls=0)
            now = (status.status, status.completed, status.failed)
            if now != seen:
                seen = now
                await self._set(batch_id, status=status.status, completed=status.completed, failed=status.failed)
            if status.final:
                return status
            if not self.settings.wait:
                return None
            await asyncio.sleep(self.settings.poll_interval_s)

    async def _collect(
        self,
        batch_id: str,
        stage: str,
        endpoint: Endpoint,
        status: BatchStatus,
        pending: dict[str, BatchRequest],
        latency_s: float,
    ) -> None:
        parsed = ParsedResults()
        unreadable: list[str] = []
        for what, file_id in (("output", status.output_file_id), ("error", status.error_file_id)):
            if not file_id:
                continue
            try:
                content = await self.client.content(endpoint, file_id)
            except BatchApiError as exc:
                # A refused key stops the run; a transient error leaves the batch for the next run
                # to read again. Anything else (404: the file is gone, an expired output; a body
                # that is no file) will not get better: its requests end here.
                if exc.error_type in AUTH_ERRORS or (exc.transient and not exc.not_found):
                    raise
                unreadable.append(f"its {what} file {file_id} could not be read ({exc})")
                continue
            parse_results(content, pending, parsed)
        for problem in unreadable:
            parsed.note(problem)
        prices = batch_prices(endpoint, self.settings.discount)
        answered: list[tuple[str, CallRecord]] = []
        ended: list[tuple[str, str, CallFailure]] = []
        results: dict[str, CallResult | CallFailed] = {}
        problems = "; ".join(parsed.problems[:3]) + (
            f" (+{len(parsed.problems) - 3} more)" if len(parsed.problems) > 3 else ""
        )
        for custom_id, req in pending.items():
            result: BatchResult | None = parsed.results.get(custom_id)
            if result is not None and result.answer is not None:
                a = result.answer
                cost = batch_cost(prices, a.prompt_tokens, a.completion_tokens)
                record = CallRecord(
                    key=req.key,
                    stage=req.stage,
                    model=req.model,
                    sample=req.sample,
                    messages_json=req.messages or "",
                    params_json=req.params or "",
                    response=a.text,
                    prompt_tokens=a.prompt_tokens,
                    completion_tokens=a.completion_tokens,
                    cost=cost,
                    latency_s=latency_s,
                    attempts=1,
                    simulated=False,
                    finish_reason=a.finish_reason,
                    served_model=a.served_model,
                )
                answered.append((custom_id, record))
                results[req.key] = CallResult(
                    a.text, a.prompt_tokens, a.completion_tokens, cost, latency_s, 1, a.finish_reason, a.served_model
                )
                continue
            if result is not None:
                end, error_type, message = "errored", result.error_type or "BatchRequestError", result.message or ""
            elif status.status in ("expired", "cancelled", "failed"):
                end, error_type = status.status, f"Batch{status.status.capitalize()}"
                message = f"the batch {status.status} before answering this request" + (
                    f" ({status.errors})" if status.errors else ""
                )
            else:
                end, error_type = "missing", "BatchMissingResult"
                message = "the batch ended without a result for this request" + (f" ({problems})" if problems else "")
            if unreadable and result is None:
                if end == "missing":
                    error_type = "BatchOutputUnreadable"
                else:  # expired, cancelled or failed: what it did answer could not be read either
                    message = f"{message}; {'; '.join(unreadable)}"
            message = f"batch {batch_id[:8]}: {message}"
            failure = CallFailure(req.key, req.stage, req.model, 1, error_type, message, True)
            ended.append((custom_id, end, failure))
            results[req.key] = CallFailed(message, error_type, 1)
        summary = f"{len(answered):,} answered, {len(ended):,} not" + (f"; {problems}" if problems else "")
        await self._db(
            functools.partial(
                collect_batch,
                self.store,
                batch_id,
                answered,
                ended,
                status=status.status,
                completed=status.completed,
                failed=status.failed,
                message=summary[:2000],
            )
        )
        view = self.progress.batches[batch_id]
        view.state, view.status, view.message = "collected", status.status, summary
        view.completed, view.failed = status.completed, status.failed
        if ended:
            self.progress.last_error = f"{endpoint.model}: {ended[0][2].message}"
        if parsed.problems:
            log.warning("batch %s output: %s", batch_id, "; ".join(parsed.problems))
        for key, outcome in results.items():
            self._pending.pop(key, None)
            if isinstance(outcome, CallResult):
                self._on_answered(key)
            self._resolve(key, outcome)

    async def _end_all(
        self,
        batch_id: str,
        pending: dict[str, BatchRequest],
        message: str,
        end: str = "failed",
        error_type: str = "BatchNotSent",
        status: str | None = None,
    ) -> None:
        """End every pending request of a batch with one reason (a final failure each); the next run resends them."""
        if end != "failed":
            message = f"batch {batch_id[:8]}: {message}"
        ended = [
            (cid, end, CallFailure(r.key, r.stage, r.model, 1, error_type, message, True)) for cid, r in pending.items()
        ]
        await self._db(
            functools.partial(
                collect_batch, self.store, batch_id, [], ended, status=status or end, message=message[:2000]
            )
        )
        view = self.progress.batches[batch_id]
        view.state, view.status, view.message = "collected", status or end, message
        for r in pending.values():
            self._pending.pop(r.key, None)
            self._resolve(r.key, CallFailed(message, error_type, 1))

    # -- callers --------------------------------------------------------------------------------

    def _resolve(self, key: str, outcome: CallResult | BaseException) -> None:
        waiter = self._waiters.pop(key, None)
        if waiter is None or waiter.done():
            return
        if isinstance(outcome, BaseException):
            waiter.set_exception(outcome)
        else:
            waiter.set_result(outcome)

    def _leave_pending(self, keys: list[str], message: str) -> None:
        for key in keys:
            pending = self._left[key] = BatchPending(f"{message}; run again to collect it")
            self._resolve(key, pending)

    def _fail_waiters(self, keys: list[str], exc: BaseException) -> None:
        # A CallFailed ends the call; anything else (a StoreError, a bug) reaches the run as it is.
        for key in keys:
            self._pending.pop(key, None)
            self._resolve(key, exc)

    def _cancel_waiters(self, keys: list[str]) -> None:
        for key in keys:
            waiter = self._waiters.pop(key, None)
            if waiter is not None and not waiter.done():
                waiter.cancel()

    def _view(self, batch_id: str, stage: str, model: str, requests: int, state: str, status: str | None) -> None:
        self.progress.batches[batch_id] = BatchProgress(batch_id, stage, model, state, status, requests)

    async def drain(self) -> None:
        """Wait until every batch this run drives has been collected or left in flight (the run's end)."""
        while self._tasks or any(g.queued for g in self._groups.values()):
            if self._tasks:
                results = await asyncio.gather(*list(self._tasks), return_exceptions=True)
                errors = [r for r in results if isinstance(r, BaseException) and not isinstance(r, CallFailed)]
                if errors:
                    raise errors[0]
            else:
                await asyncio.sleep(self.settings.collect_s / 2 or 0.01)

    async def close(self) -> None:
        """Stop driving batches (a stopped run): they stay in flight at the provider and in the store."""
        for group in self._groups.values():
            if group.timer is not None:
                group.timer.cancel()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
