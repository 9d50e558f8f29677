"""Provides ExpertServer: the expert's seat as HTML pages (home, judging, writing, guidelines) behind personal links.

Every page is plain HTML from Jinja2 templates with the package's own CSS and JavaScript (no
CDN, no web font, no request to any other host); every use case goes through
`centaur_tui.services` (the judging and work queues, drafts, submit, revise, the expert's desk),
exactly as the terminal seat calls them, so blinding (masked texts, opaque places, practice
marked and gold never) is the terminal seat's. The database is reached in worker threads.

The guard, on every request:

- a link `/e/TOKEN` is exchanged for an HttpOnly, SameSite=Strict cookie (a page that moves on,
  not a redirect: Chromium drops a Strict cookie along a redirect begun on another site);
- every other path needs the cookie of an active link; the expert is the link's, never the
  URL's. A revoked or renewed link is refused on its next request, so an open page ends on its
  next save or on its heartbeat;
- failed link or cookie checks are counted per address (`FailureLimiter`): past the limit, 429,
  except for a cookie that already passed a check on this server (`KnownTokens`), so a guesser
  sharing an address with experts (a reverse proxy without `trust_proxy`) cannot lock them out;
  with `trust_proxy` the address is the last hop of X-Forwarded-For (the one the proxy added);
- a POST needs this site's Origin and the page's CSRF token (an HMAC of the link token);
- connections are limited per address and requests per expert (`ConnectionLimits`); idle and
  half-open connections are closed after `keepalive_timeout` seconds;
- no token reaches a log: the link path is logged as `/e/…`, aiohttp's loggers are redacted.

A place of a queue reaches the page as a keyed hash of its key (a "handle"): numbers and gold
check tokens look alike, so nothing on the page tells a gold check from a comparison.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
import jinja2
from aiohttp import web
from markupsafe import Markup

from centaur_tui.domain.blinding import Draft, QueueItem, next_open
from centaur_tui.domain.drafts import MAX_TEXT, DraftFieldError, parse_draft, seconds_field
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.links import COOKIE
from centaur_tui.serve.drafts import VersionClock, base_version
from centaur_tui.serve.guard import (
    ConnectionLimits,
    FailureLimiter,
    KnownTokens,
    client_address,
    csrf_token,
    quiet_aiohttp,
    same_csrf,
)
from centaur_tui.serve.markup import markdown_html
from centaur_tui.services.links import LINK_PATH, ORGANISER_PATH, expert_of_token, is_organiser_token

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

COOKIE_DAYS = 14
"""How long the browser keeps the cookie; the link itself lasts until renewed or revoked."""
MAX_BODY = 256 * 1024
"""Largest request body: a 10,000-word deliverable is about 70 KB."""
MAX_GUESS_BODY = 20_000
"""Longest guess the seat accepts (then cleaned and cut to `domain.guessing.MAX_GUESS_CHARS`); longer: 400."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
"""No inline script or style at all, and no other host: the page's scripts are files of this package."""

SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), interest-cohort=()",
    "Content-Security-Policy": CSP,
}

EXPERT = web.RequestKey("expert", str)
"""The request's expert: the owner of its cookie's link (set by the guard, read by the handlers)."""
TOKEN = web.RequestKey("token", str)

FORBIDDEN_PAGE = "403 Forbidden: open your personal link again, or ask the researcher for a new one.\n"
TOO_MANY = "429 Too many attempts from this address; wait a minute.\n"


class ServeError(CentaurError):
    """The server cannot start as asked (the address is taken, a bad public URL)."""

    title = "Cannot serve"


class BadInput(Exception):
    """A request whose body does not hold what the page sends (answered 400 with the reason)."""


def redact(path: str) -> str:
    """A request path fit for a log: a link's token (an expert's or the organiser's) is cut out."""
    for prefix in (LINK_PATH, ORGANISER_PATH):
        if path.startswith(prefix):
            return prefix + "…"
    return path[:200]


ORGANISER_COOKIE = "centaur_organiser"
"""The cookie the organiser's link is exchanged for: another name than the experts' (`COOKIE`), so the two
never stand in for each other."""
CONSOLE_PATH = "/console"
"""The organiser's console page (behind `ORGANISER_COOKIE` only)."""


@dataclass
class Limits:
    """The server's limits (tests make them small)."""

    keepalive_timeout: float = 15.0
    """Seconds an idle (or half-open) connection is kept before it is closed."""
    per_address: int = 128
    """Open connections per client address. Behind a reverse proxy every expert shares its address: a
    browser holds about 6 connections to a site, so 128 fits about 20 experts' open tabs there. Not
    applied with `trust_proxy` (every connection then comes from the proxy: limit there)."""
    per_expert: int = 8
    """Requests of one expert in progress at once."""
    failures: int = 20
    """Failed link or cookie checks per address per `failure_window` before 429."""
    failure_window: float = 60.0
    heartbeat: float = 20.0
    """Seconds between an open page's checks that its link still stands."""


class ExpertServer:
    """Serves each expert's seat as HTML pages, behind their personal link.

    Args:
        study: The session.
        store: The session database (read-write: drafts and judgments are stored through it).
        public_url: The address experts open when it is not this server's own (a reverse
            proxy: `https://judge.example.org`); https makes the cookie `Secure`.
        limits: Connection, rate and time limits.
        clock: Monotonic seconds for the rate limit (tests pass their own).
        trust_proxy: A reverse proxy on this machine is the only client: a request's address
            is the last entry of its X-Forwarded-For (the proxy's own addition; earlier
            entries are the client's to forge), for the failure limit; the per-address
            connection limit is off (the proxy's connections are everyone's).
    """

    def __init__(
        self,
        study: Any,
        store: Any,
        *,
        public_url: str | None = None,
        limits: Limits | None = None,
        clock: Callable[[], float] | None = None,
        trust_proxy: bool = False,
    ) -> None:
        self.study = study
        self.trust_proxy = trust_proxy
        self.store = store
        self.public_url = public_url.rstrip("/") if public_url else None
        if self.public_url is not None:
            parts = urlsplit(self.public_url)
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query:
                raise ServeError(
                    f"--public-url {public_url!r}: give scheme and host only, as https://judge.example.org"
                )
        self.secure = bool(self.public_url and self.public_url.startswith("https://"))
        self.limits = limits or Limits()
        self.failures = (
            FailureLimiter(self.limits.failures, self.limits.failure_window, clock)
            if clock
            else FailureLimiter(self.limits.failures, self.limits.failure_window)
        )
        self.connections = ConnectionLimits(None if trust_proxy else self.limits.per_address, self.limits.per_expert)
        self.known = KnownTokens()
        """Tokens that passed a check here: their cookie is not held up by an address's failures."""
        self.versions = VersionClock()
        self._place_key: bytes | None = None
        self._judging: dict[str, Any] = {}
        self._rubrics: dict[tuple[str, str], list[str]] = {}
        """The rubric dimensions of each place served, so a save need not read (and mask) the texts again."""
        self._work: dict[str, Any] = {}
        self._live: dict[str, Any] = {}
        """Each expert worker's live assistant (services.live_assistant): the calls are made here, not by the expert."""
        self.refused = 0
        """Requests answered 403 so far."""

    # -- the application -------------------------------------------------------------------

    def application(self) -> web.Application:
        """The aiohttp application: the link exchange, the pages, their API and assets, all guarded."""
        app = web.Application(middlewares=[self._guard], client_max_size=MAX_BODY)
        aiohttp_jinja2.setup(
            app,
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        app.add_routes(
            [
                web.get(LINK_PATH + "{token}", self._link),
                web.get(ORGANISER_PATH + "{token}", self._organiser_link),
                web.get(CONSOLE_PATH, self._console),
                web.get("/", self._home),
                web.get("/guidelines", self._guidelines),
                web.get("/judge", self._judge_page),
                web.get("/judge/revise", self._revise_page),
                web.get("/write", self._write_page),
                web.get("/api/alive", self._alive),
                web.post("/api/judging/save", self._judging_save),
                web.post("/api/judging/submit", self._judging_submit),
                web.post("/api/judging/state", self._judging_state),
                web.post("/api/judging/guess", self._judging_guess),
                web.post("/api/writing/save", self._writing_save),
                web.post("/api/writing/submit", self._writing_submit),
                web.post("/api/writing/ask", self._writing_ask),
                web.static("/static", STATIC, show_index=False, follow_symlinks=False),
            ]
        )
        return app

    async def expert_of(self, token: object) -> str | None:
        """The expert of an active link holding this token (read in a thread: the database may be busy)."""
        if not isinstance(token, str) or not token:
            return None
        return await asyncio.to_thread(expert_of_token, self.store, token)

    def _forbidden(self, request: web.Request) -> web.Response:
        self.refused += 1
        if request.path.startswith("/api/"):
            return _json({"error": "Your link has ended or is not valid.", "ended": True}, status=403)
        return web.Response(status=403, text=FORBIDDEN_PAGE, headers=SECURITY_HEADERS)

    def _origin_ok(self, request: web.Request) -> bool:
        """A POST must come from this site's pages (the Origin a browser sends with every POST)."""
        origin = request.headers.get("Origin")
        if origin is None:
            return False
        allowed = {self.public_url} if self.public_url else {f"{request.scheme}://{request.host}"}
        return origin.rstrip("/") in allowed

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Every request but the link exchange needs the cookie of an active link; the expert is the link's."""
        address = client_address(request.remote, request.headers.getall("X-Forwarded-For", []), self.trust_proxy)
        if self.failures.blocked(address) and not self.known.has(request.cookies.get(COOKIE)):
            log.info("%s %s: 429 (too many failed checks from one address)", request.method, redact(request.path))
            return web.Response(status=429, text=TOO_MANY, headers={**SECURITY_HEADERS, "Retry-After": "60"})
        if request.path.startswith(LINK_PATH):
            try:
                response = await handler(request)
            except web.HTTPException:  # /e/ with no token, /e/a/b: no route, and no hint either
                log.info("%s %s: 403 (not a link)", request.method, redact(request.path))
                self.failures.fail(address)
                return self._forbidden(request)
            return _secured(response)
        if request.path.startswith(ORGANISER_PATH) or request.path == CONSOLE_PATH:
            return await self._organiser_guard(request, handler, address)
        token = request.cookies.get(COOKIE)
        expert_id = await self.expert_of(token)
        if expert_id is None:
            log.info("%s %s: 403 (no valid link cookie)", request.method, redact(request.path))
            if token:
                self.failures.fail(address)
            return self._forbidden(request)
        assert isinstance(token, str)
        self.known.add(token)
        if request.method == "POST":
            if not self._origin_ok(request):
                log.info("POST %s of %s: 403 (origin %r)", request.path, expert_id, request.headers.get("Origin"))
                self.refused += 1
                return _json({"error": "This request did not come from the seat's own page."}, status=403)
            if not same_csrf(token, request.headers.get("X-CSRF-Token")):
                log.info("POST %s of %s: 403 (CSRF token)", request.path, expert_id)
                self.refused += 1
                return _json({"error": "The page is out of date: reload it."}, status=403)
        if not self.connections.enter(expert_id):
            log.warning("%s %s of %s: 429 (too many requests at once)", request.method, request.path, expert_id)
            return web.Response(status=429, text="Too many requests at once; try again.\n", headers=SECURITY_HEADERS)
        request[EXPERT] = expert_id
        request[TOKEN] = token
        try:
            response = await handler(request)
        except web.HTTPException as exc:
            if exc.status >= 400:
                response = web.Response(status=exc.status, text=exc.text or exc.reason)
            else:
                raise
        except BadInput as exc:
            response = _json({"error": str(exc)}, status=400)
        except CentaurError as exc:
            response = _json({"error": str(exc), "title": exc.title}, status=409)
        finally:
            self.connections.leave(expert_id)
        return _secured(response)

    async def _organiser_guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]], address: str
    ) -> web.StreamResponse:
        """The organiser's link exchange and console page: the organiser's cookie or link only, GET only."""
        if request.method != "GET":
            self.refused += 1
            return web.Response(status=405, text="405 Method Not Allowed\n", headers=SECURITY_HEADERS)
        if request.path == CONSOLE_PATH:
            token = request.cookies.get(ORGANISER_COOKIE)
            if not await asyncio.to_thread(is_organiser_token, self.store, token):
                log.info("GET %s: 403 (no valid organiser cookie)", CONSOLE_PATH)
                if token:
                    self.failures.fail(address)
                return self._forbidden(request)
        try:
            response = await handler(request)
        except web.HTTPException:  # /o/ with no token, /o/a/b
            log.info("GET %s: 403 (not an organiser link)", redact(request.path))
            self.failures.fail(address)
            return self._forbidden(request)
        return _secured(response)

    async def _organiser_link(self, request: web.Request) -> web.StreamResponse:
        """The organiser's link: its token becomes the organiser's cookie; the browser goes on to the console."""
        token = request.match_info.get("token", "")
        if not await asyncio.to_thread(is_organiser_token, self.store, token):
            log.info("GET %s: 403 (unknown or revoked organiser link)", redact(request.path))
            self.failures.fail(request.remote or "?")
            return self._forbidden(request)
        log.info("GET %s: organiser link exchanged for a cookie", redact(request.path))
        response = aiohttp_jinja2.render_template("organiser_link.html", request, {})
        response.set_cookie(
            ORGANISER_COOKIE,
            token,
            max_age=COOKIE_DAYS * 86400,
            path=CONSOLE_PATH,
            httponly=True,
            secure=self.secure,
            samesite="Strict",
        )
        return response

    async def _console(self, request: web.Request) -> web.StreamResponse:
        """The organiser's console: the figures of `services.console`, rendered by attribute."""
        from centaur_tui.services.console import build_console

        console = await asyncio.to_thread(build_console, self.study, self.store)
        return aiohttp_jinja2.render_template(
            "console.html", request, {"console": console, "session_name": self.study.session.name}
        )

    # -- links ---------------------------------------------------------------------------------

    async def _link(self, request: web.Request) -> web.StreamResponse:
        """A personal link: its token becomes the cookie; the browser goes on to `/`, the token out of sight."""
        token = request.match_info.get("token", "")
        expert_id = await self.expert_of(token)
        if expert_id is None:
            log.info("GET %s: 403 (unknown or revoked link)", redact(request.path))
            self.failures.fail(
                client_address(request.remote, request.headers.getall("X-Forwarded-For", []), self.trust_proxy)
            )
            return self._forbidden(request)
        log.info("GET %s: link of %s exchanged for a cookie", redact(request.path), expert_id)
        response = aiohttp_jinja2.render_template("link.html", request, {})
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

    async def _alive(self, request: web.Request) -> web.StreamResponse:
        """The open page's heartbeat: 204 while its link stands (the guard answers 403 once it ended)."""
        return web.Response(status=204)

    # -- sources (services) --------------------------------------------------------------------

    def _handle(self, kind: str, expert_id: str, key: object) -> str:
        """The page's name for a place: a keyed hash (gold checks and comparisons look alike)."""
        if self._place_key is None:
            from centaur_tui.services.seat import place_key

            self._place_key = place_key(self.store)
        digest = hmac.new(self._place_key, f"{kind}\0{expert_id}\0{key}".encode(), hashlib.sha256).hexdigest()
        return digest[:24]

    def judging(self, expert_id: str) -> Any:
        """The expert's judging source (services.work.open_judging), opened once per expert (call in a thread)."""
        source = self._judging.get(expert_id)
        if source is None:
            from centaur_tui.services.work import open_judging

            source = self._judging[expert_id] = open_judging(self.study, self.store, expert_id)
        return source

    def judging_now(self, expert_id: str) -> Any:
        """The judging source with its practice and gold places brought up to date (assignments added since).

        Called when a page is loaded (as the terminal seat does when its queue opens), not on every save.
        """
        source = self.judging(expert_id)
        prepare = getattr(source, "prepare_checks", None)
        if callable(prepare):
            prepare()
        return source

    def work(self, expert_id: str) -> Any | None:
        """The expert's work source (services.work.open_work), or None when they are not a human worker."""
        arm = self.study.session.human_workers
        if arm is None or expert_id not in arm.experts:
            return None
        source = self._work.get(expert_id)
        if source is None:
            from centaur_tui.services.work import open_work

            source = self._work[expert_id] = open_work(self.study, self.store, expert_id)
        return source

    def live(self, expert_id: str) -> Any | None:
        """The expert's live assistant (the organiser's process asks, with the session's limits), or None."""
        if self.work(expert_id) is None:
            return None
        live = self._live.get(expert_id)
        if live is None:
            from centaur_tui.services.live_assistant import LiveAssistant

            live = self._live[expert_id] = LiveAssistant(self.study, self.store, expert_id)
        return live

    def _place(self, queue: list[Any], kind: str, expert_id: str, handle: object) -> Any:
        """The queue place a handle names (BadInput when none: a stale page or a forged handle)."""
        if isinstance(handle, str):
            for place in queue:
                if hmac.compare_digest(self._handle(kind, expert_id, place.key), handle):
                    return place
        raise BadInput("No such place in your queue: reload the page.")

    def _common(self, request: web.Request, page: str) -> dict[str, Any]:
        return {
            "page": page,
            "csrf": csrf_token(request[TOKEN]),
            "session_name": self.study.session.name,
            "simulated": bool(self.study.session.simulated),
            "has_guidelines": bool(self._guidelines_text()),
            "heartbeat": self.limits.heartbeat,
            "worker": self.work_expert(request[EXPERT]),
        }

    def work_expert(self, expert_id: str) -> bool:
        arm = self.study.session.human_workers
        return arm is not None and expert_id in arm.experts

    def _guidelines_text(self) -> str | None:
        text = self.study.guidelines
        return text if isinstance(text, str) and text.strip() else None

    def _masked_guidelines(self, source: Any) -> str | None:
        text = getattr(source, "guidelines", None)
        return text if isinstance(text, str) and text.strip() else None

    # -- pages ---------------------------------------------------------------------------------

    async def _home(self, request: web.Request) -> web.StreamResponse:
        expert_id = request[EXPERT]

        def read() -> dict[str, Any]:
            from centaur_tui.services.seat import expert_desk

            desk = expert_desk(self.study, self.store, expert_id)
            source = self.judging_now(expert_id)
            # The judging queue as the judging page counts it: practice and gold places included.
            queue = source.queue()
            judged = sum(q.state == "done" for q in queue)
            return {"desk": desk, "guidelines": self._masked_guidelines(source), "places": (len(queue), judged)}

        data = await asyncio.to_thread(read)
        desk = data["desk"]
        places, judged = data["places"]
        if desk.resume == "work" and desk.work_open:
            start = ("/write", "Resume writing")
        elif judged < places:
            start = ("/judge", "Resume judging" if judged or desk.resume else "Start judging")
        elif desk.work_open:
            start = ("/write", "Start writing" if not desk.submitted else "Resume writing")
        else:
            start = None
        context = {
            **self._common(request, "home"),
            "desk": desk,
            "places": places,
            "judged": judged,
            "start": start,
            "guidelines_html": Markup(markdown_html(data["guidelines"], 2)) if data["guidelines"] else None,
        }
        return aiohttp_jinja2.render_template("home.html", request, context)

    async def _guidelines(self, request: web.Request) -> web.StreamResponse:
        expert_id = request[EXPERT]
        text = await asyncio.to_thread(lambda: self._masked_guidelines(self.judging(expert_id)))
        context = {
            **self._common(request, "guidelines"),
            "guidelines_html": Markup(markdown_html(text, 1)) if text else None,
        }
        return aiohttp_jinja2.render_template("guidelines.html", request, context)

    async def _judge_page(self, request: web.Request) -> web.StreamResponse:
        """The place asked for (`?place=`), else where the expert was, else the next open one; or "all done"."""
        expert_id = request[EXPERT]
        wanted = request.query.get("place")

        def read() -> tuple[list[QueueItem], QueueItem | None]:
            source = self.judging_now(expert_id)
            queue = source.queue()
            current = None
            if wanted:
                current = next(
                    (
                        q
                        for q in queue
                        if q.state != "done" and hmac.compare_digest(self._handle("j", expert_id, q.key), wanted)
                    ),
                    None,
                )
            if current is None:
                resume = source.resume_key()
                current = next((q for q in queue if q.key == resume and q.state != "done"), None) or next_open(queue)
            return queue, current

        queue, current = await asyncio.to_thread(read)
        return await self._render_judging(request, queue, current, revising=False)

    async def _revise_page(self, request: web.Request) -> web.StreamResponse:
        """A submitted judgment reopened to correct it: the latest (or the one submitted before `?before=`)."""
        expert_id = request[EXPERT]
        before_handle = request.query.get("before")

        def read() -> tuple[list[QueueItem], QueueItem | None]:
            source = self.judging(expert_id)
            queue = source.queue()
            before = None
            if before_handle:
                before = next(
                    (q.key for q in queue if hmac.compare_digest(self._handle("j", expert_id, q.key), before_handle)),
                    None,
                )
            return queue, source.submitted_before(before)

        queue, target = await asyncio.to_thread(read)
        if target is None:
            context = {
                **self._common(request, "judge"),
                "title": "Nothing to revise",
                "message": "No judgment was submitted before this one.",
            }
            return aiohttp_jinja2.render_template("message.html", request, context)
        return await self._render_judging(request, queue, target, revising=True)

    async def _render_judging(
        self, request: web.Request, queue: list[QueueItem], current: QueueItem | None, *, revising: bool
    ) -> web.StreamResponse:
        expert_id = request[EXPERT]
        judged = sum(q.state == "done" for q in queue)
        base = self._common(request, "judge")
        if current is None:
            context = {
                **base,
                "title": "All judged" if queue else "Nothing to judge yet",
                "message": (
                    f"All {judged} comparison(s) in your queue are judged. Thank you."
                    if queue
                    else "No comparisons are assigned to you yet. Ask the researcher for an assignment."
                ),
            }
            return aiohttp_jinja2.render_template("message.html", request, context)

        def read() -> tuple[Any, Draft, Any, int]:
            source = self.judging(expert_id)
            item = source.item(current.key)
            # The version before the draft: a save between the two reads leaves this page stale
            # (its next save is refused and it reloads), never a page whose base hides a newer draft.
            version = 0 if revising else source.draft_version(current.key)
            draft = source.submitted_draft(current.key) if revising else (source.draft(current.key) or Draft())
            return source, draft, item, version

        source, draft, item, version = await asyncio.to_thread(read)
        self._rubrics[(expert_id, current.key)] = [d.id for d in item.rubric.all]
        handle = self._handle("j", expert_id, current.key)
        dims = [
            {"id": d.id, "name": d.name, "description": d.description, "low": d.low, "high": d.high}
            for d in item.rubric.all
        ]
        data = {
            "place": handle,
            "base": str(version),
            "revising": revising,
            "practice": current.practice,
            "dimensions": [d["id"] for d in dims],
            "draft": _draft_json(draft),
            "allowTies": item.allow_ties,
            "minRationale": item.min_rationale,
            "idleSeconds": float(getattr(source, "idle_seconds", 60.0)),
        }
        flagged = sum(q.state == "flagged" for q in queue)
        context = {
            **base,
            "item": item,
            "place": current,
            "queue_size": len(queue),
            "judged": judged,
            "flagged": flagged,
            "dims": dims,
            "draft": draft,
            "revising": revising,
            "can_revise": judged > 0 and bool(getattr(source, "can_revise", False)),
            "option_html": [Markup(markdown_html(item.option_1, 2)), Markup(markdown_html(item.option_2, 2))],
            "prompt_html": Markup(markdown_html(item.task_prompt, 2)),
            "data": data,
        }
        return aiohttp_jinja2.render_template("judging.html", request, context)

    async def _write_page(self, request: web.Request) -> web.StreamResponse:
        expert_id = request[EXPERT]
        wanted = request.query.get("place")

        def read() -> tuple[list[Any], Any, Any, Any] | None:
            source = self.work(expert_id)
            if source is None:
                return None
            queue = source.queue()
            place = None
            if wanted:
                place = next(
                    (q for q in queue if hmac.compare_digest(self._handle("w", expert_id, q.key), wanted)), None
                )
            if place is None:
                place = next((q for q in queue if not q.locked), None)
            if place is None:
                return queue, None, None, None
            from centaur_tui.services.work import WorkDraft

            version = source.draft_version(place.key)  # before the draft, as for judging
            live = self.live(expert_id)
            live_state[0] = live.state(place.key) if live is not None else None
            return queue, place, source.item(place.key), (source.draft(place.key) or WorkDraft(), version)

        live_state: list[Any] = [None]
        found = await asyncio.to_thread(read)
        base = self._common(request, "write")
        if found is None:
            context = {**base, "title": "No writing", "message": "You are not asked to write deliverables."}
            return aiohttp_jinja2.render_template("message.html", request, context)
        queue, place, item, (draft, version) = found
        places = [
            {"handle": self._handle("w", expert_id, q.key), "title": q.task_title, "locked": q.locked} for q in queue
        ]
        if place is None:
            context = {
                **base,
                "title": "All written",
                "message": f"All {len(queue)} deliverable(s) are submitted. Thank you.",
                "places": places,
            }
            return aiohttp_jinja2.render_template("message.html", request, context)
        handle = self._handle("w", expert_id, place.key)
        data = {
            "place": handle,
            "base": str(version),
            "locked": bool(draft.locked),
            "text": draft.text,
            "seconds": draft.seconds,
            "edits": draft.edits,
            "pastes": draft.pastes,
        }
        context = {
            **base,
            "item": item,
            "draft": draft,
            "places": places,
            "current": handle,
            "submitted": sum(q.locked for q in queue),
            "queue_size": len(queue),
            "prompt_html": Markup(markdown_html(item.task_prompt, 2)),
            "assistance_html": Markup(markdown_html(item.assistance, 2)) if item.assistance else None,
            "preview_html": Markup(markdown_html(draft.text, 2)),
            "data": data,
            "live": live_state[0],
        }
        if live_state[0] is not None and live_state[0].offered:
            data["live_left"] = live_state[0].left
        return aiohttp_jinja2.render_template("writing.html", request, context)

    # -- judging API ---------------------------------------------------------------------------

    async def _judging_place(self, request: web.Request) -> tuple[dict[str, Any], Any, QueueItem]:
        body = await _body(request)
        expert_id = request[EXPERT]

        def find() -> tuple[Any, QueueItem]:
            source = self.judging(expert_id)
            return source, self._place(source.queue(), "j", expert_id, body.get("place"))

        source, place = await asyncio.to_thread(find)
        return body, source, place

    async def _dimensions(self, expert_id: str, source: Any, place: QueueItem) -> list[str]:
        """The rubric dimensions of a place (read once: `item()` masks both texts and logs the maskings)."""
        found = self._rubrics.get((expert_id, place.key))
        if found is None:
            item = await asyncio.to_thread(source.item, place.key)
            found = self._rubrics[(expert_id, place.key)] = [d.id for d in item.rubric.all]
        return found

    def _save(self, source: Any, key: Any, draft: Any, body: dict[str, Any]) -> int:
        """Save a draft made on the page's base (call in a thread); its new version, or Stale.

        The database decides (`save_draft(..., base=)`: the stored version must still be the
        page's base, in the save's own transaction), so a tab loaded before a restart of the
        server, or before another tab's save, is refused all the same.
        """
        base = _base(body.get("base"))
        version = self.versions.next(base)
        if not source.save_draft(key, draft, version, base):
            raise Stale()
        return version

    async def _judging_save(self, request: web.Request) -> web.StreamResponse:
        """Autosave of a draft; 409 `stale` when another tab saved this place since the page's base."""
        body, source, place = await self._judging_place(request)
        draft = _parse_draft(body.get("draft"), await self._dimensions(request[EXPERT], source, place))
        if place.state == "done":
            return _json({"error": "This comparison is judged already.", "done": True}, status=409)
        try:
            version = await asyncio.to_thread(self._save, source, place.key, draft, body)
        except Stale:
            return _stale()
        return _json({"version": str(version)})

    async def _judging_submit(self, request: web.Request) -> web.StreamResponse:
        """Store the judgment (or the correction); answers where to go next, and a practice place's reference."""
        body, source, place = await self._judging_place(request)
        expert_id = request[EXPERT]
        draft = _parse_draft(body.get("draft"), await self._dimensions(request[EXPERT], source, place))
        revising = body.get("revise") is True

        def store() -> tuple[str | None, str | None, Any]:
            if revising:
                # A second revision of the same judgment is refused by the store (409), no draft involved.
                source.revise(place.key, draft)
            else:
                # Saved first on the page's base: a stale tab is refused here; a tab whose base
                # was current moves the version on, so any other tab's later save is refused too.
                version = self._save(source, place.key, draft, body)
                try:
                    source.submit(place.key, draft)
                except CentaurError as exc:
                    raise Refused(exc, version) from None
            reference = source.reference(place.key) if place.practice and hasattr(source, "reference") else None
            # Issue 26: on the share of places the session draws, the optional free-text guess follows.
            question = None if revising else source.guess_question(place.key)
            return reference, self._next_url(source, expert_id, place), question

        try:
            reference, next_url, question = await asyncio.to_thread(store)
        except Stale:
            return _stale()
        except Refused as exc:
            return exc.response()
        guess = (
            None
            if question is None
            else {"option": question.option, "question": question.text, "answered": question.answered or ""}
        )
        return _json(
            {"next": next_url, "reference": str(markdown_html(reference, 1)) if reference else None, "guess": guess},
        )

    async def _judging_guess(self, request: web.Request) -> web.StreamResponse:
        """Issue 26: store the expert's free-text guess of who wrote option 1, apart from the judgment (409: refused).

        `text` is what the expert typed ('': don't know); it is cleaned and cut to `MAX_GUESS_CHARS`
        before it is stored, and the answer says only whether it was stored (never what it matched).
        """
        body, source, place = await self._judging_place(request)
        text = body.get("text")
        if not isinstance(text, str) or len(text) > MAX_GUESS_BODY:
            raise BadInput(f"text must be the guess as text, at most {MAX_GUESS_BODY} characters (empty: don't know)")
        try:
            await asyncio.to_thread(source.save_guess, place.key, text)
        except CentaurError as exc:
            return _json({"error": str(exc), "title": exc.title}, status=409)
        return _json({"stored": True})

    def _next_url(self, source: Any, expert_id: str, after: QueueItem) -> str:
        following = next_open(source.queue(), after=after.position)
        return "/judge" if following is None else "/judge?place=" + self._handle("j", expert_id, following.key)

    async def _judging_state(self, request: web.Request) -> web.StreamResponse:
        """Skip or flag (with an optional note): the draft is kept, the place comes back after the others."""
        body, source, place = await self._judging_place(request)
        expert_id = request[EXPERT]
        state = body.get("state")
        if state not in ("skipped", "flagged"):
            raise BadInput("state must be skipped or flagged")
        note = body.get("note", "")
        if not isinstance(note, str) or len(note) > MAX_TEXT:
            raise BadInput("note must be text")
        draft = _parse_draft(body.get("draft"), await self._dimensions(request[EXPERT], source, place))

        def store() -> str:
            version = self._save(source, place.key, draft, body)
            try:
                # The note goes where the terminal seat's does (services.judging, expert_flag_notes).
                source.set_state(place.key, state, note if state == "flagged" else "")
            except CentaurError as exc:
                raise Refused(exc, version) from None
            return self._next_url(source, expert_id, place)

        try:
            return _json({"next": await asyncio.to_thread(store)})
        except Stale:
            return _stale()
        except Refused as exc:
            return exc.response()

    # -- writing API ---------------------------------------------------------------------------

    async def _work_place(self, request: web.Request) -> tuple[dict[str, Any], Any, Any, Any]:
        body = await _body(request)
        expert_id = request[EXPERT]

        def find() -> tuple[Any, Any]:
            source = self.work(expert_id)
            if source is None:
                raise BadInput("You are not asked to write deliverables.")
            return source, self._place(source.queue(), "w", expert_id, body.get("place"))

        source, place = await asyncio.to_thread(find)
        from centaur_tui.services.work import WorkDraft

        text = body.get("text")
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise BadInput(f"text must be a string of at most {MAX_TEXT} characters")
        draft = WorkDraft(
            text=text,
            seconds=_seconds(body.get("seconds")),
            edits=_count(body.get("edits")),
            pastes=_count(body.get("pastes")),
        )
        return body, source, place, draft

    async def _writing_save(self, request: web.Request) -> web.StreamResponse:
        """Autosave of a deliverable; answers its preview (sanitised HTML) and the new version."""
        body, source, place, draft = await self._work_place(request)
        if place.locked:
            return _json({"error": "This deliverable is submitted already.", "locked": True}, status=409)
        try:
            version = await asyncio.to_thread(self._save, source, place.key, draft, body)
        except Stale:
            return _stale()
        return _json({"version": str(version), "preview": markdown_html(draft.text, 2)})

    async def _writing_submit(self, request: web.Request) -> web.StreamResponse:
        body, source, place, draft = await self._work_place(request)

        def store() -> None:
            version = self._save(source, place.key, draft, body)  # a stale tab is refused, as for judging
            try:
                source.submit(place.key, draft, version)
            except CentaurError as exc:
                raise Refused(exc, version) from None

        try:
            await asyncio.to_thread(store)
        except Stale:
            return _stale()
        except Refused as exc:
            return exc.response()
        return _json({"next": "/write?place=" + self._handle("w", request[EXPERT], place.key)})

    async def _writing_ask(self, request: web.Request) -> web.StreamResponse:
        """A question to the live assistant: asked here, in the organiser's process; answers the masked turn."""
        body = await _body(request)
        expert_id = request[EXPERT]

        def find() -> tuple[Any, Any]:
            source, live = self.work(expert_id), self.live(expert_id)
            if source is None or live is None:
                raise BadInput("You are not asked to write deliverables.")
            return live, self._place(source.queue(), "w", expert_id, body.get("place"))

        live, place = await asyncio.to_thread(find)
        question = body.get("question")
        if not isinstance(question, str):
            raise BadInput("question must be a string")
        turn = await live.ask(place.key, question)  # WorkError, CentaurError: answered 409 with the reason
        state = await asyncio.to_thread(live.state, place.key)
        return _json(
            {
                "turn": {
                    "turn": turn.turn,
                    "question": turn.question,
                    "answer": turn.answer,
                    "error": turn.error,
                    "asked_at": turn.asked_at,
                    "answered_at": turn.answered_at,
                },
                "left": state.left,
            }
        )

    # -- running -------------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> tuple[web.AppRunner, str]:
        """Bind and serve; returns the runner (for `cleanup()`) and the base URL bound (port 0: the one chosen).

        Raises:
            ServeError: the address cannot be bound.
        """
        quiet_aiohttp(next(iter(logging.getLogger("centaur_tui").handlers), None))
        runner = web.AppRunner(
            self.application(),
            access_log=None,
            handle_signals=False,
            keepalive_timeout=self.limits.keepalive_timeout,
        )
        await runner.setup()
        assert runner.server is not None
        self.connections.wrap(runner.server)
        site = web.TCPSite(runner, host, port, backlog=256)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        return runner, f"http://{shown}:{bound_port}"


class Stale(Exception):
    """Another tab saved the place since this page's base."""


class Refused(Exception):
    """A submit (or skip, flag) refused after its draft was saved: the page gets the reason and its new base."""

    def __init__(self, error: CentaurError, version: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.version = version

    def response(self) -> web.Response:
        return _json({"error": str(self.error), "title": self.error.title, "version": str(self.version)}, status=409)


def _stale() -> web.Response:
    return _json(
        {
            "error": "This place was changed in another tab or window: the page reloads with the newer work.",
            "stale": True,
        },
        status=409,
    )


def _secured(response: web.StreamResponse) -> web.StreamResponse:
    if not response.prepared:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
    return response


def _json(data: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(data, status=status, headers=SECURITY_HEADERS)


async def _body(request: web.Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise BadInput("the body must be JSON (application/json)")
    try:
        body = json.loads(await request.text())
    except (ValueError, UnicodeDecodeError):
        raise BadInput("the body is not valid JSON") from None
    if not isinstance(body, dict):
        raise BadInput("the body must be a JSON object")
    return body


def _base(value: object) -> int:
    try:
        return base_version(value)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def _seconds(value: object) -> float:
    try:
        return seconds_field(value, "seconds")
    except DraftFieldError as exc:
        raise BadInput(str(exc)) from None


def _count(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10_000_000:
        raise BadInput("edits and pastes must be whole numbers")
    return value


def _parse_draft(value: object, dimensions: list[str]) -> Draft:
    """A draft from the page's JSON: every field checked (`domain.drafts`), a problem answered 400."""
    try:
        return parse_draft(value, dimensions)
    except DraftFieldError as exc:
        raise BadInput(str(exc)) from None


def _draft_json(draft: Draft) -> dict[str, Any]:
    return {
        "scores": draft.scores,
        "winner": draft.winner,
        "rationale": draft.rationale,
        "seconds": draft.seconds,
        "active_seconds": draft.active_seconds,
        "pasted_chars": draft.pasted_chars,
    }


def run_server(server: ExpertServer, host: str, port: int, ready: Callable[[str], None]) -> None:
    """Serve until SIGINT or SIGTERM; `ready(base_url)` is called once listening (the CLI prints the links then)."""

    async def main() -> None:
        runner, base = await server.start(host, port)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await asyncio.to_thread(ready, base)
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
