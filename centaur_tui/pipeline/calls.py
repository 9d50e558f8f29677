"""Provides Calls: one session's content-addressed calls, answered from the store or sent through the gateway.

Both the generation stages (`Pipeline`) and judging (`Judging`) send their calls through one
`Calls`, so the call store, the resume log, the failure log and the progress counters are
kept in exactly one place.

Database work never runs on the event loop: `Calls.db` runs it in the run's one database
thread. With the writes on the loop, another program holding the write lock for 6 s froze
the run and caused 25 false provider timeouts, and for 12 s a "database is locked" traceback
(issue 12). Now the loop keeps sending and timing calls while the database thread waits; a
write refused after the busy timeout is retried (progress says "waiting for the database"),
for up to `db_wait_max_s`, then the run stops with one clear StoreError.

Every call key names the session entry it belongs to (`domain.plan.entry_json`). A database
written before that (schema 3 and older) holds legacy keys without it: one is reused for the
entry that alone uses its model string (`legacy_key_owners`), and for no entry when two share
the model string, since its reply cannot be told apart then.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from centaur_tui.domain.errors import DatabaseLockedError, StoreError
from centaur_tui.domain.plan import call_key_of, canonical_json, entry_json, legacy_key_owners, seed_for
from centaur_tui.domain.records import TIMEOUT_ERRORS, CallFailure, CallRecord
from centaur_tui.domain.session import Endpoint
from centaur_tui.domain.study import Study
from centaur_tui.llm import CallFailed, CallRequest, FatalProviderError, Gateway, TokenCounter, make_world, price_of
from centaur_tui.pipeline.batching import Batcher, BatchPending
from centaur_tui.pipeline.budget import Budget, BudgetError, BudgetExceeded
from centaur_tui.pipeline.progress import Progress
from centaur_tui.store import (
    Store,
    clear_in_flight,
    mark_in_flight,
    record_failed_item,
    record_unanswered,
    session_spend,
    unanswered_spend,
)

log = logging.getLogger(__name__)
T = TypeVar("T")

DB_WAITING = "waiting for the database (held by another program)"
"""What progress says while a database operation waits for another program's lock."""

DB_WAIT_SHOWN_S = 1.0
"""A database operation running longer than this is shown as waiting (a commit takes about 2 ms)."""

DB_WAIT_MAX_S = 600.0
"""How long the run waits for another program's write lock before it stops with a StoreError."""


def _log_failed_write(done: Future[Any]) -> None:
    # A failed attempt's log row is written without awaiting it (the gateway calls back
    # synchronously); should that write fail, it is logged here rather than lost silently.
    exc = done.exception()
    if exc is not None:
        log.error("a failed attempt could not be logged in call_errors: %s", exc)


def _log_unstored_answer(done: asyncio.Future[Any]) -> None:
    # The answered call's write, retrieved here too: a run stopped while it waited no longer
    # awaits it, and a failure must still reach the log.
    if not done.cancelled() and done.exception() is not None:
        log.error("an answered call could not be stored: %s", done.exception())


class Calls:
    """Sends a session's calls once: a call answered before is read from the store, never sent again.

    Args:
        study: The session (its limits and endpoints).
        store: The session database (call store and failure log).
        progress: The counters to update per stage.
        gateway: Injected for tests; built from the session limits on the first call to send.
        db_wait_max_s: How long a write waits for another program's lock, in all, before the run stops.
    """

    def __init__(
        self,
        study: Study,
        store: Store,
        progress: Progress,
        gateway: Gateway | None = None,
        *,
        db_wait_max_s: float = DB_WAIT_MAX_S,
    ) -> None:
        self.study = study
        self.session = study.session
        self.store = store
        self.progress = progress
        self.gateway = gateway
        self.world_id: str | None = None
        self.db_wait_max_s = db_wait_max_s
        self._answered: set[str] = set()
        # Calls being sent now, by content address: a second task asking for the same address
        # (two comparisons whose texts are identical, say) shares the answer instead of paying
        # for it again. The real-HTTP bench once sent 245 requests for 236 stored calls without it.
        self._sending: dict[str, asyncio.Future[tuple[str, str | None]]] = {}
        self._legacy_models: set[str] = set()
        self._entries: dict[int, str] = {}
        self._prices_registered = False
        # One thread for all database work of the run: writes keep their order (a call before
        # the output that refers to it) and the store's one connection is never contended.
        self._db_pool: ThreadPoolExecutor | None = None
        self._db_since: float | None = None
        self._db_state = threading.Lock()
        # Batch mode (pipeline/batching.py): the calls of a batched stage go through provider
        # batches, and so does a call pending in a batch a previous run left (also when the
        # session has been switched back to online since: it is not sent twice).
        self.batcher = Batcher(study, store, progress, self.db, self._answered_by_batch)
        self.budget: Budget | None = None
        self._tokens: TokenCounter | None = None
        self._worst: dict[str, float] = {}  # call key -> worst-case USD, computed where the prompt is known
        self._out: set[str] = set()  # keys whose request has left and is not settled (an attempt at a time)

    def load(self) -> None:
        """Read which calls are answered, and register the simulation world of a simulated session (blocking).

        Raises:
            BudgetError: `max_cost_usd` is set and a model of the session has no price.
        """
        self._answered = self.store.answered_keys()
        self._legacy_models = legacy_key_owners(self.session)
        if self.session.simulated and self.world_id is None:
            self.world_id, world = make_world(self.study)
            if any(j.simulated and j.simulation.bias.family for j in self.session.judges):
                # A resumed run's judges meet outputs written in an earlier process: the planted
                # family preference needs their authors (llm/simulation.py, World.learn_author).
                families = {m.name: m.family for m in self.session.models}
                families.update({c.name: c.family for c in self.session.candidates})
                for output in self.store.outputs().values():
                    world.learn_author(output.text, families.get(output.candidate))
        limit = self.session.limits.max_cost_usd
        if limit is not None:
            s = self.session
            worker: list[tuple[str, Endpoint]] = [] if s.worker is None else [(s.worker.name, s.worker)]
            entries: list[tuple[str, Endpoint]] = [(e.name, e) for e in s.models] + worker
            entries += [(j.name, j) for j in s.judges]
            unpriced = sorted({f"{name} ({e.model})" for name, e in entries if price_of(e) is None})
            if unpriced:
                raise BudgetError(
                    f"{self.study.session_file}: limits.max_cost_usd is set, but no price is known for "
                    f"{', '.join(unpriced)}: set input_cost_per_mtok and output_cost_per_mtok on "
                    "them (a budget cannot be kept for calls of unknown cost)"
                )
            spent, _ = session_spend(self.store)
            self.budget = Budget(limit, spent)
        self.note_unanswered()

    def note_unanswered(self) -> None:
        """Read what the session's requests billed without an answer are estimated at (blocking).

        Called at the start of a run, and again once the calls a killed run left in flight have
        been recorded (`take_interrupted`), before anything is sent: the budget counts them.
        """
        found = unanswered_spend(self.store)
        if self.budget is not None:
            self.budget.unanswered = found.usd
            self.progress.spent = self.budget.used
        self.progress.unanswered = found.requests
        self.progress.unanswered_usd = found.usd
        self.progress.unanswered_unknown = found.unknown
        self.progress.unanswered_causes = dict(found.by_cause)

    def _count_tokens(self, endpoint: Endpoint, messages: list[dict[str, str]]) -> int | None:
        # Counted only when something needs it (a budget, a tpm limit): about 0.05-2 ms a prompt.
        if self.budget is None and endpoint.tpm is None and not any(d.tpm for d in endpoint.deployments):
            return None
        if self._tokens is None:
            self._tokens = TokenCounter()
        return self._tokens.messages(endpoint.model, messages)

    # -- database work, off the event loop ------------------------------------------------------

    async def db(self, fn: Callable[..., T], *args: Any) -> T:
        """Run one short store write in the run's database thread; waits out another program's lock.

        A write running longer than `DB_WAIT_SHOWN_S` is shown as waiting for the database: a
        commit takes about 2 ms, so that long means another program holds the lock.

        Raises:
            StoreError: the lock was held longer than `db_wait_max_s`, or the operation failed.
        """
        return await asyncio.get_running_loop().run_in_executor(self._pool(), self._db_call, fn, args)

    async def db_read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run one store read in the database thread (after the writes queued before it).

        Not shown as waiting however long it takes: WAL readers never wait for a writer, and
        reading a large session's state at the start takes its time.
        """
        return await asyncio.get_running_loop().run_in_executor(self._pool(), self._db_call, fn, args, False)

    def _pool(self) -> ThreadPoolExecutor:
        if self._db_pool is None:
            self._db_pool = ThreadPoolExecutor(1, thread_name_prefix="centaur-db")
        return self._db_pool

    def _db_call(self, fn: Callable[..., T], args: tuple[Any, ...], write: bool = True) -> T:
        started = time.monotonic()
        with self._db_state:
            self._db_since = started if write else None
        try:
            while True:
                try:
                    return fn(*args)
                except DatabaseLockedError as exc:
                    waited = time.monotonic() - started
                    if waited >= self.db_wait_max_s:
                        raise StoreError(
                            f"{exc}; the run waited {waited:.0f} s for the other program and stopped "
                            "(every answered call is stored: run again to resume)",
                            title="Database busy",
                        ) from None
                    log.warning("%s; still waiting after %.1f s", exc, waited)
                    self.progress.waiting = DB_WAITING
        finally:
            with self._db_state:
                self._db_since = None

    @property
    def db_waiting(self) -> bool:
        """Whether a database operation has been waiting longer than `DB_WAIT_SHOWN_S` (read by the ticker)."""
        with self._db_state:
            since = self._db_since
        return since is not None and time.monotonic() - since > DB_WAIT_SHOWN_S

    def close(self) -> None:
        """Finish the database work queued so far and stop the database thread (at the end of a run)."""
        if self._db_pool is not None:
            self._db_pool.shutdown(wait=True)
            self._db_pool = None

    def _entry(self, endpoint: Endpoint) -> str:
        # Session entries are frozen pydantic models living as long as the run: cache by identity.
        entry = self._entries.get(id(endpoint))
        if entry is None:
            entry = self._entries[id(endpoint)] = entry_json(endpoint)
        return entry

    @property
    def in_flight(self) -> int:
        return self.gateway.in_flight if self.gateway is not None else 0

    def _record_failure(self, failure: CallFailure) -> None:
        # Called by the gateway on the event loop: the write goes to the database thread, in order.
        # This attempt is over; the retry is marked (and reserved) again when it leaves. Its
        # reservation goes now, not at the call's end: a reservation held over a backoff would
        # keep a reservation waiting for it from a concurrency slot the retry needs.
        self._out.discard(failure.key)
        estimate: float | None = None
        if failure.maybe_billed:
            estimate = self.budget.unanswered_attempt(failure.key) if self.budget is not None else None
            self._count_unanswered(estimate, "timeout" if failure.error_type in TIMEOUT_ERRORS else "broken")
        elif self.budget is not None:
            self.budget.release(failure.key)
        done = self._pool().submit(self._db_call, self._failed_attempt, (failure, estimate))
        done.add_done_callback(_log_failed_write)
        if not failure.final:
            self.progress.retries += 1
        if failure.error_type in TIMEOUT_ERRORS:
            self.progress.timeouts += 1
            if not failure.final:  # sent again although the provider may have processed (and billed) it
                self.progress.timeouts_resent += 1
        self.progress.last_error = f"{failure.model}: {failure.error_type}: {failure.message}"

    def _count_unanswered(self, estimate: float | None, cause: str) -> None:
        causes = self.progress.unanswered_causes
        causes[cause] = causes.get(cause, 0) + 1
        self.progress.unanswered += 1
        if estimate is None:
            self.progress.unanswered_unknown += 1
        else:
            self.progress.unanswered_usd += estimate
        if self.budget is not None:
            self.progress.spent = self.budget.used

    async def _mark_sent(self, request: CallRequest) -> None:
        # The budget's reservation first, as the request leaves (not while it queues: 17,000
        # queued calls would otherwise reserve a budget that 16 in flight use). One that does
        # not fit waits for the calls in flight to settle (pipeline/budget.py).
        reserved: float | None = None
        if self.budget is not None:
            await self.budget.reserve(request.key, self._worst.get(request.key, 0.0), request.endpoint.model)
            reserved = self.budget.reserved.get(request.key)
        # Recorded as the request leaves (its concurrency slot taken, so at most `concurrency`
        # rows), committed before it is sent: a row left behind by a killed process counts a
        # call that is sent again and may have been billed twice (store/outcomes.py), and its
        # reservation is then counted as unanswered spend. On the database thread like every
        # other write, never on the event loop.
        await self.db(mark_in_flight, self.store, request.key, request.stage, request.endpoint.model, reserved)
        self._out.add(request.key)

    def _failed_attempt(self, failure: CallFailure, estimate: float | None = None) -> None:
        self.store.record_failure(failure)
        if failure.maybe_billed:
            cause = "timeout" if failure.error_type in TIMEOUT_ERRORS else "broken"
            record_unanswered(
                self.store, failure.key, failure.stage, failure.model, cause, estimate, failure.error_type
            )
        clear_in_flight(self.store, failure.key)

    def record_failed_item(self, item: str, stage: str, error: str) -> None:
        """Store that a planned item's call failed for good (queued on the database thread, in order).

        Its outcome is then `failed`; an item with nothing stored and no such row was never sent
        (a stopped run), which is not a failure (domain/outcomes.py).
        """
        done = self._pool().submit(self._db_call, record_failed_item, (self.store, item, stage, error))
        done.add_done_callback(_log_failed_write)

    def _abandoned(self, key: str, stage: str, model: str, estimate: float | None) -> None:
        record_unanswered(self.store, key, stage, model, "stopped", estimate)
        clear_in_flight(self.store, key)

    def _answered_call(self, record: CallRecord) -> None:
        self.store.record_call(record)
        clear_in_flight(self.store, record.key)

    def _ensure_gateway(self) -> Gateway:
        # Built on the first call that is not stored yet: resuming a finished session then
        # never imports litellm (about 3 s).
        if self.gateway is None:
            self.gateway = Gateway(self.session.limits, on_failure=self._record_failure, on_send=self._mark_sent)
        if not self._prices_registered:
            self.gateway.register_prices(self.session.endpoints)
            self._prices_registered = True
        return self.gateway

    async def call(
        self,
        stage: str,
        endpoint: Endpoint,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        sample: str,
    ) -> tuple[str, str]:
        """Return (key, response text): from the store if answered before, else from the provider.

        Raises:
            CallFailed: every attempt failed (counted as failed in its stage).
            FatalProviderError: the provider refuses every call of this model.
        """
        key, text, _ = await self.call_reply(stage, endpoint, messages, params, sample)
        return key, text

    async def call_reply(
        self,
        stage: str,
        endpoint: Endpoint,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        sample: str,
        cache_prefix: int = 0,
        earlier: tuple[list[dict[str, str]], dict[str, Any]] | None = None,
    ) -> tuple[str, str, str | None]:
        """`call`, plus the provider's finish reason ("length": cut off at max_tokens).

        `cache_prefix`: characters of the first user message shared by many calls (the gateway
        marks them cacheable where a provider needs it); not part of the content address.
        `earlier`: the (messages, params) an older version of the program sent for this call;
        its stored answer is used when there is one, so a database written before keeps its
        answered calls (a re-ask's wording and params changed in issue 22).

        Raises:
            CallFailed: every attempt failed (counted as failed in its stage).
            FatalProviderError: the provider refuses every call of this model.
        """
        if earlier is not None:
            old_key = call_key_of(
                endpoint.model, canonical_json(earlier[0]), canonical_json(earlier[1]), sample, self._entry(endpoint)
            )
            stored = await self.db_read(self.store.call_reply, old_key) if old_key in self._answered else None
            if stored is not None:
                return old_key, *stored
        messages_json, params_json = canonical_json(messages), canonical_json(params)
        key = call_key_of(endpoint.model, messages_json, params_json, sample, self._entry(endpoint))
        stored = await self.db_read(self.store.call_reply, key) if key in self._answered else None
        if stored is not None:
            return key, *stored
        if endpoint.model in self._legacy_models:
            legacy = call_key_of(endpoint.model, messages_json, params_json, sample)
            stored = await self.db_read(self.store.call_reply, legacy) if legacy in self._answered else None
            if stored is not None:  # an older database's reply, unambiguously this entry's
                return legacy, *stored
        sending = self._sending.get(key)
        if sending is not None:
            text, finish = await asyncio.shield(sending)  # a waiter's cancel must not cancel the sender
            return key, text, finish
        future: asyncio.Future[tuple[str, str | None]] = asyncio.get_running_loop().create_future()
        future.add_done_callback(lambda f: f.cancelled() or f.exception())  # retrieved even with no waiter
        self._sending[key] = future
        try:
            text, finish = await self._send(
                key, stage, endpoint, messages, params, sample, messages_json, params_json, cache_prefix
            )
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            raise
        else:
            future.set_result((text, finish))
        finally:
            del self._sending[key]
        return key, text, finish

    async def _send(
        self,
        key: str,
        stage: str,
        endpoint: Endpoint,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        sample: str,
        messages_json: str,
        params_json: str,
        cache_prefix: int = 0,
    ) -> tuple[str, str | None]:
        """Send one call through the gateway and store its answer: (response text, finish reason).

        Raises:
            BudgetExceeded: the call could pass the session's budget; it was not sent.
        """
        extra: dict[str, Any] = {}
        if endpoint.simulated:
            # The simulated provider is seeded by the call key; a real model samples on its own.
            extra = {"seed": seed_for(key)}
        request = CallRequest(
            key=key,
            stage=stage,
            endpoint=endpoint,
            messages=messages,
            params={**params, **extra},
            sample=sample,
            metadata={"simulation": self.world_id} if endpoint.simulated else {},
            prompt_tokens=self._count_tokens(endpoint, messages),
            cache_prefix=cache_prefix,
        )
        if self.batcher.handles(stage, endpoint) or self.batcher.waits_for(key):
            # A session with max_cost_usd and a stage in batch mode is refused by the loader.
            return await self._send_batched(request, messages_json, params_json)
        if self.budget is not None:
            price = price_of(endpoint)
            assert price is not None  # checked in load()
            self._worst[key] = price.cost(request.prompt_tokens or 0, int(params.get("max_tokens") or 0))
        try:
            result = await self._ensure_gateway().complete(request)
        except BaseException as exc:  # failed, or cancelled by a stopped run: no longer in flight either way
            self._worst.pop(key, None)
            out = key in self._out
            self._out.discard(key)
            if isinstance(exc, asyncio.CancelledError) and out:
                # Abandoned while its request was out (Ctrl-C, SIGTERM): the provider may bill it.
                estimate = self.budget.unanswered_attempt(key) if self.budget is not None else None
                self._count_unanswered(estimate, "stopped")
                done = self._pool().submit(self._db_call, self._abandoned, (key, stage, endpoint.model, estimate))
                done.add_done_callback(_log_failed_write)
                raise
            if self.budget is not None:
                self.budget.release(key)
            if isinstance(exc, BudgetExceeded):  # never left: nothing in flight, nothing failed
                self.progress.stages[stage].budget += 1
                self.progress.budget_stopped = True
                raise
            # Queued, not awaited: a cancelled task must not wait; the database thread keeps the
            # order and `close()` waits for it.
            done = self._pool().submit(self._db_call, clear_in_flight, (self.store, key))
            done.add_done_callback(_log_failed_write)
            if isinstance(exc, CallFailed) and not isinstance(exc, FatalProviderError):
                self.progress.stages[stage].failed += 1
            raise
        self._worst.pop(key, None)
        self._out.discard(key)
        if self.budget is not None:
            self.budget.settle(key, result.cost)
            self.progress.spent = self.budget.used
            self.progress.over_reported = self.budget.over_reported
            self.progress.over_reports = self.budget.over_reports
        st = self.progress.stages[stage]
        st.sent += 1
        st.prompt_tokens += result.prompt_tokens or 0
        st.completion_tokens += result.completion_tokens or 0
        st.cached_tokens += result.cached_tokens or 0
        if result.cost is None:
            st.cost_known = False
        else:
            st.cost += result.cost
        record = CallRecord(
            key=key,
            stage=stage,
            model=endpoint.model,
            sample=sample,
            messages_json=messages_json,
            params_json=params_json,
            response=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cost=result.cost,
            latency_s=result.latency_s,
            attempts=result.attempts,
            simulated=endpoint.simulated,
            finish_reason=result.finish_reason,
            served_model=result.served_model,
            cached_tokens=result.cached_tokens,
            deployment=result.deployment,
        )
        # Shielded: a run stopped while this write waits its turn must not drop it. A cancelled
        # executor future that had not started never runs: the answer was lost and its row stayed
        # in `calls_in_flight` (a busy `make test` caught 1-3 rows left after Ctrl-C, 2 runs in 12).
        write = asyncio.get_running_loop().run_in_executor(self._pool(), self._db_call, self._answered_call, (record,))
        write.add_done_callback(_log_unstored_answer)
        await asyncio.shield(write)
        self._answered.add(key)
        return result.text, result.finish_reason

    def _answered_by_batch(self, key: str) -> None:
        self._answered.add(key)

    async def _send_batched(self, request: CallRequest, messages_json: str, params_json: str) -> tuple[str, str | None]:
        """One call through a provider batch: the batcher stores the answer (with the batch's other answers)."""
        st = self.progress.stages[request.stage]
        try:
            result = await self.batcher.complete(request, messages_json, params_json)
        except BatchPending:
            st.in_batch += 1
            raise
        except CallFailed as exc:
            if not isinstance(exc, FatalProviderError):
                st.failed += 1
            raise
        st.sent += 1
        st.batched += 1
        st.prompt_tokens += result.prompt_tokens or 0
        st.completion_tokens += result.completion_tokens or 0
        if result.cost is None:
            st.cost_known = False
        else:
            st.cost += result.cost
        self._answered.add(request.key)
        return result.text, result.finish_reason
