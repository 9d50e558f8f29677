"""Provides `interruptible` and `interrupt`: a `centaur` child that SIGINT stops, as Ctrl-C on a terminal would.

A suite started in the background by a non-interactive shell (`make test-busy`'s `setsid make
test &`, a CI script's `&`) runs with SIGINT ignored, and every child inherits that: Python
then installs no KeyboardInterrupt handler, and the SIGINT a test sends is dropped (two busy
runs failed so, the child still running 120 s later). `interruptible` starts the child through
a one-line exec wrapper that sets SIGINT back to its default first.

A child that outlives the ceiling is a hang worth seeing, not a timeout to raise: `interrupt`
sends SIGABRT, which `PYTHONFAULTHANDLER` (set by `child_env`) turns into a dump of every
thread's stack on stderr, and fails with that dump.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

_DEFAULT_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
)


def interruptible(command: list[str]) -> list[str]:
    """`command` (a program and its arguments) run with SIGINT at its default, whatever this process inherited."""
    return [sys.executable, "-c", _DEFAULT_SIGINT, *command]


def child_env() -> dict[str, str]:
    """The environment for a child that `interrupt` may have to examine (faulthandler on)."""
    return {**os.environ, "PYTHONFAULTHANDLER": "1"}


def interrupt(proc: subprocess.Popen[bytes], ceiling: float = 120.0) -> tuple[bytes, bytes]:
    """Send SIGINT and wait for the child to end; (stdout, stderr).

    Raises:
        pytest.fail.Exception: the child did not end within `ceiling` seconds; the message holds
            the stack of each of its threads.
    """
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=ceiling)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, err = proc.communicate(timeout=60)
        pytest.fail(
            f"the child did not end {ceiling:.0f} s after SIGINT; its threads at SIGABRT:\n"
            + err.decode(errors="replace")[-8000:]
        )
