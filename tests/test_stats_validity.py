"""Validity checks (STATISTICS.md 9, 10, 12-15) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from centaur_tui.stats.frames import Design
from centaur_tui.stats.rankings import mean_ranks, within_run_ranks
from centaur_tui.stats.validity import (
    choice_rubric_consistency,
    criterion_validity,
    general_profiles,
    position_bias,
    rubric_vs_win_rate,
    rubric_win_rate_cells,
    standardised_rubric_ranking,
    stated_average_mismatches,
)
from tests.support.frames import Data

AUTO = "automation"
AUG = "augmentation"


def _row(frame: pd.DataFrame, **where: object) -> pd.Series:
    mask = np.ones(len(frame), dtype=bool)
    for k, v in where.items():
        mask &= (frame[k] == v).to_numpy()
    assert mask.sum() == 1, (where, frame)
    return frame[mask].iloc[0]


def test_choice_rubric_consistency_counts_every_exclusion() -> None:
    d = Data()
    s = ({"x": 8, "g1": 6}, {"x": 4, "g1": 5})  # averages 7 and 4.5
    d.judge(1, "t", AUTO, "A", "B", "J1", "A", scores=s, stated=(7.0, 4.6))  # agrees; stated 4.6 is off by 0.1
    d.judge(1, "t", AUTO, "A", "B", "J1", "B", scores=s, presentation=1)  # winner has the lower average
    d.judge(1, "t", AUTO, "A", "C", "J1", "tie", scores=s)  # tie: counted, left out
    d.judge(1, "t", AUTO, "B", "C", "J1", "B", scores=({"x": 5, "g1": 5}, {"x": 6, "g1": 4}))  # equal averages
    d.judge(1, "t", AUTO, "A", "D", "J1", "A", scores=({"x": 5}, {"x": 4, "g1": 4}))  # incomplete
    d.judge(1, "t", AUTO, "B", "D", "J1", None, valid=False)
    d.judge(1, "t", AUTO, "A", "B", "J2", "A", scores=s, stated=(7.0, 4.5))
    out = choice_rubric_consistency(d.frames(Design(rubric={"t": ("x", "g1")})))
    j1 = _row(out, judge="J1")
    assert (j1["n"], j1["agree"], j1["share"]) == (2, 1, 0.5)
    assert (j1["ties"], j1["equal_averages"], j1["missing_scores"]) == (1, 1, 1)
    assert j1["excluded"] == {"invalid": 1}
    assert (j1["stated_checked"], j1["stated_mismatch"]) == (2, 1)
    total = _row(out, judge="(all judges)")
    assert (total["n"], total["agree"]) == (3, 2) and total["share"] == pytest.approx(2 / 3)
    assert (total["stated_checked"], total["stated_mismatch"]) == (4, 1)
    mism = stated_average_mismatches(d.frames())
    assert mism[["judgment_id", "option", "stated", "recomputed"]].values.tolist() == [[1, "option2", 4.6, 4.5]]


def test_consistency_without_decisive_judgments_is_nan_with_a_reason() -> None:
    d = Data()
    d.judge(1, "t", AUTO, "A", "B", "J1", "tie", scores=({"x": 5}, {"x": 5}))
    row = _row(choice_rubric_consistency(d.frames()), judge="J1")
    assert row["n"] == 0 and math.isnan(row["share"]) and row["reason"] == "no decisive judgment with unequal averages"


def test_rubric_score_vs_win_rate_cells_and_pearson_r() -> None:
    d = Data()
    d.judge(1, "t", AUTO, "A", "B", "J1", "A", scores=({"x": 8}, {"x": 4}))
    d.judge(1, "t", AUTO, "A", "C", "J1", "A", scores=({"x": 6}, {"x": 5}))
    d.judge(1, "t", AUTO, "B", "C", "J1", "tie", scores=({"x": 5}, {"x": 5}))
    cells = rubric_win_rate_cells(d.frames())
    assert {r.candidate: (r.rubric_mean, r.win_rate) for r in cells.itertuples()} == {
        "A": (7.0, 1.0),
        "B": (4.5, 0.25),
        "C": (5.0, 0.25),
    }
    res = rubric_vs_win_rate(cells)
    assert res["n"] == 3 and res["missing"] == 0
    assert res["r"] == pytest.approx(np.corrcoef([7.0, 4.5, 5.0], [1.0, 0.25, 0.25])[0, 1])


def test_criterion_validity_share_of_later_releases_and_within_family_ranks() -> None:
    d = Data()
    j = "Outsider"
    d.judge(1, "t", AUTO, "M1", "M2", j, "M2")
    d.judge(1, "t", AUTO, "M1", "M3", j, "M3")
    d.judge(1, "t", AUTO, "M2", "M3", j, "M3")
    d.judge(2, "t", AUTO, "M1", "M2", j, "M1")
    d.judge(2, "t", AUTO, "M3", "M1", j, "tie")
    d.judge(2, "t", AUTO, "M3", "M2", j, "M3")
    d.judge(1, "t", AUTO, "M1", "X", j, "X")  # not a family pair: ignored
    d.judge(1, "t", AUG, "M1", "M2", j, "M1")  # augmentation: ignored
    d.judge(2, "t", AUTO, "M2", "M3", j, None, valid=False)
    design = Design(
        release_order={"M1": 1, "M2": 2, "M3": 3}, model_families={"M1": "F", "M2": "F", "M3": "F", "X": "G"}
    )
    pairs, ranks = criterion_validity(d.frames(design))
    p = _row(pairs, judge=j)
    assert (p["family"], p["n"], p["later"], p["earlier"], p["ties"]) == ("F", 6, 4, 1, 1)
    assert p["share_later"] == pytest.approx(4 / 6) and p["excluded"] == {"invalid": 1}
    # Run 1: M3 1, M2 2, M1 3. Run 2: M1 0.75 and M3 0.75 share 1.5, M2 3.
    r = ranks.set_index("candidate")
    assert r.loc["M1", "mean_rank"] == pytest.approx(2.25) and r.loc["M1", "sd"] == pytest.approx(
        np.std([3, 1.5], ddof=1)
    )
    assert r.loc["M2", "mean_rank"] == pytest.approx(2.5) and r.loc["M3", "mean_rank"] == pytest.approx(1.25)
    assert r["task_runs"].tolist() == [2, 2, 2]


def test_criterion_validity_needs_two_release_ordered_models_in_a_family() -> None:
    d = Data()
    d.judge(1, "t", AUTO, "M1", "X", "J", "X")
    pairs, ranks = criterion_validity(d.frames(Design(release_order={"M1": 1}, model_families={"M1": "F"})))
    assert pairs.empty and ranks.empty


def test_general_profiles_pooled_and_judge_balanced() -> None:
    d = Data()
    d.judge(1, "t", AUG, "A", "B", "J1", "A", scores=({"x": 5, "g1": 6}, {"x": 5, "g1": 2}))
    d.judge(2, "t", AUG, "A", "B", "J1", "A", scores=({"x": 5, "g1": 8}, {"x": 5, "g1": 2}))
    d.judge(1, "t", AUG, "A", "B", "J2", "A", scores=({"x": 5, "g1": 4}, {"x": 5, "g1": 3}))
    d.judge(1, "t", AUTO, "A", "B", "J2", "A", scores=({"x": 5, "g1": 10}, {"x": 5, "g1": 1}))
    prof = general_profiles(d.frames(Design(general_dimensions=("g1",))), AUG)
    a = _row(prof, candidate="A", dimension="g1")
    assert a["mean"] == pytest.approx(6.0)  # (6 + 8 + 4) / 3
    assert a["judge_balanced"] == pytest.approx(5.5)  # mean of J1's 7 and J2's 4
    assert (a["n"], a["judges"]) == (3, 2)
    assert set(prof["mode"]) == {AUG}
    both = general_profiles(d.frames(Design(general_dimensions=("g1",))))
    assert _row(both, mode=AUTO, candidate="A", dimension="g1")["mean"] == 10


def test_standardised_rubric_ranking_agrees_with_pairwise_when_rubric_and_choice_agree() -> None:
    d = Data()
    for run in (1, 2):
        d.judge(run, "t", AUTO, "A", "B", "J1", "A", scores=({"x": 8}, {"x": 4}))
        d.judge(run, "t", AUTO, "A", "C", "J1", "A", scores=({"x": 8}, {"x": 6}))
        d.judge(run, "t", AUTO, "C", "B", "J1", "C", scores=({"x": 6}, {"x": 4}))
    d.judge(1, "t", AUTO, "A", "B", "J2", "A", scores=({"x": 5}, {"x": 5}))  # J2: no spread, cannot be z-scored
    f = d.frames()
    means = mean_ranks(within_run_ranks(f))
    ranks, agree = standardised_rubric_ranking(f, means)
    assert {r.candidate: r.mean_rank for r in ranks.itertuples()} == {"A": 1.0, "C": 2.0, "B": 3.0}
    row = agree.iloc[0]
    assert (row["n"], row["rho"], row["zero_spread"]) == (3, pytest.approx(1.0), 2)


def test_position_bias_binomial_test_and_flip_rate() -> None:
    d = Data()
    names = ["A", "B", "C", "D", "E", "F"]
    pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1 :]][:11]
    for k, (x, y) in enumerate(pairs):
        winner = "tie" if k == 10 else (x if k < 8 else y)  # 8 first-shown wins, 2 second, 1 tie
        d.judge(1, "t", AUTO, x, y, "J1", winner)
    # J2 judged three pairs in both orders; one verdict flips with the order.
    d.judge(1, "t", AUTO, "A", "B", "J2", "A", presentation=0)
    d.judge(1, "t", AUTO, "B", "A", "J2", "A", presentation=1)
    d.judge(1, "t", AUTO, "A", "C", "J2", "A", presentation=0)
    d.judge(1, "t", AUTO, "C", "A", "J2", "C", presentation=1)
    d.judge(1, "t", AUTO, "B", "C", "J2", "tie", presentation=0)
    d.judge(1, "t", AUTO, "C", "B", "J2", "tie", presentation=1)
    out = position_bias(d.frames())
    j1 = _row(out, judge="J1")
    assert (j1["n"], j1["first"], j1["ties"]) == (10, 8, 1)
    assert j1["p"] == pytest.approx(stats.binomtest(8, 10, 0.5).pvalue) == pytest.approx(0.109375)
    assert j1["both_orders"] == 0 and math.isnan(j1["flip_rate"])
    j2 = _row(out, judge="J2")
    assert (j2["both_orders"], j2["flips"]) == (3, 1) and j2["flip_rate"] == pytest.approx(1 / 3)
    assert (j2["n"], j2["first"]) == (4, 3)
