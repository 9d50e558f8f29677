"""Provides the orchestration of a session: generate, judge, resume, export, report progress.

The names below are loaded on first use, so importing one submodule (the report process
imports `pipeline.progress` or the like) does not load the runner and its dependencies (about 0.15 s).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from centaur_tui.pipeline.progress import Progress, ProgressSink, StageProgress
    from centaur_tui.pipeline.runner import Pipeline, RunOutcome, run_session

__all__ = ["Pipeline", "Progress", "ProgressSink", "RunOutcome", "StageProgress", "run_session"]

_HOME = {
    "Pipeline": "runner",
    "RunOutcome": "runner",
    "run_session": "runner",
    "Progress": "progress",
    "ProgressSink": "progress",
    "StageProgress": "progress",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(f"centaur_tui.pipeline.{_HOME[name]}"), name)
    raise AttributeError(f"module 'centaur_tui.pipeline' has no attribute {name!r}")
