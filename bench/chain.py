"""Benchmark: what the tamper-evident record (store/chain.py) costs a run (not a test).

Run: .venv/bin/python bench/chain.py [--repeats 2] [--session sessions/demo.toml]

The demo session is run end to end (simulated provider, its own latency and faults) into a
fresh database, alternately with the hash chain on and with `chain.append` replaced by a no-op
(hashing off), `--repeats` times each. Reported: the median wall time of each, their ratio
(target: at most 1.05), and, for the runs with hashing, the time spent inside `chain.append`
itself as a share of the run's wall time: the direct cost, which a busy shared machine's noise
in the wall times cannot hide. Finally `verify` on the last database, timed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from centaur_tui.catalog import load_session  # noqa: E402
from centaur_tui.domain.study import Study  # noqa: E402
from centaur_tui.pipeline import Pipeline  # noqa: E402
from centaur_tui.store import Store, chain  # noqa: E402
from centaur_tui.store.chain import verify_store  # noqa: E402

_append = chain.append


def run_once(study: Study, database: Path, hashing: bool) -> tuple[float, float, int, float, float]:
    """(wall s, wall s inside chain.append, chained rows, CPU s inside chain.append, process CPU s) of one run.

    The wall time inside `append` also counts the time its thread waits for the GIL while the
    event loop's thread runs (and, on a shared machine, for a core): the CPU time inside it
    (`time.thread_time`, the database thread's own) is its direct cost, set against the CPU time
    of the whole run (`time.process_time`).
    """
    spent = [0.0, 0, 0.0]

    def timed(*args: object) -> None:
        t0, c0 = time.perf_counter(), time.thread_time()
        _append(*args)  # type: ignore[arg-type]
        spent[0] += time.perf_counter() - t0
        spent[1] += 1
        spent[2] += time.thread_time() - c0

    chain.append = timed if hashing else (lambda *args: None)  # type: ignore[assignment]
    try:
        target = Study(study.session, study.tasks, study.universal, study.session_file, database, study.guidelines)
        with Store(database) as store:
            t0, c0 = time.perf_counter(), time.process_time()
            asyncio.run(Pipeline(target, store).run())
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        chain.append = _append
    return wall, float(spent[0]), int(spent[1]), float(spent[2]), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--session", type=Path, default=ROOT / "sessions" / "demo.toml")
    args = parser.parse_args()
    study = load_session(args.session)
    walls: dict[bool, list[float]] = {True: [], False: []}
    inside: list[float] = []
    inside_cpu: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        last = Path(tmp) / "none.db"
        for i in range(args.repeats):
            for hashing in (i % 2 == 0, i % 2 != 0):  # alternate which goes first
                db = Path(tmp) / f"run{i}-{'on' if hashing else 'off'}.db"
                wall, spent, rows, spent_cpu, cpu = run_once(study, db, hashing)
                walls[hashing].append(wall)
                print(f"run {i + 1} hashing {'on ' if hashing else 'off'}: {wall:7.2f} s", end="")
                if hashing:
                    inside.append(spent / wall)
                    inside_cpu.append(spent_cpu / cpu)
                    last = db
                    print(
                        f"  ({rows:,} rows chained; inside chain.append {spent * 1000:.0f} ms wall, "
                        f"{spent_cpu * 1000:.0f} ms CPU of the run's {cpu:.1f} s CPU)"
                    )
                else:
                    print()
        on, off = statistics.median(walls[True]), statistics.median(walls[False])
        print(f"median wall: hashing on {on:.2f} s, off {off:.2f} s; ratio {on / off:.3f} (target <= 1.05)")
        print(
            f"time inside chain.append: {100 * statistics.median(inside):.2f}% of the run's wall time (GIL waits too)"
        )
        print(
            f"CPU inside chain.append: {100 * statistics.median(inside_cpu):.2f}% of the run's CPU time (target <= 5%)"
        )
        with Store(last, readonly=True) as store:
            t0 = time.perf_counter()
            check = verify_store(store)
            took = time.perf_counter() - t0
        print(f"verify: {check.length:,} rows, clean={check.clean}, {took * 1000:.0f} ms")


if __name__ == "__main__":
    main()
