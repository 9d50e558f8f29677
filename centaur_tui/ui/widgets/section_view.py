"""Provides SectionView: one section of the report document (title, notes, table) as `centaur report` prints it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from centaur_tui.report import Section
from centaur_tui.report.render import header_text


class SectionView(Vertical):
    """A `centaur_tui.report.Section`: the same title, notes and cells as the text report.

    Cells are given to the table as `Text`, never as strings, so nothing in them is read as markup.
    """

    DEFAULT_CSS = """
    SectionView {
        height: auto;
        margin-bottom: 1;
    }
    SectionView > .section-title {
        text-style: bold;
    }
    SectionView > .section-notes {
        color: $text-muted;
    }
    SectionView > DataTable {
        height: auto;
        max-height: 24;
    }
    """

    def __init__(self, section: Section, *, notes: bool = True, id: str | None = None) -> None:
        super().__init__(id=id, classes="section-view")
        self.section = section
        self.show_notes = notes

    def compose(self) -> ComposeResult:
        s = self.section
        yield Static(Text(s.title), classes="section-title")
        if self.show_notes and s.notes:
            yield Static(Text("\n".join(s.notes)), classes="section-notes")
        if s.headers:
            yield DataTable(cursor_type="row", zebra_stripes=True, classes="section-table")

    def on_mount(self) -> None:
        s = self.section
        if not s.headers:
            return
        table = self.query_one(DataTable)
        align = s.alignment
        table.add_columns(*[Text(header_text(h), justify="left") for h in s.headers])
        for row in s.rows:
            table.add_row(*[Text(c, justify="left" if a == "l" else "right") for c, a in zip(row, align, strict=False)])

    @property
    def rows(self) -> list[list[str]]:
        """The table's cells as shown (tests compare them with the report)."""
        table = self.query_one(DataTable)
        return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
