"""Provides the footer every screen shows: Textual's, rebuilt only when what it shows changes.

Textual's `Footer` rebuilds all its keys whenever the screen's bindings may have changed, that
is on every focus change: moving between two sliders of the rubric (same keys, same labels)
mounted a dozen new widgets and re-applied their styles each time, 10% of the CPU of opening a
judging screen. `SteadyFooter` compares what it would show (each shown binding's key, label,
action, group, tooltip and whether it is enabled) with what it shows, and rebuilds only when
they differ.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class SteadyFooter(Footer):
    """A `Footer` that skips rebuilding when the keys it would show are the ones it shows."""

    _shown: tuple[Hashable, ...] | None = None

    def _showing(self) -> tuple[Hashable, ...]:
        """What `compose` would show now: the shown bindings with their state, and the footer's options."""
        shown = tuple(
            (
                binding.key,
                self.app.get_key_display(binding),
                binding.description,
                binding.action,
                enabled,
                tooltip,
                id(binding.group) if binding.group is not None else None,
            )
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (self.compact, self.show_command_palette, shown)

    def compose(self) -> ComposeResult:
        # Before the screen's first bindings signal Textual's footer shows nothing: nothing shown.
        self._shown = self._showing() if self._bindings_ready else None
        yield from super().compose()

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if not self.is_attached or self._showing() != self._shown:
            await self.recompose()
