"""Provides the reading screen: one option's deliverable at full width, or what differs between the two.

It is pushed over the judging screen, which stays as it was underneath (rubric, winner,
rationale, focus and the time on the comparison): escape pops it and the expert is back where
they were. It shows only the masked texts of the comparison, named Option 1 and Option 2.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Static

from centaur_tui.ui.screens.base import CentaurScreen
from centaur_tui.ui.widgets.document import DiffView, DocumentView
from centaur_tui.ui.widgets.footer import SteadyFooter

READ = Binding.Group("Read 1/2/diff", compact=False)
"""The footer shows the three reading keys as one item."""

VIEWS = ("1", "2", "diff")
"""What the reading screen can show: option 1, option 2, the differences."""


class ReadingScreen(CentaurScreen):
    """Read one option at full width (f3, f4) or the differences (f5); escape goes back.

    Args:
        first: Option 1's text (masked, untrusted).
        second: Option 2's text (masked, untrusted).
        show: "1", "2" or "diff".
    """

    EXPERT_SAFE = True

    DEFAULT_CSS = """
    ReadingScreen #reading-title {
        height: 1;
        padding: 0 1;
        text-style: bold;
    }
    ReadingScreen DocumentView {
        width: 1fr;
        height: 1fr;
    }
    """

    HELP = """\
## Reading

- **f3 / f4**: option 1 / option 2 at full width
- **f5**: what differs: lines only in option 1 are marked 1, lines only in option 2 are marked 2
- **arrows, page keys, home, end**: scroll (left / right: a table wider than the screen)
- **escape**: back to judging, as you left it
"""

    BINDINGS = [
        Binding("escape", "back", "Back", id="reading-back", tooltip="Back to judging, as you left it."),
        Binding("f3", "show('1')", "Option 1", group=READ, tooltip="Option 1 at full width."),
        Binding("f4", "show('2')", "Option 2", group=READ, tooltip="Option 2 at full width."),
        Binding("f5", "show('diff')", "Differences", group=READ, tooltip="What differs between the two options."),
    ]

    def __init__(self, first: str, second: str, show: str = "1") -> None:
        super().__init__()
        if show not in VIEWS:
            raise ValueError(f"show must be one of {VIEWS}, not {show!r}")
        self.texts = (first, second)
        self.showing = show

    def compose(self) -> ComposeResult:
        yield Static("", id="reading-title", markup=False)
        yield DocumentView(id="reading-text")
        yield DiffView(*self.texts, id="reading-diff")
        yield SteadyFooter()

    def on_mount(self) -> None:
        self.action_show(self.showing)

    def action_show(self, show: str) -> None:
        self.showing = show
        text_view = self.query_one("#reading-text", DocumentView)
        diff_view = self.query_one("#reading-diff", DiffView)
        text_view.display = show != "diff"
        diff_view.display = show == "diff"
        if show == "diff":
            title = "What differs: 1 = only in Option 1, 2 = only in Option 2 · escape: back"
            diff_view.focus()
        else:
            title = f"Option {show}, full width · escape: back"
            text_view.set_text(self.texts[int(show) - 1])
            text_view.focus()
        self.query_one("#reading-title", Static).update(title)

    @property
    def view(self) -> DocumentView:
        """The view on screen now."""
        return self.query_one("#reading-diff" if self.showing == "diff" else "#reading-text", DocumentView)

    def action_back(self) -> None:
        self.dismiss(None)
