"""Provides the orchestration of a session: generate, judge, resume, export, report progress."""

from centaur_tui.pipeline.progress import Progress, ProgressSink, StageProgress
from centaur_tui.pipeline.runner import Pipeline, RunOutcome, run_session

__all__ = ["Pipeline", "Progress", "ProgressSink", "RunOutcome", "StageProgress", "run_session"]
