"""Provides HostileServer: an OpenAI-compatible server on 127.0.0.1 whose replies a test scripts, raw bytes allowed.

Same pattern as the fault server of tests/test_gateway_http.py, reduced to what error-text tests
need: each request gets `respond(body, headers)`, which returns a status, headers and a body
(JSON-serialisable or raw bytes, so a test can send escape sequences and invalid UTF-8).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, dict[str, str], Any]


class HostileServer:
    """Answers every POST with `respond(request_body, request_headers)`; remembers what it was sent."""

    def __init__(self, respond: Callable[[dict[str, Any], dict[str, str]], Reply]) -> None:
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                server.requests.append(body)
                status, headers, payload = server.respond(body, {k.lower(): v for k, v in self.headers.items()})
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that hung up mid-reply (a fatal 401 stops the run at once): socketserver
                # would print a traceback into the output the tests read.
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.api_base = f"http://127.0.0.1:{self.httpd.server_port}/v1"


@contextmanager
def hostile_server(respond: Callable[[dict[str, Any], dict[str, str]], Reply]) -> Iterator[HostileServer]:
    """A running HostileServer, shut down on exit (bounded: 5 s for its thread)."""
    server = HostileServer(respond)
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(5)


def error_reply(status: int, message: str, **extra: Any) -> Reply:
    """An OpenAI-style error body."""
    return status, {}, {"error": {"message": message, "type": "invalid_request_error", **extra}}
