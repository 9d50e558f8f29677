"""Provides the base classes of the app's screens and dialogs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.screen import ModalScreen, Screen

from centaur_tui.ui.errors import ReportsWorkerErrors

if TYPE_CHECKING:
    from textual import getters

    from centaur_tui.ui.app import CentaurApp


class CentaurScreen(ReportsWorkerErrors, Screen[None]):
    """Base of the app's screens: worker errors become notifications."""

    if TYPE_CHECKING:
        # For type checkers only: `self.app` is our app (store_for, clock, sessions_dir...). At run
        # time Textual's own property answers, unchanged (Textual's typed getter would also assert).
        app = getters.app(CentaurApp)


class CentaurModal(ReportsWorkerErrors, ModalScreen):
    """Base of the app's dialogs: worker errors become notifications."""

    if TYPE_CHECKING:
        app = getters.app(CentaurApp)  # as in CentaurScreen
