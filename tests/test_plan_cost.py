"""Cost-aware sizing: `centaur plan --ppr-target` with expert and LLM prices, and the design grid on planted studies."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from centaur_tui.stats.planning import cheapest_design, emulated_runs, ppr_design_grid
from centaur_tui.stats.proportions import wilson_interval
from tests.support.experts import judged_session


def test_emulated_runs_keep_the_stored_runs_then_redraw_with_new_expert_draws() -> None:
    run = np.array([0, 0, 1, 1, 2, 2])
    units, copies = emulated_runs(run, 2, reps=4)
    assert units.tolist() == [0, 1, 2, 3] and copies.tolist() == [0, 0, 0, 0]
    units, copies = emulated_runs(run, 9, reps=4)
    assert len(units) == 18 and sorted(np.bincount(copies).tolist()) == [6, 6, 6]
    with pytest.raises(ValueError, match="replicates"):
        emulated_runs(run, 30, reps=2)


def _planted(units_per_run: int = 60, runs: int = 2, reps: int = 12, seed: int = 3):
    rng = np.random.default_rng(seed)
    k = 4
    skill = np.array([0.0, 0.6, 1.2, 1.8])
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    a = np.array([pairs[u % len(pairs)][0] for u in range(units_per_run * runs)])
    b = np.array([pairs[u % len(pairs)][1] for u in range(units_per_run * runs)])
    p = 1 / (1 + np.exp(-(skill[a] - skill[b])))
    y = (rng.random((reps, len(a))) < p).astype(float)
    yhat = np.clip(p + rng.normal(0, 0.1, len(a)), 0, 1)
    run = np.repeat(np.arange(runs), units_per_run)
    return a, b, k, yhat, y, run


def test_design_grid_power_grows_with_runs_and_experts_and_the_cheapest_is_priced() -> None:
    a, b, k, yhat, y, run = _planted()
    grid = ppr_design_grid(a, b, k, yhat, y, run, [2, 8], [40, 120, 480], target=2.5, alpha=0.1, seed=1)
    by = {(r.runs, r.n): r for r in grid}
    assert set(by) == {(2, 40), (2, 120), (8, 40), (8, 120), (8, 480)}  # 480 > 120 comparisons: cut to 120
    assert by[(2, 40)].mean_size >= by[(2, 120)].mean_size >= by[(8, 480)].mean_size
    assert by[(8, 480)].power >= by[(2, 40)].power
    assert all(r.replicates == 12 and 0 <= r.power <= 1 for r in grid)
    best, priced = cheapest_design(grid, expert_cost=2.0, run_cost=10.0, stored_runs=2, power=0.5)
    assert [r.llm_cost for r in priced if r.runs == 2] == [0.0, 0.0]  # stored runs are paid for
    assert all(r.cost == r.n * 2.0 + max(0, r.runs - 2) * 10.0 for r in priced)
    if best is not None:
        assert best.power >= 0.5
        assert best.cost == min(r.cost for r in priced if r.power >= 0.5)
    none, _ = cheapest_design(grid, expert_cost=1.0, run_cost=None, stored_runs=0, power=1.01)
    assert none is None


def test_plan_recommends_the_cheapest_design_with_its_power_and_cost(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    args = ["plan", str(path), "--ppr-target", "3.5", "--reps", "4", "--ppr-sizes", "10", "--ppr-sizes", "40"]
    res = CliRunner().invoke(cli, [*args, "--expert-cost", "12.5", "--ppr-runs", "1", "--ppr-runs", "2"])
    assert res.exit_code == 0, res.output
    assert "Expert judgment: 12.5 per judgment (--expert-cost)" in " ".join(res.output.split())
    # The small session's simulated models have no price: said, and counted as 0.
    assert "cost of a run unknown: no price for simulated/alpha" in " ".join(res.output.split())
    assert "judge calls per comparison" in res.output
    assert "(n=4" in res.output  # each power says its n of replicates
    flat = " ".join(res.output.split())
    found = re.search(r"Recommended: .* power (\d\.\d\d) \[(\d\.\d\d), (\d\.\d\d)\] \(n=4\)", flat)
    assert found or "Not reached with power" in flat
    if found:  # the power's Wilson interval over 4 replicates, and the warning that 4 leave it uncertain
        power, low, high = (float(x) for x in found.groups())
        assert low <= power <= high and (low, high) == tuple(round(v, 2) for v in wilson_interval(power, 4))
        assert "4 replicates leave the power uncertain" in flat
    res = CliRunner().invoke(cli, [*args, "--hourly-rate", "60", "--ppr-runs", "1"])
    assert res.exit_code == 0, res.output
    assert "60/h x 300 s per judgment (assumed: no expert judgment time stored)" in " ".join(res.output.split())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--expert-cost", "-1"], "--expert-cost must be a number >= 0"),
        (["--hourly-rate", "-5"], "--hourly-rate must be a number >= 0"),
        (["--expert-cost", "nan"], "nan is not a finite number"),
        (["--expert-cost", "1", "--hourly-rate", "2"], "not both"),
        (["--ppr-power", "0"], "--ppr-power must be in (0, 1]"),
        (["--ppr-power", "1.5"], "--ppr-power must be in (0, 1]"),
    ],
)
def test_plan_refuses_bad_costs(tmp_path: Path, extra: list[str], message: str) -> None:
    res = CliRunner().invoke(cli, ["plan", str(tmp_path / "whatever.toml"), "--ppr-target", "3", *extra])
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_plan_cost_without_target_and_unknown_session(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["plan", str(tmp_path / "x.toml"), "--experts", "2", "--per-expert", "3",
                                   "--expert-cost", "3"])  # fmt: skip
    assert res.exit_code == 2 and "give --ppr-target" in res.output
    res = CliRunner().invoke(cli, ["plan", str(tmp_path / "nope.toml"), "--ppr-target", "3", "--expert-cost", "3"])
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_hourly_rate_uses_the_median_stored_expert_time(tmp_path: Path) -> None:
    import dataclasses

    from centaur_tui.catalog import load_session
    from centaur_tui.domain.assignment import PlannedAssignment
    from centaur_tui.domain.session import JudgeSimulation
    from centaur_tui.pipeline.expert_sim import simulate_expert_judgments
    from centaur_tui.services.plan import plan_costs
    from centaur_tui.store import Store, comparison_texts, store_judgments

    path = judged_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        comps = store.comparisons()
        places = [("ann", PlannedAssignment(c, 0, False, "uniform-random")) for c in sorted(comps)[:5]]
        records = simulate_expert_judgments(study, comps, comparison_texts(store), places, JudgeSimulation())
        timed = [dataclasses.replace(r, seconds=s) for r, s in zip(records, (60, 120, 180, 240, 9000), strict=True)]
        store_judgments(store, timed)
        rows = [r for r in store.judgment_rows() if r.judge_kind == "llm"]
    costs = plan_costs(study, rows, comps, expert_cost=None, hourly_rate=30.0, stored=True)
    assert costs.expert == pytest.approx(30.0 * 180 / 3600)  # the median, not the mean the 9,000 s outlier drags
    assert "median 180 s per judgment (n = 5 stored)" in costs.expert_basis
    assert costs.stored_runs == study.session.runs
    with pytest.raises(Exception, match="--hourly-rate must be a number >= 0"):
        plan_costs(study, rows, comps, expert_cost=None, hourly_rate=-1.0, stored=True)
