"""Provides waits with a time limit: a condition polled while the app runs, failing with what was awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from textual.worker import WorkerCancelled

T = TypeVar("T")

TIMEOUT = 60.0
"""Seconds a wait allows by default. Only a failing test waits this long, so it is generous: a
machine shared by several test runs makes every step several times slower (a 20 s ceiling on
linked scrolling failed once on a busy 2-core machine, issue 21)."""

POLL = 0.02
"""Seconds between two checks of a condition (a Pilot pause lets messages and workers run)."""


async def wait_until(
    pilot: Any, predicate: Callable[[], object], what: str = "the condition", timeout: float = TIMEOUT
) -> None:
    """Let the app run (messages, workers, timers) until `predicate()` is true, for at most `timeout` seconds.

    Raises:
        AssertionError: The condition still did not hold after `timeout` seconds; names `what`.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pilot.pause(POLL)


async def wait_for(pilot: Any, condition: Callable[[], object], what: str, tries: int = 400) -> None:
    """Let workers and messages run until `condition()` holds (never a fixed sleep).

    `tries` polls of 20 ms each at least; the limit is a time, 150 ms per try (400 tries: 60 s),
    so a loaded machine, whose pauses take longer, does not shorten it.
    """
    await wait_until(pilot, condition, what, timeout=max(TIMEOUT, tries * 0.15))


async def until(predicate: Callable[[], object], what: str, timeout: float = TIMEOUT, poll: float = 0.01) -> None:
    """Wait without a Pilot (plain asyncio) until `predicate()` is true, for at most `timeout` seconds.

    Raises:
        AssertionError: The condition still did not hold after `timeout` seconds; names `what`.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(poll)


async def bounded(awaitable: Awaitable[T], what: str, timeout: float = TIMEOUT) -> T:
    """Await `awaitable` (an event, a worker, a future) for at most `timeout` seconds.

    Raises:
        AssertionError: It had not finished after `timeout` seconds; names `what`.
    """
    try:
        return await asyncio.wait_for(awaitable, timeout)
    except TimeoutError:
        raise AssertionError(f"timed out after {timeout:g} s waiting for {what}") from None


async def workers_done(pilot: Any, timeout: float = TIMEOUT) -> None:
    """Wait for every worker of the app to finish, for at most `timeout` seconds.

    A worker cancelled on the way has finished too: an exclusive worker started again cancels
    the one before it, and `App.workers.wait_for_complete()` then raises `WorkerCancelled`
    (the packet test failed so in a full run of the suite). A failed worker still raises.

    Raises:
        WorkerFailed: A worker raised.
        AssertionError: The workers had not finished after `timeout` seconds.
    """
    workers = list(pilot.app.workers)
    results = await bounded(
        asyncio.gather(*(w.wait() for w in workers), return_exceptions=True), "the app's workers to finish", timeout
    )
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, WorkerCancelled):
            raise result
