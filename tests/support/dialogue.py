"""Provides small simulated sessions for assistance as a dialogue ([augmentation] turns, issue 28)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.support.sessions import TASKS


def dialogue_session_toml(
    name: str = "dialogue",
    seed: int = 7,
    turns: int = 3,
    runs: int = 2,
    tasks: tuple[str, ...] = ("counseling", "tutoring"),
    faults: str = "",
    limits: str = "concurrency = 32\nper_model_concurrency = 16\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0",
    prices: str = "",
    human_workers: str = "",
) -> str:
    """Two assistants planted to swap places in a dialogue: Steady writes the better text but answers questions
    poorly (dialogue_skill 0.05: it steers the worker away from requirements), Talker writes a weaker text and
    answers well (0.95). At 1 turn Steady should rank above Talker, at N turns below."""
    task_list = ", ".join(f'"{t}"' for t in tasks)
    return textwrap.dedent(
        f"""
        name = "{name}"
        seed = {seed}
        runs = {runs}
        tasks = [{task_list}]
        tasks_dir = "{TASKS}"

        [augmentation]
        turns = {turns}

        [limits]
        {limits}

        [faults]
        {faults}

        [[models]]
        name = "Steady"
        model = "simulated/steady"
        family = "North"
        automation = false
        simulation.coaching_skill = {{ default = 0.8 }}
        simulation.dialogue_skill = {{ default = 0.05 }}
        {prices}

        [[models]]
        name = "Talker"
        model = "simulated/talker"
        family = "South"
        automation = false
        simulation.coaching_skill = {{ default = 0.45 }}
        simulation.dialogue_skill = {{ default = 0.95 }}
        {prices}

        [worker]
        name = "Worker"
        model = "simulated/worker"
        family = "East"
        simulation.skill = {{ default = 0.4 }}
        {prices}

        [[judges]]
        name = "JudgeWest"
        model = "simulated/judge-west"
        family = "West"
        simulation = {{ noise = 0.5 }}
        {prices}
        {human_workers}
        """
    )


LIVE_ARM = """
[[experts]]
id = "ann"
name = "Ann"

[[experts]]
id = "bob"
name = "Bob"

[human_workers]
experts = ["ann", "bob"]
tasks = ["counseling"]
assistants = ["Steady"]
"""


def live_session(tmp_path: Path, turns: int = 4) -> Path:
    """A run 4-turn session (1 run, 1 task) whose two experts write with a live assistant; work assigned."""
    import asyncio

    from centaur_tui.catalog import load_session
    from centaur_tui.pipeline import Pipeline
    from centaur_tui.store import Store, WorkStore

    path = tmp_path / "live.toml"
    path.write_text(dialogue_session_toml(name="live", turns=turns, runs=1, tasks=("counseling",)) + LIVE_ARM, "utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
        WorkStore(store).assign(study)
    return path
