"""Planted truth through the whole pipeline: does the report's worker panel find each worker's best assistant?

Each study (tests/support/panel_truth.py) is a session of two simulated workers (Weak, skill 0.2,
rarely acts on "be specific"; Strong, skill 0.9), two assistants whose help depends on the worker
(Broad: many pointers, none specific; Deep: fewer pointers, all specific), 4 runs x 2 tasks and
two judges (noise 0.8): per run and task 2 assistance texts, 6 deliverables, 12 judgments. It is run by the
pipeline on the simulated provider (through litellm) and reported by `session_report`; a study
recovers the truth when the `workers` section's best assistant is Broad for Weak and Deep for
Strong.

    .venv/bin/python bench/workers.py [studies] [runs]

Measured 2026-12-02 on the shared 2-core machine (load average about 11):

    100 studies of 4 runs: both recovered in 97 (97%); Weak -> Broad 97/100, Strong -> Deep 100/100;
        217-436 s; misses: study 4 (Deep best for both), 39 and 96 (a tie at the top for Weak)
    40 studies of 2 runs: both recovered in 36 (90%); Weak -> Broad 36/40, Strong -> Deep 40/40; 79 s;
        misses: studies 4 and 39 (Deep best for both), 3 and 22 (a tie at the top for Weak)

Every miss was the weak worker's (Deep best for it too, or a tie: the per-worker dependence
drowned in the runs' noise), never the planted pair swapped. A tie at the top (the section then
names no best) counts as a miss; docs/statistics.md states the numbers.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.panel_truth import PLANTED, panel_best  # noqa: E402 - after the path is set


def main(studies: int = 40, runs: int = 4) -> None:
    started = time.perf_counter()
    recovered = 0
    per_worker: Counter[str] = Counter()
    for seed in range(studies):
        with tempfile.TemporaryDirectory() as folder:
            best = panel_best(seed, Path(folder), runs=runs)
        recovered += best == PLANTED
        per_worker.update(w for w, a in PLANTED.items() if best.get(w) == a)
        if best != PLANTED:
            print(f"  study {seed}: {best}")
    print(f"{studies} studies of {runs} runs x 2 tasks: both workers' best assistant recovered in {recovered}")
    print("  " + ", ".join(f"{w} -> {a}: {per_worker[w]}/{studies}" for w, a in PLANTED.items()))
    print(f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
