"""Frames: statuses (invalid, ineligible, superseded, other kind), canonical codes, rubric averages.

The builders are in tests/support/frames.py.
"""

from __future__ import annotations

import pytest

from centaur_tui.stats.frames import Design, build_frames, status_counts
from tests.support.frames import Data, three_way


def test_codes_are_canonical_whatever_the_presented_order() -> None:
    d = Data()
    d.judge(1, "t", "automation", "B", "A", "J1", "A")  # shown B first; A (= candidate_a) wins
    d.judge(1, "t", "automation", "A", "B", "J2", "A")
    d.judge(1, "t", "automation", "A", "B", "J3", "B")
    d.judge(1, "t", "automation", "B", "A", "J4", "tie")
    j = d.frames().judgments
    assert j["code"].tolist() == [0, 0, 1, 2]
    assert j["winner_pos"].tolist() == [2, 1, 2, 0]
    assert j["candidate_a"].astype(str).tolist() == ["A"] * 4


def test_statuses_count_every_left_out_judgment() -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "A", "B", "J2", None, valid=False)
    d.judge(1, "t", "automation", "A", "B", "J3", "A", family="North")  # A is a North model: ineligible
    d.judge(1, "t", "automation", "A", "B", "J4", "B", revision=0)
    d.judge(1, "t", "automation", "A", "B", "J4", "A", revision=1)  # supersedes the line above
    d.judge(1, "t", "automation", "A", "B", "E1", "A", kind="expert")
    d.judge(1, "t", "automation", "A", "B", "J5", "C")  # "valid" but the winner is neither option
    design = Design(candidate_families={"A": "North", "B": "South"})
    f = d.frames(design)
    assert f.judgments["status"].astype(str).tolist() == [
        "ok",
        "invalid",
        "ineligible",
        "superseded",
        "ok",
        "other_kind",
        "malformed",
    ]
    assert status_counts(f.judgments) == {
        "invalid": 1,
        "superseded": 1,
        "other_kind": 1,
        "ineligible": 1,
        "malformed": 1,
    }
    assert len(f.ok) == 2
    both = d.frames(design, judge_kinds=("llm", "expert"))
    assert len(both.ok) == 3


def test_rubric_averages_are_recomputed_from_the_scores_and_checked_for_completeness() -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A", scores=({"x": 8, "g1": 6}, {"x": 4, "g1": 5}))
    d.judge(1, "t", "automation", "A", "B", "J2", "A", scores=({"x": 8}, {"x": 4, "g1": 5}))  # A lacks g1
    f = d.frames(Design(rubric={"t": ("x", "g1")}))
    j = f.judgments
    assert j.loc[0, "option1_avg"] == 7.0 and j.loc[0, "option2_avg"] == 4.5
    assert j["complete"].tolist() == [True, False]
    assert j.loc[1, "option1_dims"] == 1
    # Option scores carry the general dimensions as columns.
    row = f.option_scores[(f.option_scores["judgment_id"] == 1) & (f.option_scores["candidate"] == "A")].iloc[0]
    assert row["dim:g1"] == 6 and row["dims"] == 2


def test_tournaments_keep_candidates_without_any_usable_judgment() -> None:
    d = three_way()
    d.comparison(1, "t", "automation", "A", "D")  # D was compared but never judged validly
    d.judge(1, "t", "automation", "A", "D", "J1", None, valid=False)
    f = d.frames()
    names = f.candidates.loc[f.candidates["mode"] == "automation", "candidate"].astype(str).tolist()
    assert sorted(names) == ["A", "B", "C", "D"]


def test_csv_style_rows_are_read_too() -> None:
    d = three_way()
    rows = [
        {k: ("" if v is None else str(v).lower() if k == "valid" else str(v)) for k, v in r.items()}
        for r in d.judgments
    ]
    for r in rows:
        r["valid"] = "true" if r["valid"] == "1" else "false"
    f = build_frames(rows, [], [], list(d.comparisons.values()))
    assert len(f.ok) == 4 and f.judgments["run"].tolist() == [1, 1, 1, 1]


def test_empty_input_gives_empty_frames() -> None:
    f = build_frames([], [], [], [])
    assert f.judgments.empty and f.ok.empty and f.candidates.empty and f.long.empty


@pytest.mark.parametrize("kinds", [("llm",), ("expert",)])
def test_judge_kind_selection(kinds: tuple[str, ...]) -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "A", "B", "E1", "B", kind="expert")
    ok = d.frames(judge_kinds=kinds).ok
    assert ok["judge_kind"].astype(str).tolist() == [kinds[0]]
