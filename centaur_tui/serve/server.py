"""Provides ExpertServer: each expert's own app in a browser (textual-serve), behind their personal link.

What textual-serve 1.1.3 gives and what is added here (NOTES.md measured it):

- one app process per browser websocket, speaking textual-serve's protocol (its
  `AppService`, its page and its xterm.js); here each process is
  `centaur tui SESSION --expert=ID --expert-only` for the expert whose link was opened,
  started with an argument list (no shell) and an allow-listed environment
  (`settings.served_environment`): no API key reaches it, and it reaches no LLM call;
- no authentication at all; here a link `/e/TOKEN` is exchanged for an HttpOnly,
  SameSite=Strict cookie, and every other request (page, static file, websocket) without a
  valid cookie answers 403. The expert comes from the token alone: no URL or query
  parameter names one. A revoked link closes its open connections within `watch_interval`;
- the websocket URL of the page is this request's own host (textual-serve writes its
  `public_url`, which breaks the cookie when the browser used another name for the host);
- textual-serve's access log prints every path, so the link's token too: it is off, and
  this module logs requests with the token cut out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
import textual_serve
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.links import COOKIE
from centaur_tui.services.links import LINK_PATH, expert_of_token
from centaur_tui.settings import served_environment

log = logging.getLogger(__name__)

STATIC = Path(textual_serve.__file__).parent / "static"
"""textual-serve's page assets (xterm.js, its CSS, the Roboto Mono font): served as they ship."""
TEMPLATES = Path(__file__).parent / "templates"

TEXTUAL_VARIABLES = (
    "TEXTUAL_DRIVER",
    "TEXTUAL_FPS",
    "TEXTUAL_COLOR_SYSTEM",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "COLUMNS",
    "ROWS",
)
"""What textual-serve sets for its app process (the web driver, the size); the rest of its copy of
the server's environment is dropped."""

COOKIE_DAYS = 14
"""How long the browser keeps the cookie; the link itself lasts until renewed or revoked."""
STOP_SECONDS = 5.0
"""How long an app process may take to save and quit after its socket closed before it is killed."""
MAX_TERMINAL = 1000
"""Largest width or height in cells a browser may ask for."""

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Inline script and style: textual-serve's page has both. No third-party host at all.
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; font-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'; "
        "base-uri 'none'; form-action 'none'"
    ),
}

EXPERT = web.RequestKey("expert", str)
"""The request's expert: the owner of its cookie's link (set by the guard, read by the handlers)."""
TOKEN = web.RequestKey("token", str)

FORBIDDEN_PAGE = "403 Forbidden: open your personal link again, or ask the researcher for a new one.\n"


class ServeError(CentaurError):
    """The server cannot start as asked (the address is taken, a bad public URL)."""

    title = "Cannot serve"


def redact(path: str) -> str:
    """A request path fit for a log: a link's token is cut out."""
    return LINK_PATH + "…" if path.startswith(LINK_PATH) else path[:200]


class ExpertAppService(AppService):
    """textual-serve's app process, started from an argument list with an allow-listed environment.

    Args:
        argv: The app's command line (no shell parses it).
        expert_id: Whose app it is (for logs and the revocation watch).
        **kwargs: AppService's own arguments (websocket writers, download manager).
    """

    def __init__(self, argv: list[str], expert_id: str, **kwargs: Any) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv
        self.expert_id = expert_id
        # Once the browser is gone, writing to its socket raises, which ended textual-serve's
        # reading of the app's output: the app, still saving on its way out, could then block
        # on a full pipe. Output for a closed socket is dropped instead, read until the app exits.
        self.remote_write_bytes = _dropping_when_closed(self.remote_write_bytes)
        self.remote_write_str = _dropping_when_closed(self.remote_write_str)

    def _build_environment(self, width: int = 80, height: int = 24) -> dict[str, str]:
        textual = super()._build_environment(width=width, height=height)  # a copy of os.environ plus its own
        return served_environment({name: textual[name] for name in TEXTUAL_VARIABLES if name in textual})

    async def _open_app_process(self, width: int = 80, height: int = 24) -> asyncio.subprocess.Process:
        self._process = process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._build_environment(width=width, height=height),
        )
        assert process.stdin is not None
        self._stdin = process.stdin
        return process

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def stop(self) -> None:
        """Ask the app to quit and wait until it has (it saves drafts on its way out); kill it after STOP_SECONDS.

        textual-serve's own `stop` returns when the app's output closes, which Textual's web
        driver does before the app has unmounted its screens: waiting only for that, and then
        killing, lost the draft saved on the way out (the browser test saw it).
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_SECONDS
        process = self._process
        try:
            await asyncio.wait_for(super().stop(), STOP_SECONDS)
            if process is not None:
                await asyncio.wait_for(process.wait(), max(0.1, deadline - loop.time()))
        except TimeoutError:
            log.warning("app process of %s did not quit in %.0f s: killed", self.expert_id, STOP_SECONDS)
        except Exception:
            log.exception("stopping the app process of %s failed", self.expert_id)
        finally:
            if process is not None and process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
            if process is not None:
                log.info("app process of %s exited with status %s", self.expert_id, process.returncode)


def _dropping_when_closed(write: Callable[[Any], Awaitable[None]]) -> Callable[[Any], Awaitable[None]]:
    """A websocket writer that drops what is written once the socket has closed (instead of raising)."""

    async def quiet(data: Any) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):
            await write(data)

    return quiet


@dataclass(eq=False)
class Connection:
    """One browser connection: its expert, its token (to watch for revocation) and its app process."""

    expert_id: str
    token: str
    service: ExpertAppService


class ExpertServer:
    """Serves each expert's own app to browsers, behind their personal link.

    Args:
        session_file: The session file the app processes open.
        store: The session database, read-only: links are checked in it on every request.
        public_url: The address experts open when it is not this server's own (a reverse
            proxy: `https://judge.example.org`); https makes the cookie `Secure`.
        watch_interval: Seconds between checks that each open connection's link still stands.
        max_apps: App processes at most at once (about 35-45 MB each); more connections get 503.
        app_command: The app's command line before the session file (tests and the benchmark
            may point it elsewhere); by default this Python running `centaur_tui`.
    """

    def __init__(
        self,
        session_file: Path,
        store: Any,
        *,
        public_url: str | None = None,
        watch_interval: float = 2.0,
        max_apps: int = 64,
        app_command: list[str] | None = None,
    ) -> None:
        self.session_file = session_file.resolve()
        self.store = store
        self.public_url = public_url.rstrip("/") if public_url else None
        if self.public_url is not None:
            parts = urlsplit(self.public_url)
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
                raise ServeError(
                    f"--public-url {public_url!r}: give scheme and host only, as https://judge.example.org"
                )
        self.secure = bool(self.public_url and self.public_url.startswith("https://"))
        self.watch_interval = watch_interval
        self.max_apps = max_apps
        self.app_command = app_command or [sys.executable, "-m", "centaur_tui"]
        self.connections: set[Connection] = set()
        self.download_manager = DownloadManager()
        self.refused = 0
        """Requests answered 403 so far."""

    # -- the application -------------------------------------------------------------------

    def application(self) -> web.Application:
        """The aiohttp application: the link exchange, the page, its assets and the websocket, all guarded."""
        app = web.Application(middlewares=[self._guard], client_max_size=64 * 1024)
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
        app.add_routes(
            [
                web.get(LINK_PATH + "{token}", self._link),
                web.get("/", self._index),
                web.get("/ws", self._websocket),
                web.static("/static", STATIC, show_index=False, follow_symlinks=False),
            ]
        )
        app.on_shutdown.append(self._close_all)
        return app

    def app_argv(self, expert_id: str) -> list[str]:
        """The command line of one expert's app: their id is the server's, from the token, never the browser's."""
        return [*self.app_command, "tui", str(self.session_file), f"--expert={expert_id}", "--expert-only"]

    async def expert_of(self, token: object) -> str | None:
        """The expert of an active link holding this token (read in a thread: the database may be busy)."""
        if not isinstance(token, str) or not token:
            return None
        return await asyncio.to_thread(expert_of_token, self.store, token)

    def _forbidden(self) -> web.Response:
        self.refused += 1
        return web.Response(status=403, text=FORBIDDEN_PAGE, headers=SECURITY_HEADERS)

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every request but the link exchange needs the cookie of an active link; the expert is the link's."""
        if request.path.startswith(LINK_PATH):
            try:
                response = await handler(request)
            except web.HTTPException:  # /e/ with no token, /e/a/b: no route, and no hint either
                log.info("%s %s: 403 (not a link)", request.method, redact(request.path))
                return self._forbidden()
        else:
            token = request.cookies.get(COOKIE)
            expert_id = await self.expert_of(token)
            if expert_id is None:
                log.info("%s %s: 403 (no valid link cookie)", request.method, redact(request.path))
                return self._forbidden()
            request[EXPERT] = expert_id
            request[TOKEN] = str(token)
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                response = web.Response(status=exc.status, text=exc.text or exc.reason, headers=SECURITY_HEADERS)
        if not isinstance(response, web.WebSocketResponse) and not response.prepared:
            for name, value in SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
        return response

    async def _link(self, request: web.Request) -> web.StreamResponse:
        """A personal link: its token becomes the cookie; the browser goes on to `/`, the token out of sight."""
        token = request.match_info.get("token", "")
        expert_id = await self.expert_of(token)
        if expert_id is None:
            log.info("GET %s: 403 (unknown or revoked link)", redact(request.path))
            return self._forbidden()
        log.info("GET %s: link of %s exchanged for a cookie", redact(request.path), expert_id)
        # A page that moves on, not a redirect: after a click in a mail (a cross-site navigation)
        # Chromium sends no SameSite=Strict cookie along a redirect, and `/` would answer 403.
        response = web.Response(
            text='<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Opening your queue</title>'
            '<meta http-equiv="refresh" content="0; url=/"></head><body><p>Opening your queue… '
            '<a href="/">continue</a></p></body></html>',
            content_type="text/html",
            headers=SECURITY_HEADERS,
        )
        response.set_cookie(
            COOKIE,
            token,
            max_age=COOKIE_DAYS * 86400,
            path="/",
            httponly=True,
            secure=self.secure,
            samesite="Strict",
        )
        return response

    def _base(self, request: web.Request) -> tuple[str, str]:
        """(http(s) base, ws(s) base) of this request: the public URL when set, else the request's own host."""
        base = self.public_url or f"{request.scheme}://{request.host}"
        return base, ("wss" if base.startswith("https") else "ws") + base[base.index(":") :]

    async def _index(self, request: web.Request) -> web.StreamResponse:
        base, ws = self._base(request)
        context = {
            "font_size": 16,
            "app_websocket_url": f"{ws}/ws",
            "config": {"static": {"url": f"{base}/static/"}},
            "application": {"name": "centaur-tui: judging"},
        }
        return aiohttp_jinja2.render_template("app_index.html", request, context)

    def _same_origin(self, request: web.Request) -> bool:
        """A browser's websocket carries Origin: it must be this site (another site's page cannot drive the app)."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True  # not a browser (the benchmark's clients); the cookie is still required
        base, _ws = self._base(request)
        return origin.rstrip("/") == base

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        """The app process of the cookie's expert, driven through textual-serve's protocol."""
        expert_id, token = request[EXPERT], request[TOKEN]
        if not self._same_origin(request):
            log.info("websocket of %s from another origin: 403", expert_id)
            return self._forbidden()
        if len(self.connections) >= self.max_apps:
            log.warning("websocket of %s refused: %d app processes running", expert_id, len(self.connections))
            return web.Response(status=503, text="Too many open connections; try again in a minute.\n")
        width = _cells(request.query.get("width"), 80)
        height = _cells(request.query.get("height"), 24)
        websocket = web.WebSocketResponse(heartbeat=15, max_msg_size=1024 * 1024)
        await websocket.prepare(request)
        service = ExpertAppService(
            self.app_argv(expert_id),
            expert_id,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
        )
        connection = Connection(expert_id, token, service)
        self.connections.add(connection)
        watch = asyncio.create_task(self._watch(connection, websocket))
        log.info("app process for %s starting (%dx%d)", expert_id, width, height)
        try:
            await service.start(width, height)
            await self._relay(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception:
            log.exception("connection of %s failed", expert_id)
        finally:
            watch.cancel()
            try:
                await service.stop()  # the app saves and exits; counted until then (max_apps)
            finally:
                self.connections.discard(connection)
            log.info("app process for %s ended", expert_id)
        return websocket

    async def _relay(self, websocket: web.WebSocketResponse, service: ExpertAppService) -> None:
        """Browser to app: keys (stdin), size, focus; malformed messages are dropped, never fatal."""
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
            except ValueError:
                continue
            if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
                continue
            kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
            if kind == "stdin" and isinstance(data, str):
                await service.send_bytes(data.encode("utf-8", "replace"))
            elif kind == "resize" and isinstance(data, dict):
                await service.set_terminal_size(_cells(data.get("width"), 80), _cells(data.get("height"), 24))
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await service.blur()
            elif kind == "focus":
                await service.focus()

    async def _watch(self, connection: Connection, websocket: web.WebSocketResponse) -> None:
        """Close the connection once its link is revoked or renewed (checked every `watch_interval` s)."""
        while not websocket.closed:
            await asyncio.sleep(self.watch_interval)
            if await self.expert_of(connection.token) != connection.expert_id:
                log.info("link of %s ended: closing its connection", connection.expert_id)
                await websocket.close(code=4403, message=b"link revoked")
                return

    async def _close_all(self, _app: web.Application) -> None:
        for connection in list(self.connections):
            await connection.service.stop()

    # -- running -------------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> tuple[web.AppRunner, str]:
        """Bind and serve; returns the runner (for `cleanup()`) and the base URL bound (port 0: the one chosen).

        Raises:
            ServeError: the address cannot be bound.
        """
        runner = web.AppRunner(self.application(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        return runner, f"http://{shown}:{bound_port}"


def _cells(value: object, default: int) -> int:
    """A terminal width or height from the browser: an integer in 1..MAX_TERMINAL, else the default."""
    try:
        number = int(str(value))
    except ValueError:
        return default
    return number if 1 <= number <= MAX_TERMINAL else default


def run_server(server: ExpertServer, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve until SIGINT or SIGTERM; `ready(base_url)` is called once listening (the CLI prints the links then)."""

    async def main() -> None:
        runner, base = await server.start(host, port)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            ready(base)
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
