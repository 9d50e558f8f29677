"""`centaur serve` without a browser: tokens (hostile input), hashed links, the HTTP and websocket guard, the env."""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import re
import sqlite3
from pathlib import Path

import pytest
from aiohttp import WSServerHandshakeError
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain import links as domain_links
from centaur_tui.domain.links import COOKIE, TOKEN_LENGTH, match_token, new_token, token_hash, well_formed
from centaur_tui.serve.server import SECURITY_HEADERS, ExpertAppService, ExpertServer, redact
from centaur_tui.services.links import expert_of_token, links_for_serving, make_link, revoke_link
from centaur_tui.store import Store
from centaur_tui.ui.app import CentaurApp, ExpertOnlyError, create_app
from centaur_tui.ui.screens.base import CentaurModal, CentaurScreen
from centaur_tui.ui.screens.expert_home import ExpertHomeScreen
from tests.support.experts import judged_session
from tests.support.judging import assign, settle

# -- tokens --------------------------------------------------------------------------------------

GOOD = new_token()

HOSTILE_TOKENS = [
    None,
    "",
    b"x" * TOKEN_LENGTH,
    GOOD[:-1],  # short by one
    GOOD + "A",  # long by one
    "A" * 10_000,  # overlong
    GOOD[:-1] + "é",  # non-ASCII, right length
    GOOD[:-1] + "\x00",  # control character
    GOOD[:-1] + "=",  # padding is not in the alphabet
    GOOD[:-1] + "/",  # standard base64, not URL-safe
    "Ａ" * TOKEN_LENGTH,  # fullwidth letters  # noqa: RUF001
    " " + GOOD[1:],
    42,
]


def test_a_new_token_is_43_url_safe_characters_and_unique() -> None:
    tokens = {new_token() for _ in range(200)}
    assert len(tokens) == 200
    assert all(len(t) == TOKEN_LENGTH and well_formed(t) for t in tokens)


@pytest.mark.parametrize("token", HOSTILE_TOKENS, ids=range(len(HOSTILE_TOKENS)))
def test_hostile_tokens_match_nothing_and_raise_nothing(token: object) -> None:
    assert not well_formed(token)
    assert match_token(token, [("ann", token_hash(GOOD))]) is None


def test_matching_compares_every_stored_hash_with_compare_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(domain_links.hmac, "compare_digest", counting)
    stored = [("ann", token_hash(GOOD)), ("bob", token_hash(new_token())), ("cy", token_hash(new_token()))]
    assert match_token(GOOD, stored) == "ann"
    assert len(calls) == 3  # no early exit on the first (matching) one
    calls.clear()
    assert match_token(new_token(), stored) is None
    assert len(calls) == 3


# -- links in the session database ---------------------------------------------------------------


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    assign(path, "ann", 2)
    assign(path, "bob", 1)
    return path


def test_links_are_stored_hashed_and_renewing_or_revoking_ends_the_old_one(session: Path) -> None:
    study = load_session(session)
    with Store(study.database) as store:
        first = make_link(study, store, "ann")
        assert first.token is not None and expert_of_token(store, first.token) == "ann"
        second = make_link(study, store, "ann")
        assert second.renewed == 1 and second.token is not None
        assert expert_of_token(store, first.token) is None  # renewed: the old link is dead
        assert expert_of_token(store, second.token) == "ann"
        assert revoke_link(study, store, "ann") == 1
        assert expert_of_token(store, second.token) is None
        assert revoke_link(study, store, "ann") == 0
    wal = study.database.with_suffix(".db-wal")
    raw = study.database.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    assert first.token.encode() not in raw and second.token.encode() not in raw  # only hashes are stored
    conn = sqlite3.connect(study.database)
    rows = conn.execute("SELECT expert, token_hash, revoked_at FROM expert_links ORDER BY id").fetchall()
    conn.close()
    assert [(e, h) for e, h, _ in rows] == [("ann", token_hash(first.token)), ("ann", token_hash(second.token))]
    assert all(r[2] is not None for r in rows)  # both ended, both kept


def test_serving_makes_links_only_for_experts_without_one(session: Path) -> None:
    study = load_session(session)
    with Store(study.database) as store:
        made = make_link(study, store, "ann")
        links = {link.expert.id: link for link in links_for_serving(study, store)}
        assert links["ann"].token is None and links["ann"].since  # stands: not shown again
        assert links["bob"].token is not None
        assert expert_of_token(store, made.token) == "ann"  # serving did not end ann's link
        again = {link.expert.id: link for link in links_for_serving(study, store)}
        assert all(link.token is None for link in again.values())


def test_expert_link_command_prints_the_link_once_and_refuses_unknown_experts(session: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(cli, ["expert", "link", str(session), "ann", "--url", "https://judge.example.org/"])
    assert made.exit_code == 0, made.output
    url = next(w for w in made.output.split() if w.startswith("https://judge.example.org/e/"))
    token = url.rsplit("/", 1)[1]
    assert well_formed(token)
    revoked = runner.invoke(cli, ["expert", "link", str(session), "ann", "--revoke"])
    assert revoked.exit_code == 0 and "revoked" in revoked.output and token not in revoked.output
    unknown = runner.invoke(cli, ["expert", "link", str(session), "mallory"])
    assert unknown.exit_code == 2 and "mallory" in unknown.output and "Traceback" not in unknown.output


# -- the HTTP and websocket guard ------------------------------------------------------------------


@pytest.fixture
async def served(session: Path):
    study = load_session(session)
    with Store(study.database) as store:
        dead = make_link(study, store, "ann").token  # renewed on the next line: no longer valid
        ann = make_link(study, store, "ann").token
        bob = make_link(study, store, "bob").token
    reader = Store(study.database, readonly=True)
    server = ExpertServer(study.session_file, reader, watch_interval=0.1)
    client = TestClient(TestServer(server.application()))
    await client.start_server()
    try:
        yield client, server, {"ann": ann, "bob": bob, "dead": dead}, study
    finally:
        await client.close()
        reader.close()


def _cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={token}"}


async def test_every_path_answers_403_without_a_valid_cookie(served) -> None:
    client, server, tokens, _study = served
    cookies = [{}, _cookie(tokens["dead"]), _cookie("x" * TOKEN_LENGTH), _cookie(tokens["ann"][:-1]), _cookie("é" * 43)]
    for headers in cookies:
        for path in ("/", "/static/js/textual.js", "/ws", "/nothing", "/download/x", "/e/", "/e/a/b"):
            response = await client.get(path, headers=headers)
            assert response.status == 403, (path, headers)
            assert response.headers["Cache-Control"] == "no-store"
    assert server.refused >= 35


async def test_a_link_sets_an_httponly_strict_cookie_and_moves_on_to_the_page(served) -> None:
    client, _server, tokens, _study = served
    response = await client.get("/e/" + tokens["ann"], allow_redirects=False)
    assert response.status == 200
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert 'url=/"' in await response.text() and tokens["ann"] not in await response.text()
    page = await client.get("/", headers=_cookie(tokens["ann"]))
    assert page.status == 200
    html = await page.text()
    assert "googleapis" not in html and "/ws" in html  # no third-party host; the socket is this host's
    assert "default-src 'self'" in page.headers["Content-Security-Policy"]
    for bad in ("/e/" + tokens["dead"], "/e/" + tokens["ann"][:-1], "/e/" + "%C3%A9" * 43, "/e/" + "A" * 5000):
        refused = await client.get(bad, allow_redirects=False)
        assert refused.status == 403 and "Set-Cookie" not in refused.headers


async def test_the_websocket_upgrade_needs_the_cookie_and_this_origin(served) -> None:
    client, _server, tokens, _study = served
    for headers in ({}, _cookie(tokens["dead"]), _cookie("A" * TOKEN_LENGTH)):
        with pytest.raises(WSServerHandshakeError) as refused:
            await client.ws_connect("/ws", headers=headers)
        assert refused.value.status == 403
    with pytest.raises(WSServerHandshakeError) as other_site:
        await client.ws_connect("/ws", headers={**_cookie(tokens["ann"]), "Origin": "https://evil.example"})
    assert other_site.value.status == 403


async def test_the_expert_comes_from_the_token_never_from_the_url(served) -> None:
    client, server, tokens, _study = served
    started: list[list[str]] = []

    async def fake_start(self: ExpertAppService, width: int, height: int) -> None:
        started.append(self.argv)

    original = ExpertAppService.start
    ExpertAppService.start = fake_start  # type: ignore[method-assign]
    try:
        ws = await client.ws_connect("/ws?width=90&height=30&expert=bob&--expert=bob", headers=_cookie(tokens["ann"]))
        await ws.close()
    finally:
        ExpertAppService.start = original  # type: ignore[method-assign]
    [argv] = started
    assert argv[-2:] == ["--expert=ann", "--expert-only"] and "bob" not in " ".join(argv)
    assert server.app_argv("ann")[-2] == "--expert=ann"


async def test_revoking_a_link_closes_its_open_connection(served) -> None:
    client, server, tokens, study = served

    async def idle_start(self: ExpertAppService, width: int, height: int) -> None:
        return None

    original = ExpertAppService.start
    ExpertAppService.start = idle_start  # type: ignore[method-assign]
    try:
        ws = await client.ws_connect("/ws", headers=_cookie(tokens["ann"]))
        with Store(study.database) as store:
            revoke_link(study, store, "ann")
        message = await ws.receive(timeout=5)
        assert ws.closed or message.type.name in ("CLOSE", "CLOSED", "CLOSING")
        assert ws.close_code == 4403
        for _ in range(100):  # the handler ends the app (none here) before it forgets the connection
            if not server.connections:
                break
            await asyncio.sleep(0.05)
    finally:
        ExpertAppService.start = original  # type: ignore[method-assign]
    assert not server.connections


async def test_tokens_never_reach_the_log(session: Path) -> None:
    """The server as `centaur serve` runs it (no access log): the log says what happened, never with a token."""
    import aiohttp

    from centaur_tui.settings import settings

    study = load_session(session)
    with Store(study.database) as store:
        dead = make_link(study, store, "ann").token
        live = make_link(study, store, "ann").token
    log_file = settings().log_path()
    assert log_file is not None
    before = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    reader = Store(study.database, readonly=True)
    server = ExpertServer(study.session_file, reader)
    runner, base = await server.start("127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as http:
            for url in (f"{base}/e/{live}", f"{base}/e/{dead}"):
                async with http.get(url) as response:
                    await response.read()
            async with http.get(base + "/", headers=_cookie(dead)) as response:
                await response.read()
    finally:
        await runner.cleanup()
        reader.close()
    text = log_file.read_text(encoding="utf-8")[len(before) :]
    assert "exchanged for a cookie" in text and "403" in text
    assert live not in text and dead not in text
    assert redact("/e/" + live) == "/e/…"


def test_app_processes_get_no_secret_of_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "OPENAI_API_KEY": "sk-planted",
        "ANTHROPIC_API_KEY": "planted",
        "AWS_SECRET_ACCESS_KEY": "planted",
        "HTTPS_PROXY": "http://planted",
        "PYTHONPATH": "/planted",
        "CENTAUR_LOG_LEVEL": "DEBUG",
    }.items():
        monkeypatch.setenv(name, value)
    service = ExpertAppService(["true"], "ann", write_bytes=None, write_str=None, close=None, download_manager=None)
    env = service._build_environment(100, 40)
    assert "planted" not in " ".join(env.values())
    assert env["TEXTUAL_DRIVER"] == "textual.drivers.web_driver:WebDriver"
    assert env["COLUMNS"] == "100" and env["ROWS"] == "40" and env["CENTAUR_LOG_LEVEL"] == "DEBUG"
    assert env["PATH"] == os.defpath
    assert not any(k.endswith(("_KEY", "_TOKEN", "_SECRET", "PASSWORD")) for k in env)


def test_a_public_url_must_be_scheme_and_host(session: Path) -> None:
    from centaur_tui.serve.server import ServeError

    for bad in ("judge.example.org", "ftp://x", "https://x/path", "https://x?q=1", "javascript:alert(1)"):
        with pytest.raises(ServeError):
            ExpertServer(session, None, public_url=bad)
    assert ExpertServer(session, None, public_url="https://judge.example.org/").secure


def test_security_headers_deny_framing_and_third_party_hosts() -> None:
    assert SECURITY_HEADERS["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in SECURITY_HEADERS["Content-Security-Policy"]


# -- the expert-only app -------------------------------------------------------------------------------

BROWSER_KEYS = {"ctrl+w", "ctrl+t", "ctrl+n", "ctrl+l", "ctrl+shift+n", "ctrl+shift+t", "ctrl+shift+w", "ctrl+tab"}
"""Keys a browser keeps for itself (new window, new tab, close, address bar): a page never sees them."""


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_no_expert_screen_binds_a_key_the_browser_keeps() -> None:
    import centaur_tui.ui.screens.dialogs
    import centaur_tui.ui.screens.judging
    import centaur_tui.ui.screens.reading
    import centaur_tui.ui.screens.work  # noqa: F401 - every expert screen class defined

    safe = [c for c in _subclasses(CentaurScreen) + _subclasses(CentaurModal) if c.EXPERT_SAFE]
    names = {c.__name__ for c in safe}
    assert {"JudgingScreen", "WorkScreen", "ReadingScreen", "ExpertHomeScreen", "HelpDialog"} <= names
    assert not {"SessionScreen", "ResultsScreen", "AuditScreen", "AssignDialog", "AddExpertDialog"} & names
    for screen in [*safe, CentaurApp]:
        for binding in screen.BINDINGS:
            keys = {k.strip() for k in binding.key.split(",")}  # type: ignore[union-attr]
            assert not keys & BROWSER_KEYS, (screen.__name__, binding.key)


async def test_the_expert_only_app_opens_the_queue_and_refuses_every_other_screen(session: Path) -> None:
    from centaur_tui.ui.screens.results import ResultsScreen
    from centaur_tui.ui.screens.session import SessionScreen

    app = create_app(session=session, expert="ann", expert_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)  # straight into judging: ann has open comparisons
        assert screen.source.expert.id == "ann"
        assert "ctrl+p" not in app._bindings.key_to_bindings and not app.use_command_palette
        with pytest.raises(ExpertOnlyError):
            app.push_screen(SessionScreen(session))
        with pytest.raises(ExpertOnlyError):
            app.push_screen(ResultsScreen(load_session(session), runner=lambda: None))
        with pytest.raises(ExpertOnlyError):
            app.switch_screen(SessionScreen(session))
        with pytest.raises(ExpertOnlyError):
            app.push_screen("_default")  # a named screen is no expert screen either
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, ExpertHomeScreen)
        for key in ("r", "s", "a", "n", "p", "ctrl+p"):  # the overview's keys do nothing here
            await pilot.press(key)
        await pilot.pause()
        assert isinstance(app.screen, ExpertHomeScreen)
        assert "0 of 2 comparison(s) judged" in app.screen_text()


def test_expert_only_needs_a_session_and_an_expert(session: Path) -> None:
    with pytest.raises(ValueError):
        create_app(session=session, expert_only=True)
    result = CliRunner().invoke(cli, ["tui", str(session), "--expert-only"])
    assert result.exit_code == 2 and "--expert-only needs --expert" in result.output
    result = CliRunner().invoke(cli, ["tui", str(session), "--expert", "ann", "--expert-only", "--run"])
    assert result.exit_code == 2


@pytest.mark.slow
async def test_a_real_app_process_speaks_the_protocol_and_ignores_malformed_messages(served) -> None:
    client, server, tokens, _study = served
    ws = await client.ws_connect("/ws?width=100&height=30", headers=_cookie(tokens["ann"]))
    first = await ws.receive(timeout=30)
    assert first.type.name == "BINARY" and first.data  # the app draws
    [connection] = server.connections
    pid = connection.service.pid
    assert pid is not None and b"--expert=ann" in Path(f"/proc/{pid}/cmdline").read_bytes()
    for hostile in (
        "not json",
        "{}",
        "[]",
        "[1, 2]",
        '["stdin"]',
        '["stdin", 5]',
        '["resize", "big"]',
        '["resize", {"width": -4, "height": 1e9}]',
        '["unknown", {}]',
        '["blur"]',
        '["focus"]',
    ):
        await ws.send_str(hostile)
    await ws.send_bytes(b"\x00\xff binary is ignored")
    await ws.send_str('["ping", "still here"]')
    while True:
        message = await ws.receive(timeout=10)
        if message.type.name == "TEXT":
            assert json.loads(message.data) == ["pong", "still here"]
            break
    await ws.close()
    for _ in range(300):
        if not server.connections:
            break
        await asyncio.sleep(0.05)
    assert not server.connections  # the app process was waited for: it has exited
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or b"zombie" in status.read_bytes().lower()


def test_the_serve_command_prints_each_link_once_and_warns_off_loopback(session: Path, monkeypatch) -> None:
    import centaur_tui.serve as serve_package

    seen: list[tuple[str, int]] = []

    def fake_run(server: ExpertServer, host: str, port: int, ready) -> None:
        seen.append((host, port))
        ready("http://127.0.0.1:8123")

    monkeypatch.setattr(serve_package, "run_server", fake_run)
    runner = CliRunner()
    first = runner.invoke(cli, ["serve", str(session), "--port", "8123"])
    assert first.exit_code == 0, first.output
    links = re.findall(r"http://127\.0\.0\.1:8123/e/(\S+)", first.output)
    assert len(links) == 2 and all(well_formed(t) for t in links)
    again = runner.invoke(cli, ["serve", str(session), "--host", "0.0.0.0", "--public-url", "http://x.example"])
    assert again.exit_code == 0 and "stands" in again.output and not any(t in again.output for t in links)
    assert "without HTTPS" in again.output
    assert seen == [("127.0.0.1", 8123), ("0.0.0.0", 8000)]
    bad = runner.invoke(cli, ["serve", str(session), "--public-url", "judge.example.org"])
    assert bad.exit_code == 2 and "--public-url" in bad.output and "Traceback" not in bad.output


async def test_binding_a_taken_port_is_a_clear_error(session: Path) -> None:
    from centaur_tui.serve.server import ServeError

    study = load_session(session)
    reader = Store(study.database, readonly=True)
    server = ExpertServer(study.session_file, reader)
    runner, base = await server.start("127.0.0.1", 0)
    try:
        port = int(base.rsplit(":", 1)[1])
        with pytest.raises(ServeError, match=f"127.0.0.1:{port}"):
            await ExpertServer(study.session_file, reader).start("127.0.0.1", port)
    finally:
        await runner.cleanup()
        reader.close()
