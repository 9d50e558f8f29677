"""Tasks and sessions load and validate; bad input gets a message naming file and field, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session, load_tasks
from centaur_tui.cli.main import cli
from centaur_tui.domain.errors import ConfigError
from centaur_tui.domain.plan import summarize
from tests.support.sessions import ROOT, TASKS, small_session_toml

PAPER_TASKS = {
    "menu_planning",
    "travel_planning",
    "market_trends",
    "operations_research",
    "tax_preparation",
    "counseling",
    "tutoring",
}


def test_the_seven_tasks_load_with_their_rubrics() -> None:
    tasks, universal = load_tasks(TASKS)
    assert set(tasks) == PAPER_TASKS
    assert [d.id for d in universal.general_dimensions] == [
        "instruction_following",
        "accuracy_specificity",
        "practical_usefulness",
        "organization_readability",
        "tone_audience_fit",
    ]
    assert {tasks[t].source for t in tasks} == {"GDPval", "Anthropic Economic Index", "designed"}
    assert tasks["tax_preparation"].source == "designed"
    travel = {d.name.lower() for d in tasks["travel_planning"].dimensions}
    assert any("cost realism" in n for n in travel) and any("uncertainty" in n for n in travel)
    tax = " ".join(d.name.lower() for d in tasks["tax_preparation"].dimensions)
    for words in ("rule accuracy", "discrepancy detection", "calculation", "form guidance", "dependent", "clarity"):
        assert words in tax
    assert any("safety" in d.id for d in tasks["menu_planning"].dimensions)
    assert any("correct" in d.id for d in tasks["tutoring"].dimensions)
    for task in tasks.values():
        assert 8 <= len(task.requirements) <= 12, task.id
        assert "{" not in task.title


def test_universal_prompts_have_the_three_phases_and_forbid_the_deliverable() -> None:
    _, universal = load_tasks(TASKS)
    text = universal.assistance_prompt.lower()
    for phase in ("requirements check", "execution plan", "final checklist"):
        assert phase in text
    assert "not" in text and "deliverable" in text
    judge = universal.judge_prompt
    assert '"winner"' in judge and '"rationale"' in judge and "average" in judge


def test_cli_lists_and_shows_tasks() -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["tasks", "--dir", str(TASKS)])
    assert out.exit_code == 0, out.output
    assert "7 tasks" in out.output and "tax_preparation" in out.output
    shown = runner.invoke(cli, ["tasks", "--dir", str(TASKS), "show", "travel_planning"])
    assert shown.exit_code == 0
    assert "Tokyo" in shown.output and "low (1-3)" in shown.output and "instruction_following" in shown.output
    missing = runner.invoke(cli, ["tasks", "--dir", str(TASKS), "show", "nope"])
    assert missing.exit_code == 2 and "unknown task 'nope'" in missing.output


def test_paper_session_has_the_papers_counts() -> None:
    study = load_session(ROOT / "sessions" / "paper.toml")
    plan = summarize(study.session)
    assert plan.total_comparisons == 6300
    assert plan.comparisons == {"automation": 3150, "augmentation": 3150}
    assert plan.total_judgments == 15120
    assert plan.judge_pairs == 11340
    assert min(plan.comparisons_by_eligible) >= 2
    assert plan.calls == {"automation": 700, "assistance": 630, "worker": 700, "judging": 15120}


@pytest.mark.slow
def test_check_prints_the_plan_of_the_paper_session() -> None:
    out = CliRunner().invoke(cli, ["check", str(ROOT / "sessions" / "paper.toml")])
    assert out.exit_code == 0, out.output
    assert "6,300" in out.output and "15,120" in out.output and "11,340" in out.output
    assert "Session is valid" in out.output


def test_demo_session_is_valid_and_simulated() -> None:
    study = load_session(ROOT / "sessions" / "demo.toml")
    assert study.session.fully_simulated
    assert len(study.session.judges) == 4 and set(study.session.tasks) == PAPER_TASKS
    out = CliRunner().invoke(cli, ["check", str(ROOT / "sessions" / "demo.toml")])
    assert out.exit_code == 0 and "SIMULATED" in out.output


BAD_SESSIONS = [
    ("malformed TOML", lambda s: s.replace("runs = 1", "runs = = 1"), "malformed TOML"),
    ("unknown task", lambda s: s.replace('"tutoring"', '"juggling"'), "tasks[1]: unknown task 'juggling'"),
    ("duplicate model", lambda s: s.replace('name = "Beta"', 'name = "Alpha"'), "models: duplicate model names: Alpha"),
    ("judge without family", lambda s: s.replace('family = "West"\n', ""), "judges[2 'JudgeWest'].family"),
    ("runs below 1", lambda s: s.replace("runs = 1", "runs = 0"), "runs: Input should be greater than or equal to 1"),
    ("unknown field", lambda s: s.replace("seed = 7", "seed = 7\nsede = 8"), "sede: Extra inputs are not permitted"),
    ("model without provider", lambda s: s.replace('"simulated/alpha"', '"alpha"'), "models[0 'Alpha'].model"),
]


@pytest.mark.parametrize(("label", "mutate", "expected"), BAD_SESSIONS, ids=[b[0] for b in BAD_SESSIONS])
def test_bad_sessions_exit_2_naming_file_and_field_and_write_nothing(tmp_path: Path, label, mutate, expected) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(mutate(small_session_toml(name="bad")), encoding="utf-8")
    for command in (["check", str(path)], ["run", str(path)]):
        out = CliRunner().invoke(cli, command)
        assert out.exit_code == 2, (label, out.output)
        assert str(path) in out.output and expected in out.output, out.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_malformed_task_file_names_file_and_field(tmp_path: Path) -> None:
    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    (tasks_dir / "universal.toml").write_text((TASKS / "universal.toml").read_text())
    text = (TASKS / "counseling.toml").read_text().replace('source = "Anthropic Economic Index"', 'source = "Blog"')
    (tasks_dir / "counseling.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_tasks(tasks_dir)
    assert "counseling.toml: source" in str(info.value)


def test_missing_api_key_for_a_real_model_exits_2_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    text = small_session_toml(name="real").replace('model = "simulated/alpha"', 'model = "openai/gpt-4.1"')
    path = tmp_path / "real.toml"
    path.write_text(text)
    out = CliRunner().invoke(cli, ["run", str(path)])
    assert out.exit_code == 2
    assert "'Alpha' (openai/gpt-4.1)" in out.output and "OPENAI_API_KEY" in out.output
    assert not (tmp_path / "real.db").exists()
    checked = CliRunner().invoke(cli, ["check", str(path)])
    assert checked.exit_code == 0 and "OPENAI_API_KEY" in checked.output


def test_run_checks_the_keys_once(tmp_path: Path, monkeypatch) -> None:
    """One `centaur run` asks for the keys once (the CLI and the run each asked before, issue 21)."""
    import centaur_tui.llm as llm

    checked: list[int] = []
    real = llm.require_keys

    def counting(endpoints):  # type: ignore[no-untyped-def]
        checked.append(len(endpoints))
        return real(endpoints)

    monkeypatch.setattr(llm, "require_keys", counting)
    path = tmp_path / "once.toml"
    path.write_text(small_session_toml(name="once"))
    out = CliRunner().invoke(cli, ["run", "--quiet", str(path)])
    assert out.exit_code == 0, out.output
    assert len(checked) == 1
