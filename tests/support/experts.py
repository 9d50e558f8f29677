"""Provides judged sessions: a small simulated session run once per test process, copied for each test."""

from __future__ import annotations

import asyncio
import atexit
import functools
import gc
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.pipeline import Pipeline
from centaur_tui.store import Store
from tests.support.sessions import small_session_toml

EXPERTS = """
[[experts]]
id = "ann"
name = "Ann Example"

[[experts]]
id = "bob"
name = "Bob Example"
tasks = ["counseling"]
"""

CANDIDATES = ("Alpha", "Beta", "Gamma", "Delta")
FAMILIES = ("North", "South", "East", "West")

HOSTILE_SPELLINGS = (
    # The small session's own names and vendor names, spelled the way issue 13 saw them leak.
    "Ａｌｐｈａ",
    "B\u200beta",
    "Gаmmа",
    "DELTA",
    "N\u00adorth",
    "Sоuth",
    "Open  AI",
    "Opus",
    "Sonnet",
    "Deep Seek",
    "o4\u2011mini",
    "GPT\u20114.1",
    "GPT\u20134.1",
    "G\u200bPT-4.1",
    "ＧＰＴ－４．１",
    "GРТ-4",
    "Сlaude",
    "通义千问",
    "阿里巴巴",
)
"""Planted in outputs by the store and screen tests; none of them may reach an expert."""
HOSTILE_TEXT = "\n\nNotes: " + "; ".join(f"{s} wrote this" for s in HOSTILE_SPELLINGS) + "。我们使用通义千问来写。"


@functools.cache
def _template() -> Path:
    """A small session run once per test process (about 2 s); tests copy its folder."""
    folder = Path(tempfile.mkdtemp(prefix="centaur-experts-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "small.toml"
    path.write_text(small_session_toml(tasks=("counseling", "tutoring"), extra=EXPERTS), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store, ThreadPoolExecutor(1) as pool:
        # In a thread of its own: async (Pilot) tests call this from inside a running loop.
        pool.submit(asyncio.run, Pipeline(study, store).run()).result(timeout=300)
    # litellm is now loaded (about 200 MB of objects): keep them out of every later garbage
    # collection, which otherwise stalls each key press of the Pilot tests by 0.1-0.3 s.
    gc.collect()
    gc.freeze()
    return folder


def judged_session(tmp_path: Path) -> Path:
    """A copy of the pre-run small session (2 tasks, 32 comparisons, LLM judgments done)."""
    target = tmp_path / "sessions"
    shutil.copytree(_template(), target)
    return target / "small.toml"
