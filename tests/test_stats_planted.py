"""Planted truth on the simulated provider: the planted skills are recovered; alpha falls as judge noise rises."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest
from scipy import stats

from centaur_tui.catalog import load_session
from centaur_tui.domain.study import Study
from centaur_tui.pipeline import Pipeline
from centaur_tui.stats.frames import Frames, build_frames, design_from_session
from centaur_tui.stats.rankings import mean_ranks, overall, within_run_ranks
from centaur_tui.stats.reliability import reliability_table
from centaur_tui.store import Store
from tests.support.sessions import TASKS

SKILLS = {"M1": 0.92, "M2": 0.80, "M3": 0.68, "M4": 0.56, "M5": 0.44, "M6": 0.32}
FAMILIES = {"M1": "F1", "M2": "F2", "M3": "F3", "M4": "F1", "M5": "F2", "M6": "F3"}


def planted_session(
    folder: Path, noise: float, runs: int = 2, tasks: tuple[str, ...] = ("counseling", "tutoring")
) -> Path:
    """Six candidates of three families with spread automation skills; four judges with the given noise."""
    models = "".join(
        textwrap.dedent(f"""
        [[models]]
        name = "{name}"
        model = "simulated/{name.lower()}"
        family = "{FAMILIES[name]}"
        release_order = {7 - int(name[1])}
        simulation.automation_skill = {{ default = {skill} }}
        simulation.coaching_skill = {{ default = {skill} }}
        """)
        for name, skill in SKILLS.items()
    )
    judges = "".join(
        textwrap.dedent(f"""
        [[judges]]
        name = "J{i}"
        model = "simulated/judge-{i}"
        family = "{family}"
        simulation = {{ noise = {noise} }}
        """)
        for i, family in enumerate(("F1", "F2", "F3", "Other"), start=1)
    )
    task_list = ", ".join(f'"{t}"' for t in tasks)
    text = (
        textwrap.dedent(f"""
        name = "planted-{noise}"
        seed = 11
        runs = {runs}
        tasks = [{task_list}]
        tasks_dir = "{TASKS}"

        [limits]
        concurrency = 64
        per_model_concurrency = 32
        backoff_base_s = 0.0
        backoff_max_s = 0.0

        [worker]
        name = "Worker"
        model = "simulated/worker"
        family = "F9"
        simulation.skill = {{ default = 0.5 }}
        """)
        + models
        + judges
    )
    path = folder / f"planted-{noise}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run_and_frame(path: Path) -> tuple[Study, Frames]:
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
        rows = (store.judgment_rows(), store.score_rows(), store.output_rows(), store.comparisons())
        simulated = store.meta()["simulated"] == "true"
    design = design_from_session(
        study.session,
        simulated=simulated,
        general_dimensions=[d.id for d in study.universal.general_dimensions],
        rubric={t: study.rubric(t).ids for t in study.tasks},
    )
    return study, build_frames(*rows, design)


def test_low_noise_recovers_the_planted_automation_ranking(tmp_path: Path) -> None:
    study, frames = run_and_frame(planted_session(tmp_path, noise=0.3))
    assert frames.design.simulated
    ranks = within_run_ranks(frames)
    over = overall(ranks, mean_ranks(ranks))
    auto = over[over["mode"] == "automation"].set_index("candidate")["mean_rank"]
    names = sorted(SKILLS)
    rho = stats.spearmanr([auto[n] for n in names], [-SKILLS[n] for n in names]).statistic
    assert rho >= 0.9, auto.sort_values()
    # Each task separately too.
    means = mean_ranks(ranks)
    for task in study.session.tasks:
        part = means[(means["mode"] == "automation") & (means["task"] == task)].set_index("candidate")["mean_rank"]
        assert stats.spearmanr([part[n] for n in names], [-SKILLS[n] for n in names]).statistic >= 0.9


@pytest.mark.slow
def test_alpha_and_agreement_fall_as_judge_noise_rises(tmp_path: Path) -> None:
    alphas, agreements = [], []
    for noise in (0.3, 1.5, 4.0):
        _, frames = run_and_frame(planted_session(tmp_path, noise=noise, runs=2, tasks=("counseling",)))
        overall_row = reliability_table(frames).iloc[0]
        assert overall_row["units"] > 50
        alphas.append(overall_row["alpha"])
        agreements.append(overall_row["raw_agreement"])
    assert alphas[0] > alphas[1] > alphas[2], alphas
    assert agreements[0] > agreements[2], agreements
    # 72 units are few: at noise 0.3, session seeds 11-18 gave alpha 0.70-0.88 (0.69-0.87 with the
    # call keys before issue 12, which seed the simulated judges), so 0.8 was a coin flip per seed.
    assert alphas[0] > 0.65 and alphas[2] < 0.5, alphas
