"""Provides the report document `centaur report` builds, to compare what other front ends show against it."""

from __future__ import annotations

from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.cli.report_cmd import build_session_report, load_report_inputs


def cli_doc(path: Path) -> dict:
    """The document `centaur report SESSION` prints (default options)."""
    study = load_session(path)
    meta, rows = load_report_inputs(study)
    return build_session_report(study, meta, rows).doc
