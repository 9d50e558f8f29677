"""Experts vs LLM judges: hand-computed agreement, kappa, majorities, biases, alt-test; planted truth; NaN reasons."""

from __future__ import annotations

import json
import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from centaur_tui.report import ReportDocument, to_markdown, to_text
from centaur_tui.stats.agreement import (
    alpha_from_coincidence,
    block_agreement,
    coincidences,
    kappa_from_confusion,
    kappa_table,
)
from centaur_tui.stats.alt_test import alt_test, benjamini_yekutieli, one_sided_t_p
from centaur_tui.stats.common import bootstrap_weights
from centaur_tui.stats.experts import ExpertOptions, experts_vs_llm, rank_correlations
from centaur_tui.stats.reliability import alpha_nominal
from centaur_tui.stats.report import ReportOptions, build_report
from tests.support.frames import Data

NAN = math.nan
CODE_WINNER = {0: "A", 1: "B", 2: "tie"}


def _judge(
    d: Data,
    unit: int,
    judge: str,
    code: int,
    kind: str,
    *,
    first_a: bool = True,
    task: str = "t",
    mode: str = "automation",
    run: int = 1,
    pair: tuple[str, str] = ("A", "B"),
    presentation: int = 0,
    scores: tuple[dict[str, int], dict[str, int]] | None = None,
) -> None:
    """One verdict in canonical code on comparison `unit` (a distinct run per unit keeps comparisons apart)."""
    a, b = pair
    winner = {0: a, 1: b, 2: "tie"}[code]
    first, second = (a, b) if first_a else (b, a)
    d.judge(
        run + 1000 * unit, task, mode, first, second, judge, winner, kind=kind, presentation=presentation, scores=scores
    )


def _section(d: Data, lengths: list[dict] | None = None, **options: object) -> dict:
    frames = d.frames(comparison_lengths=lengths)
    doc = experts_vs_llm(frames, ExpertOptions(bootstrap=options.pop("bootstrap", 200), **options)).doc  # type: ignore[arg-type]
    json.dumps(doc, allow_nan=False)
    return doc


# -- hand-computed cases ---------------------------------------------------------------------


def test_blocks_pool_judge_pairs_with_and_without_ties() -> None:
    # Comparisons 1-3; experts E1, E2; LLM judges L1, L2 (codes: 0 = A wins, 1 = B wins, 2 = tie).
    m = np.array(
        [
            [0, 1, 2],  # E1
            [0, 0, 2],  # E2
            [0, 1, 1],  # L1
            [1, 1, NAN],  # L2
        ],
        dtype=float,
    )
    ee = block_agreement(m, [0, 1], None, None)
    assert (ee["pairs"], ee["agreement"]) == (3, pytest.approx(2 / 3))  # agree on 1 and 3
    assert ee["decisive_pairs"] == 2 and ee["decisive_agreement"] == pytest.approx(1 / 2)
    el = block_agreement(m, [0, 1], [2, 3], None)
    # Comparison 1: E(0,0) x L(0,1) -> 2 of 4; comparison 2: E(1,0) x L(1,1) -> 2 of 4;
    # comparison 3: E(2,2) x L(1) -> 0 of 2.
    assert el["pairs"] == 10 and el["agreement"] == pytest.approx(4 / 10)
    assert el["decisive_pairs"] == 8 and el["decisive_agreement"] == pytest.approx(4 / 8)
    assert el["chance"] == pytest.approx(1 / 3) and el["decisive_chance"] == 0.5
    ll = block_agreement(m, [2, 3], None, None)
    assert (ll["units"], ll["pairs"], ll["agreement"]) == (2, 2, 0.5)
    none = block_agreement(m, [0], None, None)
    assert none["pairs"] == 0 and math.isnan(none["agreement"]) and none["reason"]


def test_kappa_of_a_textbook_table_and_its_bootstrap() -> None:
    # Confusion [[20, 5], [10, 15]]: po = 0.7, pe = 0.5 x 0.6 + 0.5 x 0.4 = 0.5, kappa = 0.4.
    x = [0] * 25 + [1] * 25
    y = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15
    m = np.array([x, y], dtype=float)
    w = bootstrap_weights(50, 300, 1)
    t = kappa_table(m, ["E1", "L1"], ["expert", "llm"], w)
    r = t.iloc[0]
    assert (r["block"], r["n"]) == ("expert-LLM", 50)
    assert r["agreement"] == pytest.approx(0.7) and r["kappa"] == pytest.approx(0.4)
    assert r["ci_low"] < 0.4 < r["ci_high"] and r["ci_high"] - r["ci_low"] < 0.6
    assert math.isnan(float(kappa_from_confusion(np.array([5.0, 0, 0, 0, 0, 0, 0, 0, 0]))))  # one category: pe = 1
    few = kappa_table(m[:, :4], ["E1", "E2"], ["expert", "expert"], None).iloc[0]
    assert math.isnan(few["kappa"]) and few["reason"] == "fewer than 5 shared comparisons (n = 4)"


def test_resampled_alpha_formula_equals_the_krippendorff_package() -> None:
    rng = np.random.default_rng(3)
    m = rng.integers(0, 3, size=(5, 40)).astype(float)
    m[rng.random(m.shape) < 0.3] = NAN
    o, usable = coincidences(m)
    expected, reason = alpha_nominal(m[:, usable])
    assert reason is None
    assert float(alpha_from_coincidence(o.sum(axis=0))) == pytest.approx(expected, abs=1e-12)


def test_leave_one_out_majority_scores_experts_and_llm_judges_on_the_same_items() -> None:
    d = Data()
    verdicts = {  # comparison: (E1, E2, E3, L1)
        1: (0, 0, 0, 0),
        2: (0, 0, 1, 1),
        3: (1, 2, 1, 1),
        4: (0, 1, 2, 0),  # no majority for anybody left out: the other two disagree
    }
    for unit, codes in verdicts.items():
        for judge, code in zip(("E1", "E2", "E3"), codes[:3], strict=True):
            _judge(d, unit, judge, code, "expert")
        _judge(d, unit, "L1", codes[3], "llm")
    doc = _section(d, bootstrap=0)
    rows = {r["judge"]: r for r in doc["loo_majority"]["rows"]}
    # E1: items 1 (ref 0: hit), 2 (E2 0 vs E3 1: shared top -> none), 3 (ref E2 2 vs E3 1 -> none): 1 of 1.
    assert (rows["E1"]["n"], rows["E1"]["agreement"], rows["E1"]["no_majority"]) == (1, 1.0, 3)
    # E3: item 1 (ref 0, hit), item 2 (ref 0, miss), item 3 (E1 1 vs E2 2 -> none): 1 of 2.
    assert (rows["E3"]["n"], rows["E3"]["agreement"]) == (2, 0.5)
    # The same items for L1: E1's {1: ref 0}, E2's {1: 0, 3: 1}, E3's {1: 0, 2: 0}; L1 says 0, 0, 1, 0, 1 -> 4 of 5;
    # the experts themselves on those items: E1 0 (hit), E2 0 (hit), E2 2 (miss), E3 0 (hit), E3 1 (miss) -> 3 of 5.
    assert rows["L1"]["n"] == 5 and rows["L1"]["agreement"] == pytest.approx(4 / 5)
    assert rows["L1"]["expert_agreement"] == pytest.approx(3 / 5) and rows["L1"]["difference"] == pytest.approx(0.2)
    pm = doc["panel_majority"]
    # Expert majorities 0, 0, 1, none; LLM (one judge) 0, 1, 1, 0: both on 3 comparisons, 2 agree.
    assert (pm["n"], pm["agreement"], pm["no_expert_majority"]) == (3, pytest.approx(2 / 3), 1)
    assert pm["confusion"] == [[1, 1, 0], [0, 1, 0], [0, 0, 0]]


def test_biases_position_length_leniency_repeats_by_hand() -> None:
    d = Data()
    hi, lo = {"q": 8, "g": 6}, {"q": 4, "g": 4}
    # Expert ann: 4 comparisons; the winner is shown first 3 times, and is the longer output 3 times.
    _judge(d, 1, "ann", 0, "expert", first_a=True, scores=(hi, lo))
    _judge(d, 2, "ann", 0, "expert", first_a=True, scores=(hi, lo))
    _judge(d, 3, "ann", 1, "expert", first_a=False, scores=(hi, lo))
    _judge(d, 4, "ann", 1, "expert", first_a=True, scores=(lo, hi))
    # ann's swapped repeat of comparison 1 (presentation 1, B shown first): a tie this time.
    _judge(d, 1, "ann", 2, "expert", first_a=False, presentation=1, scores=(lo, lo))
    # LLM judge J scores every option one point lower on average than ann.
    for unit, code in ((1, 0), (2, 0), (3, 1), (4, 1)):
        a_scores, b_scores = ({"q": 7, "g": 5}, {"q": 3, "g": 3}) if code == 0 else ({"q": 3, "g": 3}, {"q": 7, "g": 5})
        _judge(d, unit, "J", code, "llm", scores=(a_scores, b_scores))
    lengths = [
        {"comparison_id": cid, "length_a": la, "length_b": 100}
        for cid, la in zip(d.comparisons, (500, 500, 50, 500), strict=True)
    ]
    doc = _section(d, lengths, bootstrap=50)
    bias = {k: {r["judge"]: r for r in v["rows"]} for k, v in doc["bias"].items()}
    ann = bias["position"]["ann"]
    # Usable: 5 judgments (4 + the repeat); decisive 4; first shown won in 1, 2, 3 (B shown first and won).
    assert (ann["n"], ann["first"], ann["share_first"]) == (4, 3, 0.75)
    assert ann["p"] == pytest.approx(stats.binomtest(3, 4, 0.5).pvalue)
    # Longer: A (500) won 1 and 2; B (100) beat A (50) in 3; B (100) beat A (500) in 4: 3 of 4.
    assert (bias["length"]["ann"]["n"], bias["length"]["ann"]["longer"]) == (4, 3)
    # Leniency: ann's averages (7, 4) vs J's (6, 3) on every comparison (first presentation): +1 throughout.
    le = bias["leniency"]["ann"]
    assert (le["n"], le["comparisons"]) == (8, 4)
    assert le["mean_difference"] == pytest.approx(1.0) and le["sd"] == pytest.approx(0.0)
    assert le["loa_low"] == pytest.approx(1.0) and le["loa_high"] == pytest.approx(1.0)
    assert bias["leniency"]["J"]["n"] == 0 and "fewer than 2" in bias["leniency"]["J"]["reason"]
    rep = bias["repeats"]["ann"]
    assert (rep["n"], rep["same"], rep["agreement"], rep["decisive_n"]) == (1, 0, 0.0, 0)
    assert bias["consistency"]["ann"]["share"] == 1.0
    # Without lengths: NaN with the reason.
    doc = _section(d, None, bootstrap=0)
    row = next(r for r in doc["bias"]["length"]["rows"] if r["judge"] == "ann")
    assert row["share_longer"] is None and row["reason"] == "output lengths not given to the statistics"


def test_benjamini_yekutieli_and_one_sided_t_by_hand() -> None:
    # m = 4, H_4 = 25/12; thresholds i/4 x 0.05 / H_4 = 0.006, 0.012, 0.018, 0.024.
    p = np.array([0.001, 0.013, 0.017, 0.5])
    assert benjamini_yekutieli(p, 0.05).tolist() == [True, True, True, False]  # 0.017 <= 0.018 carries 0.013
    assert benjamini_yekutieli(np.array([0.02, 0.5])).tolist() == [False, False]  # 0.02 > 1/2 x 0.05 / 1.5
    d = np.array([1, 0, -1, 0, 1, 1, 0, -1, 0, 0], dtype=float)
    assert one_sided_t_p(d, 0.2) == pytest.approx(stats.ttest_1samp(d, 0.2, alternative="less").pvalue)
    assert one_sided_t_p(np.zeros(5), 0.2) == 0.0 and one_sided_t_p(np.ones(5), 0.2) == 1.0


def test_alt_test_of_a_tiny_panel_by_hand() -> None:
    # Three experts judge 4 items; the LLM copies E1.
    humans = np.array([[0, 1, 0, 2], [0, 1, 1, 2], [1, 1, 0, 2]], dtype=float)
    llm = humans[0].copy()
    res = alt_test(humans, llm, ["E1", "E2", "E3"], min_items=4, min_humans_per_item=3)
    e1, e2, e3 = res.humans
    # Leaving E1 out, the LLM is E1's twin: W_f = W_h = 1 everywhere.
    assert (e1["rho_f"], e1["rho_h"]) == (1.0, 1.0)
    # Leaving E2 out: item 3 (others 0, 0): LLM 0 scores 1, E2 (1) 0 -> W_h = 0; elsewhere ties.
    assert (e2["rho_f"], e2["rho_h"]) == (1.0, 0.75)
    # Leaving E3 out: item 1 (others 0, 0): LLM 0 scores 1, E3 (1) 0 -> W_h = 0; item 3 (others 0, 1): 0.5 vs 0.5.
    assert (e3["rho_f"], e3["rho_h"]) == (1.0, 0.75)
    # d = W_h - W_f: E1 all 0 (no variance, mean 0 < 0.2: p = 0); E2 and E3 (0, 0, -1, 0): t = (-0.25 - 0.2) /
    # (0.5 / 2) = -1.8 on 3 df, p = 0.0849. BY with m = 3 (H = 11/6): thresholds 0.0091, 0.0182, 0.0273 -> E1 only.
    assert e1["p"] == 0.0 and e2["p"] == pytest.approx(stats.t.cdf(-1.8, 3)) == pytest.approx(0.0849, abs=1e-4)
    assert [r["rejected"] for r in res.humans] == [True, False, False]
    assert res.winning_rate == pytest.approx(1 / 3) and res.passed is False and res.advantage_probability == 1.0
    few = alt_test(humans, llm, ["E1", "E2", "E3"])
    assert math.isnan(few.winning_rate) and few.passed is None and "at least 3 experts" in few.reason
    assert all(
        r["reason"] == "fewer than 30 comparisons with the LLM judge and >= 2 experts (n = 4)" for r in few.humans
    )


def test_rank_correlations_match_scipy_with_ties_and_missing_candidates() -> None:
    rng = np.random.default_rng(5)
    for _ in range(200):
        k = int(rng.integers(3, 9))
        x, y = rng.integers(0, 4, k).astype(float), rng.integers(0, 4, k).astype(float)
        if rng.random() < 0.3:
            x[rng.integers(0, k)] = NAN
        rho, tau, n = rank_correlations(x[None], y[None])
        v = np.isfinite(x) & np.isfinite(y)
        if v.sum() >= 3 and np.ptp(x[v]) > 0 and np.ptp(y[v]) > 0:
            assert rho[0] == pytest.approx(stats.spearmanr(x[v], y[v]).statistic, abs=1e-12)
            assert tau[0] == pytest.approx(stats.kendalltau(x[v], y[v]).statistic, abs=1e-12)
        else:
            assert math.isnan(rho[0]) and math.isnan(tau[0])
        assert n[0] == v.sum()


# -- planted truth ---------------------------------------------------------------------------


def _planted_matrix(rng: np.random.Generator, units: int, errors: list[float], tie: float = 0.1) -> np.ndarray:
    """Judges see a latent verdict and, with their error rate, give one of the two other codes instead."""
    truth = rng.choice(3, size=units, p=[(1 - tie) / 2, (1 - tie) / 2, tie])
    m = np.empty((len(errors), units))
    for i, e in enumerate(errors):
        wrong = rng.random(units) < e
        shift = rng.integers(1, 3, units)
        m[i] = np.where(wrong, (truth + shift) % 3, truth)
    return m


def test_planted_error_rates_give_intervals_covering_the_implied_agreement() -> None:
    """With error rates e1, e2 (errors uniform over the other two codes), P(agree) = (1-e1)(1-e2) + e1 e2 / 2."""
    e_exp, e_llm = 0.1, 0.3
    implied = {
        "expert-expert": (1 - e_exp) ** 2 + e_exp**2 / 2,
        "expert-LLM": (1 - e_exp) * (1 - e_llm) + e_exp * e_llm / 2,
        "LLM-LLM": (1 - e_llm) ** 2 + e_llm**2 / 2,
    }
    covered = {k: 0 for k in implied}
    widths = []
    reps = 40
    for seed in range(reps):
        rng = np.random.default_rng(seed)
        m = _planted_matrix(rng, 150, [e_exp] * 3 + [e_llm] * 3)
        w = bootstrap_weights(150, 200, seed)
        for name, a, b in (
            ("expert-expert", [0, 1, 2], None),
            ("expert-LLM", [0, 1, 2], [3, 4, 5]),
            ("LLM-LLM", [3, 4, 5], None),
        ):
            r = block_agreement(m, a, b, w)
            covered[name] += r["ci_low"] <= implied[name] <= r["ci_high"]
            widths.append(r["ci_high"] - r["ci_low"])
    # 95% intervals: expect about 38 of 40; a percentile bootstrap of 150 comparisons runs a little narrow.
    assert all(c >= 33 for c in covered.values()), covered
    assert 0.03 < np.mean(widths) < 0.2


def test_llm_copying_the_expert_majority_wins_the_alt_test_and_a_random_one_loses() -> None:
    rng = np.random.default_rng(11)
    experts = _planted_matrix(rng, 80, [0.15] * 4)
    counts = np.stack([(experts == c).sum(axis=0) for c in range(3)])
    copy = counts.argmax(axis=0).astype(float)  # the experts' (full) majority
    random_llm = rng.integers(0, 3, 80).astype(float)
    names = ["E1", "E2", "E3", "E4"]
    good = alt_test(experts, copy, names, min_humans_per_item=3)
    bad = alt_test(experts, random_llm, names, min_humans_per_item=3)
    assert good.winning_rate >= 0.75 and good.passed is True
    assert bad.winning_rate <= 0.25 and bad.passed is False
    assert good.advantage_probability > 0.9 > bad.advantage_probability


def test_planted_panels_through_the_report_rank_alike_and_cover_the_implied_agreement() -> None:
    """Frames end to end: 3 experts and 3 LLM judges with known error rates on 5 candidates."""
    rng = np.random.default_rng(2)
    d = Data()
    names = ["A", "B", "C", "D", "E"]
    strength = dict(zip(names, [2.0, 1.0, 0.0, -1.0, -2.0], strict=True))
    errors = {"ann": 0.1, "bob": 0.1, "cat": 0.1, "L1": 0.25, "L2": 0.25, "L3": 0.25}
    for run in (1, 2, 3):
        for task in ("t1", "t2"):
            for x, y in combinations(names, 2):
                truth = 0 if rng.random() < 1 / (1 + math.exp(strength[y] - strength[x])) else 1
                for judge, e in errors.items():
                    code = truth if rng.random() >= e else int((truth + rng.integers(1, 3)) % 3)
                    d.judge(
                        run,
                        task,
                        "automation",
                        *((x, y) if rng.random() < 0.5 else (y, x)),
                        judge,
                        {0: x, 1: y, 2: "tie"}[code],
                        kind="expert" if judge in ("ann", "bob", "cat") else "llm",
                    )
    report = build_report(d.frames(), ReportOptions(bootstrap=200))
    doc = report.doc
    text = json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False)
    # The typed document holds every experts part and gives back the same JSON, byte for byte.
    assert report.document.to_json() == text and ReportDocument.from_json(text) == report.document
    assert report.document.experts.rankings is not None and report.document.experts.alt_test is not None
    assert to_text(report.document) == to_text(doc)
    ex = doc["experts"]
    assert ex["present"] and ex["counts"]["reference_comparisons"] == 60
    blocks = {r["block"]: r for r in ex["agreement"]["blocks"]}
    el = blocks["expert-LLM"]
    implied = 0.9 * 0.75 + 0.1 * 0.25 / 2
    assert el["ci_low"] <= implied <= el["ci_high"], el
    pooled = next(r for r in ex["rankings"]["rows"] if r["task"] == "(all tasks)")
    assert pooled["n"] == 5 and pooled["spearman"] >= 0.8 and pooled["expert_top"] == pooled["llm_top"] == "A"
    assert pooled["spearman_ci_low"] <= pooled["spearman"] <= pooled["spearman_ci_high"]
    best = next(r for r in ex["headline"]["rows"] if r["finding"] == "best solver")
    assert best["experts"] == best["llm"] == "A" and best["holds"] is True
    text = to_text(doc)
    assert "Experts vs LLM judges: agreement blocks" in text and "alternative annotator test" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "| expert-LLM |" in to_markdown(doc)


# -- too little data -------------------------------------------------------------------------


def test_no_expert_judgment_gives_one_line() -> None:
    d = Data()
    _judge(d, 1, "J1", 0, "llm")
    _judge(d, 1, "J2", 0, "llm")
    doc = build_report(d.frames(), ReportOptions(bootstrap=0)).doc
    assert doc["experts"]["present"] is False and "No expert judgments" in doc["experts"]["note"]
    text = to_text(doc)
    section = text[text.index("Experts vs LLM judges") : text.index("Prediction-powered rankings")]
    assert section.count("\n") <= 5 and "No expert judgments in this session" in section
    ppr = text[text.index("Prediction-powered rankings") : text.index("Judge calibration")]
    assert ppr.count("\n") <= 5 and "No expert judgments" in ppr
    calibration = text[text.index("Judge calibration") :]
    assert calibration.count("\n") <= 5 and "no expert judgment" in calibration


def test_experts_without_llm_overlap_and_single_experts_give_nan_with_reasons() -> None:
    d = Data()
    _judge(d, 1, "ann", 0, "expert")
    _judge(d, 2, "J1", 0, "llm")  # no comparison judged by both kinds
    doc = build_report(d.frames(), ReportOptions(bootstrap=30)).doc
    json.dumps(doc, allow_nan=False)
    ex = doc["experts"]
    assert ex["counts"]["reference_comparisons"] == 0 and "No comparison was judged by both" in ex["note"]
    assert all(r["agreement"] is None and r["reason"] for r in ex["agreement"]["blocks"])
    assert all(r["alpha"] is None and r["reason"] for r in ex["agreement"]["alpha"])
    assert ex["panel_majority"]["agreement"] is None and ex["panel_majority"]["reason"]
    assert all(r["reason"] for r in ex["rankings"]["rows"])
    assert all(r["winning_rate"] is None and r["reason"] for r in ex["alt_test"]["rows"])
    assert to_text(doc) and to_markdown(doc)

    d = Data()  # one expert beside two LLM judges, every verdict a tie
    for unit in (1, 2, 3):
        _judge(d, unit, "ann", 2, "expert")
        _judge(d, unit, "J1", 2, "llm")
        _judge(d, unit, "J2", 2, "llm")
    ex = build_report(d.frames(), ReportOptions(bootstrap=30)).doc["experts"]
    blocks = {r["block"]: r for r in ex["agreement"]["blocks"]}
    assert blocks["expert-expert"]["pairs"] == 0 and blocks["expert-expert"]["reason"]
    assert blocks["expert-LLM"]["agreement"] == 1.0 and blocks["expert-LLM"]["decisive_agreement"] is None
    alpha = {r["group"]: r for r in ex["agreement"]["alpha"]}
    assert alpha["experts"]["alpha"] is None and alpha["pooled"]["alpha"] is None
    assert "only one category" in alpha["pooled"]["reason"]
    assert all(r["kappa"] is None and "fewer than 5" in r["reason"] for r in ex["agreement"]["kappa"])
    loo = {r["judge"]: r for r in ex["loo_majority"]["rows"]}
    assert loo["ann"]["n"] == 0 and loo["ann"]["reason"]
    assert all(r["reason"] for r in ex["alt_test"]["rows"])
    rank = ex["rankings"]["rows"][0]
    assert rank["spearman"] is None and "fewer than 3 candidates" in rank["reason"]
    assert ex["bias"]["repeats"]["rows"][0]["reason"] == "no swapped repeat judged"
