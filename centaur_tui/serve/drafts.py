"""Provides the draft versions of the HTML seat: two tabs of one expert never overwrite each other silently.

Each page gets the version of its place's draft as stored when it is served (its *base*; "0":
none). A save names that base; the session database takes it only when the stored version is
still the base, in the save's own write transaction (`services.judging.JudgingSource.save_draft`
and `services.writing.WorkSource.save_draft` with `base=`), and the place then moves to a new
version, which the saving tab gets back. A second tab still holding the old base is refused
(409) and reloads, with the newer draft. The register is the database, not this process: after
a restart of the server a stale tab is refused all the same.

Versions are wall-clock nanoseconds, strictly increasing, as the terminal seat's
`DraftAutosave` makes them, so the newest save also wins against the terminal seat. A page holds
them as strings: about 1.8e18, they are far past the integers a JavaScript number keeps exactly
(2^53).
"""

from __future__ import annotations

import threading
import time

MAX_VERSION = 2**63 - 1
"""SQLite's largest integer: a base above it cannot be a stored version."""


def base_version(value: object) -> int:
    """The base a page sent (a string of ASCII digits); ValueError naming the field otherwise."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit() or len(value) > 19:
        raise ValueError("base must be the version string the page was served with")
    number = int(value)
    if number > MAX_VERSION:
        raise ValueError("base must be the version string the page was served with")
    return number


class VersionClock:
    """Hands out new draft versions: above the page's base and every version handed out before."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()  # saves run in worker threads

    def next(self, base: int) -> int:
        """A version for a save made on `base`: later than the clock, the base and any earlier one."""
        with self._lock:
            self._last = max(self._last + 1, base + 1, time.time_ns())
            return self._last
