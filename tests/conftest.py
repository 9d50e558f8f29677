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


# Files whose tests take longest (wall seconds with 4 workers on 2 cores, measured 2026-12-02),
# costliest first. `make test` hands whole files to workers in collection order
# (--dist loadfile --no-loadscope-reorder): starting these first keeps one of them from being
# the last file still running while the other workers sit idle. Only the order depends on this
# list (a stale one costs time, never a result); files not listed follow in their usual order.
COSTLIEST_FIRST = (
    "test_ui_judging.py",
    "test_batch.py",
    "test_ui_seat.py",
    "test_ui_reading.py",
    "test_resume.py",
    "test_dialogue.py",
    "test_reporting.py",
    "test_ui_results.py",
    "test_ui_elsewhere.py",
    "test_ui_contrast.py",
    "test_gateway_http.py",
    "test_collection.py",
    "test_figures_layout.py",
    "test_serve_browser.py",
    "test_budget.py",
    "test_session_lock.py",
    "test_batch_lost.py",
    "test_pacing.py",
    "test_ui_app.py",
    "test_ui_work.py",
    "test_workers_must_hold.py",
    "test_plan.py",
    "test_workers_truth.py",
    "test_active.py",
    "test_ui_console.py",
)
_RANK = {name: i for i, name in enumerate(COSTLIEST_FIRST)}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Put the costliest files first (a stable sort: each file's tests keep their order)."""
    items.sort(key=lambda item: _RANK.get(item.path.name, len(_RANK)))
