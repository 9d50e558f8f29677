"""Test ids hold no clock, randomness or environment: collected again with the clock two days ahead, the same ids.

pytest-xdist refuses a run when two workers collect different ids, so a parametrize list (or an
`ids=`) evaluated from the time, a random draw or an environment variable breaks `make test`
whenever two workers collect in different seconds (issue 21: `make test` failed 3 times out of
3 on a busy machine). This process's own collection is compared with a second one in a
subprocess whose clock is two days ahead, whose time zone and environment differ and whose
randomness is reseeded (tests/support/skewed_clock.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def collected_ids(*args: str) -> list[str]:
    """The test ids a fresh pytest process collects (nothing runs), with the skewed clock."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "PYTEST_XDIST", "PYTEST_CURRENT"))}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    plugins = ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "tests.support.skewed_clock"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *plugins, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_ids_collected_here_come_again_under_another_clock_and_seed(request: pytest.FixtureRequest) -> None:
    mine = [item.nodeid for item in request.session.items]
    files = sorted({nodeid.split("::")[0] for nodeid in mine})
    again = set(collected_ids(*files))
    differ = [nodeid for nodeid in mine if nodeid not in again]
    assert not differ, (
        f"{len(differ)} test id(s) change with the clock, randomness or the environment (make them from "
        f"constants, and compute the value inside the test): {differ[:10]}"
    )


def test_every_file_named_costliest_first_exists() -> None:
    """A renamed test file would silently drop out of the order `make test` starts files in."""
    from tests.conftest import COSTLIEST_FIRST

    folder = Path(__file__).parent
    assert [name for name in COSTLIEST_FIRST if not (folder / name).is_file()] == []
