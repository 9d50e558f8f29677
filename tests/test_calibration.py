"""Judge calibration from few expert labels and judge tiers against people (issue 26 items 1, 3): planted truth."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from centaur_tui.stats.calibration import MIN_LABELS, calibration_rows, correct_win_rate, tier_rows
from centaur_tui.stats.calibration_sim import PlantedJudge, planted_study

STUDIES = 24


def _cells(se: float, sp: float, n_win: int, n_lose: int) -> np.ndarray:
    """Labelled comparisons (n, 3, 3) with exact sensitivity se and specificity sp, no ties."""
    out = []
    for expert, n, right in ((0, n_win, se), (2, n_lose, sp)):
        hits = round(right * n)
        for i in range(n):
            cell = np.zeros((3, 3))
            judge = expert if i < hits else 2 - expert
            cell[judge, expert] = 1.0
            out.append(cell)
    return np.array(out)


def test_the_rogan_gladen_form_is_the_two_class_formula_worked_by_hand() -> None:
    # se = 0.8, sp = 0.7 on 20 + 20 labels; the judge says "win" on 50% of 60 judge-only comparisons.
    labelled = _cells(0.8, 0.7, 20, 20)
    judge_labelled = labelled.sum(axis=2)
    judge_only = np.array([[1.0, 0, 0]] * 30 + [[0, 0, 1.0]] * 30)
    r = correct_win_rate(labelled, judge_labelled, judge_only, bootstrap=0)
    q = (16 + 6 + 30) / 100  # judge wins: 16 true wins + 6 false wins on the labels, 30 judge-only
    assert r.sensitivity == pytest.approx(0.8) and r.specificity == pytest.approx(0.7)
    assert r.youden == pytest.approx(0.5)
    assert r.rogan_gladen == pytest.approx((q - (1 - 0.7)) / (0.8 + 0.7 - 1))
    assert r.naive == pytest.approx(q) and r.labels == 40 and r.judged == 100
    # Inverse form: P(expert win | judge win) = 16/22, P(expert win | judge lose) = 4/18.
    assert r.corrected == pytest.approx(q * 16 / 22 + (1 - q) * 4 / 18)


def test_a_judge_with_no_information_is_reported_not_correctable_never_dropped() -> None:
    labelled = _cells(0.5, 0.5, 20, 20)
    r = correct_win_rate(labelled, labelled.sum(axis=2), np.zeros((0, 3)), bootstrap=50)
    assert math.isnan(r.rogan_gladen) and r.rg_reason is not None and "not correctable" in r.rg_reason
    assert r.corrected == pytest.approx(0.5) and r.reason is None and r.labels == 40


def test_too_few_labels_say_how_many() -> None:
    labelled = _cells(0.8, 0.8, 3, 3)
    r = correct_win_rate(labelled, labelled.sum(axis=2), np.array([[1.0, 0, 0]] * 10), bootstrap=50)
    assert math.isnan(r.corrected) and r.reason == f"too few expert labels (6 of {MIN_LABELS} needed)"
    assert r.naive == pytest.approx(13 / 16) and r.judged == 16 and r.naive_low <= r.naive <= r.naive_high


def test_corrected_intervals_cover_the_planted_values_and_naive_ones_fail() -> None:
    covered, naive_covered, rows = 0, 0, 0
    for seed in range(STUDIES):
        study = planted_study(seed, candidates=4, comparisons=600, label_share=0.1)
        for r in calibration_rows(study.ok, [("automation", None)], bootstrap=200, confidence=0.95, seed=seed):
            truth = study.planted[r.candidate]
            assert r.corrected is not None and r.ci_low is not None and r.ci_high is not None, r.reason
            covered += r.ci_low <= truth <= r.ci_high
            naive_covered += r.naive_ci_low <= truth <= r.naive_ci_high  # type: ignore[operator]
            rows += 1
    assert rows == STUDIES * 4
    # 500 studies in bench/calibration.py; here 96 rows: 0.90 leaves room for sampling noise.
    assert covered / rows >= 0.90, covered / rows
    assert naive_covered / rows <= 0.6, naive_covered / rows


def test_an_unbiased_judge_needs_no_correction() -> None:
    study = planted_study(3, candidates=4, comparisons=600, judge=PlantedJudge(length=0.0, family={}, flip=0.0))
    rows = calibration_rows(study.ok, [("automation", None)], bootstrap=100, confidence=0.95, seed=0)
    for r in rows:
        assert abs(r.naive - study.planted[r.candidate]) < 0.08  # type: ignore[operator]


def test_per_task_scopes_and_unlabelled_judges_are_listed_with_their_reason() -> None:
    study = planted_study(5, candidates=4, comparisons=400)
    ok = study.ok.copy()
    ok.loc[ok["judge_kind"] == "expert", "task"] = "t"
    rows = calibration_rows(ok, [("automation", None), ("automation", "t")], bootstrap=50, confidence=0.9, seed=1)
    assert {(r.task, r.candidate) for r in rows} == {(t, f"c{i}") for t in (None, "t") for i in range(1, 5)}


def _kappa(rows: list[tuple[str, str, str, str, int, float]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["judge_1", "judge_2", "kind_1", "kind_2", "n", "kappa"])
    return frame.assign(ci_low=frame["kappa"] - 0.1, ci_high=frame["kappa"] + 0.1)


def test_tiers_place_each_judge_among_the_expert_pairs_with_z_worked_by_hand() -> None:
    kappa = _kappa(
        [
            ("e1", "e2", "expert", "expert", 40, 0.5),
            ("e1", "e3", "expert", "expert", 40, 0.6),
            ("e2", "e3", "expert", "expert", 40, 0.7),
            ("e1", "sharp", "expert", "llm", 30, 0.95),
            ("e2", "sharp", "expert", "llm", 10, 0.95),
            ("e1", "usual", "expert", "llm", 30, 0.55),
            ("e1", "poor", "expert", "llm", 30, 0.2),
            ("e1", "lone", "expert", "llm", 3, float("nan")),
        ]
    )
    tiers = {t.judge: t for t in tier_rows(kappa)}
    assert tiers["sharp"].z == pytest.approx((0.95 - 0.6) / 0.1) and tiers["sharp"].n == 40
    assert tiers["sharp"].tier == "more consistent than people" and tiers["sharp"].experts == 2
    assert tiers["usual"].tier == "within the range of people" and tiers["usual"].z == pytest.approx(-0.5)
    assert tiers["poor"].tier == "below people"
    assert tiers["lone"].tier is None and tiers["lone"].reason is not None
    assert tiers["sharp"].people_pairs == 3 and tiers["sharp"].people_n == 120


def test_one_expert_pair_uses_its_bootstrap_se_and_none_gives_a_reason() -> None:
    one = _kappa([("e1", "e2", "expert", "expert", 40, 0.6), ("e1", "j", "expert", "llm", 40, 0.6)])
    (row,) = tier_rows(one)
    assert row.people_sd == pytest.approx(0.2 / (2 * 1.96)) and row.tier == "within the range of people"
    none = _kappa([("e1", "j", "expert", "llm", 40, 0.6)])
    (row,) = tier_rows(none)
    assert row.tier is None and "no spread" in (row.reason or "")
