"""Every planned item ends in one recorded outcome: the run, its exit status and the report show the missing ones."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.outcomes import StoredFacts, session_outcomes
from centaur_tui.domain.plan import summarize
from centaur_tui.domain.records import CallFailure
from centaur_tui.llm import CallFailed, Gateway


def _fail(monkeypatch: pytest.MonkeyPatch, models: set[str]) -> list[str]:
    """Make every call of `models` fail for good (as after an exhausted retry budget); returns the refused keys."""
    original = Gateway.complete
    refused: list[str] = []

    async def complete(self: Gateway, req: Any) -> Any:
        if req.endpoint.model in models:
            refused.append(req.key)
            self._on_failure(
                CallFailure(req.key, req.stage, req.endpoint.model, 1, "ServiceUnavailableError", "down", final=True)
            )
            raise CallFailed(f"{req.endpoint.model}: ServiceUnavailableError: down", "ServiceUnavailableError", 3)
        return await original(self, req)

    monkeypatch.setattr(Gateway, "complete", complete)
    return refused


def _report_json(path: Path) -> dict[str, Any]:
    out_file = path.with_suffix(".report.json")
    result = CliRunner().invoke(cli, ["report", str(path), "--json", str(out_file), "--bootstrap", "0", "--quiet"])
    assert result.exit_code == 0, result.output
    return json.loads(out_file.read_text(encoding="utf-8"))


def _db(path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(load_session(path).database) as conn:
        return conn.execute(sql).fetchall()


def test_the_outcomes_of_an_empty_store_match_the_plan_counts(write_session) -> None:
    session = load_session(write_session(runs=2, judging='orders = "both"')).session
    plan = summarize(session)
    empty = session_outcomes(session, StoredFacts(frozenset(), frozenset(), {}))
    assert {s: c.planned for s, c in empty.stages.items()} == {**plan.calls, "judging": plan.total_judgments}
    assert {j: c.planned for j, c in empty.judges.items()} == plan.judgments_per_judge
    # Nothing stored: generation not sent (no run yet), and everything that needs it is blocked, not failed.
    assert empty.stages["automation"].not_sent == plan.calls["automation"]
    assert empty.stages["assistance"].not_sent == plan.calls["assistance"]
    assert empty.stages["worker"].blocked == plan.calls["worker"] - 2 * len(session.tasks)  # plain needs nothing
    assert empty.stages["judging"].blocked == plan.total_judgments and empty.stages["judging"].failed == 0
    assert not empty.complete and empty.missing == sum(c.planned for c in empty.stages.values())


def test_a_judge_that_fails_for_good_makes_the_run_incomplete_and_a_re_run_retries_it(
    write_session, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tasks=("counseling",))
    plan = summarize(load_session(path).session)
    refused = _fail(monkeypatch, {"simulated/judge-west"})
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    west = plan.judgments_per_judge["JudgeWest"]
    assert out.exit_code == 3, out.output
    assert "Done in" not in out.output
    assert f"Incomplete: {west} calls failed for good; run again to retry them." in out.output
    assert (
        f"judging: {west} of {plan.total_judgments} missing ({west} failed for good); by judge: JudgeWest {west}"
        in out.output
    )
    assert len(refused) == west
    stored = _db(path, "SELECT judge, count(*) FROM judgments GROUP BY judge")
    assert "JudgeWest" not in dict(stored)

    doc = _report_json(path)
    outcomes = doc["outcomes"]
    assert outcomes["complete"] is False and outcomes["failed_calls"] == west
    assert outcomes["judges"]["JudgeWest"] == {
        "planned": west,
        "answered": 0,
        "invalid": 0,
        "failed": west,
        "blocked": 0,
        "missing": west,
        "not_sent": 0,
        "excluded": 0,
        "cut_off": 0,
    }
    assert outcomes["judges"]["JudgeNorth"]["missing"] == 0
    assert sum(m["excluded"].get("missing", 0) for m in doc["modes"]) == west
    # Every denominator that counts judgments says so too: overall, per mode and per judge.
    overall = next(r for r in doc["reliability"]["rows"] if r["scope"] == "overall")
    assert overall["excluded"].get("missing") == west
    assert sum(r["excluded"].get("missing", 0) for r in doc["reliability"]["rows"] if r["scope"] == "mode") == west
    for table in ("choice_rubric", "position_bias"):
        rows = {r["judge"]: r for r in doc["validity"][table]["rows"]}
        assert all(rows[j]["excluded"].get("missing", 0) == 0 for j in rows if j != "JudgeWest")
        if "JudgeWest" in rows:
            assert rows["JudgeWest"]["excluded"]["missing"] == west
    # The report's counts are the database's.
    valid, invalid = (_db(path, f"SELECT count(*) FROM judgments WHERE valid = {v}")[0][0] for v in (1, 0))
    assert outcomes["stages"]["judging"]["answered"] == valid and outcomes["stages"]["judging"]["invalid"] == invalid
    text = CliRunner().invoke(cli, ["report", str(path), "--bootstrap", "0"]).output
    assert "excluded: none" not in text.split("Planned items")[0]
    assert (
        f"Planned judgments: {plan.total_judgments}; {west} missing "
        f"({west} failed for good, 0 not sent (run stopped), 0 blocked)" in text
    )

    monkeypatch.undo()
    again = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert again.exit_code == 0, again.output
    assert "Done in" in again.output and "Incomplete" not in again.output
    assert dict(_db(path, "SELECT judge, count(*) FROM judgments GROUP BY judge"))["JudgeWest"] == west


def test_a_failed_assistant_blocks_its_worker_outputs_and_their_judgments(
    write_session, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_session(tasks=("counseling",))
    study = load_session(path)
    _fail(monkeypatch, {"simulated/delta"})  # Delta writes an automation output and an assistance text
    from centaur_tui.services.run import outcome_lines, run_study
    from centaur_tui.store import Store

    with Store(study.database) as store:
        outcome = run_study(study, store)
    o = outcome.outcomes
    assert (o.stages["automation"].failed, o.stages["assistance"].failed, o.stages["worker"].blocked) == (1, 1, 1)
    assert o.stages["automation"].blocked == o.stages["assistance"].blocked == o.stages["worker"].failed == 0
    # Every judgment of a comparison holding a Delta output is blocked, none failed.
    judging = o.stages["judging"]
    assert (
        judging.blocked > 0
        and judging.failed == 0
        and judging.invalid + judging.answered + judging.blocked == judging.planned
    )
    assert outcome.failed == 2 and not outcome.complete
    lines = outcome_lines(outcome)
    assert lines[0] == "Incomplete: 2 calls failed for good; run again to retry them."
    assert "  worker: 1 of 5 missing (1 blocked)" in lines
    stored = _db(path, "SELECT count(*) FROM judgments")[0][0]
    assert stored == judging.answered + judging.invalid


def test_a_complete_run_has_no_outcome_lines_and_exits_0(write_session) -> None:
    path = write_session(tasks=("counseling",))
    out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert out.exit_code == 0 and "Incomplete" not in out.output
    doc = _report_json(path)
    assert doc["outcomes"]["complete"] is True and doc["outcomes"]["failed_calls"] == 0
    assert all("missing" not in m["excluded"] for m in doc["modes"])


def test_the_simulated_providers_faults_depend_on_the_run_only_not_on_earlier_runs_in_the_process(
    tmp_path: Path,
) -> None:
    # The simulation is seeded: two sessions with the same content (fresh databases) in one process
    # must meet the same transient errors. Counting attempts across runs made a test's outcome
    # depend on which tests ran before it in the process.
    from tests.support.sessions import small_session_toml

    errors = []
    for name in ("first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        path = folder / "small.toml"
        path.write_text(small_session_toml(faults="error_rate = 0.3", tasks=("counseling",)), encoding="utf-8")
        out = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
        assert out.exit_code in (0, 3), out.output
        errors.append(_db(path, "SELECT key, attempt, error_type FROM call_errors ORDER BY 1, 2"))
    assert errors[0], "error_rate 0.3 gave no transient error: the test would not test anything"
    assert errors[0] == errors[1]
