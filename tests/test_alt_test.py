"""The alternative annotator test in full: 2 and 4 categories (accuracy), rubric scores (negative RMSE), by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from centaur_tui.stats.alt_test import AltTestLabelError, alt_test, encode_labels

NAMES = ["E1", "E2", "E3"]


def _p(d: list[float], eps: float = 0.2) -> float:
    d_ = np.array(d)
    if d_.std(ddof=1) == 0:
        return 0.0 if d_.mean() < eps else 1.0
    t = (d_.mean() - eps) / (d_.std(ddof=1) / math.sqrt(len(d_)))
    return float(stats.t.cdf(t, len(d_) - 1))


def _by_expert(res):  # type: ignore[no-untyped-def]
    return {r["expert"]: r for r in res.humans}


def test_two_categories_by_hand() -> None:
    humans = np.array([[0, 1, 1, 0], [0, 1, 0, 0], [1, 1, 0, 0]], dtype=float)
    llm = np.array([0, 1, 0, 1], dtype=float)
    res = alt_test(humans, llm, NAMES, categories=2, min_items=4, min_humans_per_item=3)
    rows = _by_expert(res)
    # E1 left out (others E2, E3): item 3: E1 says 1, both others 0, the LLM 0: the LLM wins (W_f = 1, W_h = 0);
    # item 4: E1 agrees with both others, the LLM with none. d = W_h - W_f = [0, 0, -1, 1];
    # likewise E2: [0, 0, 0, 1] and E3: [-1, 0, 0, 1].
    expected = {"E1": (0.75, 0.75, [0, 0, -1, 1]), "E2": (0.75, 1.0, [0, 0, 0, 1]), "E3": (0.75, 0.75, [-1, 0, 0, 1])}
    for name, (rho_f, rho_h, d) in expected.items():
        assert rows[name]["rho_f"] == pytest.approx(rho_f)
        assert rows[name]["rho_h"] == pytest.approx(rho_h)
        assert rows[name]["p"] == pytest.approx(_p(d))
    assert res.items == 4
    assert res.winning_rate == 0.0 and res.passed is False
    assert res.advantage_probability == pytest.approx(0.75)


def test_four_categories_declared_labels_by_hand() -> None:
    labels = ["A", "B", "C", "D"]
    humans = encode_labels(np.array([["A", "B", "D"], ["A", "C", "D"], ["B", "C", "C"]], dtype=object), labels, NAMES)
    llm = encode_labels(np.array(["A", "C", "D"], dtype=object), labels, "judge")
    res = alt_test(humans, llm, NAMES, categories=4, min_items=3, min_humans_per_item=3)
    rows = _by_expert(res)
    # E1: d = [0, -1, 0]; E2: d = [0, 0, 0] (p = 0: constant below epsilon); E3: d = [-1, 0, -1].
    assert rows["E1"]["p"] == pytest.approx(float(stats.t.cdf(-1.6, 2)))
    assert rows["E2"]["p"] == 0.0
    assert rows["E3"]["p"] == pytest.approx(float(stats.t.cdf(-2.6, 2)))
    assert [rows[n]["rho_h"] for n in NAMES] == pytest.approx([2 / 3, 1.0, 1 / 3])
    assert all(rows[n]["rho_f"] == 1.0 for n in NAMES)
    # Benjamini-Yekutieli at q = 0.05 over 3 tests: thresholds i/3 * 0.05 / (11/6); only p = 0 passes.
    assert [rows[n]["rejected"] for n in NAMES] == [False, True, False]
    assert res.winning_rate == pytest.approx(1 / 3) and res.passed is False


def test_rubric_scores_negative_rmse_by_hand() -> None:
    humans = np.array([[5.0, 7.0], [6.0, 7.0], [8.0, 4.0]])
    llm = np.array([6.0, 6.0])
    res = alt_test(humans, llm, NAMES, metric="rmse", min_items=2, min_humans_per_item=3)
    rows = _by_expert(res)
    # E1 out: item 1: -sqrt(((5-6)^2 + (5-8)^2) / 2) = -2.236 for E1, -sqrt(2) for the LLM; item 2: -2.121 vs
    # -1.581: the LLM wins both (d = [-1, -1]). E2 out: tie on item 1 (both -1.581), LLM wins item 2 (d = [0, -1]).
    # E3 out: LLM wins both.
    assert [rows[n]["rho_h"] for n in NAMES] == [0.0, 0.5, 0.0]
    assert [rows[n]["rho_f"] for n in NAMES] == [1.0, 1.0, 1.0]
    assert rows["E2"]["p"] == pytest.approx(float(stats.t.cdf(-1.4, 1)))
    assert rows["E1"]["p"] == 0.0 and rows["E3"]["p"] == 0.0
    # Vectors (both options' rubric averages): a repeated coordinate gives the same RMSE.
    vec = alt_test(
        np.repeat(humans[..., None], 2, -1), np.repeat(llm[..., None], 2, -1), NAMES, metric="rmse", min_items=2
    )
    assert [r["p"] for r in vec.humans] == pytest.approx([r["p"] for r in res.humans])
    # A vector with one missing coordinate is not an annotation (winner-only judgment: no rubric scores).
    gappy = np.repeat(humans[..., None], 2, -1)
    gappy[0, 0, 1] = np.nan
    part = alt_test(gappy, np.repeat(llm[..., None], 2, -1), NAMES, metric="rmse", min_items=1, min_humans_per_item=3)
    assert part.items == 1


def test_two_experts_per_item_allowed() -> None:
    humans = np.array([[0, 1, 1, 0, 1], [0, 1, 0, 0, 1], [np.nan] * 5])
    res = alt_test(humans, np.array([0, 1, 0, 0, 1.0]), NAMES, categories=2, min_items=5, min_humans_per_item=2)
    assert res.items == 5 and sum(bool(r["tested"]) for r in res.humans) == 2


@pytest.mark.parametrize("code", [3.0, -1.0, 0.5, 7.0])
def test_codes_outside_the_declared_set_are_refused(code: float) -> None:
    humans = np.array([[0, 1, 2], [0, 1, code], [0, 1, 1]], dtype=float)
    with pytest.raises(AltTestLabelError, match="E2"):
        alt_test(humans, np.array([0, 1, 2.0]), NAMES, categories=3, min_items=1)
    with pytest.raises(AltTestLabelError, match="LLM"):
        alt_test(np.array([[0, 1, 2.0]] * 3), np.array([0, 1, code]), NAMES, categories=3, min_items=1)


@pytest.mark.parametrize("label", ["tie ", "Tie", "E", "", 2, "tie (bothbad)"])
def test_labels_outside_the_declared_set_are_refused(label: object) -> None:
    with pytest.raises(AltTestLabelError, match=r"E3: label .* not one of the declared labels"):
        encode_labels(np.array([["a", "b"], ["a", "tie"], ["a", label]], dtype=object), ["a", "b", "tie"], NAMES)


def test_bad_metric_and_category_count_refused() -> None:
    with pytest.raises(AltTestLabelError, match="metric"):
        alt_test(np.zeros((3, 2)), np.zeros(2), NAMES, metric="f1")
    with pytest.raises(AltTestLabelError, match="2 categories"):
        alt_test(np.zeros((3, 2)), np.zeros(2), NAMES, categories=1)
    with pytest.raises(AltTestLabelError, match="repeat"):
        encode_labels(np.array(["a"], dtype=object), ["a", "a"], "E1")


def test_winner_only_verdicts_count_for_accuracy_and_are_left_out_of_rmse() -> None:
    """Judgments without rubric scores (winner only) take part in the verdict test and are counted out of the other."""
    from centaur_tui.stats.experts import ExpertOptions, experts_vs_llm
    from tests.support.frames import Data

    d = Data()
    rng = np.random.default_rng(0)
    for unit in range(40):
        run = 1000 + unit
        truth = "A" if rng.random() < 0.6 else "B"
        d.judge(run, "t", "automation", "A", "B", "L1", truth)
        for e in ("E1", "E2", "E3"):
            verdict = truth if rng.random() < 0.8 else ("B" if truth == "A" else "A")
            d.judge(run, "t", "automation", "A", "B", e, verdict, kind="expert")
    doc = experts_vs_llm(d.frames(), ExpertOptions(bootstrap=0, alt_min_experts_per_item=3)).doc
    rows = {r["metric"]: r for r in doc["alt_test"]["rows"]}
    assert rows["accuracy"]["items"] == 40 and rows["accuracy"]["experts_tested"] == 3
    assert rows["rmse"]["items"] == 0 and rows["rmse"]["winning_rate"] is None and rows["rmse"]["reason"]
    assert doc["alt_test"]["unscored_verdicts"] == 160  # 40 comparisons x (3 experts + 1 LLM judge)
    detail = [r for r in doc["alt_test"]["experts"] if r["metric"] == "accuracy"]
    assert [r["expert"] for r in detail] == ["E1", "E2", "E3"] and all(r["tested"] for r in detail)
