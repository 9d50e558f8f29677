"""Benchmark: identifiability of the demo's candidates as written and normalised (issue 26; not a test).

Run: .venv/bin/python bench/identifiability.py [--db PATH] [--seed N]
     .venv/bin/python bench/identifiability.py --coverage 500   # Bang's index: planted-truth coverage only

Runs the demo session (sessions/demo.toml, simulated provider; its candidates write in five
layouts, `simulation.style`) into a temporary folder unless `--db` names a database of it
already run, then computes the report's blinding section: per task and mode, the held-out top-1
accuracy of a classifier naming the candidate behind a deliverable, on the texts as an expert
would see them (masked) and on the same texts in the normalised presentation. Prints every cell
and, per mode, the pooled accuracy (correct of n over the cells classified) both ways.

Measured (seed 0, 2026-12-02, the demo as committed; 7 tasks x 3 runs, 10 candidates, K = 10,
chance 0.10): see docs/statistics.md ("Blinding measured").
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from centaur_tui.catalog import load_session
from centaur_tui.services.report import blinding_section
from centaur_tui.stats.blinding import wilson
from centaur_tui.store import Store

ROOT = Path(__file__).resolve().parent.parent


def _run_demo(folder: Path) -> Path:
    import subprocess

    session = folder / "demo.toml"
    text = (ROOT / "sessions" / "demo.toml").read_text(encoding="utf-8")
    session.write_text(text.replace('tasks_dir = "../tasks"', f'tasks_dir = "{ROOT / "tasks"}"'), encoding="utf-8")
    subprocess.run([sys.executable, "-m", "centaur_tui.cli", "run", str(session)], check=True, capture_output=True)
    return session


def coverage(studies: int, seed: int) -> None:
    """Planted truth for Bang's index: guesses drawn with known shares; how often the interval covers the true BI."""
    import random

    from centaur_tui.stats.blinding import Guess, blinding_index

    rng = random.Random(seed)
    for k, right, dont_know, n in ((2, 0.5, 0.2, 40), (4, 0.25, 0.2, 60), (4, 0.5, 0.2, 60), (10, 0.6, 0.1, 30)):
        wrong = 1 - right - dont_know
        truth = right - wrong / (k - 1)
        covered = 0
        for _ in range(studies):
            guesses = []
            for _ in range(n):
                u = rng.random()
                outcome = "correct" if u < right else ("dont_know" if u < right + dont_know else "incorrect")
                guesses.append(Guess("e", "T", outcome, k))
            _, low, high = blinding_index([(g.outcome, g.candidates) for g in guesses]) or (0.0, 0.0, 0.0)
            covered += low <= truth <= high
        print(
            f"K={k:<3} P(right)={right:.2f} P(don't know)={dont_know:.2f} n={n:<3} true BI={truth:+.3f}: "
            f"95% interval covered it in {covered}/{studies} = {covered / studies:.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, help="the session file of a demo already run (default: run it now)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--coverage", type=int, help="simulate this many studies of Bang's index, then stop")
    args = parser.parse_args()
    if args.coverage:
        coverage(args.coverage, args.seed)
        return
    folder = Path(tempfile.mkdtemp(prefix="centaur-identifiability-"))
    try:
        session = args.db or _run_demo(folder)
        study = load_session(session)
        start = time.process_time()
        with Store(study.database, readonly=True) as store:
            section = blinding_section(study, store, seed=args.seed)
        seconds = time.process_time() - start
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if section is None:
        raise SystemExit("no output stored")
    print(
        f"{'task':<22}{'mode':<14}{'presentation':<14}{'correct':>8}{'n':>5}{'acc':>7}{'low':>7}{'chance':>8}  threat"
    )
    for r in section.identifiability:
        if r.accuracy is None:
            print(f"{r.task:<22}{r.mode:<14}{r.presentation:<14}  {r.status}: {r.reason}")
            continue
        print(
            f"{r.task:<22}{r.mode:<14}{r.presentation:<14}{r.correct:>8}{r.deliverables:>5}"
            f"{r.accuracy:>7.2f}{r.low or 0:>7.2f}{r.chance or 0:>8.2f}  {'THREAT' if r.threat else ''}"
        )
    print()
    for mode in ("automation", "augmentation"):
        for presentation in ("as written", "normalised"):
            rows = [
                r
                for r in section.identifiability
                if r.mode == mode and r.presentation == presentation and r.correct is not None
            ]
            correct, n = sum(r.correct or 0 for r in rows), sum(r.deliverables for r in rows)
            if not n:
                continue
            low, high = wilson(correct, n)
            threats = sum(r.threat for r in rows)
            print(
                f"{mode:<13} {presentation:<11} pooled {correct}/{n} = {correct / n:.3f} [{low:.3f}, {high:.3f}]"
                f" over {len(rows)} cells, {threats} threat(s)"
            )
    print(f"excluded: {section.excluded or 'none'}; section built in {seconds:.1f} s of CPU")


if __name__ == "__main__":
    main()
