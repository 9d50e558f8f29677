"""Prediction-powered rankings end to end: uniform-random assignment, simulated experts, `centaur report`."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.assignment import PlannedAssignment
from centaur_tui.domain.session import JudgeSimulation
from centaur_tui.pipeline.expert_sim import simulate_expert_judgments
from centaur_tui.services.assign import assign_comparisons
from centaur_tui.store import ExpertStore, Store, comparison_texts, store_judgments
from tests.support.experts import judged_session


def _judge_assigned(path: Path, plan: dict[str, tuple[str, int]]) -> None:
    study = load_session(path)
    with Store(study.database) as store:
        for expert, (strategy, n) in plan.items():
            assign_comparisons(study, store, expert, n, strategy)
        places = [
            (a.expert, PlannedAssignment(a.comparison_id, a.presentation, a.flipped, "?"))
            for a in ExpertStore(store).existing()
        ]
        records = simulate_expert_judgments(
            study, store.comparisons(), comparison_texts(store), places, JudgeSimulation(noise=0.5)
        )
        store_judgments(store, records)


def test_report_uses_the_uniform_random_subset_and_counts_the_rest(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    _judge_assigned(path, {"ann": ("uniform-random", 12), "bob": ("stratified", 6)})
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["report", str(path), "--json", str(out), "--quiet", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    p = json.loads(out.read_text())["ppr"]
    assert p["present"] and p["random_subset"]
    assert p["expert_verdicts"] == 18 and p["expert_verdicts_used"] == 12
    assert p["excluded_not_random"] == {"stratified": 6}
    assert sum(m["labeled"] for m in p["modes"]) == 12
    for m in p["modes"]:
        assert sum(r["labeled"] for r in m["rows"]) == 2 * m["labeled"]  # each comparison involves two candidates
        assert all(1 <= r["ppr_low"] <= r["ppr_high"] <= m["candidates"] for r in m["rows"])
    # The flags reach the statistics; a session's [statistics] gives the defaults.
    res = CliRunner().invoke(
        cli,
        ["report", str(path), "--json", str(out), "--quiet", "--bootstrap", "0", "--ppr-alpha", "0.3",
         "--ppr-method", "bonferroni", "--alt-min-experts", "2", "--alt-epsilon", "0.1"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["ppr"]["options"] == {
        "alpha": 0.3,
        "method": "bonferroni",
        "lam": "tuned",
        "any_subset": False,
        "min_labeled": 10,
        "estimator": "panel",
        "ties": "half",
    }
    assert doc["experts"]["options"]["alt_min_experts_per_item"] == 2 and doc["experts"]["options"]["epsilon"] == 0.1


def test_session_statistics_defaults_and_bad_values(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    text = path.read_text()
    path.write_text(text + '\n[statistics]\nppr_alpha = 0.2\nalt_min_experts_per_item = 2\nppr_method = "bonferroni"\n')
    out = tmp_path / "r.json"
    res = CliRunner().invoke(cli, ["report", str(path), "--json", str(out), "--quiet", "--bootstrap", "0"])
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["ppr"]["options"]["alpha"] == 0.2 and doc["ppr"]["options"]["method"] == "bonferroni"
    assert doc["experts"]["options"]["alt_min_experts_per_item"] == 2
    for bad in ("ppr_alpha = 1.0", "ppr_alpha = 0", 'ppr_method = "holm"', "alt_min_experts_per_item = 1",
                "alt_epsilon = -0.1", 'alt_epsilon = "0.2"', "tie_is_win = true"):  # fmt: skip
        path.write_text(text + f"\n[statistics]\n{bad}\n")
        res = CliRunner().invoke(cli, ["report", str(path), "--quiet"])
        assert res.exit_code == 2, (bad, res.output)
        assert "statistics" in res.output and "Traceback" not in res.output
    path.write_text(text)
    for flags in (["--ppr-alpha", "1"], ["--ppr-alpha", "0"], ["--alt-min-experts", "1"], ["--ppr-method", "x"]):
        res = CliRunner().invoke(cli, ["report", str(path), "--quiet", *flags])
        assert res.exit_code == 2, (flags, res.output)


def test_plan_says_how_many_expert_comparisons_reach_a_target(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    res = CliRunner().invoke(cli, ["plan", str(path), "--ppr-target", "4", "--reps", "3", "--ppr-sizes", "5"])
    assert res.exit_code == 0, res.output
    assert "Prediction-powered rankings: the cheapest design reaching a mean rank-set size <= 4" in res.output
    assert "uniform-random" in res.output and "Planned in" in res.output
    # Asking for more than a mode holds tries all of them; the curve lists each n once.
    res = CliRunner().invoke(cli, ["plan", str(path), "--ppr-target", "1", "--reps", "2", "--ppr-sizes", "10000"])
    assert res.exit_code == 0, res.output
    assert "Not reached with power >= 0.8 by any design tried" in res.output and "Nearest:" in res.output
    for bad in (["--ppr-target", "0.5"], [], ["--experts", "3"], ["--ppr-target", "2", "--ppr-alpha", "1"]):
        res = CliRunner().invoke(cli, ["plan", str(path), *bad])
        assert res.exit_code == 2, (bad, res.output)


def test_size_curve_shrinks_on_planted_studies() -> None:
    import numpy as np

    from centaur_tui.stats.planning import comparisons_for_target, ppr_size_curve
    from centaur_tui.stats.synthetic import ppr_studies

    st = ppr_studies(1, 0, seed=2)
    # One study's comparisons; the replicates differ only in which random subset the experts judge.
    curve = ppr_size_curve(st.a, st.b, st.k, st.yhat[0], np.repeat(st.y, 20, axis=0), [50, 200, 600], seed=1)
    sizes = [r.mean_size for r in curve]
    assert sizes[0] > sizes[1] > sizes[2] and [r.n for r in curve] == [50, 200, 600]
    assert comparisons_for_target(curve, sizes[1]) == 200
    assert comparisons_for_target(curve, 0.5) is None
    assert np.isfinite(sizes).all()


def test_the_app_report_follows_the_session_statistics(tmp_path: Path) -> None:
    """The results screen's report (services.report.session_report, no flags) reads [statistics] too."""
    from centaur_tui.services.report import session_report

    path = judged_session(tmp_path)
    path.write_text(path.read_text() + "\n[statistics]\nppr_alpha = 0.25\nalt_epsilon = 0.1\n")
    doc = session_report(load_session(path), bootstrap=0).document
    assert doc.ppr is not None and doc.ppr.options.alpha == 0.25
    assert doc.experts.options.epsilon == 0.1
    # An explicit option still wins.
    doc = session_report(load_session(path), bootstrap=0, ppr_alpha=0.05).document
    assert doc.ppr is not None and doc.ppr.options.alpha == 0.05
