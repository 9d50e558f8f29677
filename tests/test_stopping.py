"""The stopping rule: the normal-mixture confidence sequence, its planted-truth error rates, `centaur status`."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from centaur_tui.stats.stopping import (
    best_rho,
    comparisons_for_width,
    half_width,
    normal_mixture_bound,
    pair_status,
)
from tests.support.experts import judged_session
from tests.test_ppr_session import _judge_assigned

REFERENCE = Path(__file__).parent / "data" / "stopping_reference.json"


def test_boundary_matches_the_stored_reference_values() -> None:
    ref = json.loads(REFERENCE.read_text())
    assert len(ref["cases"]) >= 10
    for case in ref["cases"]:
        got = normal_mixture_bound(case["v"], case["alpha"], case["v_opt"], case["alpha_opt"])
        assert got == pytest.approx(case["bound"], rel=0, abs=1e-10), case


def test_boundary_is_the_closed_form_of_the_paper() -> None:
    # Howard et al. (2021) eq. (14): sqrt((v + rho) log((v + rho) / (rho alpha^2))), rho from confseq's best_rho.
    v, alpha = 250.0, 0.05
    rho = 100 / (2 * math.log(20) + math.log(1 + 2 * math.log(20)))
    assert best_rho(100, 0.05) == pytest.approx(rho, abs=1e-12)
    want = math.sqrt((v + rho) * math.log((v + rho) / (rho * alpha**2)))
    assert normal_mixture_bound(v, alpha, 100) == pytest.approx(want, abs=1e-10)
    assert half_width(0, 0.05) == math.inf
    with pytest.raises(ValueError):
        best_rho(0, 0.05)
    with pytest.raises(ValueError):
        best_rho(10, 1.0)


def test_comparisons_for_width_is_the_first_n_below() -> None:
    for width in (0.5, 0.2, 0.07):
        n = comparisons_for_width(width, 0.05)
        assert n is not None and half_width(n, 0.05) < width <= half_width(n - 1, 0.05)
    assert comparisons_for_width(0, 0.05) is None
    assert comparisons_for_width(1e-5, 0.05) is None  # beyond MAX_COMPARISONS: "more than", no number


@pytest.mark.parametrize(
    ("observations", "verdict"),
    [
        ([1.0] * 60, "separated"),
        ([-1.0] * 60, "separated"),
        ([1.0, -1.0] * 4000, "equivalent"),
        ([1.0, -1.0, 0.0] * 5, "continue"),
        ([], "continue"),
    ],
)
def test_pair_status_verdicts(observations: list[float], verdict: str) -> None:
    s = pair_status(observations, alpha=0.05, margin=0.1)
    assert s.verdict == verdict and s.n == len(observations)
    assert -1 <= s.low <= s.high <= 1
    if verdict == "continue" and observations:
        assert s.more is not None and s.more > 0 and s.goal in ("separated", "equivalent")
    if not observations:  # nothing to extrapolate from: no number
        assert s.more is None and s.goal == "" and math.isnan(s.difference)


@pytest.mark.parametrize(
    "bad",
    [
        {"observations": [2.0], "alpha": 0.05, "margin": 0.1},
        {"observations": [float("nan")], "alpha": 0.05, "margin": 0.1},
        {"observations": [1.0], "alpha": 0.05, "margin": 0.0},
        {"observations": [1.0], "alpha": 0.05, "margin": 1.0},
        {"observations": [1.0], "alpha": 0.0, "margin": 0.1},
    ],
)
def test_pair_status_refuses_bad_input(bad: dict) -> None:
    with pytest.raises(ValueError):
        pair_status(bad.pop("observations"), **bad)


def _draw(rng: random.Random, d: float) -> float:
    u = rng.random()
    p = (0.8 + d) / 2
    return 1.0 if u < p else -1.0 if u < 0.8 else 0.0


def test_planted_truth_null_with_30_looks_rarely_separates_and_naive_test_does() -> None:
    # 200 seeded studies, looks after 10, 20, ..., 300 comparisons; bench/stopping.py runs 2,000.
    rng = random.Random(7)
    cs_false = naive_false = 0
    for _ in range(200):
        obs: list[float] = []
        cs_hit = naive_hit = False
        for _look in range(30):
            obs += [_draw(rng, 0.0) for _ in range(10)]
            n = len(obs)
            mean = sum(obs) / n
            sd = math.sqrt(max(sum(x * x for x in obs) / n - mean**2, 1e-12))
            naive_hit |= abs(mean) / (sd / math.sqrt(n)) > 1.96
            cs_hit |= pair_status(obs, alpha=0.05, margin=0.1).verdict == "separated"
        cs_false += cs_hit
        naive_false += naive_hit
    assert cs_false / 200 <= 0.05
    assert naive_false / 200 >= 0.15  # the daily peek at a fixed-n test: measured 0.27-0.32 in the bench


def test_planted_truth_prediction_is_close_to_what_the_study_needed() -> None:
    rng = random.Random(11)
    ratios = []
    for _ in range(60):
        obs: list[float] = []
        guesses = []
        while True:
            obs += [_draw(rng, 0.3) for _ in range(5)]
            s = pair_status(obs, alpha=0.05, margin=0.1)
            if s.verdict != "continue":
                break
            if s.goal == "separated" and s.more is not None and s.more <= s.n:
                guesses.append(s.n + s.more)
        assert s.verdict == "separated"
        ratios += [g / s.n for g in guesses]
    ratios.sort()
    assert 0.85 <= ratios[len(ratios) // 2] <= 1.15


def test_status_command_on_a_judged_session(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    _judge_assigned(path, {"ann": ("uniform-random", 20), "bob": ("uniform-random", 6)})
    res = CliRunner().invoke(cli, ["status", str(path)])
    assert res.exit_code == 0, res.output
    assert "Expert judgments used: 26" in res.output
    assert "alpha = 0.05 per pair" in res.output and "margin +-0.1" in res.output
    assert "(n = " in res.output and "continue: about" in res.output
    # Every pair of the session has a line, judged or not yet: 2 tasks, automation 4 and augmentation 5 candidates.
    assert "Per task: 32 pairs;" in res.output and "no expert comparison yet (n = 0 of" in res.output
    # ... and once more per mode over both tasks, printed first, counted apart (never twice in "used").
    assert "Over all tasks of a mode: 16 pairs;" in res.output
    heads = [line for line in res.output.splitlines() if " / " in line and not line.startswith(" ")]
    assert heads[:2] == ["all tasks / augmentation", "all tasks / automation"] and len(heads) == 2 + 4
    res = CliRunner().invoke(cli, ["status", str(path), "--margin", "0.3", "--alpha", "0.2"])
    assert res.exit_code == 0 and "margin +-0.3" in res.output and "alpha = 0.2" in res.output


def test_pooled_rows_hold_every_task_s_comparisons_once(tmp_path: Path) -> None:
    from centaur_tui.catalog import load_session
    from centaur_tui.services.status import ALL_TASKS, study_status

    path = judged_session(tmp_path)
    _judge_assigned(path, {"ann": ("uniform-random", 24), "bob": ("uniform-random", 10)})
    status = study_status(load_session(path))
    assert status.judgments == 34
    assert len(status.pooled) == 6 + 10 and len(status.rows) == 2 * (6 + 10)
    assert {r.task for r in status.pooled} == {ALL_TASKS}
    per_pair: dict[tuple[str, str, str], list[int]] = {}
    for r in status.rows:
        per_pair.setdefault((r.mode, r.first, r.second), [0, 0, 0])
        got = per_pair[(r.mode, r.first, r.second)]
        got[0] += r.status.n
        got[1] += r.status.judgments
        got[2] += r.available
    for r in status.pooled:
        assert per_pair[(r.mode, r.first, r.second)] == [r.status.n, r.status.judgments, r.available], r
    assert sum(r.status.judgments for r in status.pooled) == status.judgments
    assert sum(status.pooled_counts.values()) == len(status.pooled)


def test_planted_truth_pooling_opposite_tasks_with_random_draws_rarely_separates() -> None:
    # Two tasks where the pair's difference is +0.6 and -0.6, 60 comparisons each: pooled over the
    # tasks the difference is 0. The expert comparisons are drawn at random without replacement
    # (as uniform-random assigns them), a look after every 4, all 120 in the end (30 looks). The
    # sequence must rarely call the pair separated, and must catch a real pooled difference.
    rng = random.Random(11)
    false_separated = 0
    studies = 300
    for _ in range(studies):
        pool = [1.0 if rng.random() < (1 + d) / 2 else -1.0 for d in (0.6, -0.6) for _ in range(60)]
        rng.shuffle(pool)
        hit = any(pair_status(pool[:n], alpha=0.05, margin=0.1).verdict == "separated" for n in range(4, 121, 4))
        false_separated += hit
    assert false_separated / studies <= 0.05
    found = 0
    for _ in range(100):
        pool = [1.0 if rng.random() < (1 + d) / 2 else -1.0 for d in (0.9, 0.1) for _ in range(60)]
        rng.shuffle(pool)
        found += pair_status(pool, alpha=0.05, margin=0.1).verdict == "separated"
    assert found >= 90  # pooled difference 0.5 over 120 comparisons


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--margin", "0"], "equivalence margin must be between 0 and 1"),
        (["--margin", "-0.1"], "equivalence margin must be between 0 and 1"),
        (["--margin", "1.5"], "equivalence margin must be between 0 and 1"),
        (["--alpha", "1"], "alpha must be between 0 and 1"),
        (["--margin", "nan"], "nan is not a finite number"),
    ],
)
def test_status_refuses_bad_input(tmp_path: Path, args: list[str], message: str) -> None:
    path = judged_session(tmp_path)
    res = CliRunner().invoke(cli, ["status", str(path), *args])
    assert res.exit_code == 2 and message in res.output and "Traceback" not in res.output


def test_status_before_any_expert_judgment(tmp_path: Path) -> None:
    path = judged_session(tmp_path)
    res = CliRunner().invoke(cli, ["status", str(path)])
    assert res.exit_code == 0 and "Expert judgments used: 0" in res.output and "nothing to decide" in res.output


def test_status_unknown_session_and_bad_session_field(tmp_path: Path) -> None:
    res = CliRunner().invoke(cli, ["status", str(tmp_path / "nope.toml")])
    assert res.exit_code == 2 and "Traceback" not in res.output
    path = judged_session(tmp_path)
    text = path.read_text()
    for bad in (
        "equivalence_margin = 0",
        "equivalence_margin = 1.2",
        "stop_alpha = -0.1",
        'equivalence_margin = "0.1"',
    ):
        path.write_text(text + f"\n[study]\n{bad}\n")
        res = CliRunner().invoke(cli, ["status", str(path)])
        assert res.exit_code == 2 and "study" in res.output, (bad, res.output)
    path.write_text(text + "\n[study]\nequivalence_margin = 0.25\n")
    res = CliRunner().invoke(cli, ["status", str(path)])
    assert res.exit_code == 0 and "margin +-0.25" in res.output
