"""Degenerate data gives NaN with a reason, never a crash: no valid judgment, one run, one category, nothing at all."""

from __future__ import annotations

import json

from centaur_tui.report import to_markdown, to_text
from centaur_tui.stats.frames import Design, build_frames
from centaur_tui.stats.report import ReportOptions, build_report
from tests.support.frames import Data

OPTIONS = ReportOptions(bootstrap=20)


def _doc(data: Data, design: Design | None = None) -> dict:
    doc = build_report(data.frames(design), OPTIONS).doc
    json.dumps(doc, allow_nan=False)  # NaN never leaks into the JSON
    assert to_text(doc) and to_markdown(doc)
    return doc


def test_no_valid_judgment_at_all() -> None:
    d = Data()
    for mode in ("automation", "augmentation"):
        for x, y in (("A", "B"), ("A", "C"), ("B", "C")):
            d.judge(1, "t", mode, x, y, "J1", None, valid=False)
    doc = _doc(d)
    assert doc["counts"]["by_status"]["invalid"] == 6 and doc["counts"]["by_status"]["ok"] == 0
    auto = doc["modes"][0]
    assert auto["n"] == 0 and auto["excluded"] == {"invalid": 3} and auto["missing_cells"] == 3
    assert all(r["mean_rank"] is None and r["reason"] == "no usable judgment in any run" for r in auto["matrix"])
    assert all(r["theta"] is None and r["reason"] == "no usable judgment" for r in auto["bradley_terry"])
    rel = doc["reliability"]["rows"][0]
    assert rel["alpha"] is None and rel["reason"] == "no unit with two or more valid ratings"
    assert rel["excluded"] == {"invalid": 6} and rel["excluded_units"] == 6
    cons = doc["validity"]["choice_rubric"]["rows"][-1]
    assert cons["share"] is None and cons["reason"]
    assert all(r["rho"] is None and r["reason"] for r in doc["cross_mode"]["rows"])
    assert doc["validity"]["rubric_vs_win_rate"]["r"] is None
    assert doc["validity"]["position_bias"]["rows"][0]["p"] is None
    assert all(b["best"] is None for b in doc["best_by_task"])
    assert "NaN where no usable judgment in any run" in to_text(doc)


def test_one_run_gives_mean_ranks_without_se() -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "A", "C", "J1", "A")
    d.judge(1, "t", "automation", "B", "C", "J1", "B")
    doc = _doc(d)
    matrix = doc["modes"][0]["matrix"]
    assert [r["mean_rank"] for r in matrix] == [1.0, 2.0, 3.0]
    assert all(r["se"] is None and r["reason"] == "one run: SE undefined" for r in matrix)
    assert all(r["se"] is None for r in doc["modes"][0]["overall"])


def test_one_category_judge_and_a_single_mode() -> None:
    d = Data()
    for run in (1, 2):
        for x, y in (("A", "B"), ("A", "C"), ("B", "C")):
            d.judge(run, "t", "augmentation", x, y, "J1", "tie")
            d.judge(run, "t", "augmentation", y, x, "J2", "tie")
    doc = _doc(d)
    assert [m["mode"] for m in doc["modes"]] == ["augmentation"]
    rel = doc["reliability"]["rows"][0]
    assert rel["raw_agreement"] == 1.0 and rel["alpha"] is None and "only one category" in rel["reason"]
    bias = {r["judge"]: r for r in doc["validity"]["position_bias"]["rows"]}
    assert bias["J1"]["n"] == 0 and bias["J1"]["share_first"] is None and bias["J1"]["reason"] == "no decisive judgment"
    assert all(r["reason"] for r in doc["cross_mode"]["rows"])  # no automation mode to correlate with
    ranks = [r["mean_rank"] for r in doc["modes"][0]["matrix"]]
    assert ranks == [2.0, 2.0, 2.0]  # everybody tied: average ranks
    assert [r["rank_of_ranks"] for r in doc["modes"][0]["matrix"]] == [1, 1, 1]


def test_nothing_at_all() -> None:
    doc = build_report(build_frames([], [], [], []), OPTIONS).doc
    json.dumps(doc, allow_nan=False)
    assert doc["modes"] == [] and doc["counts"]["judgments"] == 0
    assert to_text(doc) and to_markdown(doc)


def test_a_judgment_on_an_unknown_comparison_is_counted_not_used() -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "A", "B", "J2", "A")
    d.judgments[1]["comparison_id"] = "c-not-in-the-session"
    doc = _doc(d)
    assert doc["counts"]["by_status"]["unknown_comparison"] == 1
    assert doc["modes"][0]["n"] == 1
