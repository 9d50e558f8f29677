"""Provides DraftVersions: which browser tab may save a place's draft, so two tabs never overwrite each other silently.

Each page gets the version of its place's draft when it is served (its *base*). A save names
the base it was made on; it is taken only when that is still the place's version, and the
place then moves to a new version, which the saving tab gets back. A second tab still holding
the old base is refused (409) and reloads, with the newer draft. The versions are those the
session's draft tables keep (wall-clock nanoseconds, strictly increasing, as the terminal seat's
`DraftAutosave` makes them), so the newest save also wins in the database. A page holds them as
strings: about 1.8e18, they are far past the integers a JavaScript number keeps exactly (2^53).

The register lives in the server process: after a restart the first save of a place is taken
whatever its base (the database still keeps the newest version).
"""

from __future__ import annotations

import time


class DraftVersions:
    """The current draft version of each (expert, place) served since the server started."""

    def __init__(self) -> None:
        self._versions: dict[tuple[str, str, str], int] = {}
        self._last = 0

    def current(self, expert_id: str, kind: str, key: str) -> str:
        """The version a page of this place starts from, as the page holds it ("0": none saved through this server)."""
        return str(self._versions.get((expert_id, kind, key), 0))

    def claim(self, expert_id: str, kind: str, key: str, base: object) -> int | None:
        """A new version for a save made on `base` (a string), or None when another tab saved since (stale)."""
        place = (expert_id, kind, key)
        stored = self._versions.get(place)
        if stored is not None and base != str(stored):
            return None
        self._last = max(self._last + 1, time.time_ns())
        self._versions[place] = self._last
        return self._last
