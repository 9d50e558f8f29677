"""Benchmark: launch to a usable home screen, and moving to the next comparison in the judging screen (not a test).

Run: .venv/bin/python bench/tui.py [--sessions DIR] [--rounds 20]

launch      a fresh `python` process imports the app, builds it with create_app (as `centaur`
            does), runs it headless at 120x40 and stops the clock when the home screen has read
            every session in the sessions folder (its table rows are filled): the time from
            process start (interpreter start-up included) to a usable screen.
next        on a copy of the demo session (run `centaur demo` first; otherwise a small simulated
            session is run here), an expert with a queue moves to the next comparison (skip,
            then submit of a complete judgment): the time from the action to the next
            comparison laid out (both deliverables, the rubric) and drawn as one full frame.

stall       on the same screen, a 10,000-word deliverable in both options is laid out and
            scrolled to its end: the longest gap between two beats of the event loop.

Targets (issue 14, tighter than issue 4's 1 s and 100 ms): launch < 0.5 s; next comparison
< 50 ms (median); stall < 0.2 s. Prints each, with its ratio to the target.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

LAUNCH_TARGET_S = 0.5
NEXT_TARGET_S = 0.050
STALL_TARGET_S = 0.2
"""The UI test's old limit was 0.5 s; measured on 2 cores the worst gaps were 0.07-0.19 s."""

_CHILD = """
import time
t0 = time.perf_counter()
import asyncio, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.home import HomeScreen

async def main():
    app = create_app(sessions_dir=Path({sessions!r}))
    async with app.run_test(size=(120, 40)) as pilot:
        while not (isinstance(app.screen, HomeScreen) and app.screen.loaded):
            await asyncio.sleep(0.002)
        print(time.perf_counter() - t0, len(app.screen.rows))

asyncio.run(main())
"""


def bench_launch(sessions: Path, rounds: int) -> tuple[list[float], list[float], int]:
    """(wall times from spawn, in-process times from the first line, sessions listed)."""
    walls, inner, listed = [], [], 0
    code = _CHILD.format(root=str(ROOT), sessions=str(sessions.resolve()))
    for _ in range(rounds):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
        walls.append(time.perf_counter() - start)
        seconds, count = out.stdout.split()
        inner.append(float(seconds))
        listed = int(count)
    return walls, inner, listed


def prepare_judging_session(folder: Path) -> Path:
    """A copy of the demo session (or a small simulated one) with an expert queue of 60."""
    from centaur_tui.services.assign import assign_comparisons
    from centaur_tui.services.run import run_study
    from centaur_tui.services.session import open_session, open_store

    demo = ROOT / "sessions" / "demo.toml"
    target = folder / "bench.toml"
    text = demo.read_text(encoding="utf-8").replace('tasks_dir = "../tasks"', f'tasks_dir = "{ROOT / "tasks"}"')
    text = text.replace('name = "demo"', 'name = "bench"', 1)
    target.write_text(text, encoding="utf-8")
    if (ROOT / "sessions" / "demo.db").exists():
        shutil.copy(ROOT / "sessions" / "demo.db", folder / "bench.db")
        source = "copy of sessions/demo.db"
    else:
        source = "demo session run here (sessions/demo.db missing)"
    study = open_session(target)
    with open_store(study, must_exist=False) as store:
        if not store.counts().comparisons:
            run_study(study, store)
        result = assign_comparisons(study, store, "expert_a", 60)
    print(f"judging session: {source}, {result.added} comparisons assigned")
    return target


async def bench_next(path: Path, rounds: int) -> dict[str, list[float]]:
    from centaur_tui.domain.blinding import Draft
    from centaur_tui.ui.app import create_app
    from centaur_tui.ui.screens.judging import JudgingScreen
    from centaur_tui.ui.widgets.document import DocumentView

    app = create_app(sessions_dir=path.parent, session=path, expert="expert_a")
    times: dict[str, list[float]] = {"skip": [], "submit": [], "stall": []}
    async with app.run_test(size=(120, 40)) as pilot:

        async def shown(previous: str | None) -> JudgingScreen:
            while True:
                screen = app.screen
                if (
                    isinstance(screen, JudgingScreen)
                    and not screen.busy
                    and screen.current is not None
                    and screen.current.key != previous
                    and all(v.ready for v in screen.query(DocumentView) if v.display)
                ):
                    return screen
                await asyncio.sleep(0.0005)

        screen = await shown(None)
        await pilot.pause()
        for i in range(rounds):
            how = "skip" if i % 2 == 0 else "submit"
            previous = screen.current.key
            if how == "submit":
                draft = Draft()
                for d in screen.item.rubric.all:
                    draft.set_score(d.id, 1, 6)
                    draft.set_score(d.id, 2, 5)
                draft.winner = "option_1"
                draft.rationale = "Option one meets more of the requirements."
                screen.draft = draft
                screen._show_missing()
                await pilot.pause()
            start = time.perf_counter()
            (screen.action_skip if how == "skip" else screen.action_submit)()
            screen = await shown(previous)
            # Draw one whole frame of the new comparison, as the terminal would get it (an upper
            # bound: the app itself only redraws the regions that changed).
            frame = app.screen_text()
            times[how].append(time.perf_counter() - start)
            assert screen.item is not None and screen.item.task_title in frame
            await pilot.pause()
        # A 10,000-word deliverable laid out (in a thread) and scrolled: the longest gap between
        # two 5 ms beats of the event loop (the test suite only checks that the loop beats).
        para = "The plan covers the brief point by point with figures checked against their limits. " * 9
        long = "\n\n".join(f"## Part {i}\n\n{para}\n\n- a point\n- another point" for i in range(75))
        views = list(screen.query(DocumentView))
        gaps: list[float] = []

        async def heartbeat() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        beat = asyncio.create_task(heartbeat())
        for view in views:
            view.set_text(long)
        while not all(v.ready for v in views):
            await asyncio.sleep(0.01)
        views[1].focus()
        for _ in range(10):
            await pilot.press("pagedown")
        await pilot.press("end")
        beat.cancel()
        times["stall"].append(max(gaps))
    return times


def describe(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:7.1f} ms, max {max(values) * 1000:7.1f} ms (n={len(values)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=Path, default=ROOT / "sessions", help="Sessions folder for the launch.")
    parser.add_argument("--rounds", type=int, default=20, help="Launches, and next-comparison moves.")
    parser.add_argument("--no-results", action="store_true", help="Skip the results screen (the slowest part).")
    args = parser.parse_args()

    walls, inner, listed = bench_launch(args.sessions, max(3, args.rounds // 4))
    launch = statistics.median(walls)
    print(f"launch to usable home screen ({listed} sessions listed):")
    print(f"  from process spawn   {describe(walls)}")
    print(f"  from first line      {describe(inner)}")
    print(f"  target {LAUNCH_TARGET_S:.1f} s: median at {launch / LAUNCH_TARGET_S:.2f} of the target")

    with tempfile.TemporaryDirectory() as tmp:
        path = prepare_judging_session(Path(tmp))
        times = asyncio.run(bench_next(path, args.rounds))
    both = times["skip"] + times["submit"]
    if os.environ.get("BENCH_VERBOSE"):
        print({k: [round(v * 1000) for v in vs] for k, vs in times.items()})
    print("next comparison on screen (laid out and drawn as a full frame):")
    print(f"  after skip           {describe(times['skip'])}")
    print(f"  after submit         {describe(times['submit'])}")
    print(
        f"  target {NEXT_TARGET_S * 1000:.0f} ms: "
        f"median at {statistics.median(both) / NEXT_TARGET_S:.2f} of the target, "
        f"max at {max(both) / NEXT_TARGET_S:.2f}"
    )
    stall = times["stall"][0]
    print(
        f"longest event-loop stall laying out and scrolling a 10,000-word deliverable: {stall * 1000:.0f} ms"
        f" = {stall / STALL_TARGET_S:.2f} of the target ({STALL_TARGET_S * 1000:.0f} ms)"
    )
    if not args.no_results:
        bench_results()


# -- results screen at the paper's scale (issue 7) -------------------------------------------------

RESULTS_TARGET_S = 2.0

_RESULTS_CHILD = """
import time, asyncio, sys
sys.path.insert(0, {root!r})
from pathlib import Path
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
from centaur_tui.store import Store
from centaur_tui.ui.app import create_app
from centaur_tui.ui.screens.results import ResultsScreen
from centaur_tui.ui.screens.session import SessionScreen

def store_a_judgment(database, revision):
    # A corrected judgment, as an expert or a rerun would store it: the report must be computed again.
    with Store(database) as store:
        r = store.read("SELECT * FROM judgments WHERE valid = 1 ORDER BY id LIMIT 1")[0]
        scores = tuple(ScoreRecord(s["candidate"], s["dimension"], s["dimension_kind"], s["score"])
                       for s in store.read("SELECT * FROM scores WHERE judgment_id = ?", (r["id"],)))
        store.save_judgment(JudgmentRecord(
            comparison_id=r["comparison_id"], judge=r["judge"], judge_kind=r["judge_kind"],
            judge_family=r["judge_family"], presentation=r["presentation"], option1=r["option1"],
            option2=r["option2"], winner=r["option2"], option1_mean=r["option1_mean"],
            option2_mean=r["option2_mean"], valid=True, invalid_reason=None, rationale="corrected",
            call_key=None, attempts=1, scores=scores, revision=revision))

async def main():
    app = create_app(sessions_dir=Path({folder!r}), session=Path({path!r}))
    async with app.run_test(size=(120, 40)) as pilot:
        while not (isinstance(app.screen, SessionScreen) and app.screen.state is not None):
            await asyncio.sleep(0.005)
        # A person reads the overview for a moment before asking for results; the overview has
        # the report process compute the report ahead meanwhile (started 0.5 s after it shows).
        await asyncio.sleep({wait!r})
        database = app.screen.study.database
        times = []
        for i in range(3):
            if i == 1:
                store_a_judgment(database, revision={revision!r})  # new data: computed again
            start = time.perf_counter()
            await pilot.press("s")
            while not (isinstance(app.screen, ResultsScreen) and app.screen.results is not None
                       and not app.screen.computing):
                await asyncio.sleep(0.002)
            # Until one full frame shows the matrix, as the terminal would get it (layout included).
            while "Rank of ranks" not in app.screen_text():
                await asyncio.sleep(0.002)
            times.append(time.perf_counter() - start)
            await pilot.press("escape")
            await pilot.pause()
        print(" ".join(str(t) for t in times))

asyncio.run(main())
"""


def bench_results(waits: tuple[float, ...] = (0.0, 2.0, 6.0, 0.0)) -> None:
    """Time from pressing the results key to the results screen drawn, on a paper-scale store.

    The store is the synthetic paper-scale database of bench/report.py (sessions/paper.toml:
    6,300 comparisons, about 15,000 judgments). Each wait is a fresh program that stays that
    long on the session overview (whose report process loads the statistics and computes the
    report ahead from 0.5 s on), then opens the results (first open), stores one new
    judgment and opens them again (computed again, statistics loaded), then reopens them on
    unchanged data. Every program has its own empty disk cache (a folder of this benchmark,
    not the user's cache), but the last one, which gets the cache of the one before and so
    finds the document that program computed last, for the same data.
    """
    from bench.report import build_store  # the same synthetic store as the report benchmark
    from centaur_tui.catalog import load_session

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        text = (ROOT / "sessions" / "paper.toml").read_text(encoding="utf-8")
        text = text.replace('name = "paper"', f'name = "paper"\ntasks_dir = "{ROOT / "tasks"}"', 1)
        path = Path(tmp) / "paper.toml"
        path.write_text(text, encoding="utf-8")
        study = load_session(path)
        size = build_store(study, study.database)
        for n, wait in enumerate(waits):
            # Each fresh program its own empty disk cache; the last one the cache of the one before.
            cache = Path(tmp) / f"cache-{n if n < len(waits) - 1 or n == 0 else n - 1}"
            env = {**os.environ, "CENTAUR_CACHE_DIR": str(cache)}
            code = _RESULTS_CHILD.format(root=str(ROOT), folder=tmp, path=str(path), wait=wait, revision=1000 + n)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
            if out.returncode:
                raise SystemExit(out.stderr[-3000:])
            rows.append((wait, [float(x) for x in out.stdout.split()]))
    print(
        f"results screen on a paper-scale store ({size['comparisons']:,} comparisons, {size['judgments']:,} "
        f"judgments), key press to the screen drawn (target {RESULTS_TARGET_S:.0f} s):"
    )
    print(f"  {'on the overview before':<24} {'first open':>10} {'after a new judgment':>21} {'reopened':>9}")
    for n, (wait, (first, again, reopen)) in enumerate(rows):
        label = f"{wait:.1f} s (fresh program)" if n < len(rows) - 1 or len(rows) == 1 else f"{wait:.1f} s (disk cache)"
        print(f"  {label:<24} {first:>9.2f} s {again:>19.2f} s {reopen:>7.2f} s")
    worst = max(t for _, times in rows for t in times)
    print(f"  worst {worst:.2f} s = {worst / RESULTS_TARGET_S:.2f} of the target")


if __name__ == "__main__":
    main()
