"""Provides the server's defences that hold no session data: rate limits, connection limits, CSRF, log redaction.

- `FailureLimiter`: failed link or cookie checks per address in a sliding window; past the
  limit the address gets 429 for the rest of the window (a 256-bit token is beyond guessing
  anyway; this keeps a guesser from loading the database with lookups);
- `KnownTokens`: keyed hashes of the tokens that passed a check, so an address's failures (a
  guesser behind the same reverse proxy) never hold up an expert whose cookie is known good;
- `client_address`: the address the limits count, X-Forwarded-For's last hop behind a trusted proxy;
- `ConnectionLimits`: open TCP connections per address (counted where aiohttp's server is told
  of each connection), and requests in progress per expert;
- `csrf_token`: derived from the link token with HMAC, so it survives a restart of the server
  and a page of another site can neither read nor compute it;
- `RedactingFilter`: aiohttp's own error path logs a request's first line or a header it could
  not parse (a Cookie over 8,190 bytes quoted the link token in a traceback, NOTES.md); records
  of aiohttp's loggers lose their traceback and every token-shaped run of characters.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import re
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Callable
from typing import Any

TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_\-]{20,}")
"""Anything that might be a link token or a part of one (tokens are 43 such characters)."""


class FailureLimiter:
    """Refuses an address after `limit` failures within `window` seconds.

    Args:
        limit: Failures allowed per address in a window.
        window: Seconds a failure counts.
        clock: Seconds (monotonic); tests pass their own.
    """

    def __init__(self, limit: int = 20, window: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._failures: dict[str, deque[float]] = defaultdict(deque)

    def _recent(self, address: str) -> deque[float]:
        times = self._failures[address]
        cutoff = self.clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._failures[address]
            return deque()
        return times

    def blocked(self, address: str) -> bool:
        return len(self._recent(address)) >= self.limit

    def fail(self, address: str) -> None:
        self._recent(address)
        self._failures[address].append(self.clock())
        if len(self._failures) > 100_000:  # a flood of addresses: forget the oldest half
            for key in list(self._failures)[:50_000]:
                del self._failures[key]


class KnownTokens:
    """Tokens that passed a link or cookie check on this server, kept as keyed hashes (never the tokens).

    A blocked address's request still goes on to the full check when its cookie is one of these;
    the check itself (an active link in the database) still decides, so a revoked link stays
    refused. Holds at most `limit` hashes (links are one per expert); past it, the oldest go.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._key = secrets.token_bytes(32)  # a process secret: the set says nothing after a restart
        self._hashes: dict[bytes, None] = {}

    def _hash(self, token: str) -> bytes:
        return hmac.new(self._key, token.encode("utf-8", "replace"), hashlib.sha256).digest()

    def add(self, token: str) -> None:
        digest = self._hash(token)
        self._hashes.pop(digest, None)
        self._hashes[digest] = None
        while len(self._hashes) > self.limit:
            del self._hashes[next(iter(self._hashes))]

    def has(self, token: object) -> bool:
        return isinstance(token, str) and 0 < len(token) <= 200 and self._hash(token) in self._hashes


def client_address(remote: str | None, forwarded: list[str], trust_proxy: bool) -> str:
    """The address a request's failures are counted under.

    Without `trust_proxy`: the TCP peer. With it: the last entry of the last X-Forwarded-For
    header (the hop the proxy in front of us added; anything before it came from the client and
    may be forged), when it is an IP address; else the peer, as if no proxy had spoken.
    """
    peer = remote or "?"
    if not trust_proxy or not forwarded:
        return peer
    last = forwarded[-1].split(",")[-1].strip()
    try:
        return str(ipaddress.ip_address(last))
    except ValueError:
        return peer


class ConnectionLimits:
    """Open connections per address and requests in progress per expert.

    Args:
        per_address: TCP connections one address may hold open; more are closed at once (None: no limit,
            for a server behind a trusted reverse proxy, whose connections are everyone's).
        per_expert: Requests of one expert in progress at once; more get 429.
    """

    def __init__(self, per_address: int | None = 32, per_expert: int = 8) -> None:
        self.per_address = per_address
        self.per_expert = per_expert
        self.addresses: dict[str, int] = defaultdict(int)
        self.experts: dict[str, int] = defaultdict(int)
        self.closed = 0
        """Connections closed for going over `per_address`."""

    def wrap(self, server: Any) -> None:
        """Count aiohttp's connections (its `web_server.Server`): over the limit, the new one is closed."""
        made, lost = server.connection_made, server.connection_lost
        seen: dict[int, str] = {}

        def connection_made(handler: Any, transport: Any) -> None:
            peer = transport.get_extra_info("peername")
            address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
            made(handler, transport)
            seen[id(handler)] = address
            self.addresses[address] += 1
            if self.per_address is not None and self.addresses[address] > self.per_address:
                self.closed += 1
                transport.close()

        def connection_lost(handler: Any, exc: BaseException | None = None) -> None:
            address = seen.pop(id(handler), None)
            if address is not None:
                self.addresses[address] -= 1
                if self.addresses[address] <= 0:
                    del self.addresses[address]
            lost(handler, exc)

        server.connection_made = connection_made
        server.connection_lost = connection_lost

    def enter(self, expert_id: str) -> bool:
        if self.experts[expert_id] >= self.per_expert:
            return False
        self.experts[expert_id] += 1
        return True

    def leave(self, expert_id: str) -> None:
        self.experts[expert_id] -= 1
        if self.experts[expert_id] <= 0:
            del self.experts[expert_id]


def csrf_token(link_token: str) -> str:
    """The CSRF token of a page opened with this link token (a keyed hash of it: stable, not reversible)."""
    return hmac.new(link_token.encode("ascii", "replace"), b"centaur-csrf-v1", hashlib.sha256).hexdigest()


def same_csrf(link_token: str, presented: object) -> bool:
    return isinstance(presented, str) and hmac.compare_digest(csrf_token(link_token).encode(), presented.encode())


def redact_text(text: str) -> str:
    return TOKEN_SHAPE.sub("…", text)


class RedactingFilter(logging.Filter):
    """Cuts tracebacks and token-shaped text out of a record (aiohttp's loggers quote what they could not parse)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__})"
        record.msg = redact_text(message)[:500]
        record.args = None
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


AIOHTTP_LOGGERS = ("aiohttp.server", "aiohttp.web", "aiohttp.access", "aiohttp.internal", "aiohttp.client")


def quiet_aiohttp(handler: logging.Handler | None) -> None:
    """Send aiohttp's records through `RedactingFilter` to `handler` (or nowhere), never to stderr."""
    for name in AIOHTTP_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [handler] if handler is not None else [logging.NullHandler()]
        logger.propagate = False
        if not any(isinstance(f, RedactingFilter) for f in logger.filters):
            logger.addFilter(RedactingFilter())
