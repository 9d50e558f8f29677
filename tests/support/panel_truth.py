"""Provides one planted-truth study of a worker panel, run through the whole pipeline on the simulated provider.

Two workers of different skill and two assistants whose help depends on the worker (issue 28):
`Broad` points at many requirements without asking for specifics, `Deep` points at fewer but asks
for specifics; `Weak` (skill 0.2) rarely acts on a "be specific" pointer and gains most from broad
pointers, `Strong` (skill 0.9) covers most requirements anyway and gains from specifics. The planted
truth is `PLANTED`: the best assistant of each worker.

Each study's entries carry its seed in their family: the family is part of every call's content
address (`domain.plan.entry_json`), so every simulated reply is the study's own draw. The session
seed alone would not do: it changes only the order in which judges see the options, while the
assistance texts and deliverables (keyed by their request, not by the seed) stay the same.
Used by tests/test_workers_truth.py (a few
seeds) and bench/workers.py (many).
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.pipeline import Pipeline
from centaur_tui.services.report import session_report
from centaur_tui.store import Store
from tests.support.sessions import TASKS

PLANTED = {"Weak": "Broad", "Strong": "Deep"}
"""The best assistant of each worker, as the simulation plants it."""

SESSION = """
name = "truth{seed}"
seed = {seed}
runs = {runs}
tasks = ["counseling", "tutoring"]
tasks_dir = "{tasks}"

[limits]
concurrency = 32
per_model_concurrency = 16
backoff_base_s = 0.0
backoff_max_s = 0.0

[[models]]
name = "Broad"
model = "simulated/broad"
family = "North{seed}"
automation = false
simulation = {{ coaching_skill = {{ default = 0.9 }}, specificity = 0.0 }}

[[models]]
name = "Deep"
model = "simulated/deep"
family = "South{seed}"
automation = false
simulation = {{ coaching_skill = {{ default = 0.5 }}, specificity = 1.0 }}

[[workers]]
name = "Weak"
model = "simulated/weak"
family = "East{seed}"
simulation = {{ skill = {{ default = 0.2 }}, uses_specifics = 0.0 }}

[[workers]]
name = "Strong"
model = "simulated/strong"
family = "East{seed}"
simulation = {{ skill = {{ default = 0.9 }} }}

[[judges]]
name = "J1"
model = "simulated/j1"
family = "West{seed}"
simulation = {{ noise = 0.8 }}

[[judges]]
name = "J2"
model = "simulated/j2"
family = "Far{seed}"
simulation = {{ noise = 0.8 }}
"""


def panel_best(seed: int, folder: Path, runs: int = 4) -> dict[str, str | None]:
    """Run one seeded panel study in `folder` and return the report's best assistant per worker.

    Args:
        seed: The study: its session seed and the suffix of its entries' families (see the module).
        folder: An empty folder for the session file and its database.
        runs: Runs of the session (2 tasks each); at 4 the truth was recovered in 97 of 100 studies,
            at 2 in 36 of 40 (docs/statistics.md).
    """
    path = folder / f"truth{seed}.toml"
    path.write_text(textwrap.dedent(SESSION.format(seed=seed, runs=runs, tasks=TASKS)), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
    doc = session_report(load_session(path), bootstrap=0, permutation=False).document
    assert doc.workers is not None, "a two-worker panel has a workers section"
    return dict(doc.workers.best)  # None for a worker whose two assistants tie at the top
