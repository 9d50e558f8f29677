"""Hostile values of the cost and pacing fields of a session: refused naming the file and the field, exit status 2."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli

BASE_LIMITS = "concurrency = 4\nper_model_concurrency = 2"

CASES = [
    # (where, text, field named in the error)
    ("limits", "max_cost_usd = -1.0", "limits.max_cost_usd"),
    ("limits", "max_cost_usd = nan", "limits.max_cost_usd"),
    ("limits", "max_cost_usd = inf", "limits.max_cost_usd"),
    ("limits", "max_cost_usd = 1e300", "limits.max_cost_usd"),
    ("limits", 'max_cost_usd = "5"', "limits.max_cost_usd"),
    ("judge", "rpm = 0", "rpm"),
    ("judge", "rpm = -60", "rpm"),
    ("judge", "rpm = 1.5", "rpm"),
    ("judge", "rpm = 100000000000", "rpm"),
    ("judge", "tpm = 0", "tpm"),
    ("judge", "tpm = -1", "tpm"),
    ("judge", "tpm = nan", "tpm"),
    ("judge", "input_cost_per_mtok = -2.0", "input_cost_per_mtok"),
    ("judge", "output_cost_per_mtok = 1e12", "output_cost_per_mtok"),
    ("judge", "cached_input_cost_per_mtok = -0.5", "cached_input_cost_per_mtok"),
    ("judge", 'deployments = [{ name = "a" }, { name = "a" }]', "deployments"),
    ("judge", 'deployments = [{ name = "bad name" }]', "deployments"),
    ("judge", 'deployments = [{ name = "a", model = "gpt-4.1" }]', "deployments"),
    ("judge", 'deployments = [{ name = "a", params = { api_key = "x" } }]', "api_key"),
    ("judge", 'deployments = [{ name = "a", rpm = 0 }]', "deployments"),
    ("judge", 'deployments = [{ name = "a", region = "eu" }]', "deployments"),
    ("judge", 'deployments = [{ name = "a", api_base = "ftp://x" }]', "deployments"),
]


@pytest.mark.parametrize(("where", "text", "field"), CASES, ids=[c[1] for c in CASES])
def test_a_hostile_cost_field_is_refused_naming_file_and_field(
    write_session, where: str, text: str, field: str
) -> None:
    # Limits under [limits]; the others on the last judge.
    path = write_session(limits=f"{BASE_LIMITS}\n{text}") if where == "limits" else write_session(extra=text)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and field in result.output, result.output
    assert "Traceback" not in result.output
    assert not (path.parent / "small.db").exists()


def test_good_cost_fields_are_accepted_and_shown(write_session) -> None:
    path = write_session(
        limits=f"{BASE_LIMITS}\nmax_cost_usd = 0.5",
        extra="rpm = 600\ntpm = 100000\ninput_cost_per_mtok = 2.0\noutput_cost_per_mtok = 8.0\n"
        'deployments = [{ name = "eu", rpm = 300 }]',
    )
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "Budget max_cost_usd = $0.50" in result.output and "rpm/tpm limits" in result.output
    assert "price session: $2 / $8 per M in/out" in result.output


def test_a_budget_with_calls_in_batch_mode_is_refused_naming_the_field(write_session) -> None:
    # The budget reserves a call's worst case as its request leaves the gateway; a batched call
    # never passes there, so the two together would not keep the budget: refused, not ignored.
    text = write_session(limits=f"{BASE_LIMITS}\nmax_cost_usd = 5.0").read_text(encoding="utf-8")
    text = text.replace('model = "simulated/judge-west"', 'model = "openai/gpt-4.1-mini"')
    assert "openai/gpt-4.1-mini" in text
    text = text.replace("[judging]", '[judging]\nmode = "batch"', 1) + '\n[batch]\nunsupported = "online"\n'
    path = write_session(text, filename="batched.toml")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert str(path) in result.output and "limits.max_cost_usd" in result.output, result.output
    assert "Traceback" not in result.output
