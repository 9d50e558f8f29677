"""Provides `Host`: what the screens ask of the app beyond Textual's `App` (stores, clock, stoppers, errors).

The screens type `self.app` with it rather than with `CentaurApp`: `ui/app.py` opens the
screens, so a screen importing the app (even for a type only) drew an import circle through
every screen (issue 21). The import-linter contract "No import circle in ui/" keeps it gone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from textual.app import App

    from centaur_tui.domain.study import Study
    from centaur_tui.services.session import Store


class Host(Protocol):
    """The app's own services to its screens (`CentaurApp` has them all)."""

    sessions_dir: Path
    """Folder whose `*.toml` files the home screen lists."""
    clock: Callable[[], float]
    """Seconds source for time spent per comparison (tests freeze it)."""

    def store_for(self, study: Study) -> Store:
        """The session's database, opened once per app; call from a thread worker."""
        ...

    def freeze_long_lived(self) -> None:
        """Move every object alive now out of the collector's view."""
        ...

    def on_exit_stop(self, stop: Callable[[], None]) -> None:
        """Register something to stop before the app exits."""
        ...

    def report(self, error: BaseException) -> None:
        """Show an error as a notification."""
        ...


if TYPE_CHECKING:

    class HostApp(App[None], Host):
        """For type checkers only: a Textual app that is a `Host` (what `self.app` is on our screens)."""
