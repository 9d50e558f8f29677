"""Provides the rubric widgets: a 1-10 score slider, a dimension row with one slider per option, the winner picker.

Keyboard (in the rubric panel): tab and shift+tab move between dimensions; up and down move
through the sliders (option 1, option 2, next dimension); left and right change the highlighted
slider (an empty slider starts at 5); digits 1-9 set it and 0 sets 10, then move on to the next
slider. The mouse works too: click a slider cell to set its score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label, Static

from centaur_tui.domain.task import Dimension

SCALE = 10
CELL = 2  # characters per slider cell
LABEL_WIDTH = 10  # "Option 1  "


class ScoreSlider(Widget):
    """A 1-10 slider for one option on one dimension; not focusable itself (its row is)."""

    DEFAULT_CSS = """
    ScoreSlider { height: 1; width: 1fr; }
    """
    COMPONENT_CLASSES = {"score-slider--filled", "score-slider--empty", "score-slider--value", "score-slider--label"}

    value: reactive[int | None] = reactive(None)
    active: reactive[bool] = reactive(False)

    @dataclass
    class Clicked(Message):
        """A cell of the slider was clicked; `value` is the score under the pointer."""

        slider: ScoreSlider
        value: int

    def __init__(self, option: int, *, id: str | None = None) -> None:
        super().__init__(id=id, classes=f"option-{option}")
        self.option = option

    def watch_active(self, active: bool) -> None:
        self.set_class(active, "-active")

    def render(self) -> Text:
        filled = self.get_component_rich_style("score-slider--filled")
        empty = self.get_component_rich_style("score-slider--empty")
        text = Text(
            f"Option {self.option}".ljust(LABEL_WIDTH), style=self.get_component_rich_style("score-slider--label")
        )
        value = self.value or 0
        for i in range(1, SCALE + 1):
            text.append(
                "█" * (CELL - 1) + " " if i <= value else "░" * (CELL - 1) + " ", filled if i <= value else empty
            )
        text.append(
            f"{self.value:>3}" if self.value is not None else "  \N{EN DASH}",
            self.get_component_rich_style("score-slider--value"),
        )
        return text

    def on_click(self, event: events.Click) -> None:
        cell = (event.x - LABEL_WIDTH) // CELL
        if 0 <= cell < SCALE:
            self.post_message(self.Clicked(self, cell + 1))


class DimensionRow(Vertical):
    """One rubric dimension: its name and description, and a slider per option (not focusable: the panel is)."""

    DEFAULT_CSS = """
    DimensionRow { height: auto; }
    DimensionRow .dimension-description { color: $text-muted; }
    """

    def __init__(self, dimension: Dimension, kind: str, index: int, values: tuple[int | None, int | None]) -> None:
        super().__init__(id=f"dimension-{index}")
        self.dimension = dimension
        self.kind = kind
        self.index = index
        self._initial = values
        self._sliders: tuple[ScoreSlider, ScoreSlider] | None = None
        self.tooltip = f"1-3: {dimension.low}\n8-10: {dimension.high}"

    def compose(self) -> ComposeResult:
        yield Static(self._title(), classes="dimension-name", markup=False)
        yield Static(self.dimension.description, classes="dimension-description", markup=False)
        for option in (1, 2):
            slider = ScoreSlider(option)
            slider.set_reactive(ScoreSlider.value, self._initial[option - 1])
            yield slider

    def _title(self) -> str:
        return f"{self.dimension.name} ({self.kind})"

    def set_dimension(self, dimension: Dimension, kind: str) -> None:
        """Show another dimension in this row (reusing rows is much cheaper than mounting new ones)."""
        self.dimension, self.kind = dimension, kind
        name, description = self.query(Static).results(Static)
        name.update(self._title())
        description.update(dimension.description)
        self.tooltip = f"1-3: {dimension.low}\n8-10: {dimension.high}"

    def sliders(self) -> tuple[ScoreSlider, ScoreSlider]:
        if self._sliders is None:
            one, two = self.query(ScoreSlider)
            self._sliders = (one, two)
        return self._sliders

    def value(self, option: int) -> int | None:
        return self.sliders()[option - 1].value

    def set_values(self, first: int | None, second: int | None) -> None:
        """Show stored values without announcing a change."""
        one, two = self.sliders()
        one.value, two.value = first, second


class RubricPanel(Vertical, can_focus=True):
    """Every dimension of a rubric with two sliders each; one focus stop, navigated inside.

    Moving between sliders changes two classes, not the app's focus: a focus change rebuilds
    the footer and the layout (about 200 ms of CPU a step at 120x40 with 11 dimensions).
    """

    DEFAULT_CSS = """
    RubricPanel { height: auto; }
    """

    BINDINGS = [
        Binding("left", "step(-1)", "Score -1", show=False),
        Binding("right", "step(1)", "Score +1", show=False),
        Binding("up", "move(-1)", "Previous slider", show=False),
        Binding("down", "move(1)", "Next slider", show=False),
        Binding("tab", "dimension(1)", "Next dimension", show=False),
        Binding("shift+tab", "dimension(-1)", "Previous dimension", show=False),
        *[Binding(str(d), f"set_score({d or 10})", f"Score {d or 10}", show=False) for d in range(10)],
    ]

    @dataclass
    class Changed(Message):
        """A score was set or changed by the expert."""

        panel: RubricPanel
        dimension: str
        option: int
        value: int

    @dataclass
    class Leave(Message):
        """Focus should move past the panel: `direction` is -1 (before) or 1 (after)."""

        panel: RubricPanel
        direction: int

    current: reactive[int] = reactive(0, init=False)
    option: reactive[int] = reactive(1, init=False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[DimensionRow] = []
        self._pool: list[DimensionRow] = []  # every row mounted so far; the first len(rubric) are shown
        self._lit: tuple[int, int, bool] | None = None  # the (row, option, focused) last highlighted

    def rows(self) -> list[DimensionRow]:
        return self._rows

    def row(self, dimension_id: str) -> DimensionRow:
        return next(r for r in self.rows() if r.dimension.id == dimension_id)

    async def show(self, rubric: Any, values: dict[str, tuple[int | None, int | None]]) -> None:
        """Show a rubric with stored values.

        Rows are reused, only their texts and values change; rows are mounted only when a
        rubric has more dimensions than any before (rebuilding 11 rows cost about 150 ms).
        """
        dims = rubric.all
        pool = self._pool
        if len(dims) > len(pool):
            await self.reserve(rubric)
        for i, row in enumerate(pool):
            shown = i < len(dims)
            row.display = shown
            if shown:
                d = dims[i]
                if row.dimension != d:
                    row.set_dimension(d, rubric.kind(d.id))
                row.set_values(*values.get(d.id, (None, None)))
        self._rows = pool[: len(dims)]
        self.set_place(0, 1, scroll=False)

    async def reserve(self, rubric: Any) -> None:
        """Mount hidden rows ahead of time, so a longer rubric later shows without mounting."""
        dims = rubric.all
        pool = self._pool
        if len(dims) <= len(pool):
            return
        extra = [
            DimensionRow(d, rubric.kind(d.id), i, (None, None)) for i, d in enumerate(dims[len(pool) :], len(pool))
        ]
        for row in extra:
            row.display = False
        pool.extend(extra)
        await self.mount_all(extra)

    def set_place(self, index: int, option: int, scroll: bool = True) -> None:
        """Highlight one slider (dimension index, option 1 or 2)."""
        self.set_reactive(RubricPanel.current, index)
        self.set_reactive(RubricPanel.option, option)
        self._sync(scroll)

    def _sync(self, scroll: bool = True) -> None:
        # Touch only the rows whose highlight changes: every class change restyles a subtree.
        rows = self.rows()
        lit = (self.current, self.option, self.has_focus)
        if lit != self._lit:
            if self._lit is not None and self._lit[0] < len(self._pool):
                old = self._pool[self._lit[0]]
                old.remove_class("-current")
                for slider in old.sliders():
                    slider.active = False
            if self.current < len(rows):
                row = rows[self.current]
                row.add_class("-current")
                for slider in row.sliders():
                    slider.active = self.has_focus and slider.option == self.option
            self._lit = lit
        if scroll and self.has_focus and self.current < len(rows):
            rows[self.current].scroll_visible(animate=False)

    def on_focus(self) -> None:
        self._sync()

    def on_blur(self) -> None:
        self._sync(scroll=False)

    def _set(self, option: int, value: int) -> None:
        rows = self.rows()
        if not rows:
            return
        value = max(1, min(SCALE, value))
        row = rows[self.current]
        slider = row.sliders()[option - 1]
        if slider.value != value:
            slider.value = value
            self.post_message(self.Changed(self, row.dimension.id, option, value))

    def action_step(self, delta: int) -> None:
        rows = self.rows()
        if rows:
            current = rows[self.current].value(self.option)
            self._set(self.option, 5 if current is None else current + delta)

    def action_set_score(self, value: int) -> None:
        self._set(self.option, value)
        self.action_move(1)

    def action_move(self, direction: int) -> None:
        flat = self.current * 2 + (self.option - 1) + direction
        if 0 <= flat < 2 * len(self.rows()):
            self.set_place(flat // 2, flat % 2 + 1)
        else:
            self.post_message(self.Leave(self, direction))

    def action_dimension(self, direction: int) -> None:
        index = self.current + direction
        if 0 <= index < len(self.rows()):
            self.set_place(index, 1)
        else:
            self.post_message(self.Leave(self, direction))

    def on_score_slider_clicked(self, event: ScoreSlider.Clicked) -> None:
        event.stop()
        row = next(r for r in self.rows() if event.slider in r.sliders())
        self.set_place(row.index, event.slider.option)
        self.focus()
        self._set(event.slider.option, event.value)


WINNER_LABELS = {"option_1": "Option 1", "option_2": "Option 2", "tie": "Tie"}


class WinnerChoice(Static):
    """One choice of the winner picker (clickable)."""

    @dataclass
    class Picked(Message):
        value: str

    def __init__(self, value: str) -> None:
        super().__init__(f"( ) {WINNER_LABELS[value]}", markup=False, classes="winner-choice", id=f"winner-{value}")
        self.value = value

    def on_click(self) -> None:
        self.post_message(self.Picked(self.value))


class WinnerPicker(Horizontal, can_focus=True):
    """The winner: option 1, option 2, or a tie when the session allows ties. Keys 1, 2, t, arrows."""

    DEFAULT_CSS = """
    WinnerPicker { height: auto; }
    WinnerPicker .winner-choice { width: auto; margin-right: 3; }
    """

    BINDINGS = [
        Binding("1", "pick('option_1')", "Option 1 wins", show=False),
        Binding("2", "pick('option_2')", "Option 2 wins", show=False),
        Binding("t", "pick('tie')", "Tie", show=False),
        Binding("left", "cycle(-1)", "Previous", show=False),
        Binding("right", "cycle(1)", "Next", show=False),
    ]

    value: reactive[str | None] = reactive(None)

    @dataclass
    class Changed(Message):
        """The winner was picked; `advance` when picked by its key, so focus may move on."""

        picker: WinnerPicker
        value: str
        advance: bool = False

        @property
        def control(self) -> WinnerPicker:
            return self.picker

    def __init__(self, allow_ties: bool, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.allow_ties = allow_ties

    @property
    def choices(self) -> tuple[str, ...]:
        return ("option_1", "option_2", "tie") if self.allow_ties else ("option_1", "option_2")

    def compose(self) -> ComposeResult:
        yield Label("Winner:", classes="winner-label")
        for value in ("option_1", "option_2", "tie"):
            yield WinnerChoice(value)

    def on_mount(self) -> None:
        self.set_allow_ties(self.allow_ties)

    def set_allow_ties(self, allow_ties: bool) -> None:
        self.allow_ties = allow_ties
        self.query_one("#winner-tie").display = allow_ties

    def watch_value(self, value: str | None) -> None:
        for choice in self.query(WinnerChoice):
            chosen = choice.value == value
            choice.update(f"({'•' if chosen else ' '}) {WINNER_LABELS[choice.value]}", layout=False)
            choice.set_class(chosen, "-chosen")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick" and parameters == ("tie",):
            return self.allow_ties
        return True

    def action_pick(self, value: str, advance: bool = True) -> None:
        if value == "tie" and not self.allow_ties:
            return
        if self.value != value:
            self.value = value
            self.post_message(self.Changed(self, value, advance))

    def action_cycle(self, step: int) -> None:
        choices = self.choices
        index = choices.index(self.value) + step if self.value in choices else (0 if step > 0 else len(choices) - 1)
        self.action_pick(choices[index % len(choices)], advance=False)

    def on_winner_choice_picked(self, event: WinnerChoice.Picked) -> None:
        event.stop()
        self.focus()
        self.action_pick(event.value, advance=False)
