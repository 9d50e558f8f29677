"""The panel PPR estimator, max-t rank-sets and the biased-judge simulator (stats/ppr_panel.py, ppr_sim.py)."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from centaur_tui.stats import ppr
from centaur_tui.stats import ppr_panel as pp
from centaur_tui.stats.ppr_sim import panel_studies

A, B = np.array([0, 0, 0, 0]), np.array([1, 1, 1, 1])


def test_estimate_by_hand_study_target() -> None:
    # One judge; points for candidate 0: 1, 1, 0, 0.5; one expert judged the first two: 1 and 0.
    # lambda = 1 (fixed), target "study": theta_0 = mean_L(y) + (mean_all(h) - mean_L(h)) = 0.5 + (0.625 - 1) = 0.125.
    judges = np.array([[1.0, 1.0, 0.0, 0.5]])
    experts = np.array([[1.0, 0.0, np.nan, np.nan]])
    est = pp.panel_estimate(A, B, 2, judges, experts, lam=np.array([1.0]))
    assert est.theta[0] == pytest.approx([0.125, 0.875])
    # Only the labelled residuals y - h (0, -1; mean -0.5) are random: var = 0.25 / 2.
    assert est.sigma[0] == pytest.approx(np.array([[0.125, -0.125], [-0.125, 0.125]]))
    assert est.labeled[0].tolist() == [2, 2] and est.unlabeled[0].tolist() == [2, 2]
    # "superpopulation" is PPI: mean_U(h) = 0.25, plus var0(h_U) / 2 = 0.0625 / 2.
    sup = pp.panel_estimate(A, B, 2, judges, experts, lam=np.array([1.0]), target="superpopulation")
    assert sup.theta[0] == pytest.approx([-0.25, 1.25])
    assert sup.sigma[0, 0, 0] == pytest.approx(0.15625)
    # Matches the mean estimator (stats.ppr.ppr_estimate) with lambda one on one judge.
    old = ppr.ppr_estimate(A, B, 2, judges[0], experts[0], np.isfinite(experts[0]), lam="one")
    assert old.theta[0] == pytest.approx(sup.theta[0]) and old.sigma[0] == pytest.approx(sup.sigma[0])
    zero = pp.panel_estimate(A, B, 2, judges, experts, lam="zero")
    assert zero.theta[0] == pytest.approx([0.5, 0.5]) and zero.sigma[0, 0, 0] == pytest.approx(0.125)


def test_several_experts_are_one_label_and_ties_can_be_dropped() -> None:
    judges = np.array([[1.0, 0.5, 0.0, 1.0]])
    # Two experts on comparison 0 (win, tie), one on 1 (loss), none on 2 and 3.
    experts = np.array([[1.0, 0.0, np.nan, np.nan], [0.5, np.nan, np.nan, np.nan]])
    half = pp.panel_estimate(A, B, 2, judges, experts, lam="zero")
    # One label per comparison: mean(1, 0.5) = 0.75 and 0: theta_0 = 0.375.
    assert half.theta[0, 0] == pytest.approx(0.375) and half.labeled[0, 0] == 2
    drop = pp.panel_estimate(A, B, 2, judges, experts, lam="zero", ties="drop")
    # Wins of 0: 0.5 and 0 (mean 0.25); decisive: 0.5 and 1 (mean 0.75): 1/3.
    assert drop.theta[0] == pytest.approx([1 / 3, 2 / 3])


@pytest.mark.parametrize(
    ("judges", "experts", "labeled", "kwargs", "match"),
    [
        ([[0.7, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {}, "1, 0.5 or 0"),
        ([[1, 1, 0, 1]], [[2, 0, np.nan, np.nan]], None, {}, "1, 0.5 or 0"),
        ([[1, 1, 0]], [[1, 0, np.nan, np.nan]], None, {}, "same comparisons"),
        ([[1, 1, 0, 1]], [[1, 0, np.nan, np.nan]], [[True, True, True, False]], {}, "no expert verdict"),
        ([[1, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {"ties": "loss"}, "ties"),
        ([[1, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {"target": "all"}, "target"),
        ([[1, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {"lam": "one"}, "lambda"),
        ([[1.2, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {"continuous": True}, r"\[0, 1\]"),
        ([[-0.1, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {"continuous": True}, r"\[0, 1\]"),
        ([[0.7, 1, 0, 1]], [[1, 0, np.nan, np.nan]], None, {"continuous": True, "ties": "drop"}, "ties 'half'"),
        ([[0.7, 1, 0, 1]], [[0.7, 0, np.nan, np.nan]], None, {"continuous": True}, "1, 0.5 or 0"),
    ],
)
def test_hostile_inputs_refused(judges: list, experts: list, labeled: list | None, kwargs: dict, match: str) -> None:
    lab = None if labeled is None else np.array(labeled)
    with pytest.raises(ValueError, match=match):
        pp.panel_estimate(A, B, 2, np.array(judges, float), np.array(experts, float), lab, **kwargs)


def test_continuous_predictions_are_taken_as_given() -> None:
    """A probability as the prediction (the simulation's oracle): the same arithmetic as points."""
    judges = np.array([[0.9, 0.7, 0.2, 0.4]])
    experts = np.array([[1.0, 0.0, np.nan, np.nan]])
    est = pp.panel_estimate(A, B, 2, judges, experts, lam=np.array([1.0]), continuous=True)
    # mean_L(y) + mean_all(h) - mean_L(h) = 0.5 + 0.55 - 0.8 = 0.25
    assert est.theta[0] == pytest.approx([0.25, 0.75])


def test_the_simulators_expected_points_average_to_its_truth() -> None:
    st = panel_studies(3, 50, seed=2)
    ma, mb = ppr.incidence(st.a, st.b, st.k)
    mean = (st.expected_points @ ma.T + (1.0 - st.expected_points) @ mb.T) / (ma + mb).sum(1)
    assert mean == pytest.approx(st.truth_half)


def test_a_missing_judge_verdict_is_filled_from_the_panel_and_an_unjudged_comparison_left_out() -> None:
    judges = np.array([[1.0, np.nan, 0.0, np.nan], [0.0, 1.0, 0.0, np.nan]])
    filled = pp.fill_panel(judges)
    assert filled[0].tolist()[:3] == [1.0, 1.0, 0.0] and np.isnan(filled[:, 3]).all()
    experts = np.array([[1.0, 0.0, np.nan, np.nan]])
    est = pp.panel_estimate(A, B, 2, judges, experts, lam="zero")
    assert est.unlabeled[0].tolist() == [1, 1]  # comparison 3 has no LLM verdict: no part


def test_max_abs_critical_matches_scipy_multivariate_normal() -> None:
    """The bootstrap quantile of max |Z| against scipy's multivariate normal CDF (Genz), within Monte Carlo error."""
    corr = np.array([[1.0, 0.5, 0.2, 0.0], [0.5, 1.0, 0.4, 0.1], [0.2, 0.4, 1.0, 0.3], [0.0, 0.1, 0.3, 1.0]])
    for alpha in (0.05, 0.1):
        c = float(pp.max_abs_critical(corr, alpha, draws=200_000, seed=3))
        mvn = stats.multivariate_normal(mean=np.zeros(4), cov=corr, seed=1)
        p = mvn.cdf(np.full(4, c), lower_limit=np.full(4, -c))
        assert p == pytest.approx(1 - alpha, abs=0.003)
    # One dimension: the two-sided normal quantile.
    assert float(pp.max_abs_critical(np.eye(1), 0.05, draws=200_000)) == pytest.approx(stats.norm.ppf(0.975), abs=0.02)
    with pytest.raises(ValueError, match="alpha"):
        pp.max_abs_critical(np.eye(2), 1.0)


@pytest.mark.parametrize("k", [3, 6, 12])
def test_maxt_critical_matches_tukeys_studentized_range(k: int) -> None:
    """Independent equal variances: max |theta_i - theta_j| / SE is the range of k normals over sqrt(2),
    Tukey's studentized range with infinite df (scipy integrates it; Monte Carlo error ~0.005 at 200,000 draws)."""
    for alpha in (0.05, 0.1):
        c = float(pp.maxt_critical(np.eye(k) * 0.01, np.linspace(0.0, 1.0, k), alpha, draws=200_000, seed=5))
        q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
        assert c == pytest.approx(q, abs=0.02)


def test_rank_sets_maxt_by_hand() -> None:
    # Independent SE 0.01: 0.9 vs 0.5 far apart; 0.5 vs 0.49 not (difference 0.7 SE).
    theta = np.array([0.9, 0.5, 0.49])
    low, high = pp.rank_sets_maxt(theta, np.eye(3) * 1e-4, 0.1, draws=4000)
    assert low.tolist() == [1, 2, 2] and high.tolist() == [1, 3, 3]
    # A NaN candidate is never ordered; a difference of 2.5 SE with two candidates (crit 1.645 two-sided at 0.1).
    low, high = pp.rank_sets_maxt(np.array([0.9, np.nan, 0.1]), np.eye(3) * 1e-4, 0.1, draws=4000)
    assert low.tolist() == [1, 1, 2] and high.tolist() == [2, 3, 3]
    low, high = pp.rank_sets_maxt(np.array([0.5, 0.5 + 2.5 * np.sqrt(2) * 0.01]), np.eye(2) * 1e-4, 0.1, draws=4000)
    assert low.tolist() == [2, 1]
    # The report's rank_sets dispatches "maxt" here.
    assert ppr.rank_sets(theta, np.eye(3) * 1e-4, 0.1, "maxt")[0].tolist() == [1, 2, 2]


@pytest.fixture(scope="module")
def studies() -> dict[int, object]:
    return {n: panel_studies(40, n, tie_share=0.1, experts_per=2 if n == 400 else 1, seed=n) for n in (60, 400)}


def test_planted_truth_coverage_and_tighter_sets(studies: dict) -> None:
    """40 seeded studies per size: the biased panel ranks wrongly, PPR corrects it; coverage >= 1 - alpha - 0.02."""
    alpha = 0.1
    for st in studies.values():
        truth = ppr.ranks_of(st.truth_half)
        y_mean = st.expert_mean()
        est = pp.panel_estimate(st.a, st.b, st.k, st.judges, st.experts, st.labeled, min_labeled=5)
        low, high = pp.rank_sets_maxt(est.theta, est.sigma, alpha, draws=1000)
        assert ppr.covers(low, high, truth).mean() >= 1 - alpha - 0.02
        today = ppr.ppr_estimate(st.a, st.b, st.k, st.judges.mean(1), y_mean, st.labeled, min_labeled=5)
        t_low, t_high = ppr.rank_sets(today.theta, today.sigma, alpha)
        assert ppr.set_sizes(low, high).mean() < ppr.set_sizes(t_low, t_high).mean()
        llm = ppr.mean_estimate(st.a, st.b, st.k, st.judges.mean(1), np.ones_like(st.labeled))
        assert ppr.covers(*ppr.rank_sets(llm.theta, llm.sigma, alpha), truth).mean() < 0.2
        drop = pp.panel_estimate(st.a, st.b, st.k, st.judges, st.experts, st.labeled, ties="drop", min_labeled=5)
        d_low, d_high = pp.rank_sets_maxt(drop.theta, drop.sigma, alpha, draws=1000)
        assert ppr.covers(d_low, d_high, ppr.ranks_of(st.truth_drop)).mean() >= 1 - alpha - 0.02
    st = studies[400]
    assert ppr.set_sizes(low, high).mean() <= 0.75 * ppr.set_sizes(t_low, t_high).mean()


def test_paper_code_standard_errors_are_about_two_over_k_of_the_right_ones(studies: dict) -> None:
    st = studies[400]
    y_mean = st.expert_mean()
    ref = pp.paper_code_estimate(st.a, st.b, st.k, st.judges[:, 0], y_mean, st.labeled)
    right = ppr.ppr_estimate(st.a, st.b, st.k, st.judges[:, 0], y_mean, st.labeled, lam=ref.lam[:, 0].mean())
    ratio = float(np.median(ref.se / right.se))
    assert 0.12 < ratio < 0.22, ratio  # 2 / k = 0.167 for k = 12


def test_simulator_truth_and_tie_share() -> None:
    st = panel_studies(30, 100, tie_share=0.3, experts_per=3, seed=4)
    assert st.tie_share == pytest.approx(0.3, abs=0.03)
    assert (
        np.isfinite(st.experts[:, :, st.labeled[0]][0]).all() and (np.isfinite(st.experts).any(1) == st.labeled).all()
    )
    ties = np.nanmean(st.experts == 0.5, where=np.isfinite(st.experts))
    assert ties == pytest.approx(0.3, abs=0.05)
    assert (st.truth_half.argsort(1) == st.truth_drop.argsort(1)).mean() > 0.9
    with pytest.raises(ValueError, match="judges"):
        panel_studies(2, 10, judges="kind")
    with pytest.raises(ValueError, match="labeled"):
        panel_studies(2, 10_000)


@pytest.mark.parametrize("value", ["1", "4", "0", "-3"])
def test_cli_refuses_a_min_labeled_below_the_floor(value: str) -> None:
    from centaur_tui.cli.main import cli

    res = CliRunner().invoke(cli, ["report", "nosuch", "--ppr-min-labeled", value])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "--ppr-min-labeled" in res.output
    if value in ("1", "4"):
        assert "below 5" in res.output


def test_cli_refuses_drop_ties_with_the_mean_estimator() -> None:
    from centaur_tui.cli.main import cli

    res = CliRunner().invoke(cli, ["report", "nosuch", "--ppr-ties", "drop", "--ppr-estimator", "mean"])
    assert res.exit_code == 2 and "--ppr-ties drop needs --ppr-estimator panel" in res.output
