"""Provides DocumentView: untrusted Markdown rendered off the event loop and scrolled line by line.

Textual's own Markdown widget mounts one widget per block: two 3,600-character deliverables
took 0.5-0.9 s to show and two 10,000-word ones 4.6 s, all on the event loop. Rendering with
Rich into lines instead takes 13 ms (100 ms for 10,000 words) in a thread, and scrolling only
draws the visible lines.

The text is shown literally: it is cleaned of control characters first (escape sequences
never reach the terminal), console markup is never parsed (`[@click=app.quit]` stays text),
raw HTML is shown as text rather than dropped, and links are not made clickable.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass

from markdown_it import MarkdownIt
from rich.console import Console
from rich.markdown import Markdown as RichMarkdown
from textual import work
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from centaur_tui.domain.blinding import clean_text
from centaur_tui.ui.errors import ReportsWorkerErrors


class LiteralMarkdown(RichMarkdown):
    """Rich Markdown that shows raw HTML as text (Rich drops HTML blocks, hiding content)."""

    def __init__(self, markup: str) -> None:
        super().__init__("", hyperlinks=False, code_theme="ansi_dark")
        self.markup = markup
        self.parsed = _parser().parse(markup)


CHUNK_LINES = 60
"""Source lines per separately rendered piece of a long text (see `render_markdown`)."""


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")


def _chunks(text: str) -> list[str]:
    """Split Markdown at top-level block boundaries into pieces of about CHUNK_LINES lines."""
    lines = text.splitlines()
    if len(lines) <= CHUNK_LINES:
        return [text]
    starts = sorted({t.map[0] for t in _parser().parse(text) if t.level == 0 and t.nesting >= 0 and t.map})
    pieces: list[str] = []
    begin = 0
    for start in starts:
        if start - begin >= CHUNK_LINES:
            pieces.append("\n".join(lines[begin:start]))
            begin = start
    pieces.append("\n".join(lines[begin:]))
    return [p for p in pieces if p.strip()]


def render_markdown(text: str, width: int, cancelled: Callable[[], bool] = lambda: False) -> list[Strip]:
    """Render Markdown to strips of the given width; safe to call from any thread.

    A long text is rendered piece by piece with a pause in between: one 10,000-word render
    holds the GIL for about 100 ms at a time, and the UI thread stalled up to 0.24 s waiting
    for it with two such texts laid out at once.
    """
    console = Console(
        width=width,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        markup=False,
        emoji=False,
        highlight=False,
    )
    options = console.options.update_width(width)
    strips: list[Strip] = []
    for i, piece in enumerate(_chunks(clean_text(text))):
        if cancelled():
            return []
        if i:
            strips.append(Strip.blank(0))  # Rich separates top-level blocks by one blank line
            time.sleep(0.002)
        strips.extend(Strip(line) for line in console.render_lines(LiteralMarkdown(piece), options, pad=False))
    return strips


class DocumentView(ReportsWorkerErrors, ScrollView, can_focus=True):
    """A scrollable, read-only view of one untrusted Markdown text."""

    DEFAULT_CSS = """
    DocumentView {
        height: 1fr;
        scrollbar-gutter: stable;
        overflow-x: hidden;
        padding: 0 1;
    }
    """

    # Scrolling is immediate, not animated: an animated page step redraws the pane about 14
    # times (0.35 s of CPU beside 10,000 words); an expert wants the next page now.
    BINDINGS = [
        Binding("up", "lines(-1)", "Scroll up", show=False),
        Binding("down", "lines(1)", "Scroll down", show=False),
        Binding("pageup", "pages(-1)", "Page up", show=False),
        Binding("pagedown,space", "pages(1)", "Page down", show=False),
        Binding("home", "to(0)", "Top", show=False),
        Binding("end", "to(1)", "Bottom", show=False),
    ]

    def action_lines(self, step: int) -> None:
        self.scroll_to(y=self.scroll_y + step, animate=False)

    def action_pages(self, step: int) -> None:
        self.scroll_to(y=self.scroll_y + step * max(1, self.scrollable_content_region.height - 1), animate=False)

    def action_to(self, end: int) -> None:
        self.scroll_to(y=self.max_scroll_y if end else 0, animate=False)

    @dataclass
    class Rendered(Message):
        """The text is laid out at the current width and on screen."""

        view: DocumentView
        lines: int

        @property
        def control(self) -> DocumentView:
            return self.view

    def __init__(self, text: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._text = text
        self._lines: list[Strip] = []
        self._generation = 0
        self._width = 0

    @property
    def text(self) -> str:
        """The cleaned source text."""
        return clean_text(self._text)

    @property
    def rendered_text(self) -> str:
        """Everything an expert can scroll to, as plain text (for tests)."""
        return "\n".join(line.text.rstrip() for line in self._lines)

    @property
    def ready(self) -> bool:
        return self._width > 0 and self._width == self.scrollable_content_region.width

    def set_text(self, text: str, layout: tuple[int, list[Strip]] | None = None) -> None:
        """Show a new text from its top.

        Args:
            text: Untrusted Markdown.
            layout: (width, lines) from `render_markdown` done beforehand; used when the width
                still fits, otherwise the text is laid out in a thread.
        """
        self._text = text
        self._generation += 1
        self.scroll_to(0, 0, animate=False, immediate=True)
        if layout is not None and layout[0] > 0 and layout[0] == self.scrollable_content_region.width:
            self._apply(layout[1], layout[0], self._generation)
            return
        self._lines = []
        self._width = 0
        self.virtual_size = Size(0, 0)
        self.refresh()
        self._layout()

    def on_resize(self) -> None:
        if self.scrollable_content_region.width != self._width:
            self._layout()

    def _layout(self) -> None:
        width = self.scrollable_content_region.width
        if width > 0 and self.is_mounted:
            self._render_in_thread(self._text, width, self._generation)

    @work(thread=True, exclusive=True, group="document-render", exit_on_error=False)
    def _render_in_thread(self, text: str, width: int, generation: int) -> None:
        worker = get_current_worker()
        lines = render_markdown(text, width, cancelled=lambda: worker.is_cancelled)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._apply, lines, width, generation)

    def _apply(self, lines: list[Strip], width: int, generation: int) -> None:
        # Stale-result guard: a newer text or width may have arrived while this one rendered.
        if generation != self._generation or width != self.scrollable_content_region.width:
            return
        self._lines = lines
        self._width = width
        self.virtual_size = Size(width, len(lines))
        self.refresh()
        self.post_message(self.Rendered(self, len(lines)))

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        style = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, style)
        return self._lines[index].crop_extend(scroll_x, scroll_x + width, style).apply_style(style)
