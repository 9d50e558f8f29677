"""Assistance as a dialogue ([augmentation] turns, issue 28): planned, priced, stored, resumable, reported."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.plan import DIALOGUE_STAGE, entry_json, summarize
from centaur_tui.domain.prompts import DIALOGUE_CONSTRAINT
from centaur_tui.domain.session import dialogue_candidate
from centaur_tui.llm import CallFailed
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.calls import Calls
from centaur_tui.pipeline.estimate import estimate
from centaur_tui.services.report import session_report
from centaur_tui.store import Store, all_dialogue_turns, calls_of
from tests.support.cli import centaur_here
from tests.support.dialogue import dialogue_session_toml
from tests.support.sessions import small_session_toml

ASSISTANTS = ("Steady", "Talker")


def _run(path: Path) -> tuple[Pipeline, Store]:
    study = load_session(path)
    store = Store(study.database)
    pipe = Pipeline(study, store)
    asyncio.run(pipe.run())
    return pipe, store


@pytest.fixture(scope="module")
def dialogue_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished 3-turn session (1 run, 2 tasks), shared by the read-only tests."""
    path = tmp_path_factory.mktemp("dialogue") / "dialogue.toml"
    path.write_text(dialogue_session_toml(runs=1), encoding="utf-8")
    _pipe, store = _run(path)
    store.close()
    return path


# -- turns = 1 is today's design ----------------------------------------------------------------------


def test_turns_1_plans_exactly_what_a_session_without_it_plans(write_session) -> None:
    old = load_session(write_session()).session
    one = load_session(write_session(extra="[augmentation]\nturns = 1", filename="one.toml")).session
    assert one.augmentation_candidates == old.augmentation_candidates and not one.dialogue_candidates
    assert summarize(one).calls == summarize(old).calls and DIALOGUE_STAGE not in summarize(one).calls
    # The entries (part of every call key) do not mention the new knob when it is unset: old keys stay valid.
    assert all("dialogue_skill" not in entry_json(m) for m in old.models)


@pytest.mark.parametrize(
    ("augmentation", "field"),
    [
        ("turns = 0", "augmentation.turns"),
        ("turns = 21", "augmentation.turns"),
        ('turns = "3"', "augmentation.turns"),
        ("turns = 2.5", "augmentation.turns"),
        ("rounds = 3", "augmentation.rounds"),
    ],
)
def test_a_bad_turns_value_is_refused_naming_file_and_field(tmp_path: Path, augmentation: str, field: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(dialogue_session_toml().replace("turns = 3", augmentation), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert "bad.toml" in result.output and field in result.output and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_a_model_named_like_a_dialogue_candidate_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "clash.toml"
    path.write_text(dialogue_session_toml().replace('name = "Talker"', 'name = "Steady+3turns"'), encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2 and "Steady+3turns" in result.output and "Traceback" not in result.output


# -- planned, stored, resumed -------------------------------------------------------------------------


def test_every_dialogue_call_is_planned_priced_stored_once_and_not_sent_again(dialogue_run: Path) -> None:
    study = load_session(dialogue_run)
    plan = summarize(study.session)
    # 1 run x 2 tasks x 2 assistants x 2 rounds x (question + answer)
    assert plan.calls[DIALOGUE_STAGE] == 16
    assert plan.calls["worker"] == 2 * (2 + 2 + 1)  # 1-turn, dialogue and plain outputs per task
    with Store(study.database) as store:
        stored = store.read_value("SELECT count(*) FROM calls WHERE stage = ?", (DIALOGUE_STAGE,))
        assert stored == plan.calls[DIALOGUE_STAGE]
        assert store.counts().calls == plan.total_calls
    est = estimate(study)
    rows = [r for r in est.rows if r.stage == DIALOGUE_STAGE]
    assert sum(r.planned for r in rows) == 16 and sum(r.remaining for r in rows) == 0
    assert {n for r in rows for n in r.names} == {"Worker", *ASSISTANTS}
    again, store = _run(dialogue_run)
    assert sum(s.sent for s in again.progress.stages.values()) == 0
    assert again.progress.stages[DIALOGUE_STAGE].done == 16
    store.close()


def test_check_counts_the_dialogue_calls_before_any_is_sent(tmp_path: Path) -> None:
    path = tmp_path / "fresh.toml"
    path.write_text(dialogue_session_toml(runs=1), encoding="utf-8")
    study = load_session(path)
    rows = [r for r in estimate(study).rows if r.stage == DIALOGUE_STAGE]
    assert sum(r.remaining for r in rows) == 16
    # Each round's prompt holds the earlier rounds: the second question's prompt is the longer.
    worker_row = next(r for r in rows if r.names == ["Worker"])
    assert worker_row.input_remaining > 0 and worker_row.output_remaining > 0
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "dialogue" in result.output
    assert not study.database.exists()


def test_the_transcript_is_stored_in_order_with_the_constraint_in_every_answer(dialogue_run: Path) -> None:
    study = load_session(dialogue_run)
    with Store(study.database) as store:
        turns = all_dialogue_turns(store)
        outputs = store.outputs()
        assert len(turns) == 2 * 2 * 2  # tasks x assistants x rounds
        by_dialogue: dict[str, list[int]] = {}
        for t in turns:
            by_dialogue.setdefault(t.dialogue, []).append(t.turn)
            out = outputs[t.dialogue]
            assert out.candidate == dialogue_candidate(t.assistant, 3) and t.outcome == "answered"
        assert all(order == [1, 2] for order in by_dialogue.values())
        calls = calls_of(store, [t.answer_key for t in turns if t.answer_key])
    universal = study.universal
    for t in turns:
        messages = json.loads(calls[t.answer_key].messages_json)
        assert messages[0]["content"] == universal.assistance_system
        asked = [m["content"] for m in messages[3::2]]  # every question after the assistance text
        assert len(asked) == t.turn and all(DIALOGUE_CONSTRAINT in m for m in asked)
        assert calls[t.answer_key].response == t.answer


def test_the_audit_shows_the_transcript(dialogue_run: Path) -> None:
    from centaur_tui.services.audit import cell_audit
    from centaur_tui.ui.screens.audit import dialogue_text

    study = load_session(dialogue_run)
    with Store(study.database, readonly=True) as store:
        audit, simulated = cell_audit(store, "counseling", "augmentation", "Talker+3turns")
    assert simulated and audit.comparisons
    turns = audit.comparisons[0].dialogues["Talker+3turns"]
    text = dialogue_text(turns)
    assert text.index("Q1") < text.index("A1") < text.index("Q2") < text.index("A2")
    assert all(t.answer_key in audit.calls for t in turns)


def test_a_provider_failure_mid_dialogue_leaves_one_failed_output_and_the_rest_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "fails.toml"
    path.write_text(dialogue_session_toml(runs=1, tasks=("counseling",)), encoding="utf-8")
    real = Calls.call

    async def failing(self, stage, endpoint, messages, params, sample):  # Calls.call's signature
        if stage == DIALOGUE_STAGE and endpoint.model == "simulated/talker":
            raise CallFailed("simulated provider: 500 mid-dialogue", "InternalServerError", 3)
        return await real(self, stage, endpoint, messages, params, sample)

    monkeypatch.setattr(Calls, "call", failing)
    pipe, store = _run(path)
    outcome = pipe.progress.outcomes
    assert outcome is not None and outcome.candidates["Talker+3turns"].failed == 1
    assert outcome.stages["worker"].failed == 1 and outcome.stages["worker"].answered == 4
    assert all(t.assistant == "Steady" for t in all_dialogue_turns(store))
    store.close()
    monkeypatch.setattr(Calls, "call", real)
    again, store = _run(path)  # a re-run retries the failed dialogue and completes
    assert again.progress.outcomes is not None and again.progress.outcomes.complete
    assert {t.assistant for t in all_dialogue_turns(store)} == set(ASSISTANTS)
    store.close()


def test_a_budget_stops_dialogue_calls_like_any_call_and_a_rerun_sends_only_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "budget.toml"
    prices = "input_cost_per_mtok = 100.0\noutput_cost_per_mtok = 100.0"
    # One call at a time, so the budget refuses calls in a known order (each reserves prompt + max_tokens).
    limits = "concurrency = 1\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0\nmax_cost_usd = 2.0"
    path.write_text(dialogue_session_toml(runs=1, tasks=("counseling",), prices=prices, limits=limits), "utf-8")
    pipe, store = _run(path)
    stage = pipe.progress.stages[DIALOGUE_STAGE]
    assert pipe.progress.budget_stopped and stage.budget >= 1 and 1 <= stage.sent < 8
    answered = store.read_value("SELECT count(*) FROM calls WHERE stage = ?", (DIALOGUE_STAGE,))
    assert answered == stage.sent and store.read_value("SELECT count(*) FROM calls_in_flight") == 0
    outcome = pipe.progress.outcomes
    assert outcome is not None and outcome.candidates["Talker+3turns"].missing == 1
    assert not all_dialogue_turns(store)  # a transcript is stored with its deliverable, never half of one
    store.close()
    path.write_text(path.read_text("utf-8").replace("max_cost_usd = 2.0", "max_cost_usd = 50.0"), "utf-8")
    again, store = _run(path)
    assert again.progress.stages[DIALOGUE_STAGE].sent == 8 - answered  # nothing answered is sent twice
    assert again.progress.outcomes is not None and again.progress.outcomes.complete
    assert len(all_dialogue_turns(store)) == 4
    store.close()


# -- planted truth ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_the_report_recovers_assistants_that_help_more_or_less_in_dialogue(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "planted.toml"
    path.write_text(dialogue_session_toml(seed=seed, runs=1), encoding="utf-8")
    _pipe, store = _run(path)
    store.close()
    document = session_report(load_session(path), bootstrap=0, permutation=False, section="rankings").document
    assert document.dialogue is not None and document.dialogue.turns == 3
    rows = {r.assistant: r for r in document.dialogue.rows}
    steady, talker = rows["Steady"], rows["Talker"]
    assert steady.rank_1 is not None and talker.rank_1 is not None and steady.rank_1 < talker.rank_1
    assert steady.rank_n is not None and talker.rank_n is not None and talker.rank_n < steady.rank_n
    assert talker.head_to_head is not None and talker.head_to_head > 0.5
    assert steady.head_to_head is not None and steady.head_to_head < 0.5


def test_a_session_without_dialogue_has_no_dialogue_section(write_session) -> None:
    path = write_session(small_session_toml(tasks=("counseling",)))
    _pipe, store = _run(path)
    store.close()
    document = session_report(load_session(path), bootstrap=0, permutation=False, section="rankings").document
    assert document.dialogue is None and "dialogue" not in document.to_dict()


@pytest.mark.slow
def test_sigkill_mid_dialogue_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    limits = "concurrency = 4\nper_model_concurrency = 2\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0"
    text = dialogue_session_toml(name="killed", runs=1, tasks=("counseling",), faults="latency_s = 0.02", limits=limits)
    killed, reference = tmp_path / "killed.toml", tmp_path / "reference.toml"
    killed.write_text(text, "utf-8")
    reference.write_text(text.replace('name = "killed"', 'name = "reference"'), "utf-8")
    db = tmp_path / "killed.db"

    def query(sql: str) -> list[tuple[object, ...]]:
        if not db.exists():
            return []
        try:
            with sqlite3.connect(db, timeout=30) as conn:
                return conn.execute(sql).fetchall()
        except sqlite3.OperationalError:  # not migrated yet
            return []

    centaur = [sys.executable, "-m", "centaur_tui.cli", "run"]
    proc = subprocess.Popen(
        [*centaur, str(killed), "--quiet"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    # Killed while a dialogue call is out and at least two are answered, checked on the stopped process.
    while True:
        assert proc.poll() is None, "the run finished before it could be killed"
        assert time.monotonic() < deadline, "never two answered dialogue calls and one in flight at once"
        answered = query("SELECT count(*) FROM calls WHERE stage = 'dialogue'")
        if answered and answered[0][0] >= 2:
            os.kill(proc.pid, signal.SIGSTOP)
            out = query(
                "SELECT count(*) FROM calls_in_flight WHERE stage = 'dialogue' AND key NOT IN (SELECT key FROM calls)"
            )
            if out and out[0][0] >= 1:
                break
            os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    before = dict(query("SELECT key, created_at FROM calls WHERE stage = 'dialogue'"))  # type: ignore[arg-type]
    resumed = centaur_here("run", str(killed), "--quiet")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    after = dict(query("SELECT key, created_at FROM calls WHERE stage = 'dialogue'"))  # type: ignore[arg-type]
    assert all(after[k] == v for k, v in before.items())  # an answered call is read back, never sent again
    full = centaur_here("run", str(reference), "--quiet")
    assert full.returncode == 0, full.stderr

    def snapshot(path: Path) -> dict[str, list[tuple[object, ...]]]:
        with sqlite3.connect(path) as conn:
            return {
                "calls": conn.execute("SELECT key, response FROM calls ORDER BY key").fetchall(),
                "outputs": conn.execute("SELECT id, text FROM outputs ORDER BY id").fetchall(),
                "turns": conn.execute(
                    "SELECT dialogue, turn, question, answer, question_key, answer_key"
                    " FROM dialogue_turns ORDER BY 1, 2"
                ).fetchall(),
                "judgments": conn.execute(
                    "SELECT comparison_id, judge, presentation, winner FROM judgments ORDER BY 1, 2, 3"
                ).fetchall(),
            }

    a, b = snapshot(db), snapshot(tmp_path / "reference.db")
    for table in a:
        assert a[table] == b[table], table


def test_a_dialogue_with_a_worker_panel_runs_per_worker_and_every_call_is_counted_once(tmp_path: Path) -> None:
    # Two workers of a [[workers]] panel: each holds its own dialogue with each assistant; the
    # assistance text that opens a dialogue is one call for every worker and both turn counts.
    text = dialogue_session_toml(runs=1, tasks=("counseling",)).replace("[worker]\n", "[[workers]]\n")
    text = text.replace(
        "[[judges]]",
        '[[workers]]\nname = "Strong"\nmodel = "simulated/strong"\nfamily = "East"\n'
        "simulation.skill = { default = 0.8 }\n\n[[judges]]",
        1,
    )
    assert "[[workers]]" in text
    path = tmp_path / "panel.toml"
    path.write_text(text, encoding="utf-8")
    study = load_session(path)
    plan = summarize(study.session)
    # 1 run x 1 task x 2 assistants x 2 rounds x (question + answer) x 2 workers
    assert plan.calls[DIALOGUE_STAGE] == 16
    assert plan.calls["assistance"] == 2  # shared by both workers and both turn counts
    assert plan.calls["worker"] == (2 + 2 + 1) * 2  # 1-turn, dialogue and plain outputs per worker
    rows = [r for r in estimate(study).rows if r.stage == DIALOGUE_STAGE]
    assert sum(r.remaining for r in rows) == 16
    assert {n for r in rows for n in r.names} == {"Worker", "Strong", *ASSISTANTS}
    pipe, store = _run(path)
    with store:
        assert store.read_value("SELECT count(*) FROM calls WHERE stage = ?", (DIALOGUE_STAGE,)) == 16
        assert store.counts().calls == plan.total_calls
        assert len(all_dialogue_turns(store)) == 2 * 2 * 2  # dialogues x turns after the first, per worker
    assert pipe.progress.outcomes is not None and pipe.progress.outcomes.complete
    again, store = _run(path)
    assert sum(s.sent for s in again.progress.stages.values()) == 0
    assert again.progress.stages[DIALOGUE_STAGE].done == 16
    assert again.progress.stages["assistance"].done == 2
    store.close()
