"""Provides CentaurApp and create_app, the one factory used by the CLI, the tests and the benchmark."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

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


class ExpertOnlyError(CentaurError):
    """An expert-only app was asked to open a screen that is not the expert's (a bug, or an attempt)."""

    title = "Not available"


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
        expert_only: With `session` and `expert`: the app of that one expert (`--expert-only`):
            it opens their queues and refuses every screen not marked `EXPERT_SAFE` (the
            session overview, assignment, results, audit), has no command palette, and so
            reaches no pipeline run and no LLM call.
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
        expert_only: bool = False,
    ) -> None:
        if expert_only and (session is None or not expert):
            raise ValueError("expert_only needs a session and an expert")
        super().__init__()
        self.register_theme(HIGH_CONTRAST)
        if theme not in THEMES:
            raise CentaurError(f"unknown theme {theme!r} (known: {', '.join(THEMES)})", title="Unknown theme")
        self.theme = THEMES[theme]
        self.expert_only = expert_only
        if expert_only:
            # Its commands (themes, keys, screenshots) are no expert's business.
            self.use_command_palette = False
            self._bindings.key_to_bindings.pop(self.COMMAND_PALETTE_BINDING, None)  # so the footer offers no ^p
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

        if self.expert_only:
            from centaur_tui.ui.screens.expert_home import ExpertHomeScreen

            assert self.start_session is not None and self.start_expert is not None
            self.push_screen(ExpertHomeScreen(self.start_session, self.start_expert))
            return
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

    def _expert_may_open(self, screen: Any) -> None:
        if self.expert_only and not getattr(screen, "EXPERT_SAFE", False):
            name = screen if isinstance(screen, str) else type(screen).__name__
            log.warning("expert-only app refused to open %s", name)
            raise ExpertOnlyError(f"{name} is not open to experts")

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """Textual's push_screen; in expert-only mode a screen not marked `EXPERT_SAFE` is refused."""
        self._expert_may_open(screen)
        return super().push_screen(screen, *args, **kwargs)

    def switch_screen(self, screen: Any) -> Any:
        """Textual's switch_screen, refused like `push_screen` in expert-only mode."""
        self._expert_may_open(screen)
        return super().switch_screen(screen)

    # -- shared resources ----------------------------------------------------------------------

    def store_for(self, study: Study) -> Store:
        """The session's database, opened once per app (one writer connection per process).

        Call from a thread worker: opening runs SQL.
        """
        from centaur_tui.services.identity import check_identity
        from centaur_tui.services.session import open_store

        with self._stores_lock:
            store = self._stores.get(study.database)
            if store is None:
                store = open_store(study, must_exist=False)
                self._stores[study.database] = store
            else:
                # Checked for every study, not once per file: two session files may name one
                # database, and a file may have been edited since (domain/identity.py).
                check_identity(study, store)
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

    async def on_exit_app(self) -> None:
        """Before Textual closes the app (ctrl+q, or the terminal closed): save every draft.

        Runs before Textual's own handler. The keys of a burst already routed to a widget have
        changed it, but their Changed messages may still be queued on their way to the screen
        (which records them in its draft): a page reloaded right after a key then lost the last
        scores (the browser test saw 4 of 5). The screen's queue is drained first, then drafts
        with unsaved changes are written.
        """
        await self._drain_screen(rounds=4, timeout=2.0)
        log.debug("exiting: screens %s", [(type(s).__name__, getattr(s, "_dirty", None)) for s in self.screen_stack])
        for screen in self.screen_stack:
            if getattr(screen, "_dirty", False) and hasattr(screen, "flush"):
                try:
                    screen.flush()
                except Exception as exc:
                    log.error("draft not saved on exit", exc_info=exc)

    async def _drain_screen(self, rounds: int, timeout: float) -> None:
        """Wait until the current screen and its widgets handled what was queued (a message bubbles one hop a round)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        for _ in range(rounds):
            try:
                nodes = list(self.screen.walk_children(with_self=True))
            except Exception:  # noqa: BLE001 - no screen left: nothing to drain
                return
            pending = 0
            drained = asyncio.Event()

            def one_done(drained: asyncio.Event = drained) -> None:
                nonlocal pending
                pending -= 1
                if pending == 0:
                    drained.set()

            for node in nodes:
                if node.call_later(one_done):
                    pending += 1
            remaining = deadline - loop.time()
            if pending == 0 or remaining <= 0:
                return
            try:
                await asyncio.wait_for(drained.wait(), remaining)
            except TimeoutError:
                log.warning("screen still busy after %.1f s on exit: drafts saved as they stand", timeout)
                return

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
    expert_only: bool = False,
) -> CentaurApp:
    """Build the app; the CLI, the tests and bench/tui.py all start here.

    Raises:
        CentaurError: an unknown theme (the names of THEMES).
    """
    return CentaurApp(
        sessions_dir=sessions_dir,
        session=session,
        expert=expert,
        judging=judging,
        run=run,
        clock=clock,
        theme=theme,
        expert_only=expert_only,
    )
