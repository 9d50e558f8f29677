"""Prediction-powered rankings (stats/ppr.py): hand-computed values, ppi-python's values, planted truth."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from centaur_tui.stats import ppr
from centaur_tui.stats.synthetic import ppr_studies

DATA = Path(__file__).parent / "data"


def _as_dict(result: tuple[Any, dict]) -> tuple[dict, dict]:
    """The section as its JSON-ready dict (these tests check the JSON `centaur report --json` writes)."""
    section, tables = result
    return section.to_dict(), tables


def test_estimate_by_hand_two_candidates() -> None:
    # Candidates 0 and 1; four comparisons, all (0, 1). LLM points for 0: 1, 1, 0, 0.5; the
    # experts judged the first two: 1 and 0. lambda = 1: theta_0 = mean_U(yhat) + mean_L(y - yhat)
    # = (0 + 0.5) / 2 + ((1 - 1) + (0 - 1)) / 2 = 0.25 - 0.5 = -0.25; theta_1 = 1 - theta_0.
    a, b = np.array([0, 0, 0, 0]), np.array([1, 1, 1, 1])
    yhat = np.array([1.0, 1.0, 0.0, 0.5])
    y = np.array([1.0, 0.0, np.nan, np.nan])
    lab = np.array([True, True, False, False])
    est = ppr.ppr_estimate(a, b, 2, yhat, y, lab, lam="one")
    assert est.theta[0] == pytest.approx([-0.25, 1.25])
    # var = var0(yhat_U) / 2 + var0(y - yhat over L) / 2 = 0.0625 / 2 + 0.25 / 2 = 0.15625,
    # and the two candidates move together with opposite signs.
    assert est.sigma[0] == pytest.approx(np.array([[0.15625, -0.15625], [-0.15625, 0.15625]]))
    assert est.labeled[0].tolist() == [2, 2] and est.unlabeled[0].tolist() == [2, 2]
    # lambda = 0 is the experts alone: mean of 1 and 0.
    zero = ppr.ppr_estimate(a, b, 2, yhat, y, lab, lam="zero")
    assert zero.theta[0] == pytest.approx([0.5, 0.5])
    assert zero.sigma[0, 0, 0] == pytest.approx(0.25 / 2)


def test_against_ppi_python() -> None:
    """Point estimates and 90% intervals as ppi-python 0.2.3 computed them (bench/ppi_reference.py)."""
    ref = json.loads((DATA / "ppi_reference.json").read_text())
    a, b, k = np.array(ref["a"]), np.array(ref["b"]), ref["k"]
    z = stats.norm.ppf(0.95)
    for lam in ("tuned", "one"):
        est = ppr.ppr_estimate(a, b, k, np.array(ref["yhat"]), np.array(ref["y"]), np.array(ref["labeled"]), lam=lam)
        for m, row in enumerate(ref["results"][lam]):
            assert est.theta[0, m] == pytest.approx(row["theta"], abs=1e-12)
            assert est.theta[0, m] - z * est.se[0, m] == pytest.approx(row["ci_low_90"], abs=1e-12)
            assert est.theta[0, m] + z * est.se[0, m] == pytest.approx(row["ci_high_90"], abs=1e-12)


def test_rank_sets_by_hand() -> None:
    # Three candidates, independent estimates with SE 0.01: 0.9 and 0.5 are far apart, 0.5
    # and 0.49 are not. Chatzi: crit = sqrt(chi2_3(0.9)) = 2.500; SE of a difference = 0.01414.
    theta = np.array([0.9, 0.5, 0.49])
    sigma = np.eye(3) * 1e-4
    crit = math.sqrt(stats.chi2.ppf(0.9, 3))
    assert ppr.critical_value(3, 0.1, "chatzi") == pytest.approx(crit)
    low, high = ppr.rank_sets(theta, sigma, 0.1, "chatzi")
    assert low.tolist() == [1, 2, 2] and high.tolist() == [1, 3, 3]
    # Bonferroni: z at 1 - 0.1 / 6.
    assert ppr.critical_value(3, 0.1, "bonferroni") == pytest.approx(stats.norm.ppf(1 - 0.1 / 6))
    # A NaN candidate (no expert comparison) is never ordered: [1, k]; the other two still are.
    low, high = ppr.rank_sets(np.array([0.9, np.nan, 0.1]), np.eye(3) * 1e-4, 0.1)
    assert low.tolist() == [1, 1, 2] and high.tolist() == [2, 3, 3]
    assert ppr.ranks_of(np.array([0.2, 0.7, 0.7])).tolist() == [3, 1, 1]


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_rank_sets_refuse_bad_alpha(bad: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        ppr.rank_sets(np.array([0.1, 0.2]), np.eye(2), bad)


def test_bad_inputs_refused() -> None:
    with pytest.raises(ValueError, match="indices"):
        ppr.incidence(np.array([0, 3]), np.array([1, 0]), 3)
    with pytest.raises(ValueError, match="two different"):
        ppr.incidence(np.array([0, 1]), np.array([0, 2]), 3)
    with pytest.raises(ValueError, match="lambda"):
        ppr.ppr_estimate(np.array([0]), np.array([1]), 2, np.array([1.0]), np.array([1.0]), np.array([True]), lam=2.0)
    with pytest.raises(ValueError, match="method"):
        ppr.critical_value(3, 0.1, "holm")  # type: ignore[arg-type]


def test_no_expert_comparison_gives_nan_not_a_ranking() -> None:
    a, b = np.array([0, 1, 0]), np.array([1, 2, 2])
    est = ppr.ppr_estimate(a, b, 3, np.array([1.0, 0.5, 0.0]), np.full(3, np.nan), np.zeros(3, bool))
    assert np.isnan(est.theta).all()
    low, high = ppr.rank_sets(est.theta[0], est.sigma[0])
    assert low.tolist() == [1, 1, 1] and high.tolist() == [3, 3, 3]


def test_planted_truth_coverage_and_shrinking() -> None:
    """200 simulated studies per size with a biased LLM panel: coverage >= 1 - alpha - 0.02, sets shrink.

    The panel: three judges with the simulated provider's position bias (0.8, 0.5, 1.2 points to
    the option shown first) and noise (1.0-2.0 points per dimension); the third adds 4 points to
    candidate 1 (second worst), which lifts it above candidate 2 in the LLM-only ranking.
    """
    alpha = 0.1
    sizes, coverage, llm_coverage = [], [], []
    for n in (60, 150, 400):
        st = ppr_studies(200, n, seed=n)
        truth = ppr.ranks_of(st.theta_study)
        est = ppr.ppr_estimate(st.a, st.b, st.k, st.yhat, st.y, st.labeled)
        low, high = ppr.rank_sets(est.theta, est.sigma, alpha)
        coverage.append(ppr.covers(low, high, truth).mean())
        sizes.append(ppr.set_sizes(low, high).mean())
        llm = ppr.mean_estimate(st.a, st.b, st.k, st.yhat, np.ones_like(st.labeled))
        lo2, hi2 = ppr.rank_sets(llm.theta, llm.sigma, alpha)
        llm_coverage.append(ppr.covers(lo2, hi2, truth).mean())
    assert min(coverage) >= 1 - alpha - 0.02, coverage
    assert sizes[0] > sizes[1] > sizes[2], sizes
    # The biased panel's own ranking misses the experts' ranking in most studies.
    assert max(llm_coverage) < 0.5, llm_coverage
    # Power tuning is never much worse than the experts alone.
    st = ppr_studies(200, 150, seed=9)
    expert = ppr.mean_estimate(st.a, st.b, st.k, st.y, st.labeled)
    tuned = ppr.ppr_estimate(st.a, st.b, st.k, st.yhat, st.y, st.labeled)
    assert ppr.set_sizes(*ppr.rank_sets(tuned.theta, tuned.sigma)).mean() <= (
        ppr.set_sizes(*ppr.rank_sets(expert.theta, expert.sigma)).mean() + 0.05
    )


def test_simulation_truth_matches_monte_carlo() -> None:
    """The analytic expert win probabilities of ppr_studies agree with the simulated experts' verdicts."""
    st = ppr_studies(400, 0, seed=5)
    ma, mb = ppr.incidence(st.a, st.b, st.k)
    pts = (ma @ st.y.T + mb @ (1 - st.y).T) / (ma + mb).sum(1, keepdims=True)
    assert pts.mean(1) == pytest.approx(st.theta, abs=0.01)
    assert st.theta_study.mean(0) == pytest.approx(st.theta, abs=0.01)


def test_uniform_random_strategy_draws_a_simple_random_sample() -> None:
    """Each comparison is equally likely; the draw is seeded and ignores the LLM verdicts and the pool order."""
    from centaur_tui.domain.assignment import PoolComparison, plan_assignments
    from centaur_tui.domain.session import ExpertSpec

    pool = [
        PoolComparison(f"c{i:03d}", 0, "t", "automation", "A", "B", llm_winners=("A",) * (i % 3)) for i in range(60)
    ]
    expert = ExpertSpec(id="e1", name="E")
    hits = np.zeros(60)
    for seed in range(400):
        planned = plan_assignments(pool, expert, [], 10, "uniform-random", seed)
        assert len({p.comparison_id for p in planned}) == 10
        assert all(p.strategy == "uniform-random" for p in planned)
        hits[[int(p.comparison_id[1:]) for p in planned]] += 1
    # 400 draws of 10 of 60: each comparison expected 66.7 times (binomial SD 7.5).
    assert hits.min() > 40 and hits.max() < 95
    again = plan_assignments(list(reversed(pool)), expert, [], 10, "uniform-random", 7)
    assert [p.comparison_id for p in again] == [
        p.comparison_id for p in plan_assignments(pool, expert, [], 10, "uniform-random", 7)
    ]


def _study() -> tuple[object, list[dict[str, str]]]:
    from tests.support.frames import Data

    d = Data()
    llm = [(1, "A", "B", "A"), (1, "A", "C", "A"), (1, "B", "C", "tie"), (2, "A", "B", "B"), (2, "A", "C", "C")]
    llm.append((2, "B", "C", "B"))
    for run, x, y, w in llm:
        d.judge(run, "t", "automation", x, y, "L1", w)
    experts = [(1, "A", "B", "B", "E1"), (1, "B", "C", "C", "E1"), (2, "A", "C", "A", "E1"), (2, "A", "B", "A", "E2")]
    strategies = {"E1": "uniform-random", "E2": "stratified"}
    rows = []
    for run, x, y, w, e in experts:
        d.judge(run, "t", "automation", x, y, e, w, kind="expert")
        rows.append(
            {"expert": e, "comparison_id": d.comparison(run, "t", "automation", x, y), "strategy": strategies[e]}
        )
    return d, rows


def test_report_section_by_hand_uses_only_random_draws() -> None:
    d, rows = _study()
    section, _ = _as_dict(
        ppr.prediction_powered(
            d.frames(assignment_rows=rows), ppr.PPROptions(lam="one", min_labeled=1, estimator="mean")
        )
    )  # type: ignore[attr-defined]
    json.dumps(section, allow_nan=False)
    assert section["expert_verdicts"] == 4 and section["expert_verdicts_used"] == 3
    assert section["excluded_not_random"] == {"stratified": 1}
    (mode,) = section["modes"]
    assert mode["comparisons"] == 6 and mode["labeled"] == 3
    by = {r["candidate"]: r for r in mode["rows"]}
    # theta_m = mean over unlabelled comparisons of the LLM points + mean over labelled of (expert - LLM):
    # A: 0.5 + 0; B: 1 + 0.25; C: 0 - 0.25. LLM only: 0.5, 0.625, 0.375. Experts only: 0.5 each.
    assert [by[c]["ppr_theta"] for c in "ABC"] == pytest.approx([0.5, 1.25, -0.25])
    assert [by[c]["llm_theta"] for c in "ABC"] == pytest.approx([0.5, 0.625, 0.375])
    assert [by[c]["expert_theta"] for c in "ABC"] == pytest.approx([0.5, 0.5, 0.5])
    assert [r["candidate"] for r in mode["rows"]] == ["B", "A", "C"]


def test_report_section_refuses_non_random_subsets_and_flags_any_subset() -> None:
    d, rows = _study()
    stratified = [{**r, "strategy": "stratified"} for r in rows]
    section, _ = _as_dict(ppr.prediction_powered(d.frames(assignment_rows=stratified)))  # type: ignore[attr-defined]
    assert section["present"] and "modes" not in section and section["note"].startswith("Refused")
    assert section["excluded_not_random"] == {"stratified": 4}
    # No assignment at all (imported judgments): not known to be random either.
    section, _ = _as_dict(ppr.prediction_powered(d.frames()))  # type: ignore[attr-defined]
    assert section["excluded_not_random"] == {"(no assignment: imported)": 4} and "modes" not in section
    flagged, _ = _as_dict(ppr.prediction_powered(d.frames(), ppr.PPROptions(any_subset=True, min_labeled=1)))  # type: ignore[attr-defined]
    assert flagged["expert_verdicts_used"] == 4 and "holds only if" in flagged["note"]
    assert flagged["modes"][0]["labeled"] == 4


def test_report_renders_the_section_and_round_trips() -> None:
    from centaur_tui.report import ReportDocument, to_markdown, to_text
    from centaur_tui.stats.report import ReportOptions, build_report

    d, rows = _study()
    report = build_report(
        d.frames(assignment_rows=rows),
        ReportOptions(bootstrap=0, ppr_lam="one", ppr_min_labeled=1, ppr_estimator="mean"),
    )  # type: ignore[attr-defined]
    doc = report.document
    assert doc.ppr is not None and doc.ppr.modes is not None
    assert ReportDocument.from_json(doc.to_json()) == doc
    text = to_text(doc)
    assert "Prediction-powered ranking: automation" in text and "stratified 1" in text
    assert "estimator mean" in text and "wins + 0.5 ties" in text
    panel = build_report(d.frames(assignment_rows=rows), ReportOptions(bootstrap=0, ppr_min_labeled=1, ppr_ties="drop"))  # type: ignore[attr-defined]
    assert panel.document.ppr is not None and panel.document.ppr.options.estimator == "panel"
    assert "estimator panel" in to_text(panel.document) and "ties dropped" in to_text(panel.document)
    assert "PPR win prob." in to_markdown(doc)
    with pytest.raises(ValueError, match="alpha"):
        build_report(d.frames(assignment_rows=rows), ReportOptions(bootstrap=0, ppr_alpha=1.0))  # type: ignore[attr-defined]


def test_figure_of_the_rank_sets(tmp_path: Path) -> None:
    from centaur_tui.stats.figures import draw_all
    from centaur_tui.stats.report import ReportOptions, build_report

    d, rows = _study()
    report = build_report(d.frames(assignment_rows=rows), ReportOptions(bootstrap=0, ppr_min_labeled=1))  # type: ignore[attr-defined]
    written = draw_all(report, tmp_path)
    fig = tmp_path / "fig18_prediction_powered_rank_sets.png"
    assert fig in written and fig.stat().st_size > 5000
    # Without a random expert subset there is no figure 18.
    refused = build_report(d.frames(), ReportOptions(bootstrap=0, ppr_min_labeled=1))  # type: ignore[attr-defined]
    assert not any("fig18" in p.name for p in draw_all(refused, tmp_path / "none"))


def test_candidates_with_too_few_expert_comparisons_are_not_ordered() -> None:
    d, rows = _study()
    section, _ = _as_dict(ppr.prediction_powered(d.frames(assignment_rows=rows), ppr.PPROptions(min_labeled=3)))  # type: ignore[attr-defined]
    (mode,) = section["modes"]
    assert "fewer than 3 expert comparisons involve A, B, C" in mode["reason"]
    assert all(r["ppr_theta"] is None and (r["ppr_low"], r["ppr_high"]) == (1, 3) for r in mode["rows"])


@pytest.mark.parametrize("strategy", ["UNIFORM-RANDOM", "uniform-random ", "uniform_random", "", "random"])
def test_only_the_exact_strategy_counts_as_random(strategy: str) -> None:
    d, rows = _study()
    hostile = [{**r, "strategy": strategy} for r in rows]
    # An assignment row of a comparison or expert that does not exist changes nothing.
    hostile.append({"expert": "ghost", "comparison_id": "c:nowhere", "strategy": "uniform-random"})
    section, _ = _as_dict(ppr.prediction_powered(d.frames(assignment_rows=hostile)))  # type: ignore[attr-defined]
    assert section["expert_verdicts_used"] == 0 and section["note"].startswith("Refused")
    assert sum(section["excluded_not_random"].values()) == 4
