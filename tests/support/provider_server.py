"""Provides ProviderServer: an OpenAI-compatible chat server on 127.0.0.1 that counts tokens and enforces an rpm limit.

It stands in for a real provider in the cost tests: it answers deliverables of a stable length
(or, to a judge prompt, a valid judgment of the rubric dimensions it reads in the prompt), reports
`usage` counted with the cl100k_base encoding as OpenAI counts chat tokens (4 per message + 3, its
own code, not litellm's counter), and, when `rpm` is set, enforces it with a token bucket of one
second's worth: a request over it gets a 429 with `retry-after` (seconds) and `retry-after-ms`.
`always_429` answers every request with a 429 (a provider that never lets anything through).

For the budget: `report_factor` multiplies the usage it reports (and bills: an over-reporting
provider), and `stall_every` makes every n-th request wait `stall_s` before answering (longer
than the client's timeout: billed, the answer lost). `billed(input, output)` is what it charged in
USD at per-million prices, by its own count.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.sessions import TASKS

DIMENSION = re.compile(r"^- (\S+) \([^\n]*, (?:task-specific|general)\):", re.MULTILINE)
WORDS = "plan budget review client schedule risk summary table option check result detail".split()


def _encoding() -> Any:
    # cl100k_base from the file litellm ships (tiktoken itself would download it); the counting
    # below is the server's own, not litellm's token_counter.
    from centaur_tui.llm.runtime import litellm

    litellm()
    from litellm.rust_bridge.tokenizer import get_encoding

    return get_encoding("cl100k_base")


class ProviderServer:
    """A chat-completions server; `requests` holds every body it received, `rejected` its 429 count."""

    def __init__(
        self,
        rpm: int | None = None,
        words: int = 300,
        latency_s: float = 0.0,
        always_429: bool = False,
        retry_after: str | None = None,
        report_factor: float = 1.0,
        stall_every: int = 0,
        stall_s: float = 0.0,
    ) -> None:
        self.rpm = rpm
        self.words = words
        self.latency_s = latency_s
        self.always_429 = always_429
        self.retry_after = retry_after
        self.report_factor = report_factor
        self.stall_every = stall_every
        self.stall_s = stall_s
        self.stalled = 0
        self.stall_done = threading.Event()  # set each time a stalled request has been answered (too late)
        self.requests: list[dict[str, Any]] = []
        self.answered = 0
        self.rejected = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.tokens_by_model: dict[str, list[int]] = {}
        self._enc = _encoding()
        self._lock = threading.Lock()
        self._level = float(rpm) / 60 if rpm else 0.0
        self._stamp = time.monotonic()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                status, headers, payload = server.handle(body)
                if server.latency_s:
                    time.sleep(server.latency_s)
                stall = (
                    status == 200 and server.stall_every and server.answered_count(payload) % server.stall_every == 0
                )
                if stall:
                    time.sleep(server.stall_s)
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):  # the client gave up on a stalled request
                    self.wfile.write(data)
                if stall:
                    with server._lock:
                        server.stalled += 1
                    server.stall_done.set()

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def _admit(self) -> float | None:
        """None when the request may pass the rpm bucket, else the seconds until it could."""
        if self.always_429:
            return 1.0
        if not self.rpm:
            return None
        rate = self.rpm / 60
        with self._lock:
            now = time.monotonic()
            self._level = min(rate, self._level + (now - self._stamp) * rate)  # one second's worth at most
            self._stamp = now
            if self._level >= 1:
                self._level -= 1
                return None
            return (1 - self._level) / rate

    def count(self, messages: list[dict[str, Any]]) -> int:
        total = 3
        for m in messages:
            content = m.get("content")
            if isinstance(content, list):
                content = "".join(str(b.get("text", "")) for b in content)
            total += 4 + len(self._enc.encode(str(content or ""), disallowed_special=()))
        return total

    def reply(self, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        dims = list(dict.fromkeys(DIMENSION.findall(user)))
        if dims:
            scores = {d: 6 for d in dims}
            return json.dumps(
                {
                    "option_1": {"scores": scores, "average": 6.0},
                    "option_2": {"scores": {d: 5 for d in dims}, "average": 5.0},
                    "winner": "option_1",
                    "rationale": "Option 1 covers the stated requirements more completely than option 2 does.",
                }
            )
        seed = int(hashlib.sha256(f"{body.get('model')}\n{user}".encode()).hexdigest()[:8], 16)
        n = int(self.words * (0.95 + 0.1 * (seed % 100) / 100))  # +/- 5 %
        return " ".join(WORDS[(seed + i) % len(WORDS)] for i in range(n))

    def handle(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
        wait = self._admit()
        if wait is not None:
            with self._lock:
                self.rejected += 1
            headers = (
                {"retry-after": self.retry_after}
                if self.retry_after is not None
                else {
                    "retry-after": str(max(1, round(wait))),
                    "retry-after-ms": str(max(1, round(wait * 1000))),
                }
            )
            return 429, headers, {"error": {"message": "rate limit reached", "type": "rate_limit_error"}}
        text = self.reply(body)
        p_tok = round(self.count(body.get("messages") or []) * self.report_factor)
        c_tok = round(len(self._enc.encode(text, disallowed_special=())) * self.report_factor)
        with self._lock:
            self.answered += 1
            number = self.answered
            self.prompt_tokens += p_tok
            self.completion_tokens += c_tok
            self.tokens_by_model.setdefault(str(body.get("model")), []).append(p_tok)
        return (
            200,
            {},
            {
                "id": f"r{number}",
                "object": "chat.completion",
                "created": 1,
                "model": str(body.get("model")),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": p_tok, "completion_tokens": c_tok, "total_tokens": p_tok + c_tok},
            },
        )

    @staticmethod
    def answered_count(payload: dict[str, Any]) -> int:
        """The number of an answer (its id is "r<n>")."""
        return int(str(payload.get("id", "r0"))[1:] or 0)

    def billed(self, input_per_mtok: float = 1.0, output_per_mtok: float = 2.0) -> float:
        """USD charged for every request answered (stalled ones included), by the server's own count."""
        with self._lock:
            return (self.prompt_tokens * input_per_mtok + self.completion_tokens * output_per_mtok) / 1e6


@contextmanager
def provider_server(**kwargs: Any) -> Iterator[ProviderServer]:
    """A running ProviderServer, shut down on exit."""
    server = ProviderServer(**kwargs)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(5)


PRICE = "input_cost_per_mtok = 1.0\noutput_cost_per_mtok = 2.0"


def http_session(api_base: str, *, limits: str = "", name: str = "cost", price: bool = True, extra: str = "") -> str:
    """Two candidates of two families, a worker and two judges, all `openai/...` at `api_base`: 15 calls."""
    endpoint = f'api_base = "{api_base}"\n' + (PRICE + "\n" if price else "") + extra

    def entry(header: str, name: str, family: str) -> str:
        return f'{header}\nname = "{name}"\nmodel = "openai/{name.lower()}"\nfamily = "{family}"\n{endpoint}\n'

    head = textwrap.dedent(
        f"""
        name = "{name}"
        runs = 1
        tasks = ["counseling"]
        tasks_dir = "{TASKS}"

        [generation]
        max_tokens = 1000

        [judging]
        max_tokens = 400
        structured_output = false

        [limits]
        concurrency = 1
        per_model_concurrency = 1
        backoff_base_s = 0.0
        backoff_max_s = 0.0
        """
    )
    return "\n".join(
        [
            head + limits + "\n",
            entry("[[models]]", "Alpha", "North"),
            entry("[[models]]", "Beta", "South"),
            entry("[worker]", "Worker", "Work"),
            entry("[[judges]]", "JudgeEast", "East"),
            entry("[[judges]]", "JudgeWest", "West"),
        ]
    )


PLANNED = 15
