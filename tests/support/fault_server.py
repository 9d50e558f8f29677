"""Provides ChaosServer: an OpenAI-compatible server on 127.0.0.1 that answers every fifth request with a fault.

The faults come in a fixed rotation, so a run of about 50 requests meets each kind: HTTP
errors (429 with Retry-After, 500, 503), broken transports (connection reset, a body cut
short), bodies that are not completions (invalid JSON, no choices, null content), replies cut
at max_tokens, judge replies that are no judgment, and a reply slower than the client's timeout.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = (
    "rate_limit",
    "server_error",
    "unavailable",
    "reset",
    "truncated",
    "bad_json",
    "no_choices",
    "null_content",
    "cut",
    "invalid_judgment",
    "slow",
)
"""Every fault kind, in rotation order."""
ANSWERS = frozenset({"cut", "invalid_judgment"})
"""Faults that are answers to the gateway (stored as calls): a judge re-asks them, a writer keeps them."""
JUDGE_ONLY = frozenset({"invalid_judgment"})


def completion_body(content: Any, finish: str = "stop", *, choices: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "r",
        "object": "chat.completion",
        "created": 1,
        "model": "served",
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}]
        if choices
        else [],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
    return body


class ChaosServer:
    """Answers `answer(body)` (a reply text), except every `every`-th request, which gets the next fault.

    Attributes:
        faults: (model, fault) of each faulty reply, in order.
        requests: How many requests arrived.
        slow_s: How long a `slow` reply waits (more than the client's timeout).
    """

    def __init__(
        self,
        answer: Callable[[dict[str, Any]], str],
        is_judge: Callable[[dict[str, Any]], bool],
        every: int = 5,
        slow_s: float = 1.0,
    ) -> None:
        self.answer = answer
        self.is_judge = is_judge
        self.every = every
        self.slow_s = slow_s
        self.enabled = True
        self.faults: list[tuple[str, str]] = []
        self.requests = 0
        self._rotation: deque[str] = deque(FAULTS)
        self._lock = threading.Lock()
        chaos = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def finish(self) -> None:
                with contextlib.suppress(OSError, ValueError):  # the socket was reset or closed on purpose
                    super().finish()

            def _send(
                self, status: int, data: bytes, headers: dict[str, str] | None = None, length: int | None = None
            ) -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data) if length is None else length))
                self.end_headers()
                self.wfile.write(data)

            def _reset(self) -> None:
                # SO_LINGER 0: close() sends a TCP RST instead of a FIN.
                self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.request.close()

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                fault = chaos._next_fault(body)
                text = chaos.answer(body)
                ok = json.dumps(completion_body(text)).encode()
                if fault is None:
                    self._send(200, ok)
                elif fault in ("rate_limit", "server_error", "unavailable"):
                    status = {"rate_limit": 429, "server_error": 500, "unavailable": 503}[fault]
                    error = json.dumps({"error": {"message": f"status {status}", "type": "server_error"}}).encode()
                    self._send(status, error, {"retry-after": "1"} if status == 429 else None)
                elif fault == "reset":
                    self._reset()
                elif fault == "truncated":
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(ok)))
                    self.end_headers()
                    self.wfile.write(ok[: len(ok) // 2])
                    self.wfile.flush()
                    self._reset()
                elif fault == "bad_json":
                    self._send(200, b'{"id": "r", "choices": [{"message": ')
                elif fault == "no_choices":
                    self._send(200, json.dumps(completion_body(None, choices=False)).encode())
                elif fault == "null_content":
                    self._send(200, json.dumps(completion_body(None, "content_filter")).encode())
                elif fault == "cut":
                    self._send(200, json.dumps(completion_body(text[: len(text) // 2], "length")).encode())
                elif fault == "invalid_judgment":
                    self._send(200, json.dumps(completion_body('{"winner": "option_3"}')).encode())
                elif fault == "slow":
                    time.sleep(chaos.slow_s)
                    self._send(200, ok)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up on a slow reply

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_port}/v1"

    def _next_fault(self, body: dict[str, Any]) -> str | None:
        with self._lock:
            self.requests += 1
            if not self.enabled or self.requests % self.every:
                return None
            judge = self.is_judge(body)
            # The first kind in rotation that applies to this request; a judge-only kind waits for a judge.
            for i, kind in enumerate(self._rotation):
                if judge or kind not in JUDGE_ONLY:
                    del self._rotation[i]
                    self._rotation.append(kind)
                    self.faults.append((str(body.get("model")), kind))
                    return kind
            return None

    def counts(self) -> Counter[str]:
        return Counter(kind for _, kind in self.faults)

    @contextmanager
    def running(self) -> Iterator[ChaosServer]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.httpd.shutdown()
            self.httpd.server_close()
            thread.join(5)
