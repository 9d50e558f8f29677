"""Benchmark: 50 experts judging at once through the HTML seat (`centaur serve`) while `centaur run` writes.

Run: .venv/bin/python bench/seat.py [--experts 50] [--judgments 2] [--pace 1.0]

Each expert is an HTTP client doing what the judging page's script does: it opens its personal
link (cookie), loads /judge, reads the page's data (place, version, dimensions) and CSRF token,
then changes one slider every `--pace` seconds, each change a draft save (POST
/api/judging/save), and submits with a winner and a rationale (POST /api/judging/submit),
`--judgments` times. Meanwhile `centaur run` works through three more runs of the session
(simulated calls, 0.5 s latency, 2 at a time), writing to the same database.

Measured:
  save latency      POST /api/judging/save, sent to answered: median, p95 (target p95 <= 150 ms)
  submit latency    POST /api/judging/submit: median, p95 (target p95 <= 150 ms)
  server memory     the server process's peak RSS (VmHWM) with every expert connected (target <= 150 MB)
  lost judgments    submitted (answered 200) but not stored (target 0)
  lock errors       "database is locked" in the logs, or any 5xx answer (target 0)

Measured on the shared 2-core machine (load average 9-15 from other test suites), 50 experts x 2
judgments, a slider a second, the pipeline writing meanwhile:

  starts spread (default), two runs  save p95 20.2 / 35.1 ms, submit p95 14.5 / 9.2 ms
  --lockstep (all submit at once)    save p95 79.1 ms, submit p95 99.5 ms
  server memory                      58 MB idle, peak 69-88 MB with all 50 (textual-serve: ~84 MB each)
  lost judgments 0, lock errors 0 in every run

Before the server kept each place's rubric, every save re-read and re-masked both deliverables
(and logged the maskings, a write): save p95 was 443 ms at load 10.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from tests.support.sessions import small_session_toml  # noqa: E402 - after the path and litellm settings

P95_TARGET_S = 0.150
MEMORY_TARGET_MB = 150
RATIONALE = "clearer steps and fewer gaps in the winner"
DATA = re.compile(r'<script type="application/json" id="seat-data">(.*?)</script>', re.S)
CSRF = re.compile(r'<meta name="csrf-token" content="([0-9a-f]+)">')


def experts_toml(n: int) -> str:
    return "".join(f'\n[[experts]]\nid = "e{i}"\nname = "Expert {i}"\n' for i in range(1, n + 1))


def prepare(folder: Path, experts: int, judgments: int) -> Path:
    """A small session run once, each expert given `judgments` places to judge, then three more runs planned."""
    from centaur_tui.catalog import load_session
    from centaur_tui.domain.assignment import plan_assignments
    from centaur_tui.pipeline import Pipeline
    from centaur_tui.store import ExpertStore, Store

    path = folder / "bench.toml"
    extra = experts_toml(experts)
    path.write_text(small_session_toml(name="bench", extra=extra), encoding="utf-8")
    study = load_session(path)
    with Store(study.database) as store:
        asyncio.run(Pipeline(study, store).run())
        pool = ExpertStore(store)
        for i in range(1, experts + 1):
            spec = pool.expert(study, f"e{i}")
            planned = plan_assignments(pool.pool(), spec, pool.existing(), judgments, "stratified", study.session.seed)
            pool.add_assignments(spec.id, planned)
    path.write_text(
        small_session_toml(
            name="bench",
            runs=4,
            extra=extra,
            faults="latency_s = 0.5\nlatency_jitter = 0.5",
            limits="concurrency = 2\nper_model_concurrency = 2\nbackoff_base_s = 0.0\nbackoff_max_s = 0.0",
        ),
        encoding="utf-8",
    )
    return path


def memory_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a process, in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


class Client:
    """One expert's page: the link's cookie, the page's data, saves and submits as the script sends them."""

    def __init__(self, expert: str, link: str, base: str, pace: float, delay: float) -> None:
        self.expert, self.link, self.base, self.pace, self.delay = expert, link, base, pace, delay
        self.saves: list[float] = []
        self.submits: list[float] = []
        self.submitted = 0
        self.errors: list[str] = []

    async def post(self, http: aiohttp.ClientSession, path: str, body: dict, csrf: str) -> tuple[int, dict, float]:
        sent = time.perf_counter()
        async with http.post(
            self.base + path, json=body, headers={"Origin": self.base, "X-CSRF-Token": csrf}
        ) as response:
            answer = await response.json(content_type=None)
            return response.status, answer, time.perf_counter() - sent

    async def run(self, judgments: int) -> None:
        # unsafe=True: aiohttp's jar otherwise keeps no cookie for an IP address (127.0.0.1).
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(self.link) as response:
                assert response.status == 200, response.status
            await asyncio.sleep(self.delay)
            url = self.base + "/judge"
            for _ in range(judgments):
                async with http.get(url) as response:
                    html = await response.text()
                found = DATA.search(html)
                if found is None:
                    self.errors.append(f"no judging page: {html[:200]!r}")
                    return
                data = json.loads(found.group(1))
                csrf = CSRF.search(html).group(1)  # type: ignore[union-attr]
                base, place = data["base"], data["place"]
                draft = {"scores": {d: [None, None] for d in data["dimensions"]}, "winner": None, "rationale": ""}
                for dim in data["dimensions"]:
                    for option in (0, 1):
                        await asyncio.sleep(self.pace)
                        draft["scores"][dim][option] = 7 if option == 0 else 5
                        status, answer, took = await self.post(
                            http, "/api/judging/save", {"place": place, "base": base, "draft": draft}, csrf
                        )
                        if status != 200:
                            self.errors.append(f"save {status}: {answer}")
                            continue
                        self.saves.append(took)
                        base = answer["version"]
                draft["winner"], draft["rationale"], draft["seconds"] = "option_1", RATIONALE, 30.0
                status, answer, took = await self.post(
                    http, "/api/judging/submit", {"place": place, "base": base, "draft": draft}, csrf
                )
                if status != 200:
                    self.errors.append(f"submit {status}: {answer}")
                    return
                self.submits.append(took)
                self.submitted += 1
                url = self.base + answer["next"]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(share * len(ordered)) - 1)]


async def bench(
    base: str, links: dict[str, str], judgments: int, pace: float, pid: int, spread: float
) -> tuple[list[Client], float]:
    rng = random.Random(7)
    clients = [Client(e, link, base, pace, rng.uniform(0, spread)) for e, link in links.items()]
    tasks = [asyncio.create_task(c.run(judgments)) for c in clients]
    peak = 0.0
    while not all(t.done() for t in tasks):
        await asyncio.sleep(0.5)
        peak = max(peak, memory_mb(pid)[0])
    for task in tasks:
        await task
    return clients, max(peak, memory_mb(pid)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experts", type=int, default=50)
    parser.add_argument("--judgments", type=int, default=2)
    parser.add_argument("--pace", type=float, default=1.0, help="Seconds between two slider changes of one expert.")
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="Start every expert at the same moment (all 50 then submit within the same second: the worst case); "
        "by default starts are spread over one judgment's time, as people working independently are.",
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="centaur-bench-seat-"))
    log_file = folder / "centaur.log"
    env = {**os.environ, "CENTAUR_LOG_FILE": str(log_file), "CENTAUR_CACHE_DIR": ""}
    server = pipeline = None
    try:
        print(f"preparing a session with {args.experts} experts in {folder} ...", flush=True)
        path = prepare(folder, args.experts, args.judgments)
        from centaur_tui.catalog import load_session

        study = load_session(path)
        cmd = [sys.executable, "-m", "centaur_tui"]
        server = subprocess.Popen([*cmd, "serve", str(path), "--port", "0"], stdout=subprocess.PIPE, text=True, env=env)
        assert server.stdout is not None
        lines = []
        for line in server.stdout:
            lines.append(line)
            if line.startswith("Stop with"):
                break
        text = "".join(lines)
        base = re.search(r"on (http://\S+)", text).group(1)  # type: ignore[union-attr]
        links = dict(re.findall(r"^\s+(e\d+) \(.*?\): (http://\S+)$", text, re.M))
        idle_mb = memory_mb(server.pid)[0]
        conn = sqlite3.connect(study.database)
        calls_before = conn.execute("SELECT count(*) FROM calls").fetchone()[0]
        conn.close()
        pipeline = subprocess.Popen(
            [*cmd, "run", str(path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        )
        assert pipeline.stdout is not None
        for line in pipeline.stdout:  # the clients start once the pipeline is sending calls
            if line.startswith("["):
                break
        pipeline_lines: list[str] = []
        threading.Thread(target=lambda: pipeline_lines.extend(pipeline.stdout), daemon=True).start()  # type: ignore[arg-type]
        started = time.perf_counter()
        load_before = os.getloadavg()[0]
        dimensions = len(study.rubric(study.session.tasks[0]).all)
        spread = 0.0 if args.lockstep else 2 * dimensions * args.pace
        clients, peak_mb = asyncio.run(bench(base, links, args.judgments, args.pace, server.pid, spread))
        elapsed = time.perf_counter() - started
        pipeline_running = pipeline.poll() is None
        conn = sqlite3.connect(study.database)
        stored = dict(
            conn.execute(
                "SELECT judge, count(*) FROM judgments WHERE judge_kind = 'expert' AND revision = 0 GROUP BY judge"
            ).fetchall()
        )
        calls_after = conn.execute("SELECT count(*) FROM calls").fetchone()[0]
        conn.close()
        if pipeline_running:
            pipeline.send_signal(signal.SIGINT)
        pipeline.wait(timeout=60)
        out = "".join(pipeline_lines)
        logged = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
        errors = [e for c in clients for e in c.errors]
        locks = len(re.findall(r"database is locked|DatabaseLockedError", logged + out)) + sum(
            e.startswith(("save 5", "submit 5")) for e in errors
        )
        submitted = {c.expert: c.submitted for c in clients}
        lost = sum(max(0, submitted[e] - stored.get(e, 0)) for e in submitted)
        saves = [x for c in clients for x in c.saves]
        submits = [x for c in clients for x in c.submits]
        print(
            f"{len(clients)} experts, {len(saves)} saves and {sum(submitted.values())} judgments in {elapsed:.1f} s "
            f"(a slider every {args.pace:g} s, starts {'at once' if args.lockstep else f'spread over {spread:.0f} s'}; "
            f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after, "
            f"{os.cpu_count()} cores)"
        )
        print(
            f"pipeline alongside: {'still running at the end' if pipeline_running else 'finished during'}; "
            f"calls stored {calls_before} -> {calls_after}"
        )
        for name, values in (("save", saves), ("submit", submits)):
            if values:
                p95 = percentile(values, 0.95)
                print(
                    f"{name} latency: median {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms "
                    f"(target <= {P95_TARGET_S * 1000:.0f} ms: ratio {p95 / P95_TARGET_S:.2f}), "
                    f"max {max(values) * 1000:.1f} ms"
                )
        print(
            f"server memory: {idle_mb:.0f} MB before the experts, peak {peak_mb:.0f} MB with all {len(clients)} "
            f"(target <= {MEMORY_TARGET_MB} MB)"
        )
        print(f"lost judgments: {lost}; lock errors: {locks}; other refused requests: {len(errors)}")
        for error in errors[:5]:
            print("  ", error)
    finally:
        for process in (pipeline, server):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
