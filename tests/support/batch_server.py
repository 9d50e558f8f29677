"""Provides BatchServer: a fake of OpenAI's Files, Batches and chat-completions endpoints on 127.0.0.1, port 0.

litellm's batch SDK talks to it as to OpenAI (`openai/<model>` with `api_base`): files are
uploaded (POST /v1/files, multipart), batches created (POST /v1/batches), listed (GET
/v1/batches), checked (GET /v1/batches/{id}), cancelled (POST /v1/batches/{id}/cancel) and
their output read (GET /v1/files/{id}/content). A batch moves one status per check
(validating, in_progress, then `final`), and its output holds one chat-completion result per
input line, answered by `answer(body)`. Online chat completions (POST /v1/chat/completions)
are answered the same way, so generation can run online against the same server.

Every request is recorded in `log` (method, path, batch or file id), every input line's
custom_id in `sent` (per batch), so a test can check that nothing was sent twice. Hooks make
it hostile: `final` (a batch's end status), `output(batch, lines)` (the output file's bytes
from the result lines), `hold` (batches stay in_progress until released), `lose_files` (an
ended batch's output and error files are gone: 404), `forget_batches` (the provider no longer
knows a batch: 404 on retrieve), `garbage` (request kinds, "retrieve" or "content", answered 200
with bytes that are no JSON and no JSONL).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Lines of the rendered rubric (domain/prompts.py render_rubric): "- <id> (<name>, <kind>): ...".
DIMENSION = re.compile(r"^- (\S+) \([^\n]*, (?:task-specific|general)\):", re.MULTILINE)


def answer_text(body: dict[str, Any]) -> str:
    """A deliverable, or a valid judgment (option 1 wins) when the first user message holds a rubric."""
    messages = body.get("messages") or []
    prompt = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
    dims = DIMENSION.findall(prompt)
    if not dims:
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


def completion(
    body: dict[str, Any], text: str, prompt_tokens: int = 1200, completion_tokens: int = 150
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": str(body.get("model")),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": 1350},
    }


def result_line(custom_id: str, body: dict[str, Any], text: str) -> dict[str, Any]:
    """One line of a batch output file: the chat completion of one request."""
    return {
        "id": f"batch_req_{custom_id[:8]}",
        "custom_id": custom_id,
        "response": {"status_code": 200, "request_id": "req", "body": completion(body, text)},
        "error": None,
    }


GARBAGE = b"\x00\xff<html>502 Bad Gateway</html>\x1b[2J not json"
"""What a `garbage` request kind is answered with."""


class BatchServer:
    """The fake; `with BatchServer() as server:` runs it in a thread on a free port of 127.0.0.1."""

    def __init__(self, answer: Callable[[dict[str, Any]], str] = answer_text, steps: int = 1) -> None:
        self.answer = answer
        self.steps = steps
        """Checks a batch stays in_progress before it ends."""
        self.final: Callable[[dict[str, Any]], str] = lambda batch: "completed"
        self.output: Callable[[dict[str, Any], list[dict[str, Any]]], bytes] = lambda batch, lines: b"".join(
            json.dumps(line).encode() + b"\n" for line in lines
        )
        self.errors: dict[str, Any] | None = None
        self.hold = threading.Event()  # set: batches stay in_progress
        self.create_delay_s = 0.0  # the answer to a create waits this long (the batch exists already)
        self.created = threading.Event()  # set when a batch has been created
        self.refuse: dict[str, int] = {}  # request kind (upload, create, retrieve) -> HTTP status to answer instead
        self.drop_creates = 0  # this many creates are carried out, then the connection closes without an answer
        self.lose_files = False  # an ended batch's output and error files are deleted (404 on their content)
        self.forget_batches = False  # retrieving a batch answers 404 (expired from the provider's records)
        self.garbage: set[str] = set()  # request kinds ("retrieve", "content") answered 200 with garbage bytes
        self.log: list[tuple[str, str]] = []
        self.sent: dict[str, list[str]] = {}  # batch id -> custom_ids of its input file
        self.files: dict[str, bytes] = {}
        self.outputs: set[str] = set()  # ids of the output files written
        self.batches: dict[str, dict[str, Any]] = {}
        self.online: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- the API --------------------------------------------------------------------------------

    def _file(self, content: bytes, purpose: str, name: str) -> dict[str, Any]:
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = content
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": purpose,
            "status": "processed",
        }

    def _advance(self, batch: dict[str, Any]) -> None:
        if batch["status"] in ("completed", "failed", "expired", "cancelled"):
            return
        if self.hold.is_set():
            batch["status"] = "in_progress"
            return
        batch["_checks"] += 1
        if batch["_checks"] <= self.steps:
            batch["status"] = "in_progress"
            return
        self._finish(batch, self.final(batch))

    def _finish(self, batch: dict[str, Any], status: str) -> None:
        lines = []
        if status in ("completed", "expired", "cancelled"):
            for raw in self.files[batch["input_file_id"]].splitlines():
                request = json.loads(raw)
                lines.append(result_line(request["custom_id"], request["body"], self.answer(request["body"])))
            if status != "completed":
                lines = lines[: len(lines) // 2]  # an expired or cancelled batch answered part of it
            output = self.output(batch, lines)
            batch["output_file_id"] = self._file(output, "batch_output", "output.jsonl")["id"]
            self.outputs.add(batch["output_file_id"])
            batch["request_counts"] = {"total": batch["_total"], "completed": len(lines), "failed": 0}
        if status == "failed":
            batch["errors"] = self.errors or {
                "object": "list",
                "data": [{"code": "invalid_request", "message": "the input file could not be read", "line": 1}],
            }
        batch["status"] = status

    def public(self, batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_")}

    def handle(self, method: str, path: str, query_text: str, headers: Any, body: bytes) -> tuple[int, bytes, str]:
        reply = self._handle(method, path, query_text, headers, body)
        if method == "POST" and path == "/v1/batches" and self.create_delay_s:
            time.sleep(self.create_delay_s)  # outside the lock: the batch exists, its creator waits
        if method == "POST" and path == "/v1/batches" and reply[0] == 200:
            with self._lock:
                if self.drop_creates > 0:
                    self.drop_creates -= 1
                    return 0, b"", ""  # the batch exists; its answer is lost
        return reply

    def _handle(self, method: str, path: str, query_text: str, headers: Any, body: bytes) -> tuple[int, bytes, str]:
        query = dict(p.split("=", 1) for p in query_text.split("&") if "=" in p)
        kind = {("POST", "/v1/files"): "upload", ("POST", "/v1/batches"): "create"}.get((method, path))
        if kind is None and method == "GET" and path.startswith("/v1/batches/"):
            kind = "retrieve"
        if kind in self.refuse:
            with self._lock:
                self.log.append((f"refused {kind}", str(self.refuse[kind])))
            status = self.refuse[kind]
            return (
                status,
                json.dumps({"error": {"message": f"refused with {status}", "type": "invalid_request_error"}}).encode(),
                "application/json",
            )
        with self._lock:
            if method == "POST" and path == "/v1/files":
                msg = BytesParser(policy=HTTP).parsebytes(
                    b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body
                )
                parts = {p.get_param("name", header="content-disposition"): p for p in msg.iter_parts()}
                content = parts["file"].get_payload(decode=True) or b""
                purpose = parts["purpose"].get_content() if "purpose" in parts else "batch"
                obj = self._file(content, str(purpose).strip(), parts["file"].get_filename() or "input.jsonl")
                self.log.append(("upload", obj["id"]))
                return 200, json.dumps(obj).encode(), "application/json"
            m = re.fullmatch(r"/v1/files/([^/]+)/content", path)
            if method == "GET" and m:
                self.log.append(("content", m.group(1)))
                if "content" in self.garbage:
                    return 200, GARBAGE, "application/json"
                if self.lose_files and m.group(1) in self.outputs:
                    return (
                        404,
                        b'{"error": {"message": "No such File object", "type": "invalid_request_error"}}',
                        ("application/json"),
                    )
                if m.group(1) not in self.files:
                    return 404, b'{"error": {"message": "no such file"}}', "application/json"
                return 200, self.files[m.group(1)], "application/octet-stream"
            if method == "POST" and path == "/v1/batches":
                request = json.loads(body)
                batch_id = f"batch_{next(self._ids)}"
                lines = self.files[request["input_file_id"]].splitlines()
                self.sent[batch_id] = [json.loads(raw)["custom_id"] for raw in lines]
                batch = {
                    "id": batch_id,
                    "object": "batch",
                    "endpoint": request["endpoint"],
                    "input_file_id": request["input_file_id"],
                    "completion_window": request["completion_window"],
                    "status": "validating",
                    "created_at": int(time.time()),
                    "metadata": request.get("metadata"),
                    "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                    "_checks": 0,
                    "_total": len(lines),
                    "_model": json.loads(lines[0])["body"]["model"] if lines else None,
                }
                self.batches[batch_id] = batch
                self.log.append(("create", batch_id))
                self.created.set()
                return 200, json.dumps(self.public(batch)).encode(), "application/json"
            if method == "GET" and path == "/v1/batches":
                self.log.append(("list", ""))
                data = [self.public(b) for b in reversed(self.batches.values())]
                if "after" in query:
                    ids = [b["id"] for b in data]
                    data = data[ids.index(query["after"]) + 1 :] if query["after"] in ids else []
                limit = int(query.get("limit", 20))
                page = {"object": "list", "data": data[:limit], "has_more": len(data) > limit}
                page["first_id"] = data[0]["id"] if data else None
                page["last_id"] = data[:limit][-1]["id"] if data else None
                return 200, json.dumps(page).encode(), "application/json"
            m = re.fullmatch(r"/v1/batches/([^/]+)(/cancel)?", path)
            if m and m.group(1) in self.batches and not m.group(2) and self.forget_batches:
                self.log.append(("retrieve", m.group(1)))
                return (
                    404,
                    b'{"error": {"message": "No batch found", "type": "invalid_request_error"}}',
                    ("application/json"),
                )
            if m and m.group(1) in self.batches and not m.group(2) and "retrieve" in self.garbage:
                self.log.append(("retrieve", m.group(1)))
                self._advance(self.batches[m.group(1)])
                return 200, GARBAGE, "application/json"
            if m and m.group(1) in self.batches:
                batch = self.batches[m.group(1)]
                if m.group(2):
                    self.log.append(("cancel", batch["id"]))
                    self._finish(batch, "cancelled")
                else:
                    self.log.append(("retrieve", batch["id"]))
                    self._advance(batch)
                return 200, json.dumps(self.public(batch)).encode(), "application/json"
            if method == "POST" and path == "/v1/chat/completions":
                request = json.loads(body)
                self.online.append(request)
                self.log.append(("chat", str(request.get("model"))))
                return 200, json.dumps(completion(request, self.answer(request))).encode(), "application/json"
        return 404, b'{"error": {"message": "not found"}}', "application/json"

    # -- running --------------------------------------------------------------------------------

    def count(self, kind: str) -> int:
        with self._lock:
            return sum(1 for k, _ in self.log if k == kind)

    def all_sent(self) -> list[str]:
        """Every custom_id of every batch created, in order (a content address twice means sent twice)."""
        with self._lock:
            return [cid for ids in self.sent.values() for cid in ids]

    @property
    def api_base(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> BatchServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # keep the test output clean
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path, _, query = self.path.partition("?")
                status, data, ctype = server.handle(self.command, path, query, self.headers, body)
                if status == 0:  # a lost answer: the connection closes without a byte
                    self.close_connection = True
                    return
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

            do_GET = do_POST = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._httpd is not None
        self._httpd.shutdown()
        self._httpd.server_close()


@contextlib.contextmanager
def batch_server(**kwargs: Any) -> Iterator[BatchServer]:
    with BatchServer(**kwargs) as server:
        yield server
