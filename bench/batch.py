"""Provides the batch-mode benchmark: 1,000 judge calls through a provider batch against the local fake (not a test).

Run: .venv/bin/python bench/batch.py [--runs 125]

One session (3 automation candidates, 1 assistant, 2 judges, 1 task; 8 judgments per run, so
`runs` = 125 gives 1,000 judge calls), every entry an `openai/...` model at the fake of
tests/support/batch_server.py on 127.0.0.1 (no latency: it measures our overhead, not a
provider's 24 h window). Generation runs online in both sides; judging (a) through batches
(`[judging] mode = "batch"`, poll every 0.05 s, a batch ends at its second check) and (b)
online through the gateway, against the same server and the same replies.

Reported: wall time of each run; HTTP requests the server saw for the judge calls (by kind);
the batch bookkeeping in SQLite (rows and bytes of `batches` and `batch_requests`, from
SQLite's dbstat, against the `calls` table that holds the same calls either way) and the
database file sizes of both sides.

Measured 2026-12-01 on the shared 2-core machine (load average about 10), 1,000 judge calls
(plus 750 generation calls online in both runs):

    judging in batches (collect_s 1.0)   16.93 s wall   36 HTTP requests for judging (6 batches:
                                         6 uploads, 6 creates, 12 status checks, 12 downloads:
                                         litellm's afile_content sends 2 GETs per call)
    judging online                       22.19 s wall   1,000 HTTP requests
    batch bookkeeping after collection   754 KB (754 bytes per request: batch_requests rows and
                                         their two indexes; batches 4 KB)
    held while in flight                 12.0 MB (each request's messages and params, dropped
                                         when its batch is collected; the file keeps the freed
                                         pages: 22.8 MB against 19.6 MB online, +16 %)

With collect_s 0.2 the same calls made 10 batches (60 requests) at load 5 and 36 batches (216
requests) at load 15: judge calls reach the batcher as tournaments finish, and how they gather
depends on timing; the default (10 s) gathers more.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.batch_server import BatchServer  # noqa: E402 - after the path is set

JUDGE_MODELS = ("gpt-4o-mini", "judge-two")


def session_toml(api_base: str, mode: str, runs: int, name: str) -> str:
    def entry(kind: str, label: str, model: str, family: str, extra: str = "") -> str:
        where = f'model = "openai/{model}"\napi_base = "{api_base}"'
        return f'[{kind}]\nname = "{label}"\n{where}\nfamily = "{family}"\n{extra}\n'

    head = textwrap.dedent(
        f"""
        name = "{name}"
        seed = 5
        runs = {runs}
        tasks = ["counseling"]
        tasks_dir = "{ROOT / "tasks"}"

        [judging]
        mode = "{mode}"
        max_tokens = 400
        structured_output = false

        [batch]
        poll_interval_s = 0.05
        collect_s = 1.0

        [limits]
        concurrency = 64
        per_model_concurrency = 64
        timeout_s = 60.0
        """
    )
    return head + "\n".join(
        [
            entry("[models]", "A", "gen-a", "North"),
            entry("[models]", "B", "gen-b", "South", "augmentation = false"),
            entry("[models]", "C", "gen-c", "Mid", "augmentation = false"),
            entry("worker", "W", "worker", "East"),
            entry("[judges]", "J1", JUDGE_MODELS[0], "West"),
            entry("[judges]", "J2", JUDGE_MODELS[1], "Central"),
        ]
    )


def run(path: Path) -> tuple[float, Any]:
    from centaur_tui.catalog import load_session
    from centaur_tui.pipeline import Pipeline
    from centaur_tui.store import Store

    study = load_session(path)
    with Store(study.database) as store:
        started = time.perf_counter()
        outcome = asyncio.run(Pipeline(study, store).run())
        return time.perf_counter() - started, outcome


def judge_requests(server: BatchServer, start: int) -> Counter[str]:
    with server._lock:  # the fake's own lock: a consistent view of its log
        log = server.log[start:]
    kinds: Counter[str] = Counter(kind for kind, what in log if kind != "chat" or what in JUDGE_MODELS)
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=125, help="8 judge calls per run")
    args = parser.parse_args()
    from centaur_tui.catalog import load_session
    from centaur_tui.store import Store, batch_overhead

    with tempfile.TemporaryDirectory() as tmp, BatchServer(steps=1) as server:
        folder = Path(tmp)
        warm = folder / "warm.toml"
        warm.write_text(session_toml(server.api_base, "batch", 1, "warm"), encoding="utf-8")
        run(warm)  # litellm's import and first HTTP client
        results = {}
        for mode in ("batch", "online"):
            path = folder / f"{mode}.toml"
            path.write_text(session_toml(server.api_base, mode, args.runs, mode), encoding="utf-8")
            start = len(server.log)
            wall, outcome = run(path)
            assert outcome.complete, outcome.outcomes
            judged = outcome.progress.stages["judging"]
            db = load_session(path).database
            with Store(db) as store:
                overhead = batch_overhead(store)
                # What batch_requests held per request while its batch was in flight (dropped on collection).
                overhead["transient"] = int(
                    store.read_value("SELECT sum(length(messages) + length(params)) FROM calls WHERE stage = 'judging'")
                    or 0
                )
            results[mode] = (wall, judged.done, judge_requests(server, start), overhead, db.stat().st_size)
    for mode, (wall, judged, requests, overhead, size) in results.items():
        print(f"== judging {mode}: {judged:,} judgments ==")
        print(f"wall (generation online + judging)  {wall:8.2f} s")
        print(f"HTTP requests for judging           {sum(requests.values()):8,}  {dict(sorted(requests.items()))}")
        print(f"database file                       {size / 1e6:8.2f} MB")
        if mode == "batch":
            rows = f"{overhead['batches']} batches, {overhead['batch_requests']:,} batch_requests rows"
            sizes = {k[6:]: v for k, v in overhead.items() if k.startswith("bytes:")}
            book = sum(v for k, v in sizes.items() if k != "calls")
            print(f"batch bookkeeping                   {book / 1e3:8.1f} KB  ({rows}; {sizes})")
            print(f"  per judge call                    {book / max(1, overhead['batch_requests']):8.1f} bytes")
            held = overhead["transient"]
            print(f"  held while in flight (messages)   {held / 1e6:8.2f} MB  (freed pages once collected)")
    b, o = results["batch"], results["online"]
    ratio = sum(b[2].values()) / max(1, sum(o[2].values()))
    print(f"batch / online wall {b[0] / o[0]:.2f}x; HTTP requests {ratio:.4f}x")


if __name__ == "__main__":
    main()
