"""Rankings (STATISTICS.md 1-8) on hand-computed cases."""

from __future__ import annotations

import math
from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from centaur_tui.stats.bradley_terry import bradley_terry, fit_strengths
from centaur_tui.stats.common import permutation_p_spearman
from centaur_tui.stats.rankings import (
    best_by_task,
    cross_mode_spearman,
    mean_ranks,
    overall,
    win_rates,
    within_run_ranks,
)
from tests.support.frames import Data, three_way


def _by(frame: pd.DataFrame, column: str, key: str = "candidate") -> dict[str, float]:
    return {str(k): float(v) for k, v in zip(frame[key], frame[column], strict=True)}


def test_win_rates_per_judge() -> None:
    # J1: A beats B, A ties C, C beats B; J2: B beats A.
    rates = win_rates(three_way().frames())
    j1 = rates[rates["judge"] == "J1"]
    j2 = rates[rates["judge"] == "J2"]
    assert _by(j1, "win_rate") == {"A": 0.75, "B": 0.0, "C": 0.75}
    assert _by(j2, "win_rate") == {"A": 0.0, "B": 1.0}
    a = j1[j1["candidate"] == "A"].iloc[0]
    assert (a["wins"], a["ties"], a["losses"], a["games"]) == (1, 1, 0, 2)


@pytest.mark.parametrize(
    ("method", "expected_score", "expected_rank"),
    [
        # mean over judges: A (0.75 + 0) / 2, B (0 + 1) / 2, C 0.75 (J1 only)
        ("mean_win_rate", {"A": 0.375, "B": 0.5, "C": 0.75}, {"C": 1.0, "B": 2.0, "A": 3.0}),
        # pooled: A 1.5 / 3, B 1 / 3, C 1.5 / 2
        ("pooled", {"A": 0.5, "B": 1 / 3, "C": 0.75}, {"C": 1.0, "A": 2.0, "B": 3.0}),
        # per-judge ranks: J1 A 1.5, C 1.5, B 3; J2 B 1, A 2 -> averaged
        ("rank_per_judge", {"A": 1.75, "B": 2.0, "C": 1.5}, {"C": 1.5, "A": 1.75, "B": 2.0}),
    ],
)
def test_within_run_rank_methods(
    method: str, expected_score: dict[str, float], expected_rank: dict[str, float]
) -> None:
    ranks = within_run_ranks(three_way().frames(), method)  # type: ignore[arg-type]
    assert _by(ranks, "score") == pytest.approx(expected_score)
    assert _by(ranks, "rank") == pytest.approx(expected_rank)


def test_within_run_ties_get_the_average_rank_and_unjudged_candidates_a_nan_rank() -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "tie")
    d.judge(1, "t", "automation", "A", "C", "J1", "A")
    d.judge(1, "t", "automation", "B", "C", "J1", "B")
    d.judge(1, "t", "automation", "A", "D", "J1", None, valid=False)
    ranks = within_run_ranks(d.frames())
    got = _by(ranks, "rank")
    assert got["A"] == got["B"] == 1.5 and got["C"] == 3.0
    assert math.isnan(got["D"])


def _ranks(rows: list[tuple[int, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["run", "task", "candidate", "rank"]).assign(mode="automation")


def test_mean_rank_se_and_rank_of_ranks_with_min_method() -> None:
    ranks = _ranks(
        [
            (1, "t", "A", 1),
            (2, "t", "A", 2),
            (1, "t", "B", 2),
            (2, "t", "B", 1),
            (1, "t", "C", 3),
            (2, "t", "C", 4),
            (1, "t", "D", 4),
            (2, "t", "D", 3),
            (1, "t", "E", 5),
            (2, "t", "E", math.nan),
        ]
    )
    means = mean_ranks(ranks)
    assert _by(means, "mean_rank") == {"A": 1.5, "B": 1.5, "C": 3.5, "D": 3.5, "E": 5.0}
    # SE = SD(ddof 1) / sqrt(runs): SD of (1, 2) is 0.7071, / sqrt(2) = 0.5
    assert _by(means, "se")["A"] == pytest.approx(0.5)
    assert _by(means, "rank_of_ranks") == {"A": 1, "B": 1, "C": 3, "D": 3, "E": 5}
    e = means[means["candidate"] == "E"].iloc[0]
    assert e["runs"] == 1 and e["missing_runs"] == 1 and math.isnan(e["se"]) and e["reason"] == "one run: SE undefined"


def test_rank_of_ranks_ignores_float_noise_but_not_real_differences() -> None:
    ranks = _ranks([(1, "t", "A", 0.1 + 0.2), (1, "t", "B", 0.3), (1, "t", "C", 0.30001)])
    assert _by(mean_ranks(ranks), "rank_of_ranks") == {"A": 1, "B": 1, "C": 3}


def test_overall_mean_rank_and_its_se_from_run_level_task_averages() -> None:
    ranks = _ranks(
        [
            (1, "t1", "A", 1),
            (2, "t1", "A", 2),
            (3, "t1", "A", 1),
            (1, "t2", "A", 3),
            (2, "t2", "A", 2),
            (3, "t2", "A", 1),
            (1, "t1", "B", 2),
            (2, "t1", "B", 1),
            (3, "t1", "B", 2),
            (1, "t2", "B", 1),
            (2, "t2", "B", 3),
            (3, "t2", "B", 3),
        ]
    )
    means = mean_ranks(ranks)
    over = overall(ranks, means)
    a = over[over["candidate"] == "A"].iloc[0]
    # Mean of task means: t1 4/3, t2 2 -> 5/3. Run averages (2, 2, 1): SD 0.5774 / sqrt(3) = 1/3.
    assert a["mean_rank"] == pytest.approx(5 / 3)
    assert a["se"] == pytest.approx(1 / 3)
    assert (a["tasks"], a["runs"]) == (2, 3)
    b = over[over["candidate"] == "B"].iloc[0]
    assert b["mean_rank"] == pytest.approx((5 / 3 + 7 / 3) / 2)
    assert _by(over, "overall_rank") == {"A": 1, "B": 2}


def test_best_by_task_joins_exact_ties_and_names_the_best_assisted_condition() -> None:
    means = pd.DataFrame(
        [
            ("t1", "augmentation", "plain", 1.2),
            ("t1", "augmentation", "X", 2.5),
            ("t1", "augmentation", "Y", 2.5),
            ("t1", "automation", "X", 1.0),
            ("t1", "automation", "Y", 2.0),
            ("t2", "augmentation", "plain", 3.0),
            ("t2", "augmentation", "X", 1.5),
            ("t2", "augmentation", "Y", 2.0),
            ("t2", "automation", "X", 1.5),
            ("t2", "automation", "Y", 1.5),
        ],
        columns=["task", "mode", "candidate", "mean_rank"],
    )
    over = means.groupby(["mode", "candidate"], as_index=False)["mean_rank"].mean()
    best = best_by_task(means, over, "plain", ["t1", "t2"]).set_index(["mode", "task"])
    assert best.loc[("augmentation", "t1"), "best"] == "plain"
    assert best.loc[("augmentation", "t1"), "best_assisted"] == "X / Y"
    assert best.loc[("automation", "t2"), "best"] == "X / Y"
    assert best.loc[("augmentation", "t2"), "best"] == "X"
    assert pd.isna(best.loc[("automation", "t1"), "best_assisted"])
    assert best.loc[("augmentation", "(all tasks)"), "best"] == "X"  # X 2.0, plain 2.1, Y 2.25


def _brute_force_p(x: list[float], y: list[float]) -> float:
    rho = stats.spearmanr(x, y).statistic
    hits = total = 0
    for perm in permutations(y):
        r = stats.spearmanr(x, perm).statistic
        hits += abs(r) >= abs(rho) - 1e-12
        total += 1
    return hits / total


def test_cross_mode_spearman_per_task_and_model_level() -> None:
    models = ["M1", "M2", "M3", "M4", "M5"]
    auto = [1.0, 2.0, 3.0, 4.0, 5.0]
    aug = [2.0, 1.0, 4.0, 3.0, 5.0]
    rows = [("t", "automation", m, r) for m, r in zip(models, auto, strict=True)]
    rows += [("t", "augmentation", m, r) for m, r in zip(models, aug, strict=True)]
    rows += [("t", "augmentation", "plain", 0.5), ("t", "automation", "Solo", 9.0)]
    means = pd.DataFrame(rows, columns=["task", "mode", "candidate", "mean_rank"])
    over = means.groupby(["mode", "candidate"], as_index=False)["mean_rank"].mean()
    out = cross_mode_spearman(means, over, "plain", ["t"]).set_index("task")
    row = out.loc["t"]
    # rho = 1 - 6 * sum d^2 / (n (n^2 - 1)) = 1 - 6 * 4 / 120 = 0.8
    assert row["n"] == 5 and row["rho"] == pytest.approx(0.8)
    assert row["models"] == models  # plain and the automation-only model are left out
    assert row["p"] == pytest.approx(stats.spearmanr(auto, aug).pvalue)
    assert row["p_permutation"] == pytest.approx(_brute_force_p(auto, aug))
    assert row["permutation_method"] == "exact"
    assert out.loc["(model level)", "rho"] == pytest.approx(0.8)


def test_exact_permutation_p_matches_brute_force_with_ties() -> None:
    x = [1.0, 2.0, 2.0, 4.0, 5.0, 6.0]
    y = [2.0, 1.0, 3.0, 3.0, 6.0, 5.0]
    p, method = permutation_p_spearman(np.array(x), np.array(y))
    assert method == "exact"
    assert p == pytest.approx(_brute_force_p(x, y))


def test_cross_mode_spearman_with_too_few_models_is_nan_with_a_reason() -> None:
    means = pd.DataFrame(
        [
            ("t", "automation", "A", 1.0),
            ("t", "augmentation", "A", 1.0),
            ("t", "automation", "B", 2.0),
            ("t", "augmentation", "B", 2.0),
        ],
        columns=["task", "mode", "candidate", "mean_rank"],
    )
    over = means.groupby(["mode", "candidate"], as_index=False)["mean_rank"].mean()
    row = cross_mode_spearman(means, over, "plain", ["t"]).iloc[0]
    assert math.isnan(row["rho"]) and row["reason"] == "fewer than 3 complete pairs (n = 2)"


def test_bradley_terry_two_players_matches_the_likelihood_maximum() -> None:
    d = Data()
    for i, winner in enumerate(["A", "A", "A", "B"]):
        d.judge(i + 1, "t", "automation", "A", "B", "J1", winner)
    f = d.frames()
    bt = bradley_terry(f.ok, f.candidates, ("mode",), n_boot=0).set_index("candidate")

    # Independent check: maximise the same log-likelihood (3 wins of A, 1 of B, plus one
    # virtual win and loss of each against a strength-1 opponent) with scipy.
    def nll(t: np.ndarray) -> float:
        a, b = t
        pab = 1 / (1 + math.exp(b - a))
        ll = 3 * math.log(pab) + math.log(1 - pab)
        for x in (a, b):
            ll += math.log(1 / (1 + math.exp(-x))) + math.log(1 / (1 + math.exp(x)))
        return -ll

    a, b = optimize.minimize(nll, [0.0, 0.0], tol=1e-12).x
    assert bt.loc["A", "theta"] - bt.loc["B", "theta"] == pytest.approx(a - b, abs=1e-6)
    assert bt.loc["A", "theta"] + bt.loc["B", "theta"] == pytest.approx(0.0, abs=1e-12)
    assert bt.loc["A", "rank"] == 1 and bt.loc["A", "games"] == 4 and bt.loc["A", "comparisons"] == 4


def test_bradley_terry_recovers_an_order_with_intervals_and_stays_finite_for_a_perfect_record() -> None:
    rng = np.random.default_rng(3)
    strength = {"A": 1.5, "B": 0.5, "C": -0.5, "D": -1.5}
    d = Data()
    names = sorted(strength)
    for run in range(1, 31):
        for i, x in enumerate(names):
            for y in names[i + 1 :]:
                p = 1 / (1 + math.exp(strength[y] - strength[x]))
                d.judge(run, "t", "automation", x, y, "J1", x if rng.random() < p else y)
    d.judge(1, "t", "automation", "A", "Z", "J1", "A")  # Z lost its only game
    f = d.frames()
    bt = bradley_terry(f.ok, f.candidates, ("mode",), n_boot=100, seed=1).set_index("candidate")
    assert list(bt.drop(index="Z").sort_values("rank").index) == ["A", "B", "C", "D"]
    assert (bt["ci_low"] <= bt["theta"]).all() and (bt["theta"] <= bt["ci_high"]).all()
    # One lost game is little evidence: the virtual games keep Z finite and below A (not at -inf).
    assert np.isfinite(bt.loc["Z", "theta"]) and bt.loc["Z", "theta"] < bt.loc["A", "theta"]
    # Equal records give equal strengths.
    sym = fit_strengths(np.array([[2.0, 2.0]]), np.array([[[0.0, 4.0], [4.0, 0.0]]]))
    assert sym[0, 0] == pytest.approx(sym[0, 1])
