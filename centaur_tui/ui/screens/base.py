"""Provides the base classes of the app's screens and dialogs."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.binding import ActiveBinding
from textual.screen import ModalScreen, Screen

from centaur_tui.ui.errors import ReportsWorkerErrors

if TYPE_CHECKING:
    from textual import getters

    from centaur_tui.ui.host import HostApp


PINNED_KEYS = ("ctrl+q", "f1")
"""Keys the footer shows first on every screen: Quit and Help (at 80 columns the footer has room
for about six keys, and the app's own came last, after up to nine of the screen's)."""


class CentaurScreen(ReportsWorkerErrors, Screen[None]):
    """Base of the app's screens: worker errors become notifications; Quit and Help lead the footer."""

    EXPERT_SAFE: ClassVar[bool] = False
    """The screen may open in expert-only mode (`centaur tui SESSION --expert ID --expert-only`): it
    shows one expert's own work and reaches no pipeline, assignment, results or audit screen. Set
    True on each such screen."""

    if TYPE_CHECKING:
        # For type checkers only: `self.app` is our app (store_for, clock, sessions_dir...), as the
        # `Host` Protocol says (naming CentaurApp here drew an import circle through every screen).
        # At run time Textual's own property answers, unchanged (its typed getter would also assert).
        app = getters.app(HostApp)

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """Textual's active bindings, the same ones, with `PINNED_KEYS` first (the footer's order)."""
        bindings = super().active_bindings
        return {**{key: bindings[key] for key in PINNED_KEYS if key in bindings}, **bindings}


class CentaurModal(ReportsWorkerErrors, ModalScreen):
    """Base of the app's dialogs: worker errors become notifications."""

    EXPERT_SAFE: ClassVar[bool] = False
    """As `CentaurScreen.EXPERT_SAFE`."""

    if TYPE_CHECKING:
        app = getters.app(HostApp)  # as in CentaurScreen
