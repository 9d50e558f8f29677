"""Provides the rate-limit benchmark: the gateway paced to an rpm limit that a local server enforces (not a test).

Run: .venv/bin/python bench/ratelimit.py [--calls 1000] [--rpm 6000] [--latency 0.05] [--concurrency 64]

A separate process (this file with `--serve`, standard library only) serves OpenAI-compatible chat
completions on 127.0.0.1 and enforces `rpm` as a provider does: a token bucket refilled at
rpm/60 per second holding one second's worth; a request over it gets a 429 with `retry-after`
and `retry-after-ms`. The benchmark sends `calls` calls through `Gateway.complete` (litellm's
real HTTP path, `openai/...` at that api_base) with the session's `rpm` set to the same limit,
all launched at once.

Ideal wall time: calls / (rpm / 60). Targets (issue 16): wall / ideal at most 1.15, 429s at most
1% of calls. The same run with no `rpm` in the session (`--unpaced`) shows what the pacing
saves: the provider's 429s and Retry-After then do the pacing.

Measured 2026-12-01 on the shared 2-core machine (load average 9-11: other engineers' tests
alongside), latency 0.05 s, concurrency 64:

    1,000 calls, rpm 6,000, paced     wall  9.57 s, ideal 10.00 s, ratio 0.957; 0 429s (0.00%)
    2,000 calls, rpm 6,000, paced     wall 20.59 s, ideal 20.00 s, ratio 1.030; 0 429s (0.00%)
    1,000 calls, rpm 6,000, unpaced   wall  9.41 s, ideal 10.00 s, ratio 0.941; 206 429s (20.6%)

A ratio below 1 is the buckets' start: both begin full (the gateway's half a second's worth,
the server's one second's), so the first 50 calls leave at once. Unpaced, the server's 429s
with `retry-after-ms`, the deployment-wide pause and the AIMD concurrency keep the throughput,
at one 429 in five calls; paced, none.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def serve(rpm: int, latency: float) -> None:
    """The rate-limited server: prints its port, then serves until killed; counts go to stderr on /stats."""
    rate = rpm / 60
    state = {"level": rate, "stamp": time.monotonic(), "ok": 0, "rejected": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._send(200, {"ok": state["ok"], "rejected": state["rejected"]})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            with lock:
                now = time.monotonic()
                state["level"] = min(rate, state["level"] + (now - state["stamp"]) * rate)
                state["stamp"] = now
                admitted = state["level"] >= 1
                if admitted:
                    state["level"] -= 1
                    state["ok"] += 1
                else:
                    state["rejected"] += 1
                    wait = (1 - state["level"]) / rate
            if not admitted:
                self._send(
                    429,
                    {"error": {"message": "rate limit", "type": "rate_limit_error"}},
                    {"retry-after": str(max(1, round(wait))), "retry-after-ms": str(max(1, round(wait * 1000)))},
                )
                return
            if latency:
                time.sleep(latency)
            self._send(
                200,
                {
                    "id": "r",
                    "object": "chat.completion",
                    "created": 1,
                    "model": "bench",
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
                },
            )

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024

    httpd = Server(("127.0.0.1", 0), Handler)
    print(httpd.server_port, flush=True)
    httpd.serve_forever()


async def bench(api_base: str, calls: int, rpm: int, concurrency: int, paced: bool) -> tuple[float, int]:
    from centaur_tui.domain.session import Endpoint, Limits
    from centaur_tui.llm import CallRequest, Gateway

    ep = Endpoint(model="openai/bench", api_base=api_base, rpm=rpm if paced else None)
    limits = Limits(concurrency=concurrency, per_model_concurrency=concurrency, max_retries=20, backoff_base_s=0.05)
    gateway = Gateway(limits)
    warm = CallRequest("warm", "automation", ep, [{"role": "user", "content": "warm up"}], {"max_tokens": 5}, "w")
    await gateway.complete(warm)  # litellm's first call sets up its client; not timed
    await asyncio.sleep(1.0)  # the server's bucket refills: the run starts from a full bucket
    requests = [
        CallRequest(f"k{i}", "automation", ep, [{"role": "user", "content": f"item {i}"}], {"max_tokens": 5}, "s")
        for i in range(calls)
    ]
    started = time.perf_counter()
    results = await asyncio.gather(*(gateway.complete(r) for r in requests))
    wall = time.perf_counter() - started
    retries = sum(r.attempts - 1 for r in results)
    return wall, retries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rpm", type=int, default=6000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--unpaced", action="store_true", help="No rpm in the session: the provider's 429s pace.")
    args = parser.parse_args()
    if args.serve:
        serve(args.rpm, args.latency)
        return
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--rpm", str(args.rpm), "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        api_base = f"http://127.0.0.1:{port}/v1"
        wall, retries = asyncio.run(bench(api_base, args.calls, args.rpm, args.concurrency, not args.unpaced))
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
            stats = json.loads(r.read())
    finally:
        proc.terminate()
        proc.wait(10)
    ideal = args.calls / (args.rpm / 60)
    rejected = stats["rejected"]
    print(
        f"{args.calls:,} calls at rpm {args.rpm:,} ({'unpaced' if args.unpaced else 'paced'}), "
        f"latency {args.latency:g} s, concurrency {args.concurrency}: wall {wall:.2f} s, ideal {ideal:.2f} s, "
        f"ratio {wall / ideal:.3f} (target <= 1.15); 429s {rejected:,} = {rejected / args.calls:.2%} of calls "
        f"(target <= 1%); retries {retries:,}; server answered {stats['ok']:,} (1 warm-up)"
    )


if __name__ == "__main__":
    main()
