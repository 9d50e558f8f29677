"""Provides the home screen: the sessions in sessions/ with their state, read in a thread worker."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Static
from textual.worker import get_current_worker

from centaur_tui.services.session import SessionRow
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter


class SessionTable(DataTable):
    """The sessions table: enter opens the highlighted session (shown in the footer)."""

    BINDINGS = [Binding("enter", "select_cursor", "Open", tooltip="Open the highlighted session.")]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "select_cursor":
            return self.screen.check_action("open", parameters)
        return True


class HomeScreen(CentaurScreen):
    """Lists the sessions and opens one."""

    HELP = """\
## Sessions

Every `*.toml` file in the sessions folder is a session. The table shows how many provider
calls are done and left, how many judgments LLM judges and experts have made, and how much
expert work is assigned but not judged yet. **simulated** means the calls go to the seeded
simulated provider, not to language models.

- **enter**: open the highlighted session
- **r**: read the states again
"""

    BINDINGS = [
        Binding("o", "open", "Open", id="open", show=False, tooltip="Open the highlighted session."),
        Binding("r", "refresh", "Refresh", id="refresh", tooltip="Read the sessions' states again."),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[SessionRow] = []
        self.loaded = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Sessions", id="home-title", classes="screen-title")
        yield SessionTable(id="sessions", cursor_type="row", zebra_stripes=True)
        yield Static("Reading sessions…", id="home-detail", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#sessions", DataTable)
        table.add_columns(
            "Session", "Data", "Calls done", "Calls left", "LLM judgments", "Expert judgments", "Expert work waiting"
        )
        self.load()

    def on_screen_resume(self) -> None:
        if self.loaded:
            self.load()

    def action_refresh(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, group="home-load", exit_on_error=False)
    def load(self) -> None:
        """Read every session file and its database, off the event loop."""
        # Imported here, in the worker thread: pydantic and the catalog take about 130 ms to
        # import, time the first paint of the screen does not wait for.
        from centaur_tui.services.session import list_sessions

        rows = list_sessions(self.app.sessions_dir, self.app.store_for)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[SessionRow]) -> None:
        self.rows = rows
        self.loaded = True
        table = self.query_one("#sessions", DataTable)
        cursor = table.cursor_row
        table.clear()
        for r in rows:
            if r.error:
                table.add_row(r.name, "invalid", "", "", "", "", "", key=str(r.path))
                continue
            table.add_row(
                r.name,
                "simulated" if r.simulated else "real",
                f"{r.calls_done:,}" if r.run else "not run",
                f"{r.calls_left:,}",
                f"{r.llm_judgments:,}",
                f"{r.expert_judgments:,}",
                f"{r.expert_waiting:,}",
                key=str(r.path),
            )
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
        else:
            folder = self.app.sessions_dir
            self.query_one("#home-detail", Static).update(f"No session files in {folder}/.")
        self._describe()
        self.refresh_bindings()

    def _highlighted(self) -> SessionRow | None:
        table = self.query_one("#sessions", DataTable)
        if not self.rows or not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def _describe(self) -> None:
        row = self._highlighted()
        if row is None:
            return
        text = f"{row.path}: {row.error}" if row.error else f"{row.path}: {row.description or 'no description'}"
        self.query_one("#home-detail", Static).update(text)

    @on(DataTable.RowHighlighted, "#sessions")
    def describe_highlighted(self) -> None:
        self._describe()
        self.refresh_bindings()

    @on(DataTable.RowSelected, "#sessions")
    def open_selected(self) -> None:
        self.action_open()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open":
            row = self._highlighted()
            return None if row is None or row.error else True
        return True

    def action_open(self) -> None:
        row = self._highlighted()
        if row is None or row.error:
            return
        from centaur_tui.ui.screens.session import SessionScreen

        self.app.push_screen(SessionScreen(row.path))
