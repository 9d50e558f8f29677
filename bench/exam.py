"""Provides the admission exam's benchmark: Wilson coverage, and the exam separating simulated judges (not a test).

Run: .venv/bin/python bench/exam.py [--studies 500] [--seeds 10]

(a) Coverage of the 95 % Wilson interval of position-consistent accuracy: a judge right on each
pair with a planted probability p, n pairs, `--studies` seeded studies per (n, p).
(b) On `--seeds` simulated sessions (the small test session, one task, seeds 1..k): the run,
then `centaur exam` with 3 pairs per kind (9 pairs): the accuracy of a flaw-checking judge
(flaw_check = 3), a position follower (position_bias = 5) and a judge reading coverage only,
and in how many sessions the checker's interval lies wholly above the follower's.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from centaur_tui.stats.exam import wilson  # noqa: E402


def coverage(studies: int) -> None:
    print(f"(a) Wilson 95 % coverage, {studies} studies per cell")
    for n in (9, 18, 30, 60):
        cells = []
        for p in (0.5, 0.8, 0.95):
            rng = random.Random(f"{n}|{p}")
            hit = 0
            for _ in range(studies):
                k = sum(rng.random() < p for _ in range(n))
                low, high = wilson(k, n)
                hit += low is not None and high is not None and low <= p <= high
            cells.append(f"p={p}: {hit / studies:.3f}")
        print(f"  n={n:<3} " + "  ".join(cells))


def separation(seeds: int) -> None:
    from centaur_tui.catalog import load_session
    from centaur_tui.pipeline import Pipeline
    from centaur_tui.services.exam import run_exam
    from centaur_tui.services.exam_report import exam_section
    from centaur_tui.store import Store
    from tests.test_exam import exam_toml

    acc: dict[str, list[float]] = {"JudgeNorth": [], "JudgeSouth": [], "JudgeWest": []}
    apart = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, seeds + 1):
            path = Path(tmp) / f"s{seed}.toml"
            text = exam_toml().replace("seed = 7", f"seed = {seed}").replace('name = "exam"', f'name = "exam{seed}"')
            text = text.replace('tasks = ["counseling", "tax_preparation"]', 'tasks = ["tax_preparation"]')
            path.write_text(text, encoding="utf-8")
            study = load_session(path)
            with Store(study.database) as store:
                asyncio.run(Pipeline(study, store).run())
            run_exam(study, per_kind=3)
            with Store(study.database, readonly=True) as store:
                s = exam_section(study, store)
            assert s is not None
            rows = {r.judge: r for r in s.rows if r.kind == "all"}
            for judge, values in acc.items():
                values.append(rows[judge].accuracy or 0.0)
            low, high = rows["JudgeNorth"].ci_low, rows["JudgeSouth"].ci_high
            apart += low is not None and high is not None and low > high
    print(f"(b) {seeds} simulated sessions, 9 planted pairs each (both orders)")
    labels = {"JudgeNorth": "flaw checker", "JudgeSouth": "position follower", "JudgeWest": "coverage only"}
    for judge, label in labels.items():
        v = acc[judge]
        print(f"  {label:<18} mean accuracy {statistics.mean(v):.3f}  min {min(v):.3f}  max {max(v):.3f}")
    print(f"  checker's interval wholly above the follower's in {apart} of {seeds} sessions")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=500)
    parser.add_argument("--seeds", type=int, default=10)
    args = parser.parse_args()
    coverage(args.studies)
    separation(args.seeds)


if __name__ == "__main__":
    main()
