"""Provides the agreement matrix screen: every pair of judges per dimension, and the comparisons they disagreed on.

For researchers, not blinded (reached from the results screen only; EXPERT_SAFE stays False).
Selecting a cell lists exactly the comparisons where the two judges' labels differ
(`services.audit.disagreements`, the labels the matrix counts); selecting one of those opens
it in the audit screen with every verdict, rationale and score given on it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Header, Static
from textual.worker import get_current_worker

from centaur_tui.domain.study import Study
from centaur_tui.report.document import AgreementCell, AgreementMatrixSection
from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.footer import SteadyFooter


class AgreementScreen(CentaurScreen):
    """The agreement matrix of the report document, with a drill-down into each cell.

    Args:
        study: The session.
        matrix: The report document's agreement matrix.
    """

    HELP = """\
## Agreement matrix

One line per pair of judges (each expert against each LLM judge and each other expert) and
dimension (the winner, then each rubric dimension): n comparisons both judged, how many
they labelled alike, the share, and Cohen's kappa.

- **enter** on a line: list the comparisons where the two disagreed
- **enter** on a listed comparison: open it in the audit screen (both verdicts, rationales, scores)
- **escape**: back to the results
"""

    BINDINGS = [Binding("escape", "back", "Back", id="back", tooltip="Back to the results.")]

    def __init__(self, study: Study, matrix: AgreementMatrixSection) -> None:
        super().__init__()
        self.study = study
        self.matrix = matrix
        self.cell: AgreementCell | None = None
        self.listed: list[Any] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(Text(f"Agreement matrix (reference labels: {self.matrix.reference})"), classes="screen-title")
        yield DataTable(id="agreement-cells", cursor_type="row", zebra_stripes=True)
        yield Static("enter: the comparisons where the two disagreed", id="agreement-status", markup=False)
        yield DataTable(id="agreement-disagreements", cursor_type="row", zebra_stripes=True)
        yield SteadyFooter()

    def on_mount(self) -> None:
        cells = self.query_one("#agreement-cells", DataTable)
        cells.add_columns("dimension", "judge A", "judge B", "n", "agree", "agreement", "kappa")
        for i, c in enumerate(self.matrix.cells):
            kappa = "-" if c.kappa is None else f"{c.kappa:.2f}"
            row = (c.dimension, c.judge_a, c.judge_b, c.n, c.agree, f"{c.agreement:.2f}", kappa)
            cells.add_row(*[Text(str(x)) for x in row], key=str(i))
        self.query_one("#agreement-disagreements", DataTable).add_columns("comparison", "judge A says", "judge B says")
        cells.focus()

    @on(DataTable.RowSelected, "#agreement-cells")
    def list_disagreements(self, event: DataTable.RowSelected) -> None:
        self.cell = self.matrix.cells[int(str(event.row_key.value))]
        self.load(self.cell)

    @work(thread=True, exclusive=True, group="agreement-load", exit_on_error=False)
    def load(self, cell: AgreementCell) -> None:
        """Read the cell's disagreements off the event loop."""
        from centaur_tui.services.audit import disagreements

        adjudicated = "adjudicated" in (cell.kind_a, cell.kind_b)
        found = disagreements(self.app.store_for(self.study), cell.judge_a, cell.judge_b, cell.dimension, adjudicated)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._listed, cell, found)

    def _listed(self, cell: AgreementCell, found: list[Any]) -> None:
        if cell is not self.cell:  # a later selection won
            return
        self.listed = found
        table = self.query_one("#agreement-disagreements", DataTable)
        table.clear()
        for i, (a, b) in enumerate(found):
            table.add_row(Text(a.comparison_id), Text(a.value), Text(b.value), key=str(i))
        self.query_one("#agreement-status", Static).update(
            f"{len(found)} comparison(s) where {cell.judge_a} and {cell.judge_b} disagreed on {cell.dimension} "
            f"(of {cell.n} both judged); enter: open one in the audit screen"
        )
        if found:
            table.focus()

    @on(DataTable.RowSelected, "#agreement-disagreements")
    def open_audit(self, event: DataTable.RowSelected) -> None:
        from centaur_tui.ui.screens.audit import AuditScreen

        a, _ = self.listed[int(str(event.row_key.value))]
        self.app.push_screen(AuditScreen(self.study, "", "", "", comparisons=(a.comparison_id,)))

    def action_back(self) -> None:
        self.app.pop_screen()
