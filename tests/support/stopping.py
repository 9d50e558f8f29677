"""Provides `interrupt`: SIGINT to a `centaur` child and its output, or its threads' stacks if it does not stop.

A child that outlives the ceiling is a hang worth seeing, not a timeout to raise: the helper
sends SIGABRT, which `PYTHONFAULTHANDLER` (set by `child_env`) turns into a dump of every
thread's stack on stderr, and fails with that dump.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest


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
