"""Provides Study: a validated session with its tasks and universal prompts, ready to run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from centaur_tui.domain.session import Session
from centaur_tui.domain.task import Rubric, Task, Universal, rubric_for


@dataclass(frozen=True)
class Study:
    """Everything a pipeline run needs from files, validated."""

    session: Session
    tasks: dict[str, Task]
    universal: Universal
    session_file: Path
    database: Path
    guidelines: str | None = None
    """The text of `judging.expert_guidelines` (Markdown), read when the session was loaded."""

    def task(self, task_id: str) -> Task:
        return self.tasks[task_id]

    def rubric(self, task_id: str) -> Rubric:
        return rubric_for(self.tasks[task_id], self.universal)
