"""Reliability (STATISTICS.md 11): Krippendorff's published example, hand cases, paper count reconciliation."""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.plan import all_comparisons, eligible_judges
from centaur_tui.stats.frames import build_frames, design_from_session
from centaur_tui.stats.reliability import agreement_from_matrix, alpha_nominal, ratings, reliability_table
from centaur_tui.stats.synthetic import synthetic_rows
from tests.support.frames import Data

ROOT = Path(__file__).resolve().parent.parent
NAN = math.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: nominal data,
# four observers, twelve units, missing values; the paper reports alpha = 0.743.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)


def coincidence_alpha(matrix: np.ndarray) -> float:
    """Nominal alpha from the coincidence matrix, written out as in Krippendorff (2011), for cross-checking."""
    o: Counter[tuple[float, float]] = Counter()
    for unit in matrix.T:
        values = [v for v in unit if not math.isnan(v)]
        m = len(values)
        if m < 2:
            continue
        for i, j in permutations(range(m), 2):
            o[(values[i], values[j])] += 1 / (m - 1)
    n_c: Counter[float] = Counter()
    for (c, _), w in o.items():
        n_c[c] += w
    n = sum(n_c.values())
    observed = sum(w for (c, k), w in o.items() if c != k)
    expected = sum(n_c[c] * n_c[k] for c in n_c for k in n_c if c != k) / (n - 1)
    return 1 - observed / expected


def test_krippendorff_published_nominal_example_is_0_743() -> None:
    assert coincidence_alpha(KRIPPENDORFF_2011) == pytest.approx(0.743, abs=5e-4)
    alpha, reason = alpha_nominal(KRIPPENDORFF_2011)
    assert reason is None
    assert alpha == pytest.approx(0.743, abs=5e-4)
    assert alpha == pytest.approx(coincidence_alpha(KRIPPENDORFF_2011), abs=1e-12)


def test_hand_computed_agreement_and_alpha() -> None:
    # u1: 0, 0, 1 (3 pairs, 1 agreeing); u2: 2, 2 (1 pair, agreeing); u3: one rating (excluded).
    matrix = np.array([[0, 2, 1], [0, 2, NAN], [1, NAN, NAN]], dtype=float)
    res = agreement_from_matrix(matrix)
    assert (res["units"], res["excluded_units"], res["ratings"], res["pairs"], res["agreeing_pairs"]) == (2, 1, 5, 4, 2)
    assert res["raw_agreement"] == 0.5
    # Coincidences: o00 = 1, o01 = o10 = 1, o22 = 2; n = 5; alpha = 1 - (n - 1) * 2 / (2*1 + 2*2 + 1*2 + ...) = 0.5
    assert res["alpha"] == pytest.approx(0.5)
    assert res["alpha"] == pytest.approx(coincidence_alpha(matrix))


def test_reliability_from_judgments_uses_canonical_codes_and_one_rating_per_judge() -> None:
    d = Data()
    # Unit 1: J1 and J2 both prefer A, shown in opposite orders; J3 prefers B.
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "B", "A", "J2", "A")
    d.judge(1, "t", "automation", "A", "B", "J3", "B")
    # Unit 2: both judges tie; J1 judged it twice (orders "both"): only its first order counts.
    d.judge(1, "t", "automation", "A", "C", "J1", "tie", presentation=0)
    d.judge(1, "t", "automation", "C", "A", "J1", "A", presentation=1)
    d.judge(1, "t", "automation", "C", "A", "J2", "tie")
    # Unit 3: one valid rating and one invalid: excluded.
    d.judge(1, "t", "automation", "B", "C", "J1", "B")
    d.judge(1, "t", "automation", "B", "C", "J2", None, valid=False)
    f = d.frames()
    rated, repeats = ratings(f)
    assert repeats == 1 and len(rated) == 6
    overall = reliability_table(f).iloc[0]
    assert overall["scope"] == "overall"
    assert (overall["units"], overall["excluded_units"], overall["pairs"], overall["agreeing_pairs"]) == (2, 1, 4, 2)
    assert overall["raw_agreement"] == 0.5 and overall["alpha"] == pytest.approx(0.5)
    assert overall["repeats_dropped"] == 1 and overall["excluded"] == {"invalid": 1}


def test_alpha_is_nan_with_a_reason_when_every_rating_is_the_same() -> None:
    d = Data()
    for x, y in (("A", "B"), ("A", "C"), ("B", "C")):
        d.judge(1, "t", "automation", x, y, "J1", "tie")
        d.judge(1, "t", "automation", y, x, "J2", "tie")
    row = reliability_table(d.frames()).iloc[0]
    assert row["raw_agreement"] == 1.0
    assert math.isnan(row["alpha"]) and "only one category" in row["reason"]


def test_no_unit_with_two_ratings_is_nan_with_a_reason() -> None:
    d = Data()
    d.judge(1, "t", "automation", "A", "B", "J1", "A")
    d.judge(1, "t", "automation", "A", "B", "J2", None, valid=False)
    row = reliability_table(d.frames()).iloc[0]
    assert row["units"] == 0 and row["excluded_units"] == 1
    assert math.isnan(row["raw_agreement"]) and math.isnan(row["alpha"])
    assert row["reason"] == "no unit with two or more valid ratings"


def test_scopes_overall_per_mode_and_per_task_x_mode() -> None:
    d = Data()
    for mode in ("automation", "augmentation"):
        for task in ("t1", "t2"):
            d.judge(1, task, mode, "A", "B", "J1", "A")
            d.judge(1, task, mode, "A", "B", "J2", "A" if mode == "automation" else "B")
    rel = reliability_table(d.frames())
    assert rel["scope"].tolist() == ["overall", "mode", "mode"] + ["task x mode"] * 4
    by = {
        (r.scope, r.mode if isinstance(r.mode, str) else None, r.task if isinstance(r.task, str) else None): r
        for r in rel.itertuples()
    }
    assert by[("mode", "automation", None)].raw_agreement == 1.0
    assert by[("mode", "augmentation", None)].raw_agreement == 0.0
    assert by[("overall", None, None)].units == 4 and by[("task x mode", "augmentation", "t2")].pairs == 1


@pytest.mark.slow
def test_paper_design_count_reconciliation() -> None:
    """6,300 comparisons, 15,120 judgments, 11,340 judge pairs, no comparison under two eligible judges."""
    study = load_session(ROOT / "sessions" / "paper.toml")
    session = study.session
    comps = all_comparisons(session)
    eligible = np.array([len(eligible_judges(session, c)) for c in comps])
    assert len(comps) == 6300
    assert eligible.sum() == 15120
    assert (eligible * (eligible - 1) // 2).sum() == 11340
    assert eligible.min() >= 2
    by_mode = Counter(c.mode for c in comps)
    assert by_mode == {"automation": 3150, "augmentation": 3150}

    # The same numbers through the statistics, from synthetic judgments of every eligible slot.
    rubric = {t: [("quality", "task")] for t in session.tasks}
    design = design_from_session(session)
    rows = synthetic_rows(session, rubric, seed=5, invalid_rate=0.0)
    frames = build_frames(rows.judgment_rows, rows.score_rows, rows.output_rows, rows.comparisons, design)
    assert len(frames.judgments) == 15120 and len(frames.ok) == 15120  # nobody judged their own family
    overall = reliability_table(frames).iloc[0]
    assert (overall["units"], overall["excluded_units"], overall["ratings"], overall["pairs"]) == (
        6300,
        0,
        15120,
        11340,
    )

    # With missing ratings, units with fewer than two valid ratings are excluded and counted.
    rows = synthetic_rows(session, rubric, seed=5, invalid_rate=0.05)
    frames = build_frames(rows.judgment_rows, rows.score_rows, rows.output_rows, rows.comparisons, design)
    overall = reliability_table(frames).iloc[0]
    invalid = overall["excluded"]["invalid"]
    assert invalid == sum(1 for r in rows.judgment_rows if not r.valid) > 0
    assert overall["units"] + overall["excluded_units"] == 6300 and overall["excluded_units"] > 0
    assert overall["ratings"] + invalid <= 15120 and overall["pairs"] < 11340


def test_more_than_127_tasks_is_reported() -> None:
    """MT-Bench imported as 80 questions x 2 turns has 160 tasks: pandas' int8 category codes once overflowed."""
    from centaur_tui.domain.session import Session

    tasks = [f"mtbench_{q}_t{t}" for q in range(81, 161) for t in (1, 2)]
    session = Session.model_validate(
        {
            "name": "wide",
            "runs": 1,
            "tasks": tasks,
            "candidates": [
                {"name": n, "source": "imported", "family": f} for n, f in (("aa", "A"), ("bb", "B"), ("cc", "C"))
            ],
            "judges": [{"name": j, "model": f"simulated/{j}", "family": j} for j in ("j1", "j2")],
        }
    )
    rows = synthetic_rows(session, {t: [("quality", "task")] for t in tasks}, seed=1, invalid_rate=0.0)
    frames = build_frames(
        rows.judgment_rows, rows.score_rows, rows.output_rows, rows.comparisons, design_from_session(session)
    )
    table = reliability_table(frames)
    assert len(table) == 2 + 160 and table.iloc[0]["units"] == 160 * 3 and table.iloc[0]["pairs"] == 160 * 3
