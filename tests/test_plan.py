"""`centaur plan` and simulated experts on the simulated provider: planted truth, the report section, the CLI."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.session import JudgeSimulation
from centaur_tui.llm.simulation import judge_reply
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.expert_sim import plan_expert_study, simulate_expert_judgments, simulated_experts
from centaur_tui.services.plan import simulate_design
from centaur_tui.store import Store, comparison_lengths, comparison_texts
from tests.support.sessions import small_session_toml

EXPERT_NOISE = 0.8
LLM_NOISE = 0.5  # the judges of small_session_toml
CODE = {"option_1": 0, "option_2": 1, "tie": 2}


@pytest.fixture(scope="module")
def run_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small simulated session (3 runs, 2 tasks: 96 comparisons), run once."""
    folder = tmp_path_factory.mktemp("plan")
    path = folder / "small.toml"
    path.write_text(small_session_toml(runs=3), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
    return path


def _copy(session: Path, tmp_path: Path) -> Path:
    shutil.copytree(session.parent, tmp_path / "s")
    return tmp_path / "s" / session.name


def _verdict_shares(study, task: str, text_a: str, text_b: str, noise: float, draws: int, seed: str) -> np.ndarray:
    """Monte Carlo distribution of a simulated judge's canonical verdict (A wins, B wins, tie) on two texts."""
    knobs = JudgeSimulation(noise=noise)
    rng = random.Random(seed)
    counts = Counter(
        CODE[judge_reply(study.task(task), study.universal, knobs, text_a, text_b, True, rng)["winner"]]
        for _ in range(draws)
    )
    return np.array([counts[c] for c in (0, 1, 2)]) / draws


@pytest.mark.slow
def test_simulated_experts_give_agreement_intervals_covering_the_simulation_and_a_full_report(
    run_session: Path, tmp_path: Path
) -> None:
    session = _copy(run_session, tmp_path)
    study = load_session(session)
    with Store(study.database) as store:
        comps = store.comparisons()
        texts = comparison_texts(store)
        assignments = plan_expert_study(comps, simulated_experts(3), 60, 3, seed=4)
        records = simulate_expert_judgments(study, comps, texts, assignments, JudgeSimulation(noise=EXPERT_NOISE), 4)
        for record in records:
            assert store.save_judgment(record) is not None
        llm_counts = Counter(r.comparison_id for r in store.judgment_rows() if r.judge_kind == "llm" and r.valid)
        assert len(comparison_lengths(store)) == len(comps)
    chosen = sorted({a.comparison_id for _, a in assignments})
    assert len(chosen) == 60 and len(records) == 180  # K = 3: all three experts on the same 60 comparisons

    out = CliRunner().invoke(cli, ["report", str(session), "--json", str(tmp_path / "r.json"), "--bootstrap", "300"])
    assert out.exit_code == 0, out.output
    ex = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["experts"]
    assert ex["present"] and ex["counts"]["reference_comparisons"] == 60
    assert ex["counts"]["expert_usable"] == 180 and ex["counts"]["experts"] == [e.id for e in simulated_experts(3)]
    assert "Experts vs LLM judges: agreement blocks" in out.output and "SIMULATED DATA" in out.output

    # What the simulation implies: per comparison, P(two judges agree) = sum over verdicts of the product of their
    # verdict probabilities (Monte Carlo over the simulated judge on the very texts), weighted by judge pairs.
    implied_el = implied_ee = weight_el = weight_ee = 0.0
    for cid in chosen:
        c = comps[cid]
        p_exp = _verdict_shares(study, c.task, *texts[cid], EXPERT_NOISE, 120, f"e{cid}")
        p_llm = _verdict_shares(study, c.task, *texts[cid], LLM_NOISE, 120, f"l{cid}")
        implied_el += 3 * llm_counts[cid] * float(p_exp @ p_llm)
        weight_el += 3 * llm_counts[cid]
        implied_ee += 3 * float(p_exp @ p_exp)
        weight_ee += 3
    blocks = {r["block"]: r for r in ex["agreement"]["blocks"]}
    for name, implied in (("expert-LLM", implied_el / weight_el), ("expert-expert", implied_ee / weight_ee)):
        row = blocks[name]
        assert row["ci_low"] <= implied <= row["ci_high"], (name, implied, row)
        assert row["ci_high"] - row["ci_low"] < 0.25

    # The rest of the section is there, with its n, and drawable.
    assert ex["alt_test"]["rows"] and all(r["items"] >= 0 for r in ex["alt_test"]["rows"])
    assert {r["finding"] for r in ex["headline"]["rows"]} == {"best solver", "best assistant", "plain beats assisted"}
    length = next(r for r in ex["bias"]["length"]["rows"] if r["judge"] == "sim_expert_1")
    assert length["share_longer"] is not None or length["reason"] == "output lengths not given to the statistics"
    from centaur_tui.report import ReportDocument
    from centaur_tui.stats.figures import agreement_matrix, expert_rank_scatter

    doc = ReportDocument.from_json((tmp_path / "r.json").read_text(encoding="utf-8"))
    for draw, name in ((agreement_matrix, "a.png"), (expert_rank_scatter, "b.png")):
        assert draw(doc, tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_assignment_gives_each_comparison_to_k_experts_and_replicates_differ(run_session: Path) -> None:
    study = load_session(run_session)
    with Store(study.database) as store:
        comps = store.comparisons()
    plan = plan_expert_study(comps, simulated_experts(4), 20, 2, seed=1)
    per_expert = Counter(e for e, _ in plan)
    per_comparison = Counter(a.comparison_id for _, a in plan)
    assert set(per_expert.values()) == {20} and set(per_comparison.values()) == {2} and len(per_comparison) == 40
    assert plan == plan_expert_study(comps, simulated_experts(4), 20, 2, seed=1)
    other = plan_expert_study(comps, simulated_experts(4), 20, 2, seed=2)
    assert {a.comparison_id for _, a in other} != set(per_comparison)
    alone = plan_expert_study(comps, simulated_experts(3), 10, 1, seed=1)
    assert set(Counter(a.comparison_id for _, a in alone).values()) == {1}


def test_more_judgments_give_narrower_intervals(run_session: Path) -> None:
    study = load_session(run_session)
    with Store(study.database) as store:
        comps, texts = store.comparisons(), comparison_texts(store)
        rows = [r for r in store.judgment_rows() if r.judge_kind == "llm"]
    knobs = JudgeSimulation(noise=EXPERT_NOISE)
    width = {}
    for m in (15, 90):
        summary, judged, compared = simulate_design(study, comps, texts, rows, 3, m, 3, knobs, 3, 100, 0)
        assert judged == [3 * m] * 3 and compared == [m] * 3
        by = {r.key: r for r in summary}
        assert by["expert_llm_agreement"].defined == 3 and 0.5 < by["expert_llm_agreement"].value < 1
        width[m] = by["expert_llm_agreement"].width, by["spearman_pooled"].width
    assert width[90][0] < width[15][0] and width[90][1] < width[15][1], width


def test_plan_command_on_a_run_session_and_on_a_session_never_run(
    run_session: Path, write_session, tmp_path: Path
) -> None:
    out = CliRunner().invoke(
        cli,
        [
            "plan",
            str(run_session),
            "--experts",
            "3",
            "--per-expert",
            "20",
            "--per-expert",
            "40",
            "--overlap",
            "3",
            "--reps",
            "2",
            "--bootstrap",
            "50",
        ],
    )
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())  # prose is wrapped at 100 columns
    assert "SIMULATED EXPERTS" in text and "the session's database" in text
    assert "expert-LLM agreement (with ties)" in text and "Spearman, tasks pooled per mode" in text
    assert "Designs side by side" in text and "N = 3 expert(s) x M = 40 judgment(s), overlap K = 3" in text
    assert max(len(line) for line in out.output.splitlines()) <= 100

    fresh = write_session(filename="fresh.toml")
    out = CliRunner().invoke(
        cli, ["plan", str(fresh), "--experts", "2", "--per-expert", "10", "--reps", "1", "--bootstrap", "30"]
    )
    assert out.exit_code == 0, out.output
    assert "simulated stand-in run of the session (1 run(s), 32 comparisons" in " ".join(out.output.split())
    assert not (fresh.parent / "fresh.db").exists() and not (fresh.parent / "small.db").exists()

    bad = CliRunner().invoke(cli, ["plan", str(run_session), "--experts", "2", "--per-expert", "5", "--overlap", "3"])
    assert bad.exit_code == 2 and "--overlap 3 needs at least 3 experts" in bad.output
