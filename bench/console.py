"""Benchmark: the organiser's console on a study of 20 experts and 5,000 expert judgments (not a test).

Run: .venv/bin/python bench/console.py [--repeats 5] [--experts 20] [--judgments 5000] [--words 600]

A fresh database of the demo session's schema is filled directly (no pipeline run): 400
outputs of `--words` words each, 2,000 comparisons over the demo's tasks and both modes, 20
experts each with 300 queue places of which `--judgments` / 20 are judged (wall and active
time, a rationale, a pasted count, times an hour apart spread over a day), some places skipped
or flagged with a note, gold checks. Reported: the time of `build_console` (every figure of the
console screen and page) and of the report's `integrity_section`, cold (first call) and the
median of `--repeats` more. Target (issue 27): the console opens in under 1 s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from centaur_tui.catalog import load_session  # noqa: E402
from centaur_tui.domain.study import Study  # noqa: E402
from centaur_tui.services.console import build_console, integrity_section  # noqa: E402
from centaur_tui.store import Store  # noqa: E402

WORDS = "the plan covers every requirement with a clear budget timeline and the checks a reviewer needs".split()


def fill(store: Store, study: Study, experts: int, judgments: int, words: int, seed: int = 7) -> None:
    """Write outputs, comparisons, experts, queues, judgments, checks and flag notes straight into the tables."""
    rng = random.Random(seed)
    tasks = list(study.session.tasks)
    modes = ("automation", "augmentation")
    per_expert = judgments // experts
    with store.write() as c:
        outputs: list[str] = []
        for i in range(400):
            task, mode = tasks[i % len(tasks)], modes[(i // len(tasks)) % 2]
            text = " ".join(rng.choice(WORDS) for _ in range(words))
            oid = f"o{i}"
            c.execute(
                "INSERT INTO outputs (id, run, task, mode, candidate, worker, text, created_at)"
                " VALUES (?, 1, ?, ?, ?, 'w', ?, '2026-01-01T00:00:00+00:00')",
                (oid, task, mode, f"m{i % 8}", text),
            )
            outputs.append(oid)
        comparisons: list[tuple[str, str, str]] = []
        for i in range(2000):
            a, b = rng.sample(outputs, 2)
            cid = f"c{i}"
            c.execute(
                "INSERT INTO comparisons (id, run, task, mode, candidate_a, candidate_b, output_a, output_b)"
                " VALUES (?, 1, ?, ?, 'ca', 'cb', ?, ?)",
                (cid, tasks[i % len(tasks)], modes[i % 2], a, b),
            )
            comparisons.append((cid, "ca", "cb"))
        for e in range(experts):
            who = f"x{e:02d}"
            c.execute(
                "INSERT INTO app_experts (id, name, tasks, created_at)"
                " VALUES (?, ?, '[]', '2026-01-01T00:00:00+00:00')",
                (who, f"Expert {e}"),
            )
            places = rng.sample(comparisons, 300)
            for position, (cid, ca, cb) in enumerate(places, start=1):
                state = (
                    "pending" if position <= per_expert else rng.choice(("pending", "pending", "skipped", "flagged"))
                )
                cur = c.execute(
                    "INSERT INTO expert_assignments (expert, comparison_id, presentation, position, strategy, flipped,"
                    " state, created_at) VALUES (?, ?, 0, ?, 'stratified', 0, ?, '2026-01-01T00:00:00+00:00')",
                    (who, cid, position, state),
                )
                if state == "flagged":
                    c.execute(
                        "INSERT INTO meta (key, value) VALUES (?, ?)",
                        (f"flag-note/{who}/{cur.lastrowid}", "both deliverables are cut off"),
                    )
                if position > per_expert:
                    continue
                seconds = rng.uniform(2, 600)
                at = f"2026-01-0{1 + position // 100}T{position % 24:02d}:{e:02d}:00.000+00:00"
                c.execute(
                    "INSERT INTO judgments (comparison_id, judge, judge_kind, presentation, option1, option2, winner,"
                    " option1_mean, option2_mean, valid, rationale, attempts, seconds, active_seconds, pasted_chars,"
                    " created_at) VALUES (?, ?, 'expert', 0, ?, ?, ?, ?, ?, 1, ?, 1, ?, ?, ?, ?)",
                    (
                        cid,
                        who,
                        ca,
                        cb,
                        rng.choice((ca, cb)),
                        rng.uniform(1, 10),
                        rng.uniform(1, 10),
                        f"place {position}: " + " ".join(rng.choice(WORDS) for _ in range(20)),
                        round(seconds, 1),
                        round(seconds * 0.7, 1),
                        rng.choice((0, 0, 0, 40)),
                        at,
                    ),
                )
            for n in range(10):
                c.execute(
                    "INSERT INTO expert_checks (token, expert, kind, ordinal, after_position, task, output_id,"
                    " degraded, degradation, intact_option, judged_at, passed, created_at)"
                    " VALUES (?, ?, 'gold', ?, 1, ?, 'o0', 'x', 'cut', 1, '2026-01-01T09:00:00+00:00', ?,"
                    " '2026-01-01T00:00:00+00:00')",
                    (f"g{who}{n}", who, n, tasks[0], int(rng.random() < 0.8)),
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--experts", type=int, default=20)
    parser.add_argument("--judgments", type=int, default=5000)
    parser.add_argument("--words", type=int, default=600)
    args = parser.parse_args()
    demo = load_session(ROOT / "sessions" / "demo.toml")
    with tempfile.TemporaryDirectory() as tmp:
        database = Path(tmp) / "console.db"
        study = Study(demo.session, demo.tasks, demo.universal, demo.session_file, database, demo.guidelines)
        with Store(database) as store:
            t0 = time.perf_counter()
            fill(store, study, args.experts, args.judgments, args.words)
            print(f"filled in {time.perf_counter() - t0:.1f} s")
        with Store(database) as store:
            timings: dict[str, list[float]] = {"build_console": [], "integrity_section": []}
            for _ in range(1 + args.repeats):
                t0 = time.perf_counter()
                console = build_console(study, store)
                timings["build_console"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                integrity_section(store)
                timings["integrity_section"].append(time.perf_counter() - t0)
        judged = sum(e.judgments for e in console.experts)
        print(f"{len(console.experts)} experts, {judged:,} expert judgments, {console.assigned:,} places")
        for name, values in timings.items():
            print(
                f"{name}: cold {values[0]:.3f} s, median of {args.repeats} more {statistics.median(values[1:]):.3f} s"
            )
        worst = max(v for values in timings.values() for v in values)
        print(
            f"target: the console under 1 s: {'met' if max(timings['build_console']) < 1.0 else 'NOT met'}"
            f" (slowest call {worst:.3f} s)"
        )


if __name__ == "__main__":
    main()
