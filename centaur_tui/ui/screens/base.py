"""Provides the base classes of the app's screens and dialogs."""

from __future__ import annotations

from textual.screen import ModalScreen, Screen

from centaur_tui.ui.errors import ReportsWorkerErrors


class CentaurScreen(ReportsWorkerErrors, Screen[None]):
    """Base of the app's screens: worker errors become notifications."""


class CentaurModal(ReportsWorkerErrors, ModalScreen):
    """Base of the app's dialogs: worker errors become notifications."""
