"""The footer rebuilds its keys only when what it shows changes (`ui/widgets/footer.py`)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Button, Input
from textual.widgets._footer import FooterKey

from centaur_tui.ui.widgets.footer import SteadyFooter
from tests.support.waits import wait_until


class Keyed(Button):
    BINDINGS: ClassVar = [Binding("x", "press_x", "Mark")]

    def action_press_x(self) -> None:
        pass


class Demo(App[None]):
    BINDINGS: ClassVar = [Binding("q", "quit", "Quit"), Binding("ctrl+s", "toggle_save", "Save")]

    def __init__(self) -> None:
        super().__init__()
        self.can_save = True

    def compose(self) -> ComposeResult:
        yield Keyed("one", id="one")
        yield Keyed("two", id="two")
        yield Input(id="field")
        yield SteadyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "toggle_save":
            return True if self.can_save else None  # None: shown, disabled
        return True

    def action_toggle_save(self) -> None:
        pass


def _keys(app: App[None]) -> dict[str, FooterKey]:
    return {k.key: k for k in app.screen.query(FooterKey)}


async def test_a_focus_move_between_widgets_with_the_same_keys_keeps_the_footer() -> None:
    app = Demo()
    async with app.run_test() as pilot:
        app.query_one("#one").focus()
        await wait_until(pilot, lambda: "x" in _keys(app), "the focused button's key in the footer")
        before = _keys(app)
        app.query_one("#two").focus()
        await pilot.pause()
        await pilot.pause()
        after = _keys(app)
        assert after.keys() == before.keys()
        assert all(after[k] is before[k] for k in after)  # the same widgets: not rebuilt


async def test_new_keys_rebuild_the_footer_and_a_disabled_key_counts_as_a_change() -> None:
    app = Demo()
    async with app.run_test() as pilot:
        app.query_one("#one").focus()
        await wait_until(pilot, lambda: "x" in _keys(app), "the focused button's key in the footer")
        app.query_one("#field").focus()  # other bindings: x goes, the input's own come
        await wait_until(
            pilot, lambda: "x" not in _keys(app) and "ctrl+s" in _keys(app), "the button's key to leave the footer"
        )
        footer = app.query_one(SteadyFooter)
        assert footer._showing() == footer._shown
        app.can_save = False  # a key shown disabled is a change: the next bindings signal rebuilds
        assert footer._showing() != footer._shown


async def test_a_burst_of_focus_moves_leaves_the_footer_showing_the_last_widgets_keys() -> None:
    """Tab pressed faster than the footer refreshes (as people type), the save key disabled in the
    middle: once the queue is drained the footer shows what the last focused widget offers, not a
    state from the middle of the burst."""
    app = Demo()
    async with app.run_test() as pilot:
        app.query_one("#one").focus()
        await wait_until(pilot, lambda: "x" in _keys(app), "the focused button's key in the footer")
        footer = app.query_one(SteadyFooter)
        for presses in (1, 2, 3, 5, 7):
            await pilot.press(*["tab"] * presses)
            app.can_save = presses % 2 == 0
            app.screen.refresh_bindings()
            await wait_until(pilot, lambda: footer._showing() == footer._shown, "the footer to settle")
            focused = app.focused
            assert ("x" in _keys(app)) == isinstance(focused, Keyed), (presses, focused)
            assert _keys(app)["ctrl+s"].has_class("-disabled") == (not app.can_save), presses
