"""Provides the gateway's pacing: per-deployment rpm/tpm token buckets and per-model adaptive concurrency (AIMD).

Our own limiter, not litellm Router's rpm/tpm: the Router waits for the next minute window
(8 calls at rpm=5 took 62-121 s, NOTES.md) and does not enforce limits for concurrent async
calls without a usage-tracking strategy (litellm#5783).

`Pacer`: two token buckets per deployment, requests (`rpm`) and tokens (`tpm`, charged as
prompt tokens + max_tokens, the way OpenAI counts a request against its limit). Each refills
continuously at limit/60 per second and holds at most half a second's worth, so calls leave
evenly spaced and a provider enforcing the limit over any window of half a second or longer
sees it kept. A call larger than the tokens bucket waits until the bucket is full, then drives
it into debt (it would otherwise never leave). Waiters are served in arrival order. A 429's
`Retry-After` pauses the whole deployment (`pause`), so calls queued behind it do not pile on.

`AdaptiveLimit`: the calls in flight of one model, at most `per_model_concurrency`; a rate-limit
error halves the limit (at most once per `cooldown_s`, so a burst of 429s from one moment halves
it once), every answered call adds 1/limit (about +1 per limit's worth of answers), up to the cap.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

BURST_S = 0.5
"""Seconds of a limit that may leave at once (the buckets' capacity)."""


class _Bucket:
    def __init__(self, per_minute: float, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * BURST_S)
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` can be taken (a full bucket lets any amount go, into debt)."""
        need = min(amount, self.capacity)
        # The tolerance keeps float rounding from leaving a wait too short to move a clock (1e-17 s).
        return 0.0 if self.level >= need - 1e-9 else max(1e-6, (need - self.level) / self.rate)


class Pacer:
    """Spaces one deployment's requests to its `rpm` and `tpm` (either may be None: no such limit).

    Args:
        rpm: Requests per minute.
        tpm: Tokens per minute (a request counts its prompt tokens plus max_tokens).
        clock: Injected for tests; `time.monotonic` by default.
        sleep: Injected for tests; `asyncio.sleep` by default.
    """

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        now = clock()
        self._requests = _Bucket(rpm, now) if rpm else None
        self._tokens = _Bucket(tpm, now) if tpm else None
        self._clock = clock
        self._sleep = sleep or asyncio.sleep
        self._lock = asyncio.Lock()
        self._paused_until = 0.0
        self.waited_s = 0.0
        """Seconds requests spent waiting here, in all (for benchmarks and tests)."""

    @property
    def limited(self) -> bool:
        return self._requests is not None or self._tokens is not None

    def pause(self, seconds: float) -> None:
        """Send nothing for `seconds` (a server's Retry-After); a longer pause already set is kept."""
        if math.isfinite(seconds) and seconds > 0:
            self._paused_until = max(self._paused_until, self._clock() + seconds)

    def delay(self, tokens: int) -> float:
        """Seconds a request of `tokens` would wait now (0 when it could leave at once)."""
        now = self._clock()
        wait = max(0.0, self._paused_until - now)
        for bucket, amount in ((self._requests, 1.0), (self._tokens, float(tokens))):
            if bucket is not None:
                bucket.refill(now)
                wait = max(wait, bucket.wait_for(amount))
        return wait

    def backlog_s(self, waiting: int, tokens: int) -> float:
        """Seconds `waiting` queued requests of about `tokens` each take to leave at the limits (0 without limits)."""
        seconds = 0.0
        if self._requests is not None:
            seconds = max(seconds, waiting / self._requests.rate)
        if self._tokens is not None:
            seconds = max(seconds, waiting * tokens / self._tokens.rate)
        return seconds

    async def acquire(self, tokens: int = 0) -> None:
        """Wait until a request of `tokens` may leave, and charge it."""
        if not self.limited and self._paused_until <= self._clock():
            return
        async with self._lock:  # one waiter at a time: arrival order, and no two take the same capacity
            while True:
                wait = self.delay(tokens)
                if wait <= 0:
                    break
                self.waited_s += wait
                await self._sleep(wait)
            if self._requests is not None:
                self._requests.level -= 1.0
            if self._tokens is not None:
                self._tokens.level -= float(tokens)


class AdaptiveLimit:
    """Calls in flight of one model: at most `limit` (AIMD between 1 and `cap`).

    Args:
        cap: The most calls in flight (the session's `per_model_concurrency`).
        cooldown_s: A rate-limit error within this long of the last decrease does not decrease again.
        clock: Injected for tests.
    """

    def __init__(self, cap: int, cooldown_s: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.cap = cap
        self.limit = float(cap)
        self.in_use = 0
        self.decreases = 0
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._last_decrease = -math.inf
        self._changed = asyncio.Condition()

    async def __aenter__(self) -> AdaptiveLimit:
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_use < max(1, int(self.limit)))
            self.in_use += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self._changed:
            self.in_use -= 1
            self._changed.notify_all()

    def rate_limited(self) -> None:
        """A 429: halve the limit (not below 1), once per cooldown."""
        now = self._clock()
        if now - self._last_decrease < self._cooldown_s:
            return
        self._last_decrease = now
        self.limit = max(1.0, self.limit / 2)
        self.decreases += 1

    async def answered(self) -> None:
        """An answered call: grow the limit by 1/limit, up to the cap."""
        if self.limit >= self.cap:
            return
        async with self._changed:
            self.limit = min(float(self.cap), self.limit + 1.0 / self.limit)
            self._changed.notify_all()
