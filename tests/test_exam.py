"""The judges' admission exam (issue 26): planted flaws, both orders, every pair accounted for, admission."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.exam import (
    CONTRADICTION,
    FLAW_KINDS,
    ExamSource,
    NotApplicable,
    Planted,
    exam_plan,
    plant,
    plant_number,
)
from centaur_tui.llm.simulation import deliverable, visible_flaws
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.estimate import estimate
from centaur_tui.report.render import to_json, to_markdown, to_text
from centaur_tui.services.exam import NoDeliverablesError, run_exam
from centaur_tui.services.exam_report import exam_section
from centaur_tui.services.report import session_report
from centaur_tui.stats.exam import pair_outcome, wilson
from centaur_tui.store import Store, exam_pairs
from tests.support.sessions import small_session_toml

TASKS = ("counseling", "tax_preparation")

KNOBS = {
    "JudgeNorth": "{ noise = 0.5, flaw_check = 3.0 }",  # checks the deliverable against the task
    "JudgeSouth": "{ noise = 0.3, position_bias = 5.0 }",  # follows the position
    "JudgeWest": "{ noise = 0.5 }",  # reads coverage only
}


def exam_toml(judging: str = "", faults: str = "", limits: str | None = None) -> str:
    """The small simulated session with a flaw checker, a position follower and a plain judge."""
    kwargs = {"limits": limits} if limits is not None else {}
    text = small_session_toml(name="exam", tasks=TASKS, judging=judging, faults=faults, **kwargs)
    for name, knobs in KNOBS.items():
        head = f'name = "{name}"'
        at = text.index(head)
        old = "simulation = { noise = 0.5 }"
        end = text.index(old, at)
        text = text[:end] + f"simulation = {knobs}" + text[end + len(old) :]
    return text


def run_session(path: Path) -> None:
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())


def calls_count(path: Path, stage: str = "exam") -> int:
    db = sqlite3.connect(load_session(path).database)
    try:
        return int(db.execute("SELECT count(*) FROM calls WHERE stage = ?", (stage,)).fetchone()[0])
    finally:
        db.close()


@pytest.fixture(scope="module")
def examined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run session (two tasks) whose exam has been taken once, 3 pairs per task and kind."""
    path = tmp_path_factory.mktemp("exam") / "exam.toml"
    path.write_text(exam_toml("admit_min_accuracy = 0.8\nadmit_enforce = true"), encoding="utf-8")
    run_session(path)
    run_exam(load_session(path), per_kind=3)
    return path


def section_of(path: Path):
    study = load_session(path)
    with Store(study.database, readonly=True) as store:
        found = exam_section(study, store)
    assert found is not None
    return found


def row(section, judge: str, kind: str = "all"):
    return next(r for r in section.rows if r.judge == judge and r.kind == kind)


# -- planting ---------------------------------------------------------------------------------


def test_a_wrong_number_changes_exactly_one_number_and_never_a_list_marker() -> None:
    text = "# Plan\n1. Pay USD 1,650 a month.\n2. Keep 640 aside.\nDone."
    for seed in range(30):
        got = plant_number(text, f"s{seed}")
        assert isinstance(got, Planted)
        before, after = text.splitlines(), got.text.splitlines()
        changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
        assert changed == [got.line - 1]
        assert after[got.line - 1][:3] == before[got.line - 1][:3]  # "1. " / "2. " untouched
    assert plant_number(text, "x") == plant_number(text, "x")  # seeded


def test_a_text_without_numbers_or_named_requirements_is_not_applicable_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(exam_toml(), encoding="utf-8")
    task = load_session(path).task("counseling")
    got = [plant(kind, "Plain words only, nothing more to say here.", task, "s") for kind in FLAW_KINDS]
    assert [g.reason for g in got if isinstance(g, NotApplicable)] == [
        "no number to change",
        "names none of the task's requirements",
        "names none of the task's requirements",
    ]
    assert all(plant(kind, "  \n", task, "s") == NotApplicable(kind, "empty deliverable") for kind in FLAW_KINDS)


def test_dropped_and_contradicted_requirements_are_checkable_against_the_task(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(exam_toml(), encoding="utf-8")
    task = load_session(path).task("tax_preparation")
    text = deliverable(task, {r.id: 2 for r in task.requirements}, random.Random(1))
    dropped = plant("dropped_requirement", text, task, "s")
    assert isinstance(dropped, Planted) and dropped.requirement is not None
    label = next(r.label for r in task.requirements if r.id == dropped.requirement)
    assert label.lower() in text.lower() and label.lower() not in dropped.text.lower()
    contra = plant("contradicted_constraint", text, task, "s")
    assert isinstance(contra, Planted)
    label = next(r.label for r in task.requirements if r.id == contra.requirement)
    assert CONTRADICTION.format(label=label) in contra.text and len(contra.text) > len(text)
    # The simulated checker finds the planted flaw, and nothing in the intact text.
    assert visible_flaws(task, text) == 0 and visible_flaws(task, contra.text) == 1


def test_the_plan_keeps_slots_no_deliverable_can_fill_as_not_applicable_with_a_count(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(exam_toml(), encoding="utf-8")
    study = load_session(path)
    task = study.task("counseling")
    rich = deliverable(task, {r.id: 2 for r in task.requirements}, random.Random(2))
    sources = [
        ExamSource("o1", "counseling", "automation", "Alpha", "Words without any figure at all, " * 3),
        ExamSource("o2", "counseling", "automation", "Beta", ""),
        ExamSource("o3", "counseling", "automation", "Gamma", rich),
    ]
    pairs = exam_plan({"counseling": task}, sources, 2, 7)
    assert pairs == exam_plan({"counseling": task}, list(reversed(sources)), 2, 7)  # seeded, order-free
    assert len(pairs) == 2 * len(FLAW_KINDS)
    by_kind = {k: [p for p in pairs if p.kind == k] for k in FLAW_KINDS}
    for kind, slots in by_kind.items():
        assert [p.applicable for p in slots] == [True, False], kind
        assert slots[0].output_id == "o3"
        tried = "not applicable: 2 deliverable(s) of the task tried (1 empty deliverable;"
        assert slots[1].description.startswith(tried)


def test_wilson_intervals_and_pair_outcomes() -> None:
    assert wilson(0, 0) == (None, None)
    low, high = wilson(8, 8)
    assert round(low, 3) == 0.676 and high == 1.0
    low, high = wilson(5, 10)
    assert round(low, 3) == 0.237 and round(high, 3) == 0.763
    assert pair_outcome({1: ("answered", "intact"), 2: ("answered", "intact")}) == ("answered", True)
    assert pair_outcome({1: ("answered", "intact"), 2: ("answered", "tie")}) == ("answered", False)
    assert pair_outcome({1: ("invalid", None), 2: ("failed", None)}) == ("failed", False)
    assert pair_outcome({1: ("answered", "intact")}) == ("not_asked", False)


# -- the exam on the simulated provider --------------------------------------------------------


def test_the_exam_separates_a_flaw_checker_from_a_position_follower(examined: Path) -> None:
    s = section_of(examined)
    checker, follower, plain = row(s, "JudgeNorth"), row(s, "JudgeSouth"), row(s, "JudgeWest")
    assert checker.examined == follower.examined == s.planted == 18
    assert checker.accuracy is not None and checker.accuracy >= 0.85
    assert follower.accuracy == 0.0 and follower.first_picks == follower.decided == 36
    assert checker.ci_low is not None and follower.ci_high is not None and checker.ci_low > follower.ci_high
    assert plain.accuracy is not None and plain.accuracy < checker.accuracy
    for kind in FLAW_KINDS:  # on every kind, not only on average
        assert row(s, "JudgeNorth", kind).correct > row(s, "JudgeSouth", kind).correct
    admission = {a.judge: a for a in s.admission}
    assert admission["JudgeNorth"].admitted and not admission["JudgeSouth"].admitted
    assert s.left_out == [a.judge for a in s.admission if not a.admitted]
    assert "below 0.8" in admission["JudgeSouth"].reason


def test_every_planted_pair_is_accounted_for_and_the_plan_is_recorded(examined: Path) -> None:
    s = section_of(examined)
    for r in s.rows:
        assert r.answered + r.invalid + r.failed + r.not_asked == r.pairs
        assert r.examined == r.answered + r.invalid
    assert s.questions == s.planted * 3 * 2 == calls_count(examined)
    study = load_session(examined)
    with Store(study.database, readonly=True) as store:
        pairs = exam_pairs(store)
    assert len(pairs) == s.pairs and all(p.description and p.line for p in pairs if p.applicable)
    assert sum(k.planted for k in s.kinds) == s.planted and sum(k.not_applicable for k in s.kinds) == s.not_applicable


def test_a_second_exam_sends_nothing_and_check_prices_the_exam(examined: Path) -> None:
    before = calls_count(examined)
    again = run_exam(load_session(examined), per_kind=3)
    assert again.counts == {"answered": 0, "invalid": 0, "failed": 0, "cached": again.questions, "not_sent": 0}
    assert calls_count(examined) == before
    est = estimate(load_session(examined))
    rows = [r for r in est.rows if r.stage == "exam"]
    assert sorted(r.names[0] for r in rows) == ["JudgeNorth", "JudgeSouth", "JudgeWest"]
    assert sum(r.planned for r in rows) == before and sum(r.remaining for r in rows) == 0


def test_check_prices_an_exam_not_taken_yet_when_the_session_wants_one(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(exam_toml("admit_min_accuracy = 0.8\nexam_per_kind = 2"), encoding="utf-8")
    rows = [r for r in estimate(load_session(path)).rows if r.stage == "exam"]
    assert sum(r.remaining for r in rows) == 3 * len(TASKS) * 3 * 2 * 2  # judges x tasks x kinds x pairs x orders
    path.write_text(exam_toml(), encoding="utf-8")
    assert not [r for r in estimate(load_session(path)).rows if r.stage == "exam"]


def test_the_report_leaves_out_a_judge_below_the_minimum_and_says_so(examined: Path) -> None:
    report = session_report(load_session(examined), bootstrap=0, permutation=False)
    doc = report.document
    # The position follower and the judge that reads coverage only (it misses numbers) are below 0.8.
    assert doc.exam is not None and doc.exam.left_out == ["JudgeSouth", "JudgeWest"]
    lost = doc.exam.left_out_judgments
    assert lost > 0 and doc.counts.by_status["not_admitted"] == lost
    assert doc.counts.judges == ["JudgeNorth"]
    text = to_text(doc)
    assert "Admission exam of the LLM judges" in text
    assert "Left out of every statistic: JudgeSouth, JudgeWest" in text
    assert "Admission exam" in to_markdown(doc)
    data = json.loads(to_json(doc))
    assert data["exam"]["left_out"] == ["JudgeSouth", "JudgeWest"] and data["exam"]["rows"][0]["examined"] == 18
    assert to_json(type(doc).from_json(to_json(doc))) == to_json(doc)


# -- hostile input ------------------------------------------------------------------------------


def test_a_judge_answering_garbage_is_invalid_counted_and_not_admitted(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        exam_toml("max_invalid_retries = 0\nadmit_min_accuracy = 0.5", faults="invalid_reply_rate = 1.0"),
        encoding="utf-8",
    )
    study = load_session(path)
    with Store(study.database) as store:  # outputs without judging: the faults would spoil the judgments only
        texts = [
            deliverable(study.task(t), {r.id: 1 + i % 3 for r in study.task(t).requirements}, random.Random(i))
            for t in TASKS
            for i in range(2)
        ]
        _store_outputs(store, texts)
    out = run_exam(study, per_kind=1)
    assert out.counts["invalid"] == out.questions > 0 and out.counts["answered"] == 0
    s = section_of(path)
    for r in (row(s, j) for j in KNOBS):
        assert (r.invalid, r.answered, r.examined, r.correct, r.accuracy) == (r.pairs, 0, r.pairs, 0, 0.0)
    assert all(not a.admitted and not a.left_out for a in s.admission)  # not enforced: reported only
    assert "reported only" in s.note


def test_failed_calls_are_counted_as_failed_and_the_command_exits_3(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    limits = "concurrency = 8\nmax_retries = 0\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0"
    path.write_text(exam_toml(faults="error_rate = 1.0", limits=limits), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        _store_outputs(store, [deliverable(study.task("tax_preparation"), {}, random.Random(0)) + "\nUSD 1,650."])
    result = CliRunner().invoke(cli, ["exam", str(path), "--per-kind", "1"])
    assert result.exit_code == 3, result.output
    s = section_of(path)
    assert all(row(s, j).failed == row(s, j).pairs > 0 for j in KNOBS)
    # counseling has no output, and the one tax deliverable names no requirement (only a figure):
    # 5 of 6 slots are not applicable, counted with why, not dropped.
    assert "not applicable" in result.output and (s.planted, s.not_applicable) == (1, 5)
    why = {(k.task, k.kind): k.reason for k in s.kinds if k.not_applicable}
    assert len(why) == 5 and "no deliverable" in why[("counseling", "wrong_number")]
    assert "1 names none of the task's requirements" in why[("tax_preparation", "dropped_requirement")]


def test_an_exam_without_stored_outputs_is_refused_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(exam_toml(), encoding="utf-8")
    result = CliRunner().invoke(cli, ["exam", str(path)])
    assert result.exit_code == 2 and "run the session first" in result.output
    study = load_session(path)
    Store(study.database).close()
    with pytest.raises(NoDeliverablesError, match="holds no complete output"):
        run_exam(study)
    result = CliRunner().invoke(cli, ["exam", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def _store_outputs(store: Store, texts: list[str]) -> None:
    from centaur_tui.domain.records import OutputRecord

    for i, text in enumerate(texts):
        task = "tax_preparation" if "Tax" in text.splitlines()[0] else "counseling"
        store.save_output(OutputRecord(f"out{i}", 1, task, "automation", "Alpha", "Alpha", text, None, None))


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_the_wilson_interval_covers_a_planted_accuracy(p: float) -> None:
    rng = random.Random(f"coverage|{p}")
    covered = 0
    for _ in range(40):
        k = sum(rng.random() < p for _ in range(18))
        low, high = wilson(k, 18)
        covered += low is not None and high is not None and low <= p <= high
    assert covered >= 36  # nominal 95 %: at least 90 % of 40 seeded studies (bench/exam.py: 0.930-0.958 at n=18)


def test_admit_enforce_without_a_minimum_is_refused_naming_the_field(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(exam_toml("admit_enforce = true"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2 and "admit_min_accuracy" in result.output and "Traceback" not in result.output
    path.write_text(exam_toml("admit_min_accuracy = 1.5"), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2 and "admit_min_accuracy" in result.output


def test_a_minimum_without_an_exam_taken_is_said_and_leaves_no_judge_out() -> None:
    from centaur_tui.stats.exam import exam_section as build

    s = build("", [], [], ["J1", "J2"], 0.8, True)
    assert s.admission == [] and s.left_out == [] and "has not been taken" in s.note
    assert [(r.judge, r.pairs, r.examined, r.accuracy) for r in s.rows] == [("J1", 0, 0, None), ("J2", 0, 0, None)]


def test_the_flaw_check_knob_at_its_default_leaves_call_addresses_as_they_were(tmp_path: Path) -> None:
    from centaur_tui.domain.plan import entry_json

    path = tmp_path / "s.toml"
    path.write_text(exam_toml(), encoding="utf-8")
    judges = {j.name: json.loads(entry_json(j)) for j in load_session(path).session.judges}
    # Databases written before issue 26 hold simulated judges' calls addressed without the knob.
    assert judges["JudgeSouth"]["simulation"] == {"noise": 0.3, "position_bias": 5.0, "tie_margin": 0.15}
    assert judges["JudgeNorth"]["simulation"]["flaw_check"] == 3.0


def test_one_wilson_interval_for_every_statistic() -> None:
    # The exam, the worker panel, blinding and calibration share stats.proportions; the values
    # are the textbook ones (Agresti and Coull 1998, Table 1 style: 5 of 10 -> 0.237-0.763).
    from centaur_tui.stats import blinding, proportions, workers

    assert wilson is proportions.wilson and workers.wilson is proportions.wilson
    low, high = proportions.wilson_interval(0.5, 10)
    assert (round(low, 3), round(high, 3)) == (0.237, 0.763)
    assert blinding.wilson(5, 10) == pytest.approx((low, high), abs=1e-12)
    assert proportions.wilson(0, 0) == (None, None)
    with pytest.raises(ValueError):
        proportions.wilson_interval(0.5, 0)
