"""The README's command lines are real: each names a command, and those reading `examples/` run as written.

The README once showed `centaur import-outputs byo outputs.csv` and `centaur import mtbench
human_judgments.jsonl`, naming a session and files that did not exist (issue 21). The lines that
take example files run here, in order, in a copy of `examples/` and `tasks/` (offline: the BYO
session's judges are simulated), so that nothing is written into the repository.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[list[str]]:
    """The command lines of the README's "Commands" block, as argument lists (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^## Commands\n.*?^```sh\n(.*?)^```", text, re.M | re.S)
    assert block, "README.md has no ```sh block under ## Commands"
    lines = [line.split("#", 1)[0].strip() for line in block.group(1).splitlines()]
    return [shlex.split(line) for line in lines if line]


def test_every_readme_command_is_a_command_of_centaur() -> None:
    commands = readme_commands()
    assert len(commands) >= 20
    for argv in commands:
        assert argv[0] == "centaur", argv
        if len(argv) > 1:
            assert argv[1] in cli.commands, f"README: `{' '.join(argv)}`: no command {argv[1]!r}"
        for word in argv:
            if word.startswith("examples/"):
                assert (ROOT / word).is_file(), (
                    f"README: `{' '.join(argv)}` names {word}, which is not in the repository"
                )


@pytest.mark.slow
def test_the_readme_commands_that_read_example_files_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    shutil.copytree(ROOT / "tasks", tmp_path / "tasks")
    monkeypatch.chdir(tmp_path)
    ran = []
    for argv in readme_commands():
        if any(word.startswith("examples/") for word in argv):
            result = CliRunner().invoke(cli, argv[1:])
            assert result.exit_code == 0, f"`{' '.join(argv)}` exited {result.exit_code}:\n{result.output}"
            assert "Traceback" not in result.output
            ran.append(argv[1])
    assert ran == ["import-outputs", "run", "import"]
    assert (tmp_path / "examples" / "byo.db").exists() and (tmp_path / "examples" / "mtbench" / "mtbench.db").exists()
    report = CliRunner().invoke(cli, ["report", "examples/byo.toml"])
    assert report.exit_code == 0 and "6 comparisons, 12 judgments stored, 12 used" in report.output
