"""Provides CentaurApp and create_app, the one factory used by the CLI, the tests and the benchmark."""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.theme import Theme

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.untrusted import clean_untrusted

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.services.session import Store
    from centaur_tui.services.work import JudgingSource

log = logging.getLogger(__name__)

HIGH_CONTRAST = Theme(
    name="high-contrast",
    primary="#FFFF00",
    secondary="#00FFFF",
    accent="#FFD700",
    warning="#FFB000",
    error="#FF8080",
    success="#00FF66",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#202020",
    boost="#FFFFFF1A",
    dark=True,
    variables={
        "text-muted": "#E8E8E8",
        "footer-key-foreground": "#FFFF00",
        "footer-description-foreground": "#FFFFFF",
        "footer-background": "#000000",
        "input-selection-background": "#FFFF00 40%",
    },
)
"""White on black, yellow accents: WCAG AA and more on the judging screen (tests/test_ui_contrast.py measures it)."""

THEMES = {"default": "textual-dark", "high-contrast": HIGH_CONTRAST.name}
"""The themes a user can choose (`centaur tui --theme`, `CENTAUR_THEME`, f9), by the name they are chosen with."""


class CentaurApp(App[None]):
    """The centaur-tui app: sessions, their pipeline, and blind expert judging.

    Args:
        sessions_dir: Folder whose `*.toml` files the home screen lists.
        session: Open this session file's overview at start.
        expert: With `session`, open this expert's judging screen at start.
        judging: Open the judging screen on this source at start (a packet); quitting it ends the app.
        run: With `session`, start the pipeline at once when calls are left.
        clock: Seconds source for time spent per comparison (tests freeze it).
        theme: "default" or "high-contrast" (THEMES).
    """

    CSS_PATH = "app.tcss"
    TITLE = "centaur-tui"
    BINDINGS = [
        Binding("f1", "toggle_help", "Help", id="help", tooltip="Show or hide help for this screen."),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True, tooltip="Save work in progress and quit."),
        Binding(
            "f9",
            "toggle_contrast",
            "High contrast",
            id="contrast",
            show=False,
            tooltip="Switch between the default and the high-contrast theme.",
        ),
    ]

    def __init__(
        self,
        sessions_dir: Path = Path("sessions"),
        session: Path | None = None,
        expert: str | None = None,
        judging: JudgingSource | None = None,
        run: bool = False,
        clock: Callable[[], float] = time.monotonic,
        theme: str = "default",
    ) -> None:
        super().__init__()
        self.register_theme(HIGH_CONTRAST)
        if theme not in THEMES:
            raise CentaurError(f"unknown theme {theme!r} (known: {', '.join(THEMES)})", title="Unknown theme")
        self.theme = THEMES[theme]
        self.sessions_dir = sessions_dir
        self.start_session = session
        self.start_expert = expert
        self.start_judging = judging
        self.start_run = run
        self.clock = clock
        self._stores: dict[Path, Store] = {}
        self._stores_lock = threading.Lock()
        self._stoppers: list[Callable[[], None]] = []

    def freeze_long_lived(self) -> None:
        """Move every object alive now (modules, classes, mounted screens) out of the collector's view.

        A full collection over them took 0.1-0.15 s and landed, every 10 or so comparisons, in
        the middle of moving to the next one (bench/tui.py: max 178 ms, 100 ms after freezing).
        """
        gc.freeze()

    def on_mount(self) -> None:
        from centaur_tui.ui.screens.home import HomeScreen

        self.freeze_long_lived()

        if self.start_judging is not None:
            from centaur_tui.ui.screens.judging import JudgingScreen

            self.push_screen(JudgingScreen(self.start_judging, standalone=True))
            return
        self.push_screen(HomeScreen())
        if self.start_session is not None:
            from centaur_tui.ui.screens.session import SessionScreen

            self.push_screen(SessionScreen(self.start_session, expert=self.start_expert, run=self.start_run))

    async def on_event(self, event: events.Event) -> None:
        # Every key (priority bindings included), paste and click counts as the expert's activity
        # on a judging screen below any dialog: its active time leaves out idle periods.
        if isinstance(
            event, (events.Key, events.Paste, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)
        ):
            for screen in reversed(self.screen_stack):
                note = getattr(screen, "note_activity", None)
                if note is not None:
                    note()
                    break
        await super().on_event(event)

    # -- shared resources ----------------------------------------------------------------------

    def store_for(self, study: Study) -> Store:
        """The session's database, opened once per app (one writer connection per process).

        Call from a thread worker: opening runs SQL.
        """
        from centaur_tui.services.session import open_store

        with self._stores_lock:
            store = self._stores.get(study.database)
            if store is None:
                store = open_store(study, must_exist=False)
                self._stores[study.database] = store
            return store

    def on_exit_stop(self, stop: Callable[[], None]) -> None:
        """Register something to stop before the app exits (a running pipeline)."""
        self._stoppers.append(stop)

    async def action_quit(self) -> None:
        # Save judging work in progress while the stores are still open.
        for screen in self.screen_stack:
            flush = getattr(screen, "flush", None)
            if flush is not None:
                try:
                    flush()
                except Exception as exc:  # noqa: BLE001 - shown, and quitting goes on
                    self.report(exc)
        # Stop pipelines: their thread would otherwise keep the process alive until done.
        for stop in self._stoppers:
            stop()
        self.exit()

    def on_unmount(self) -> None:
        for stop in self._stoppers:
            stop()
        with self._stores_lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()

    def screen_text(self) -> str:
        """The current screen as plain text, dialogs over screens included (tests, benchmarks)."""
        import io

        from rich.console import Console

        width, height = self.size
        console = Console(
            width=width,
            height=height,
            file=io.StringIO(),
            force_terminal=True,
            record=True,
            legacy_windows=False,
            safe_box=False,
        )
        console.print(self.screen._compositor.render_update(full=True, screen_stack=self._background_screens))
        return console.export_text()

    # -- help and errors -----------------------------------------------------------------------

    def action_toggle_help(self) -> None:
        # A modal over the screen, not Textual's side panel: that one cut the help after three
        # keys at 120x40 and squeezed the judging screen's deliverables to 12 columns.
        from centaur_tui.ui.screens.dialogs import HelpDialog, help_markdown

        if isinstance(self.screen, HelpDialog):
            self.screen.dismiss(None)
        else:
            self.push_screen(HelpDialog(help_markdown(self.screen)))

    def action_toggle_contrast(self) -> None:
        self.theme = THEMES["default"] if self.theme == HIGH_CONTRAST.name else HIGH_CONTRAST.name

    def report(self, error: BaseException) -> None:
        """Show an error as a notification: people read the message, never a traceback (that goes to the log)."""
        # Messages may quote a provider or a file: cleaned of controls and keys before they are shown.
        if isinstance(error, CentaurError):
            message = clean_untrusted(error.message, limit=5000)
            log.warning("shown to the user: %s: %s", error.title, message)
            self.notify(message, title=error.title, severity="error", timeout=8, markup=False)
        else:
            log.error("unexpected error shown to the user", exc_info=error)
            message = clean_untrusted(f"{type(error).__name__}: {error}", limit=5000)
            self.notify(message, title="Unexpected error", severity="error", timeout=10, markup=False)


def create_app(
    sessions_dir: Path = Path("sessions"),
    session: Path | None = None,
    expert: str | None = None,
    judging: JudgingSource | None = None,
    run: bool = False,
    clock: Callable[[], float] = time.monotonic,
    theme: str = "default",
) -> CentaurApp:
    """Build the app; the CLI, the tests and bench/tui.py all start here.

    Raises:
        CentaurError: an unknown theme (the names of THEMES).
    """
    return CentaurApp(
        sessions_dir=sessions_dir, session=session, expert=expert, judging=judging, run=run, clock=clock, theme=theme
    )
