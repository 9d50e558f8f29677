"""Assistance as a dialogue on planted truth: how often the report recovers an assistant that helps more in dialogue.

Each study is a whole simulated session (1 run, 2 tasks, one judge, `[augmentation] turns = 3`)
run through the pipeline and the report: Steady writes the better text (coaching 0.8) but
answers questions poorly (dialogue 0.05), Talker the weaker text (0.45) but answers well
(0.95). A study "recovers" the plant when Steady ranks above Talker at 1 turn and Talker above
Steady at 3 turns. The null plant gives both a dialogue skill equal to their coaching skill:
there the ranks should rarely swap.

    .venv/bin/python bench/dialogue.py [studies]

Measured (40 studies each, seeds 0-39, 4-5 s a study on the shared, busy 2-core machine):
planted: 40 of 40 recovered (Talker's 3-turn candidate beat its text head to head in 40);
null: the ranks swapped in 0 of 40 (Talker's 3-turn candidate ahead of its text in 20: chance).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

TASKS = Path(__file__).resolve().parents[1] / "tasks"


def session(seed: int, steady: float, talker: float) -> str:
    return textwrap.dedent(
        f"""
        name = "bench_dialogue"
        seed = {seed}
        runs = 1
        tasks = ["counseling", "tutoring"]
        tasks_dir = "{TASKS}"

        [augmentation]
        turns = 3

        [limits]
        concurrency = 32
        backoff_base_s = 0.0
        backoff_max_s = 0.0

        [[models]]
        name = "Steady"
        model = "simulated/steady"
        family = "North"
        automation = false
        simulation.coaching_skill = {{ default = 0.8 }}
        simulation.dialogue_skill = {{ default = {steady} }}

        [[models]]
        name = "Talker"
        model = "simulated/talker"
        family = "South"
        automation = false
        simulation.coaching_skill = {{ default = 0.45 }}
        simulation.dialogue_skill = {{ default = {talker} }}

        [worker]
        name = "Worker"
        model = "simulated/worker"
        family = "East"
        simulation.skill = {{ default = 0.4 }}

        [[judges]]
        name = "JudgeWest"
        model = "simulated/judge-west"
        family = "West"
        simulation = {{ noise = 0.5 }}
        """
    )


def study(seed: int, steady: float, talker: float) -> tuple[bool, bool]:
    """(ranks swapped as planted, Talker's dialogue beat its text head to head) for one session."""
    from centaur_tui.catalog import load_session
    from centaur_tui.pipeline import Pipeline
    from centaur_tui.services.report import session_report
    from centaur_tui.store import Store

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.toml"
        path.write_text(session(seed, steady, talker), encoding="utf-8")
        loaded = load_session(path)
        with Store(loaded.database) as store:
            asyncio.run(Pipeline(loaded, store).run())
        doc = session_report(loaded, bootstrap=0, permutation=False, section="rankings").document
    assert doc.dialogue is not None
    rows = {r.assistant: r for r in doc.dialogue.rows}
    s, t = rows["Steady"], rows["Talker"]
    swapped = bool(
        s.rank_1 is not None
        and t.rank_1 is not None
        and s.rank_n is not None
        and t.rank_n is not None
        and s.rank_1 < t.rank_1
        and t.rank_n < s.rank_n
    )
    return swapped, bool(t.head_to_head is not None and t.head_to_head > 0.5)


def main(studies: int = 40) -> None:
    for label, steady, talker in (("planted", 0.05, 0.95), ("null", 0.8, 0.45)):
        started = time.perf_counter()
        results = [study(seed, steady, talker) for seed in range(studies)]
        swapped = sum(r[0] for r in results)
        ahead = sum(r[1] for r in results)
        print(
            f"{label}: ranks swapped in {swapped} of {studies}; Talker's dialogue ahead of its text in {ahead}; "
            f"{(time.perf_counter() - started) / studies:.2f} s a study"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
