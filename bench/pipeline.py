"""Benchmark: the pipeline against a bare asyncio loop of litellm.acompletion, same calls (not a test).

Run: .venv/bin/python bench/pipeline.py [--latency 1.0] [--concurrency 64] [--runs 2] [--tasks 5]

(a) bare: every call the pipeline sent, re-sent with `litellm.acompletion` under one
    asyncio.Semaphore(concurrency), all launched at once (no dependencies, no store);
(b) pipeline: planning, dependencies, store writes and judge-reply validation included.

Targets (issue 2): at latency 1 s, concurrency 64, >= 2,000 calls: pipeline wall time within
1.15x of bare and within 1.2x of the ideal (calls / concurrency x latency); at zero latency,
pipeline CPU time per call within 1.5x of bare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from centaur_tui.catalog import load_session  # noqa: E402
from centaur_tui.domain.plan import seed_for  # noqa: E402
from centaur_tui.domain.study import Study  # noqa: E402
from centaur_tui.llm.runtime import litellm  # noqa: E402
from centaur_tui.pipeline import Pipeline  # noqa: E402
from centaur_tui.store import Store  # noqa: E402


def bench_study(folder: Path, latency: float, concurrency: int, runs: int, n_tasks: int, name: str) -> Study:
    demo = load_session(ROOT / "sessions" / "demo.toml")
    s = demo.session
    session = s.model_copy(
        update={
            "name": name,
            "runs": runs,
            "tasks": s.tasks[:n_tasks],
            "faults": s.faults.model_copy(update={"latency_s": latency, "error_rate": 0.0, "invalid_reply_rate": 0.0}),
            "limits": s.limits.model_copy(update={"concurrency": concurrency, "per_model_concurrency": concurrency}),
        }
    )
    return Study(
        session=session,
        tasks={t: demo.tasks[t] for t in session.tasks},
        universal=demo.universal,
        session_file=demo.session_file,
        database=folder / f"{name}.db",
    )


def run_pipeline(study: Study) -> tuple[float, float, int, str]:
    store = Store(study.database)
    pipe = Pipeline(study, store)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    asyncio.run(pipe.run())
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    sent = sum(st.sent for st in pipe.progress.stages.values())
    world = pipe.world_id or ""
    store.close()
    return wall, cpu, sent, world


def stored_calls(db: Path) -> list[dict]:
    store = Store(db)
    rows = store.read("SELECT key, model, messages, params FROM calls")
    store.close()
    return rows


def run_bare(calls: list[dict], concurrency: int, world: str) -> tuple[float, float]:
    llm = litellm()

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(call: dict) -> None:
            params = json.loads(call["params"])
            async with gate:
                await llm.acompletion(
                    model=call["model"],
                    messages=json.loads(call["messages"]),
                    seed=seed_for(call["key"]),
                    metadata={"simulation": world},
                    num_retries=0,
                    max_retries=0,
                    **params,
                )

        await asyncio.gather(*(one(c) for c in calls))

    wall0, cpu0 = time.perf_counter(), time.process_time()
    asyncio.run(main())
    return time.perf_counter() - wall0, time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=5)
    args = parser.parse_args()
    litellm()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # Warm-up: litellm imports parts of itself on first use.
        warm = bench_study(folder, 0.0, args.concurrency, 1, 1, "warmup")
        run_pipeline(warm)

        print(f"== latency {args.latency:.2f} s, concurrency {args.concurrency} ==")
        study = bench_study(folder, args.latency, args.concurrency, args.runs, args.tasks, "latency")
        p_wall, _p_cpu, sent, world = run_pipeline(study)
        calls = stored_calls(study.database)
        b_wall, _b_cpu = run_bare(calls, args.concurrency, world)
        ideal = len(calls) / args.concurrency * args.latency
        print(f"calls                 {len(calls):>10,}  (pipeline sent {sent:,})")
        print(f"ideal wall            {ideal:>10.2f} s  (calls / concurrency x latency)")
        print(f"bare loop wall        {b_wall:>10.2f} s  ({b_wall / ideal:.3f}x ideal)")
        print(
            f"pipeline wall         {p_wall:>10.2f} s  ({p_wall / b_wall:.3f}x bare, target <= 1.15;"
            f" {p_wall / ideal:.3f}x ideal, target <= 1.2)"
        )

        print("== latency 0, CPU per call ==")
        study0 = bench_study(folder, 0.0, args.concurrency, args.runs, args.tasks, "zero")
        z_wall, z_cpu, _z_sent, world0 = run_pipeline(study0)
        calls0 = stored_calls(study0.database)
        zb_wall, zb_cpu = run_bare(calls0, args.concurrency, world0)
        n = len(calls0)
        print(f"calls                 {n:>10,}")
        print(f"bare loop CPU/call    {1000 * zb_cpu / n:>10.3f} ms  (wall {zb_wall:.2f} s)")
        print(
            f"pipeline CPU/call     {1000 * z_cpu / n:>10.3f} ms  (wall {z_wall:.2f} s;"
            f" {z_cpu / zb_cpu:.3f}x bare, target <= 1.5)"
        )


if __name__ == "__main__":
    main()
