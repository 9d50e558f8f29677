"""Cost estimate and budget through litellm's real HTTP path, against a token-counting provider on 127.0.0.1.

The provider (tests/support/provider_server.py) reports usage counted with tiktoken as OpenAI
counts chat tokens: the estimate of `centaur check` is checked against what it then reports,
and the budget against what it charged.
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.pipeline.estimate import estimate
from centaur_tui.services.run import BUDGET_EXIT, exit_status, run_study
from centaur_tui.store import Store, estimate_facts
from tests.support.provider_server import PLANNED, ProviderServer, http_session, provider_server
from tests.support.sessions import ROOT, TASKS


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with provider_server(words=250) as s:
        yield s


def write(tmp_path: Path, text: str, name: str = "cost.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def stage_sums(db: Path) -> dict[str, tuple[int, int, int]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT stage, count(*), sum(prompt_tokens), sum(completion_tokens) FROM calls GROUP BY stage"
        ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def test_fresh_estimate_counts_the_prompts_the_provider_then_reports(tmp_path: Path, server: ProviderServer) -> None:
    path = write(tmp_path, http_session(server.api_base))
    study = load_session(path)
    before = estimate(study)
    assert not study.database.exists()  # estimating wrote nothing
    rows = {(r.stage, r.model): r for r in before.rows}
    assert before.planned_calls == before.remaining_calls == PLANNED
    with Store(study.database) as store:
        outcome = run_study(study, store)
    assert outcome.complete and exit_status(outcome) == 0
    reported = stage_sums(study.database)
    # Prompts fully known before the run: automation, assistance (exact up to paragraph joins).
    for stage in ("automation", "assistance"):
        est = sum(r.input_remaining for (s, _), r in rows.items() if s == stage)
        assert est == pytest.approx(reported[stage][1], rel=0.02), stage
    # Judge prompts hold outputs not written yet: counted at max_tokens, an upper bound, and said so.
    judging = [r for r in before.rows if r.stage == "judging"]
    assert all("max_tokens" in r.input_basis for r in judging)
    assert sum(r.input_remaining for r in judging) >= reported["judging"][1]
    # After the run: nothing remains, and the total is what was recorded.
    after = estimate(study)
    assert after.remaining_calls == 0 and after.cost_remaining == 0.0
    assert after.cost_total == pytest.approx(after.spent) and after.spent > 0


def test_budget_stops_before_passing_and_a_raised_budget_continues_within_15_percent(
    tmp_path: Path, server: ProviderServer
) -> None:
    budget = 0.012
    path = write(tmp_path, http_session(server.api_base, limits=f"max_cost_usd = {budget}"))
    runner = CliRunner()
    first = runner.invoke(cli, ["run", str(path), "--quiet"])
    assert first.exit_code == BUDGET_EXIT, first.output
    assert "Stopped at the budget" in first.output and "not sent (budget)" in first.output
    study = load_session(path)
    with sqlite3.connect(study.database) as conn:
        spent, sent = conn.execute("SELECT sum(cost), count(*) FROM calls").fetchone()
    assert 0 < spent <= budget  # the budget was never passed
    assert 0 < sent < PLANNED and len(server.requests) == sent  # stopped part-way, every request answered
    # The provider's own count of what it charged agrees with what was recorded.
    assert server.prompt_tokens * 1e-6 + server.completion_tokens * 2e-6 == pytest.approx(spent)

    # What is left, estimated now (observed means of the calls made), against what the provider then reports.
    remaining = estimate(study)
    assert remaining.remaining_calls == PLANNED - sent
    est_in = sum(r.input_remaining for r in remaining.rows)
    est_out = sum(r.output_remaining for r in remaining.rows)
    prompt_before, completion_before = server.prompt_tokens, server.completion_tokens

    path.write_text(path.read_text().replace(f"max_cost_usd = {budget}", "max_cost_usd = 10.0"))
    second = runner.invoke(cli, ["run", str(path), "--quiet"])
    assert second.exit_code == 0, second.output
    assert len(server.requests) == PLANNED  # nothing sent twice
    got_in = server.prompt_tokens - prompt_before
    got_out = server.completion_tokens - completion_before
    assert est_in == pytest.approx(got_in, rel=0.15)
    assert est_out == pytest.approx(got_out, rel=0.15)


def test_a_zero_budget_sends_nothing_and_counts_every_item(tmp_path: Path, server: ProviderServer) -> None:
    path = write(tmp_path, http_session(server.api_base, limits="max_cost_usd = 0.0"))
    study = load_session(path)
    with Store(study.database) as store:
        outcome = run_study(study, store)
    assert server.requests == []
    o = outcome.outcomes
    assert o.budget > 0 and o.failed == 0
    # Every planned item ends in an outcome: not sent (budget) or blocked behind one.
    for stage in o.stages.values():
        assert stage.planned == stage.answered + stage.invalid + stage.failed + stage.blocked + stage.budget
    assert o.stages["automation"].budget == 2 and o.stages["judging"].blocked == o.stages["judging"].planned
    assert exit_status(outcome) == BUDGET_EXIT
    # Read from the store alone (`centaur report`), what the budget kept back was not sent, never "failed".
    from centaur_tui.domain.outcomes import session_outcomes
    from centaur_tui.store import stored_facts

    with Store(study.database) as store:
        stored = session_outcomes(study.session, stored_facts(store))
    assert stored.failed == 0 and stored.not_sent == o.budget


def test_a_budget_with_an_unpriced_model_refuses_before_sending(tmp_path: Path, server: ProviderServer) -> None:
    path = write(tmp_path, http_session(server.api_base, limits="max_cost_usd = 5.0", price=False))
    result = CliRunner().invoke(cli, ["run", str(path), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "max_cost_usd" in result.output and "openai/alpha" in result.output
    assert "Traceback" not in result.output and server.requests == []


def test_unknown_price_is_never_zero_dollars(tmp_path: Path, server: ProviderServer) -> None:
    path = write(tmp_path, http_session(server.api_base, price=False))
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "unknown price" in result.output
    remaining = result.output.split("Remaining:")[1].split(", of which")[0]
    assert "$0" not in remaining and remaining.count("unknown price") == 3


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError(f"network refused in this test: {address}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    return attempts


def test_check_of_the_paper_session_is_offline_and_writes_nothing(tmp_path: Path, no_network: list[Any]) -> None:
    text = (ROOT / "sessions" / "paper.toml").read_text()
    path = write(tmp_path, text.replace("description = ", f'tasks_dir = "{TASKS}"\ndescription = ', 1), "paper.toml")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert no_network == [] and sorted(p.name for p in tmp_path.iterdir()) == ["paper.toml"]
    assert "17,150 of 17,150 calls" in result.output
    assert "gemini/gemini-3.1-pro" in result.output.split("Unknown price")[1]
    # Its speed (about 1-2 s once litellm is imported) is for the README's measurement, not a test.


def test_check_reads_an_older_database_without_migrating_it(tmp_path: Path, server: ProviderServer) -> None:
    path = write(tmp_path, http_session(server.api_base))
    study = load_session(path)
    with Store(study.database) as store:
        run_study(study, store)
    with sqlite3.connect(study.database) as conn:
        conn.execute("PRAGMA user_version = 8")  # as an older program left it (the columns of 9 stay: harmless)
    before = study.database.stat().st_mtime_ns
    facts = estimate_facts(study.database)
    assert len(facts.outputs) == 5 and len(facts.judged) == 8
    with sqlite3.connect(study.database) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 8
    assert study.database.stat().st_mtime_ns == before
