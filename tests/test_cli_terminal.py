"""The command line without a terminal, and one wording for an unknown session in every command.

`centaur tui` on a pipe once wrote escape codes into it and then spun for minutes after its reader
had gone (`centaur tui demo | head`, issue 21): the app now refuses to open without a terminal
(exit status 2), and a command whose reader goes away exits. The pipes here are closed early, as
`head` closes them; each wait has a generous ceiling and fails only when the process never ends.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.cli.main import cli
from tests.support.sessions import small_session_toml

CENTAUR = [sys.executable, "-m", "centaur_tui.cli"]
ROOT = Path(__file__).resolve().parent.parent
CEILING_S = 120
"""Only a process that never ends waits this long."""


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["CENTAUR_SESSIONS"] = str(tmp_path / "sessions")
    env["CENTAUR_TASKS"] = str(ROOT / "tasks")
    return env


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small session that has been run (shared by the tests of this module: one run)."""
    folder = tmp_path_factory.mktemp("terminal")
    (folder / "sessions").mkdir()
    session = folder / "sessions" / "small.toml"
    session.write_text(small_session_toml(name="small", tasks=("counseling",)), encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(session), "--quiet"])
    assert result.exit_code == 0, result.output
    return session


def _head(args: list[str], tmp_path: Path, lines: int = 1) -> tuple[int, str, str]:
    """Run `centaur ARGS | head -LINES`: read that many lines, close the pipe, wait for the exit."""
    proc = subprocess.Popen(
        [*CENTAUR, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    )
    assert proc.stdout is not None and proc.stderr is not None
    read = "".join(proc.stdout.readline() for _ in range(lines))
    proc.stdout.close()  # the reader has gone
    try:
        proc.wait(timeout=CEILING_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"`centaur {' '.join(args)}` kept running after its reader had gone") from None
    return proc.returncode, read, proc.stderr.read()


@pytest.mark.slow
def test_the_app_refuses_a_pipe_with_exit_status_2_and_says_what_to_run(ran: Path, tmp_path: Path) -> None:
    code, out, err = _head(["tui", str(ran)], tmp_path)
    assert code == 2 and out == ""
    assert "Not a terminal: `centaur tui`" in err and "standard output" in err and "centaur report SESSION" in err
    assert "Traceback" not in err and "\x1b" not in err


@pytest.mark.slow
def test_the_app_refuses_when_only_standard_input_is_not_a_terminal(ran: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [*CENTAUR, "tui", "small"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
        cwd=tmp_path, env=_env(ran.parent.parent), timeout=CEILING_S,
    )  # fmt: skip
    assert done.returncode == 2 and "standard input" in done.stderr and "Traceback" not in done.stderr


def test_the_bare_command_and_judge_never_open_the_app_without_a_terminal(tmp_path: Path) -> None:
    from tests.support.experts import judged_session

    session = judged_session(tmp_path)
    bare = CliRunner().invoke(cli, [])
    assert bare.exit_code == 0 and "Usage" in bare.output  # the help, as before
    # A file that is no packet is named first (terminal or not) ...
    junk = tmp_path / "junk.packet"
    junk.write_bytes(b"not a packet")
    refused = CliRunner().invoke(cli, ["judge", str(junk)])
    assert refused.exit_code == 2 and "not a judging packet" in refused.output
    # ... and a real packet is never judged without a terminal.
    assigned = CliRunner().invoke(cli, ["assign", str(session), "--expert", "ann", "--n", "2"])
    assert assigned.exit_code == 0, assigned.output
    packet = tmp_path / "a.packet"
    exported = CliRunner().invoke(cli, ["packet", "export", str(session), "--expert", "ann", "--out", str(packet)])
    assert exported.exit_code == 0, exported.output
    judged = CliRunner().invoke(cli, ["judge", str(packet)])
    assert judged.exit_code == 2 and "Not a terminal: `centaur judge`" in judged.output


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [["report", "{session}"], ["export", "{session}", "--out", "out"], ["tasks"]],
    ids=["report", "export", "tasks"],
)
def test_a_command_whose_reader_goes_away_exits_without_a_traceback(ran: Path, tmp_path: Path, args: list[str]) -> None:
    code, out, err = _head([a.format(session=ran) for a in args], tmp_path)
    assert out  # it wrote before the reader left
    assert code in (0, 1), (code, err)  # 1: click's answer to a broken pipe
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_the_demo_without_a_terminal_runs_exports_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In this process (CliRunner's streams are no terminal): `make demo` in CI takes this path.
    (tmp_path / "sessions").mkdir()
    session = tmp_path / "sessions" / "tiny.toml"
    session.write_text(small_session_toml(name="tiny", tasks=("counseling",)), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(cli, ["demo", "--session", str(session)])
    assert done.exit_code == 0, done.output[-3000:]
    assert "exported out/tiny/judgments.csv" in done.output and "SIMULATED" in done.output
    assert "CentaurBench report: session tiny" in done.output
    assert (tmp_path / "out" / "tiny" / "judgments.csv").stat().st_size > 0
    assert "Not a terminal" not in done.output and "\x1b[?1049h" not in done.output  # no app was drawn


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{name}"],
        ["check", "{name}"],
        ["report", "{name}"],
        ["export", "{name}", "--out", "out"],
        ["tui", "{name}"],
        ["demo", "--session", "{name}"],
        ["assign", "{name}", "--expert", "ann", "--n", "1"],
        ["import-outputs", "{name}", "outputs.csv"],
        ["import", "{name}", "human_judgments.jsonl"],
        ["plan", "{name}", "--experts", "2", "--per-expert", "10"],
        ["serve", "{name}"],
        ["expert", "link", "{name}", "ann"],
        ["packet", "export", "{name}", "--expert", "ann", "--out", "a.packet"],
        ["work-report", "{name}"],
    ],
    ids=lambda args: args[0] if args[0] not in ("expert", "packet") else "-".join(args[:2]),
)
def test_an_unknown_session_is_said_one_way_in_every_command_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CENTAUR_SESSIONS", "sessions")
    result = CliRunner().invoke(cli, [a.format(name="nosuch") for a in args])
    assert result.exit_code == 2, result.output
    expected = f"Unknown session: nosuch: no such session file {Path('sessions') / 'nosuch.toml'}"
    assert expected in result.output and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_a_session_path_that_is_missing_or_a_folder_is_named_as_given(tmp_path: Path) -> None:
    missing = CliRunner().invoke(cli, ["run", str(tmp_path / "gone.toml")])
    assert (
        missing.exit_code == 2 and f"Unknown session: {tmp_path / 'gone.toml'}: no such session file" in missing.output
    )
    folder = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert folder.exit_code == 2 and f"Unknown session: {tmp_path}: is a folder, not a session file" in folder.output
