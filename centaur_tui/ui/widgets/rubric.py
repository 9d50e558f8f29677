"""Provides the rubric widgets: a 1-10 score slider, a dimension row with one slider per option, the winner picker.

Keyboard (in the rubric panel): tab and shift+tab move between dimensions; up and down move
through the sliders (option 1, option 2, next dimension); left and right change the highlighted
slider (an empty slider starts at 5); digits 1-9 set it and 0 sets 10, then move on to the next
slider; "=" gives the highlighted slider the other option's score and moves on. The mouse works
too: click a slider cell to set its score.

The keys of the panel and of the winner picker are priority bindings: they run in the app's own
key loop, so a focus change they make (leaving the last slider, picking the winner) is done
before the next key of a burst is routed. As plain bindings they ran after the key had bubbled
up, and the keys typed meanwhile went to the old widget ("the second..." picked Tie at "t").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label, Static

from centaur_tui.domain.task import Dimension

SCALE = 10
CELL = 2  # characters per slider cell
LABEL_WIDTH = 11  # "▶ Option 1 ": the marker makes the highlighted slider plain without colour


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
        marker = "\N{BLACK RIGHT-POINTING TRIANGLE} " if self.active else "  "
        text = Text(
            f"{marker}Option {self.option}".ljust(LABEL_WIDTH),
            style=self.get_component_rich_style("score-slider--label"),
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
    DimensionRow .dimension-anchors { display: none; }
    DimensionRow.-current .dimension-anchors { display: block; }
    """

    def __init__(self, dimension: Dimension, kind: str, index: int, values: tuple[int | None, int | None]) -> None:
        super().__init__(id=f"dimension-{index}")
        self.dimension = dimension
        self.kind = kind
        self.index = index
        self._initial = values
        self._sliders: tuple[ScoreSlider, ScoreSlider] | None = None
        self.tooltip = self._anchors()

    def compose(self) -> ComposeResult:
        yield Static(self._title(), classes="dimension-name", markup=False)
        yield Static(self.dimension.description, classes="dimension-description", markup=False)
        for option in (1, 2):
            slider = ScoreSlider(option)
            slider.set_reactive(ScoreSlider.value, self._initial[option - 1])
            yield slider
        # Under the sliders, so they stay next to the name (at 80x24 the anchors above them
        # pushed the first dimension's sliders out of the rubric column).
        yield Static(self._anchors(), classes="dimension-anchors", markup=False)

    def _title(self) -> str:
        return f"{self.dimension.name} ({self.kind})"

    def _anchors(self) -> str:
        return f"1-3: {self.dimension.low}\n8-10: {self.dimension.high}"

    def set_dimension(self, dimension: Dimension, kind: str) -> None:
        """Show another dimension in this row (reusing rows is much cheaper than mounting new ones)."""
        self.dimension, self.kind = dimension, kind
        name, description, anchors = self.query(Static).results(Static)
        name.update(self._title())
        description.update(dimension.description)
        anchors.update(self._anchors())
        self.tooltip = self._anchors()

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
        Binding("left", "step(-1)", "Score -1", show=False, priority=True),
        Binding("right", "step(1)", "Score +1", show=False, priority=True),
        Binding("up", "move(-1)", "Previous slider", show=False, priority=True),
        Binding("down", "move(1)", "Next slider", show=False, priority=True),
        Binding("tab", "dimension(1)", "Next dimension", show=False, priority=True),
        Binding("shift+tab", "dimension(-1)", "Previous dimension", show=False, priority=True),
        Binding("equals_sign", "same_score", "Same score as the other option", show=False, priority=True),
        *[Binding(str(d), f"set_score({d or 10})", f"Score {d or 10}", show=False, priority=True) for d in range(10)],
    ]

    @dataclass
    class Changed(Message):
        """A score was set or changed by the expert."""

        panel: RubricPanel
        dimension: str
        option: int
        value: int

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
        # A resumed draft starts on its first empty slider: typed digits never overwrite a score.
        self.set_place(*self.first_unscored(), scroll=False)

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
            else:
                # Nothing lit (no rubric shown yet): recording the place here left the first
                # comparison's first slider unlit, as the place "had not changed".
                self._lit = None
        if scroll and self.has_focus and self.current < len(rows):
            # After the next refresh, and then at once: the row's region is read when the scroll is
            # asked for, and the highlight just shown its anchors (display: block on -current), so
            # a scroll asked for now measured the row before or after that layout, whichever came
            # first (the 80x24 snapshot differed 1 run in 3). Once refreshed, the layout is current.
            self.call_after_refresh(self._scroll_current)

    def _scroll_current(self) -> None:
        rows = self.rows()
        if not self.has_focus or self.current >= len(rows):
            return
        container = self.parent
        if self.current == 0 and isinstance(container, Widget) and container.is_scrollable:
            container.scroll_home(animate=False, immediate=True)  # the first: with the intro above it
        else:
            rows[self.current].scroll_visible(animate=False, immediate=True)

    def watch_has_focus(self, has_focus: bool) -> None:
        # On the flag itself, not on Focus and Blur events: on the first comparison the panel
        # took focus before its rows were shown and no event came after, so nothing was lit.
        super().watch_has_focus(has_focus)
        self._sync(scroll=has_focus)

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
            self._leave(direction)

    def action_same_score(self) -> None:
        rows = self.rows()
        if rows:
            other = rows[self.current].value(3 - self.option)
            if other is not None:
                self.action_set_score(other)

    def _leave(self, direction: int) -> None:
        # Focus moves here, at once, not in a message handler: a burst's next key (the winner
        # digit after the last score) is routed to whatever has focus when the app reads it.
        if direction > 0:
            self.screen.focus_next()
        else:
            self.screen.focus_previous()

    def first_unscored(self) -> tuple[int, int]:
        """The place (dimension index, option) of the first slider without a score, else the first."""
        for row in self.rows():
            for option in (1, 2):
                if row.value(option) is None:
                    return row.index, option
        return 0, 1

    def action_dimension(self, direction: int) -> None:
        index = self.current + direction
        if 0 <= index < len(self.rows()):
            self.set_place(index, 1)
        else:
            self._leave(direction)

    def on_score_slider_clicked(self, event: ScoreSlider.Clicked) -> None:
        event.stop()
        row = next(r for r in self.rows() if event.slider in r.sliders())
        self.set_place(row.index, event.slider.option)
        self.focus()
        self._set(event.slider.option, event.value)


WINNER_LABELS = {"option_1": "Option 1", "option_2": "Option 2", "tie": "Tie"}
WINNER_KEYS = {"option_1": "1", "option_2": "2", "tie": "t"}


class WinnerChoice(Static):
    """One choice of the winner picker (clickable), with its key."""

    @dataclass
    class Picked(Message):
        value: str

    def __init__(self, value: str) -> None:
        super().__init__(self.label(value, False, False), markup=False, classes="winner-choice", id=f"winner-{value}")
        self.value = value

    @staticmethod
    def label(value: str, chosen: bool, proposed: bool) -> str:
        mark = "\N{BULLET}" if chosen else " "
        hint = "  \N{LEFTWARDS ARROW} proposed (enter)" if proposed and not chosen else ""
        return f"({mark}) {WINNER_KEYS[value]}  {WINNER_LABELS[value]}{hint}"

    def on_click(self) -> None:
        self.post_message(self.Picked(self.value))


class WinnerPicker(Vertical, can_focus=True):
    """The winner: option 1, option 2, or a tie when the session allows ties. Keys 1, 2, t, enter, arrows.

    One choice a line, each with its key: a row of three did not fit a 48-column rubric ("Tie"
    was never seen). `proposed` is the winner the scores suggest (higher average); enter takes it.
    Picking by key moves focus on to what follows (the rationale) at once.
    """

    DEFAULT_CSS = """
    WinnerPicker { height: auto; }
    WinnerPicker .winner-choice { width: 1fr; }
    """

    BINDINGS = [
        Binding("1", "pick('option_1')", "Option 1 wins", show=False, priority=True),
        Binding("2", "pick('option_2')", "Option 2 wins", show=False, priority=True),
        Binding("t", "pick('tie')", "Tie", show=False, priority=True),
        Binding("enter", "confirm", "Take the proposed winner", show=False, priority=True),
        Binding("left", "cycle(-1)", "Previous", show=False, priority=True),
        Binding("right", "cycle(1)", "Next", show=False, priority=True),
    ]

    value: reactive[str | None] = reactive(None)
    proposed: reactive[str | None] = reactive(None)

    @dataclass
    class Changed(Message):
        """The winner was picked; `advance` when picked by its key (focus has moved on)."""

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
        yield Label("Winner", classes="winner-label")
        for value in ("option_1", "option_2", "tie"):
            yield WinnerChoice(value)

    def on_mount(self) -> None:
        self.set_allow_ties(self.allow_ties)

    def set_allow_ties(self, allow_ties: bool) -> None:
        self.allow_ties = allow_ties
        self.query_one("#winner-tie").display = allow_ties

    def _relabel(self) -> None:
        for choice in self.query(WinnerChoice):
            chosen = choice.value == self.value
            choice.update(WinnerChoice.label(choice.value, chosen, choice.value == self.proposed), layout=False)
            choice.set_class(chosen, "-chosen")

    def watch_value(self, value: str | None) -> None:
        self._relabel()

    def watch_proposed(self, proposed: str | None) -> None:
        self._relabel()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "pick" and parameters == ("tie",):
            return self.allow_ties
        if action == "confirm":
            return self.proposed is not None or self._proposal_now() is not None
        return True

    def action_pick(self, value: str, advance: bool = True) -> None:
        if value == "tie" and not self.allow_ties:
            return
        # `screen.focused`, not `has_focus`: that flag waits for the Focus event, which a burst
        # outruns (the panel hands focus over on its last score, the winner key comes next).
        if advance and self.screen.focused is self:
            # At once, before the app routes the next key: the rationale typed right after the
            # winner key lands in the rationale, even in a burst with no pause.
            self.screen.focus_next()
        if self.value != value:
            self.value = value
            self.post_message(self.Changed(self, value, advance))

    def _proposal_now(self) -> str | None:
        """The proposal from the sliders as they stand, when the screen can say (`proposal_now`).

        `proposed` is set when the screen has handled the sliders' Changed messages; in a burst
        (a browser under load: 0.5 s behind) enter right after the last digit came first, found
        no proposal and was lost, and the rationale typed next went to this picker.
        """
        proposal = getattr(self.screen, "proposal_now", None)
        return proposal() if callable(proposal) else None

    def action_confirm(self) -> None:
        proposed = self.proposed or self._proposal_now()
        if proposed is not None:
            self.action_pick(proposed)

    def action_cycle(self, step: int) -> None:
        choices = self.choices
        index = choices.index(self.value) + step if self.value in choices else (0 if step > 0 else len(choices) - 1)
        self.action_pick(choices[index % len(choices)], advance=False)

    def on_winner_choice_picked(self, event: WinnerChoice.Picked) -> None:
        event.stop()
        self.focus()
        self.action_pick(event.value, advance=False)
