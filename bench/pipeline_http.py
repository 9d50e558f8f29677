"""Provides the HTTP benchmark: the pipeline against a bare litellm loop, same calls, over real HTTP (not a test).

Run: .venv/bin/python bench/pipeline_http.py [--latency 1.0] [--concurrency 64] [--runs 2] [--tasks 5]

A separate process (this file with `--serve`, aiohttp) serves OpenAI-compatible chat
completions on 127.0.0.1: it sleeps `latency` seconds per request, then answers a deliverable,
or, for a judge prompt, a valid judgment of the rubric dimensions it reads in the prompt. The
server's CPU is not counted against the benchmark's process. Nothing leaves 127.0.0.1
(litellm runs offline, as in centaur_tui/llm/runtime.py).

(a) bare: every call the pipeline stored, re-sent with `litellm.acompletion` (model
    `openai/...`, the same api_base, messages and params) under one asyncio.Semaphore(concurrency),
    all launched at once: no dependencies, no store, no validation;
(b) pipeline: the demo session (10 candidates, 4 judges) with every entry an `openai/...`
    model at that api_base, `runs` x `tasks`; planning, dependencies, store writes and judge
    validation included.

Ideal wall time: max(calls / concurrency, longest dependency chain) x latency. The chain is
assistance -> worker -> judge, 3 calls (no re-asks: every judgment is valid); at 2,450 calls
and concurrency 64 the first term (38.3 s) is the bound.

Targets (issue 12): at latency 1 s, concurrency 64, >= 2,000 calls: pipeline wall time at most
1.1x ideal and at most 1.05x the bare loop.

Measured 2026-12-01 on the shared 2-core machine (other engineers' tests alongside, load
average 3-5), 2,450 calls (100 automation, 90 assistance, 100 worker, 2,160 judge), ideal
38.28 s, three runs of the default command:

    bare loop wall    44.82 s (1.171x ideal)   41.42 s (1.082x)   44.25 s (1.156x)
    pipeline wall     53.90 s (1.408x ideal)   42.97 s (1.122x)   48.31 s (1.262x)
    pipeline / bare   1.203                    1.037              1.092
    CPU/call          bare 4.34-4.47 ms, pipeline 4.74-5.49 ms (1.09-1.23x bare)

Again on a quiet machine (load average 0.8, the other engineers done), one run: bare 41.88 s
(1.094x ideal), pipeline 40.64 s (1.062x ideal, 0.971x bare): both targets met.

On the loaded machine neither target held in every run (the best run: 1.122x ideal, 1.037x bare), and the spread
between runs (1.12-1.41x ideal) is the machine's load, not the code. No slot stands idle: both
sides keep 62-63 calls in flight on average. The time goes into each call's latency beyond the
server's 1 s, as the client sees it inside its slot: bare 61-125 ms, pipeline 100-222 ms: one
event loop handles up to 64 replies that arrive together, at 4.3 ms of CPU each, with no spare
core. cProfile of the event-loop thread: litellm, openai and httpx take about 60% of its time
(litellm's response-cost calculation alone about 18%), centaur_tui's own code 3%. The
pipeline's extra CPU (0.4-1.0 ms per call) is its database thread and its own code. The
in-flight marker (pipeline/calls.py `_mark_sent`, committed while the call holds its slot)
waits 44 ms on average (median 29, 90th percentile 120 ms), but that is event-loop lag any
call pays: with the marker replaced by a no-op the run took 47.94 s against 47.36 s with it,
and 52.02 s against 51.86 s (alternating, same process).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # centaur_tui, imported only by the benchmark side (the server needs aiohttp only)
KEY_ENV = "CENTAUR_BENCH_KEY"
# Lines of the rendered rubric (domain/prompts.py render_rubric): "- <id> (<name>, <kind>): ...".
DIMENSION = re.compile(r"^- (\S+) \([^\n]*, (?:task-specific|general)\):", re.MULTILINE)
CHAIN = 3  # assistance -> worker -> judge


# -- the server (a separate process: imports aiohttp only) ----------------------------------------


def reply_text(body: dict[str, Any]) -> str:
    """A deliverable, or a valid judgment when the first user message holds a rubric."""
    messages = body.get("messages") or []
    prompt = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    dims = DIMENSION.findall(prompt)
    if not dims:
        # Unique per request: two equal deliverables would make two judge calls with one content
        # address, which the pipeline sends twice but stores once (see the report of this bench).
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]
        return f"Deliverable {digest} of {body.get('model')}: a plan with every step written out."
    scores = dict.fromkeys(dims, 7)
    return json.dumps(
        {
            "option_1": {"scores": scores},
            "option_2": {"scores": {**scores, dims[0]: 5}},
            "winner": "option_1",
            "rationale": "Option 1 covers more of the task's requirements.",
        }
    )


def serve(latency: float) -> None:
    """Serve until stdin closes; print the port first. GET /stats answers how many requests came."""
    from aiohttp import web

    count = 0

    async def completions(request: web.Request) -> web.Response:
        nonlocal count
        body = await request.json()
        count += 1
        await asyncio.sleep(latency)
        return web.json_response(
            {
                "id": f"r{count}",
                "object": "chat.completion",
                "created": 1,
                "model": str(body.get("model")),
                "choices": [
                    {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply_text(body)}}
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
            }
        )

    async def stats(_request: web.Request) -> web.Response:
        return web.json_response({"requests": count})

    async def main() -> None:
        app = web.Application(client_max_size=16 * 2**20)
        app.add_routes([web.post("/v1/chat/completions", completions), web.get("/stats", stats)])
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        print(runner.addresses[0][1], flush=True)  # the port the system chose
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # the benchmark closes stdin to stop us
        await runner.cleanup()

    asyncio.run(main())


class Server:
    """The server subprocess: `api_base` once started; `requests()` asks it how many came."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--latency", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.isdigit():
            self.proc.kill()
            raise SystemExit(f"the benchmark server did not start (it printed {line!r})")
        self.port = int(line)
        self.api_base = f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> int:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=5) as r:
            return int(json.load(r)["requests"])

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# -- the benchmark -------------------------------------------------------------------------------


def session_toml(api_base: str, concurrency: int, runs: int, n_tasks: int, name: str) -> str:
    """The demo session with every entry an `openai/...` model at `api_base`, as a session file."""
    from centaur_tui.catalog import load_session

    demo = load_session(ROOT / "sessions" / "demo.toml").session

    def entry(table: str, e: Any, **extra: Any) -> str:
        fields = {
            "name": e.name,
            "model": "openai/" + e.model.split("/", 1)[1],
            "api_base": api_base,
            "api_key_env": KEY_ENV,
            "family": e.family,
            **{k: v for k, v in extra.items() if v is not None},
        }
        return f"[{table}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())

    head = f"""name = "{name}"
seed = {demo.seed}
runs = {runs}
tasks = {json.dumps(demo.tasks[:n_tasks])}
tasks_dir = {json.dumps(str(ROOT / "tasks"))}

[judging]
temperature = 0.0
max_tokens = 2000
orders = "one"
allow_ties = true
structured_output = true

[limits]
concurrency = {concurrency}
per_model_concurrency = {concurrency}
timeout_s = 60
max_retries = 4
"""
    models = [
        entry("[models]", m, release_order=m.release_order, augmentation=m.augmentation, automation=m.automation)
        for m in demo.models
    ]
    judges = [entry("[judges]", j) for j in demo.judges]
    return "\n".join([head, *models, entry("worker", demo.worker), *judges])


def run_pipeline(path: Path) -> tuple[float, float, int, int]:
    from centaur_tui.catalog import load_session
    from centaur_tui.pipeline import Pipeline
    from centaur_tui.store import Store

    study = load_session(path)
    store = Store(study.database)
    pipe = Pipeline(study, store)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    outcome = asyncio.run(pipe.run())
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    sent = sum(st.sent for st in pipe.progress.stages.values())
    missing = outcome.missing_outputs + outcome.unjudged
    store.close()
    return wall, cpu, sent, missing


def stored_calls(db: Path) -> list[dict]:
    from centaur_tui.store import Store

    store = Store(db)
    rows = store.read("SELECT key, model, messages, params, latency_s FROM calls")
    store.close()
    return rows


def run_bare(calls: list[dict], concurrency: int, api_base: str) -> tuple[float, float, int, float]:
    from centaur_tui.llm.runtime import litellm

    llm = litellm()
    results: list[Any] = []
    latencies: list[float] = []

    async def main() -> None:
        gate = asyncio.Semaphore(concurrency)

        async def one(call: dict) -> None:
            params = json.loads(call["params"])
            async with gate:
                started = time.perf_counter()
                await llm.acompletion(
                    model=call["model"],
                    messages=json.loads(call["messages"]),
                    api_base=api_base,
                    api_key=os.environ[KEY_ENV],
                    timeout=60,
                    num_retries=0,
                    max_retries=0,
                    **params,
                )
                latencies.append(time.perf_counter() - started)

        # A failed call is counted, not raised: the numbers are printed with it.
        results.extend(await asyncio.gather(*(one(c) for c in calls), return_exceptions=True))

    wall0, cpu0 = time.perf_counter(), time.process_time()
    asyncio.run(main())
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return wall, cpu, sum(isinstance(r, BaseException) for r in results), sum(latencies)


def bench(latency: float, concurrency: int, runs: int, n_tasks: int) -> dict[str, float]:
    """Run both sides against one server; print and return the numbers."""
    os.environ[KEY_ENV] = "sk-bench-local"  # the server ignores it; litellm wants one
    server = Server(latency)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            # Warm-up: litellm imports parts of itself and builds its HTTP client on first use.
            warm = folder / "warmup.toml"
            warm.write_text(session_toml(server.api_base, concurrency, 1, 1, "warmup"), encoding="utf-8")
            run_pipeline(warm)

            path = folder / "http.toml"
            path.write_text(session_toml(server.api_base, concurrency, runs, n_tasks, "http"), encoding="utf-8")
            before = server.requests()
            p_wall, p_cpu, sent, missing = run_pipeline(path)
            p_requests = server.requests() - before
            calls = stored_calls(folder / "http.db")
            before = server.requests()
            b_wall, b_cpu, b_failed, b_busy = run_bare(calls, concurrency, server.api_base)
            b_requests = server.requests() - before
    finally:
        server.stop()
    n = len(calls)
    ideal = max(n / concurrency, CHAIN) * latency
    print(f"== HTTP 127.0.0.1, latency {latency:.2f} s, concurrency {concurrency} ==")
    print(f"calls                 {n:>10,}  (pipeline sent {sent:,}, server saw {p_requests:,}; missing {missing})")
    print(f"ideal wall            {ideal:>10.2f} s  (max(calls / concurrency, {CHAIN}) x latency)")
    print(
        f"bare loop wall        {b_wall:>10.2f} s  ({b_wall / ideal:.3f}x ideal;"
        f" {b_requests:,} requests, {b_failed} failed)"
    )
    print(
        f"pipeline wall         {p_wall:>10.2f} s  ({p_wall / ideal:.3f}x ideal, target <= 1.1;"
        f" {p_wall / b_wall:.3f}x bare, target <= 1.05)"
    )
    # A call's latency as its client saw it (inside the concurrency slot): beyond the server's
    # sleep it is the client's own work and event-loop lag; busy / wall is the mean number in flight.
    p_busy = sum(c["latency_s"] for c in calls)
    print(f"bare loop call        {b_busy / n:>10.3f} s  mean latency; {b_busy / b_wall:.1f} in flight on average")
    print(f"pipeline call         {p_busy / n:>10.3f} s  mean latency; {p_busy / p_wall:.1f} in flight on average")
    print(f"bare loop CPU/call    {1000 * b_cpu / n:>10.3f} ms")
    print(f"pipeline CPU/call     {1000 * p_cpu / n:>10.3f} ms  ({p_cpu / b_cpu:.3f}x bare)")
    return {
        "calls": n,
        "ideal": ideal,
        "bare_wall": b_wall,
        "pipeline_wall": p_wall,
        "bare_cpu": b_cpu,
        "pipeline_cpu": p_cpu,
        "missing": missing,
        "bare_failed": b_failed,
        "pipeline_requests": p_requests,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency)
        return
    bench(args.latency, args.concurrency, args.runs, args.tasks)


if __name__ == "__main__":
    main()
