"""Shared fixtures: offline litellm, a report cache and a log file for this test run, session files on demand."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from centaur_tui.logs import configure_logging
from tests.support.sessions import small_session_toml

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_OFFLINE_MODE"] = "true"
# Report documents the report process keeps on disk, and the diagnostics log, go to a folder
# of this test run, never to the user's cache (set before any report process or `centaur`
# subprocess starts: they inherit the environment).
_CACHE = tempfile.mkdtemp(prefix="centaur-test-cache-")
os.environ["CENTAUR_CACHE_DIR"] = _CACHE
os.environ["CENTAUR_LOG_FILE"] = os.path.join(_CACHE, "centaur.log")

configure_logging()  # reads the environment set above


def pytest_sessionfinish(session, exitstatus) -> None:  # pytest's hook signature: both arguments unused
    shutil.rmtree(_CACHE, ignore_errors=True)


@pytest.fixture
def write_session(tmp_path: Path):
    """Write a session file into a temporary folder and return its path."""

    def write(text: str | None = None, filename: str = "small.toml", **kwargs: object) -> Path:
        path = tmp_path / filename
        path.write_text(text if text is not None else small_session_toml(**kwargs), encoding="utf-8")
        return path

    return write
