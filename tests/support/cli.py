"""Provides `centaur ARGS` run in the test's own process, through click's runner.

A `centaur` process costs about 0.3 s of CPU to start and 2.5 s more when it imports litellm;
in the test process litellm is imported once. Tests use a real process only where the process
is what they test (a kill, a signal, a lock held by another process, the entry point's logging).
"""

from __future__ import annotations

import subprocess

from click.testing import CliRunner

from centaur_tui.cli.main import cli


def centaur_here(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `centaur ARGS` here; the result reads like a finished process's (returncode, stdout, stderr)."""
    result = CliRunner().invoke(cli, list(args), env={"NO_COLOR": "1", "COLUMNS": "200"}, catch_exceptions=False)
    return subprocess.CompletedProcess(["centaur", *args], result.exit_code, result.stdout, result.stderr)
