"""Provides the report document `centaur report` builds, to compare what other front ends show against it."""

from __future__ import annotations

from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.report import ReportDocument
from centaur_tui.services.report import session_report


def cli_doc(path: Path) -> ReportDocument:
    """The document `centaur report SESSION` prints (default options)."""
    return session_report(load_session(path)).document
