"""Provides sessions with experts as workers (`[human_workers]`): fresh (`arm_session`) or judged (`work_session`)."""

from __future__ import annotations

from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.store import Store, WorkStore
from tests.support.experts import judged_session
from tests.support.sessions import small_session_toml

ARM = """
[[experts]]
id = "ann"
name = "Ann"

[[experts]]
id = "bob"
name = "Bob"

[[experts]]
id = "cy"
name = "Cy"

[human_workers]
experts = ["ann", "bob", "cy"]
tasks = ["counseling", "tutoring"]
assistants = ["Alpha", "Gamma"]
"""


def arm_session(write_session, extra: str = ARM) -> Path:
    """A fresh small session with three experts as workers (nothing run); `write_session`: the conftest fixture."""
    return write_session(small_session_toml(extra=extra))


WORK_ARM = """
[human_workers]
experts = ["ann", "bob"]
tasks = ["counseling", "tutoring"]
assistants = ["Alpha", "Gamma"]
"""


def work_session(tmp_path: Path) -> Path:
    """A judged session whose two experts have their deliverables to write assigned."""
    path = judged_session(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + WORK_ARM, encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        WorkStore(store).assign(study)
    return path
