"""Provides DraftAutosave: the draft-saving shared by the judging and work screens.

An expert's partial work (rubric scores, winner, rationale; or a deliverable being written)
is saved a moment after each change, on a thread, and at once when the screen is left,
the app quits (`CentaurApp.action_quit` calls `flush`) or the screen is unmounted. Every
save carries a version (wall-clock nanoseconds, strictly increasing, so a draft saved after
a restart is newer): saves need not be exclusive, and an older save that lands late never
overwrites a newer one (the source keeps the highest version).
"""

from __future__ import annotations

import time
from typing import Any

from textual import work
from textual.timer import Timer


class DraftAutosave:
    """Mixin for a screen with `source` (save_draft(key, draft, version)) and a `current` item with a `key`.

    The screen sets `SAVE_DELAY`, implements `_snapshot()` (the draft to store, a copy) and
    `_can_save()` (whether the current draft may be stored), and calls `_draft_changed()`
    after each change it records in its draft.
    """

    SAVE_DELAY = 0.3
    """Seconds after the last change before the draft is saved."""

    source: Any
    current: Any
    _dirty: bool = False
    _save_timer: Timer | None = None
    _last_version: int = 0

    def _snapshot(self) -> Any:
        """The draft to store, a copy with the time on task; each screen gives its own (judging, work)."""
        raise NotImplementedError(f"{type(self).__name__} must define _snapshot()")

    def _can_save(self) -> bool:
        return self.current is not None

    def _draft_changed(self) -> None:
        """A change to the draft: save it SAVE_DELAY seconds after the last one."""
        self._dirty = True
        self._stop_saving()
        self._save_timer = self.set_timer(self.SAVE_DELAY, self._save_soon)  # type: ignore[attr-defined]

    def _stop_saving(self) -> None:
        """Cancel the pending save (the caller stores the draft itself, or it is unchanged)."""
        if self._save_timer is not None:
            self._save_timer.stop()
            self._save_timer = None

    def _version(self) -> int:
        self._last_version = max(self._last_version + 1, time.time_ns())
        return self._last_version

    def _save_soon(self) -> None:
        if self._dirty and self._can_save():
            self._dirty = False
            self.save_draft(self.current.key, self._snapshot(), self._version())

    # Not exclusive: cancelling a thread worker does not stop its write, and every save carries
    # a version, so an older save that lands late never overwrites a newer one.
    @work(thread=True, group="draft-save", exit_on_error=False)
    def save_draft(self, key: Any, draft: Any, version: int) -> None:
        """Save partial work on a thread; concurrent saves are safe, the highest version wins."""
        self.source.save_draft(key, draft, version)

    def flush(self) -> None:
        """Save the current draft now, on the calling thread (moving on, leaving, quitting)."""
        self._stop_saving()
        if self._can_save():
            self._dirty = False
            self.source.save_draft(self.current.key, self._snapshot(), self._version())

    def on_unmount(self) -> None:
        if self._dirty:
            self.flush()
