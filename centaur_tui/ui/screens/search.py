"""Provides the organiser's search screen: rationales, deliverables and assistance texts across the study.

For researchers, not blinded (reached from the results screen only; EXPERT_SAFE stays False):
hits name models. Each hit opens in the audit screen on the comparisons it belongs to.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Input, Static
from textual.worker import get_current_worker

from centaur_tui.domain.blinding import clean_text
from centaur_tui.domain.study import Study
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter


class SearchScreen(CentaurScreen):
    """Full-text search of the study (`services.search`), each hit opening in the audit screen.

    Args:
        study: The session.
    """

    HELP = """\
## Search the study

Type words and press enter: every rationale, deliverable and assistance text holding them,
best first (the index follows judgments stored since the last search).

- **enter** on a hit: open its comparisons in the audit screen
- **escape**: back to the results
"""

    BINDINGS = [Binding("escape", "back", "Back", id="back", tooltip="Back to the results.")]

    def __init__(self, study: Study) -> None:
        super().__init__()
        self.study = study
        self.found: list[Any] = []
        self.query_text = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Search rationales, deliverables and assistance texts", classes="screen-title")
        yield Input(placeholder="words to find", id="search-input")
        yield DataTable(id="search-hits", cursor_type="row", zebra_stripes=True)
        yield Static("", id="search-status", markup=False)
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.query_one("#search-hits", DataTable).add_columns("kind", "task", "text", "comparisons")
        self.query_one("#search-input", Input).focus()

    @on(Input.Submitted, "#search-input")
    def start(self, event: Input.Submitted) -> None:
        self.query_text = event.value
        self.run_search(event.value)

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def run_search(self, query: str) -> None:
        """Refresh the index and search it off the event loop."""
        from centaur_tui.services.search import search_study

        found = search_study(self.app.store_for(self.study), query)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._shown, query, found)

    def _shown(self, query: str, found: list[Any]) -> None:
        if query != self.query_text:  # a later search won
            return
        self.found = found
        table = self.query_one("#search-hits", DataTable)
        table.clear()
        for i, f in enumerate(found):
            snippet = clean_text(f.hit.snippet).replace("\n", " ")
            row = (f.hit.kind, f.hit.task, snippet, str(len(f.comparisons)))
            table.add_row(*[Text(x) for x in row], key=str(i))
        self.query_one("#search-status", Static).update(f"{len(found)} hit(s); enter: open in the audit screen")
        if found:
            table.focus()

    @on(DataTable.RowSelected, "#search-hits")
    def open_audit(self, event: DataTable.RowSelected) -> None:
        from centaur_tui.ui.screens.audit import AuditScreen

        f = self.found[int(str(event.row_key.value))]
        if not f.comparisons:
            self.notify("This text belongs to no comparison yet.", title="Search")
            return
        self.app.push_screen(AuditScreen(self.study, "", "", "", comparisons=tuple(f.comparisons)))

    def action_back(self) -> None:
        self.app.pop_screen()
