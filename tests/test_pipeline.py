"""The pipeline runs end to end on the simulated provider, resumes, never pays twice, never duplicates."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.plan import summarize
from centaur_tui.pipeline import Pipeline
from centaur_tui.pipeline.export import JUDGMENT_COLUMNS
from centaur_tui.store import Store


def run(path: Path) -> tuple[Pipeline, Store]:
    study = load_session(path)
    store = Store(study.database)
    pipe = Pipeline(study, store)
    asyncio.run(pipe.run())
    return pipe, store


def sent(pipe: Pipeline) -> int:
    return sum(s.sent for s in pipe.progress.stages.values())


def test_full_run_matches_the_plan_and_a_second_run_sends_nothing(write_session) -> None:
    path = write_session()
    pipe, store = run(path)
    plan = summarize(pipe.session)
    counts = store.counts()
    assert counts.outputs == plan.calls["automation"] + plan.calls["worker"]
    assert counts.assistance_texts == plan.calls["assistance"]
    assert counts.comparisons == plan.total_comparisons
    assert counts.judgments == plan.total_judgments
    assert counts.invalid_judgments == 0
    assert counts.calls == sent(pipe) == plan.total_calls
    assert store.meta()["simulated"] == "true"
    store.close()

    again, store = run(path)
    assert sent(again) == 0
    assert store.counts() == counts
    assert again.progress.stages["judging"].cached == plan.total_judgments
    store.close()


def test_leave_family_out_and_recorded_order(write_session) -> None:
    _pipe, store = run(write_session())
    family = {"Alpha": "North", "Beta": "North", "Gamma": "South", "Delta": "East", "plain": None}
    rows = store.judgment_rows()
    for row in rows:
        assert row.judge_family not in {family[row.option1], family[row.option2]}
    # The presented order is seeded: both orders occur, in roughly equal shares.
    comps = store.comparisons()
    flipped = sum(r.option1 != comps[r.comparison_id].candidate_a for r in rows)
    assert 0.3 < flipped / len(rows) < 0.7
    store.close()


def test_orders_both_judges_each_pair_twice(write_session) -> None:
    pipe, store = run(write_session(judging='orders = "both"', tasks=("counseling",)))
    plan = summarize(pipe.session)
    rows = store.judgment_rows()
    assert (
        len(rows)
        == plan.total_judgments
        == 2
        * summarize(
            pipe.session.model_copy(update={"judging": pipe.session.judging.model_copy(update={"orders": "one"})})
        ).total_judgments
    )
    by_slot: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for r in rows:
        by_slot.setdefault((r.comparison_id, r.judge), set()).add((r.option1, r.option2))
    assert all(len(orders) == 2 for orders in by_slot.values())
    store.close()


def test_invalid_replies_are_reasked_then_stored_as_invalid_with_a_reason(write_session) -> None:
    pipe, store = run(write_session(faults="invalid_reply_rate = 1.0", tasks=("counseling",)))
    rows = store.judgment_rows()
    plan = summarize(pipe.session)
    assert len(rows) == plan.total_judgments  # nothing dropped
    assert all(not r.valid and r.winner is None for r in rows)
    # Each re-ask raises the temperature by reask_temperature_step (0.2) and sends a new seed; the reason says so.
    assert all(
        r.invalid_reason.startswith("invalid after 3 attempt(s) (re-ask 1: temperature 0.2, seed ") for r in rows
    )
    assert all(r.attempts == 3 for r in rows)
    assert store.counts().calls_by_stage["judging"] == 3 * plan.total_judgments
    store.close()


def test_some_invalid_replies_recover_on_reask(write_session) -> None:
    _pipe, store = run(write_session(faults="invalid_reply_rate = 0.3", tasks=("counseling",)))
    rows = store.judgment_rows()
    recovered = [r for r in rows if r.valid and r.attempts > 1]
    assert recovered, "some judgments should be valid after a re-ask"
    assert all(r.winner in {r.option1, r.option2, "tie"} for r in rows if r.valid)
    store.close()


def test_transient_errors_are_retried_and_logged(write_session) -> None:
    pipe, store = run(write_session(faults="error_rate = 0.2", tasks=("counseling",)))
    counts = store.counts()
    plan = summarize(pipe.session)
    assert counts.judgments == plan.total_judgments
    assert counts.call_errors > 0 and pipe.progress.retries == counts.call_errors
    errors = store.error_rows()
    assert {e.error_type for e in errors} <= {"RateLimitError", "InternalServerError"}
    store.close()


def test_retries_exhausted_leave_work_for_the_next_run(write_session) -> None:
    path = write_session(
        faults="error_rate = 0.6",
        tasks=("counseling",),
        limits="concurrency = 32\nmax_retries = 0\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0",
    )
    pipe, store = run(path)
    plan = summarize(pipe.session)
    first = store.counts()
    assert first.judgments < plan.total_judgments
    store.close()
    for _ in range(30):
        pipe, store = run(path)
        done = store.counts().judgments == plan.total_judgments
        store.close()
        if done:
            break
    assert done
    store = Store(pipe.study.database)
    assert store.counts().comparisons == plan.total_comparisons
    store.close()


def test_export_writes_the_three_files(write_session, tmp_path: Path) -> None:
    path = write_session(faults="invalid_reply_rate = 0.2", tasks=("counseling",))
    pipe, store = run(path)
    store.close()
    out = CliRunner().invoke(cli, ["export", str(path), "--out", str(tmp_path / "export")])
    assert out.exit_code == 0, out.output
    assert "SIMULATED" in out.output
    with (tmp_path / "export" / "judgments.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0].keys()) == JUDGMENT_COLUMNS
    assert len(rows) == summarize(pipe.session).total_judgments
    assert {r["valid"] for r in rows} <= {"true", "false"}
    assert all(r["winner"] == "" for r in rows if r["valid"] == "false")
    assert all(r["judge_kind"] == "llm" for r in rows)
    with (tmp_path / "export" / "scores.csv").open() as fh:
        scores = list(csv.DictReader(fh))
    n_dims = len(pipe.study.rubric("counseling").ids)
    assert len(scores) == 2 * n_dims * sum(r["valid"] == "true" for r in rows)
    assert set(scores[0]) >= {"comparison_id", "judge", "candidate", "dimension", "dimension_kind", "score"}
    with (tmp_path / "export" / "outputs.csv").open() as fh:
        outputs = list(csv.DictReader(fh))
    aug = [o for o in outputs if o["mode"] == "augmentation"]
    assert all(o["worker"] == "Worker" for o in aug)
    assert all((o["assistance_text"] == "") == (o["candidate"] == "plain") for o in aug)


def test_export_of_a_session_never_run_is_a_clear_error(write_session, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["export", str(write_session()), "--out", str(tmp_path / "x")])
    assert out.exit_code == 2 and "run the session first" in out.output


def test_planted_automation_skills_are_recovered_from_win_rates(write_session) -> None:
    _pipe, store = run(write_session(runs=2))
    wins: dict[str, float] = {}
    games: dict[str, int] = {}
    comps = store.comparisons()
    for r in store.judgment_rows():
        if comps[r.comparison_id].mode != "automation" or not r.valid:
            continue
        for cand in (r.option1, r.option2):
            games[cand] = games.get(cand, 0) + 1
            wins[cand] = wins.get(cand, 0) + (1.0 if r.winner == cand else 0.5 if r.winner == "tie" else 0.0)
    rate = {c: wins[c] / games[c] for c in games}
    assert sorted(rate, key=rate.get, reverse=True) == ["Alpha", "Beta", "Gamma", "Delta"]
    store.close()


def test_run_command_prints_progress_and_summary(write_session) -> None:
    path = write_session(tasks=("counseling",))
    out = CliRunner().invoke(cli, ["run", str(path)])
    assert out.exit_code == 0, out.output
    assert "SIMULATED" in out.output and "judging" in out.output and "Done in" in out.output
    again = CliRunner().invoke(cli, ["run", str(path)])
    assert "Done in" in again.output and " 0 calls sent" in again.output


def test_a_fatal_provider_error_stops_the_run_and_keeps_answers(write_session, monkeypatch) -> None:
    from centaur_tui.domain.errors import ProviderError
    from centaur_tui.llm import FatalProviderError, Gateway

    original = Gateway.complete

    async def refuse_gamma(self, req):
        if req.endpoint.model == "simulated/gamma":
            raise FatalProviderError("simulated/gamma: AuthenticationError: bad key", "AuthenticationError", 1)
        return await original(self, req)

    monkeypatch.setattr(Gateway, "complete", refuse_gamma)
    path = write_session(tasks=("counseling",))
    study = load_session(path)
    store = Store(study.database)
    with pytest.raises(ProviderError, match="AuthenticationError"):
        asyncio.run(Pipeline(study, store).run())
    kept = store.counts().calls
    store.close()
    monkeypatch.setattr(Gateway, "complete", original)
    pipe, store = run(path)
    assert store.counts().calls == summarize(pipe.session).total_calls
    assert sent(pipe) == summarize(pipe.session).total_calls - kept
    store.close()
