"""Provides the repository's tasks folder and small simulated session files written on the fly."""

from __future__ import annotations

import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"


def small_session_toml(
    name: str = "small",
    runs: int = 1,
    tasks: tuple[str, ...] = ("counseling", "tutoring"),
    extra: str = "",
    faults: str = "",
    judging: str = "",
    limits: str = "concurrency = 32\nper_model_concurrency = 16\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0",
) -> str:
    """A small simulated session: 4 candidates of 3 families, a worker, 3 judges."""
    task_list = ", ".join(f'"{t}"' for t in tasks)
    return textwrap.dedent(
        f"""
        name = "{name}"
        seed = 7
        runs = {runs}
        tasks = [{task_list}]
        tasks_dir = "{TASKS}"

        [judging]
        {judging}

        [limits]
        {limits}

        [faults]
        {faults}

        [[models]]
        name = "Alpha"
        model = "simulated/alpha"
        family = "North"
        simulation.automation_skill = {{ default = 0.9 }}
        simulation.coaching_skill = {{ default = 0.85 }}

        [[models]]
        name = "Beta"
        model = "simulated/beta"
        family = "North"
        simulation.automation_skill = {{ default = 0.65 }}
        simulation.coaching_skill = {{ default = 0.6 }}

        [[models]]
        name = "Gamma"
        model = "simulated/gamma"
        family = "South"
        simulation.automation_skill = {{ default = 0.45 }}
        simulation.coaching_skill = {{ default = 0.35 }}

        [[models]]
        name = "Delta"
        model = "simulated/delta"
        family = "East"
        simulation.automation_skill = {{ default = 0.25 }}
        simulation.coaching_skill = {{ default = 0.1 }}

        [worker]
        name = "Worker"
        model = "simulated/worker"
        family = "East"
        simulation.skill = {{ default = 0.5 }}

        [[judges]]
        name = "JudgeNorth"
        model = "simulated/judge-north"
        family = "North"
        simulation = {{ noise = 0.5 }}

        [[judges]]
        name = "JudgeSouth"
        model = "simulated/judge-south"
        family = "South"
        simulation = {{ noise = 0.5 }}

        [[judges]]
        name = "JudgeWest"
        model = "simulated/judge-west"
        family = "West"
        simulation = {{ noise = 0.5 }}
        {extra}
        """
    )
