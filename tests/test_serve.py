"""`centaur serve` without a browser: tokens (hostile input), hashed links, the HTML seat's guard, pages and API."""

from __future__ import annotations

import asyncio
import hmac
import html as html_lib
import json
import re
import sqlite3
from html.parser import HTMLParser
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain import links as domain_links
from centaur_tui.domain.links import COOKIE, TOKEN_LENGTH, match_token, new_token, token_hash, well_formed
from centaur_tui.serve.guard import csrf_token
from centaur_tui.serve.server import ExpertServer, Limits
from centaur_tui.services.links import expert_of_token, links_for_serving, make_link, revoke_link
from centaur_tui.store import Store
from centaur_tui.ui.app import CentaurApp, ExpertOnlyError, create_app
from centaur_tui.ui.screens.base import CentaurModal, CentaurScreen
from centaur_tui.ui.screens.expert_home import ExpertHomeScreen
from tests.support.experts import judged_session
from tests.support.judging import RATIONALE, assign, settle
from tests.support.seat import with_judging
from tests.support.work import work_session

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


# -- the HTML seat: guard, pages, API -------------------------------------------------------------

HOSTILE_DELIVERABLE = (
    "# Report\n\n<script>alert('x')</script>\n\n[click](javascript:alert(1)) [data](data:text/html;base64,PHNjcmlwdD4=)"
    ' [vb](vbscript:msgbox) [ok](https://example.org/page)\n\n<iframe src="https://evil.example"></iframe>\n\n'
    '<img src=x onerror=alert(1)> <a href="#" onclick="alert(1)">a</a> <div style="display:none">hidden</div>\n\n'
    "<style>body { display: none }</style> &lt;script&gt; &amp; &#60;b&#62; ![pixel](https://tracker.example/p.png)\n\n"
    "<svg onload=alert(1)></svg> <object data=x></object> <form action=https://evil.example><input></form>\n\n"
    '[ref link][r]\n\n[r]: https://hidden.example "title"\n\n'
)
LONG_DELIVERABLE = ("word " * 10_000).strip()


class Page(HTMLParser):
    """Every start tag with its attributes, and whether a tag sits inside one of the two deliverables."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None], bool]] = []
        self._depth = 0
        self._stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        inside = self._depth > 0
        if "deliverable" in (attributes.get("class") or "").split():
            self._depth += 1
            self._stack.append(tag)
        elif self._depth:
            self._stack.append(tag)
        self.tags.append((tag, attributes, inside))

    def handle_endtag(self, tag: str) -> None:
        if self._depth and self._stack:
            self._stack.pop()
            if not self._stack:
                self._depth = 0


def _parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


@pytest.fixture
def seat(tmp_path: Path) -> Path:
    """A judged session with a work arm, guidelines, one practice place; ann has 2 comparisons, bob 1."""
    path = with_judging(work_session(tmp_path), 'expert_guidelines = "guide.md"', "expert_practice = 1")
    (path.parent / "guide.md").write_text("# Read first\n\nJudge what Alpha wrote by what it does.\n", encoding="utf-8")
    assign(path, "ann", 2)
    assign(path, "bob", 1)
    return path


class Seat:
    """The test server and one expert's way in (cookie, origin, CSRF token)."""

    def __init__(self, client: TestClient, server: ExpertServer, tokens: dict[str, str], study) -> None:
        self.client = client
        self.server = server
        self.tokens = tokens
        self.study = study
        self.origin = str(client.make_url("")).rstrip("/")

    def headers(self, who: str = "ann") -> dict[str, str]:
        return {"Cookie": f"{COOKIE}={self.tokens[who]}"}

    def post_headers(self, who: str = "ann") -> dict[str, str]:
        return {**self.headers(who), "Origin": self.origin, "X-CSRF-Token": csrf_token(self.tokens[who])}

    async def page(self, path: str, who: str = "ann") -> str:
        response = await self.client.get(path, headers=self.headers(who))
        assert response.status == 200, (path, response.status, await response.text())
        return await response.text()

    async def data(self, path: str = "/judge", who: str = "ann") -> dict:
        html = await self.page(path, who)
        match = re.search(r'<script type="application/json" id="seat-data">(.*?)</script>', html, re.S)
        assert match, html[:500]
        return json.loads(match.group(1))

    async def post(self, path: str, body: object, who: str = "ann", headers: dict[str, str] | None = None):
        response = await self.client.post(path, json=body, headers=headers or self.post_headers(who))
        return response.status, await response.json(content_type=None)


async def _seat(path: Path, tokens: dict[str, str] | None = None, **kwargs) -> tuple[Seat, Store]:
    """A server on the session (a new process, as far as the database can tell); new links unless `tokens`."""
    study = load_session(path)
    if tokens is None:
        with Store(study.database) as store:
            dead = make_link(study, store, "ann").token  # renewed on the next line: no longer valid
            ann = make_link(study, store, "ann").token
            bob = make_link(study, store, "bob").token
        assert dead and ann and bob
        tokens = {"ann": ann, "bob": bob, "dead": dead}
    store = Store(study.database)
    server = ExpertServer(study, store, **kwargs)
    client = TestClient(TestServer(server.application()))
    await client.start_server()
    return Seat(client, server, tokens, study), store


@pytest.fixture
async def served(seat: Path):
    served, store = await _seat(seat)
    try:
        yield served
    finally:
        await served.client.close()
        store.close()


def _complete(data: dict, winner: str = "option_1", rationale: str = RATIONALE) -> dict:
    return {
        "scores": {d: [7, 4] for d in data["dimensions"]},
        "winner": winner,
        "rationale": rationale,
        "seconds": 12.5,
        "active_seconds": 9.0,
    }


def _rows(study, sql: str, params: tuple = ()) -> list[tuple]:
    conn = sqlite3.connect(study.database)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


PAGES = (
    "/",
    "/judge",
    "/judge/revise",
    "/write",
    "/guidelines",
    "/api/alive",
    "/static/seat.css",
    "/static/judging.js",
)


async def test_every_path_answers_403_without_a_valid_cookie(served: Seat) -> None:
    client, tokens = served.client, served.tokens
    served.server.failures.limit = 10_000  # the rate limit has its own test
    cookies = [{}, {"Cookie": f"{COOKIE}={tokens['dead']}"}, {"Cookie": f"{COOKIE}={'x' * TOKEN_LENGTH}"}]
    for headers in cookies:
        for path in (*PAGES, "/nothing", "/e/", "/e/a/b"):
            response = await client.get(path, headers=headers)
            assert response.status == 403, (path, headers)
            assert response.headers["Cache-Control"] == "no-store"
            assert tokens["dead"] not in await response.text()
        status, body = await served.post("/api/judging/save", {}, headers={**headers, "Origin": served.origin})
        assert status == 403 and body["ended"]


async def test_every_page_answers_with_the_security_headers_and_no_other_host(served: Seat) -> None:
    for path in PAGES:
        response = await served.client.get(path, headers=served.headers())
        assert response.status in (200, 204), path
        csp = response.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "default-src 'none'" in csp
        assert response.headers["X-Frame-Options"] == "DENY" and response.headers["Referrer-Policy"] == "no-referrer"
        text = await response.text()
        assert "googleapis" not in text and "gstatic" not in text and "cdn" not in text.lower()
    for path in ("/", "/judge", "/write", "/guidelines"):
        html = await served.page(path)
        page = _parse(html)
        scripts = [a for tag, a, _ in page.tags if tag == "script"]
        assert all(a.get("src", "").startswith("/static/") or a.get("type") == "application/json" for a in scripts)
        assert not [a for tag, a, _ in page.tags if tag == "link" and not a.get("href", "").startswith("/static/")]
        assert not any(k.startswith("on") for _, a, _ in page.tags for k in a)  # no inline handler anywhere
        assert not any("style" in a for _, a, _ in page.tags)  # no inline style (the CSP forbids it)


async def test_a_link_sets_an_httponly_strict_cookie_and_moves_on(served: Seat) -> None:
    client, tokens = served.client, served.tokens
    response = await client.get("/e/" + tokens["ann"], allow_redirects=False)
    assert response.status == 200
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie and "Secure" not in cookie
    text = await response.text()
    assert 'url=/"' in text and tokens["ann"] not in text
    for bad in ("/e/" + tokens["dead"], "/e/" + tokens["ann"][:-1], "/e/" + "%C3%A9" * 43, "/e/" + "A" * 5000):
        refused = await client.get(bad, allow_redirects=False)
        assert refused.status == 403 and "Set-Cookie" not in refused.headers


async def test_the_home_page_says_who_what_waits_and_how(served: Seat) -> None:
    html = await served.page("/")
    assert "Welcome, Ann Example" in html
    assert "3 of 3 comparison(s) waiting" in html  # 2 assigned + 1 practice
    assert "2 of 2 deliverable(s) waiting" in html
    assert 'id="start" href="/judge">Start judging' in html
    assert "How this works" in html and "Read first" in html
    assert "Alpha" not in html and "[masked]" in html  # the guidelines are masked as in the terminal seat
    bob = await served.page("/", "bob")
    assert "Welcome, Bob Example" in bob and "Ann" not in bob


async def test_the_expert_comes_from_the_token_never_from_the_url(served: Seat) -> None:
    for path in ("/?expert=bob", "/judge?expert=bob&place=bob", "/write?expert=bob"):
        html = await served.page(path)
        assert "Bob" not in html
    data = await served.data()
    status, _ = await served.post("/api/judging/save", {"place": data["place"], "base": 0, "draft": {}}, who="bob")
    assert status == 400  # ann's place is no place of bob's queue


async def test_judging_pages_are_blinded_as_the_terminal_seat(served: Seat) -> None:
    from centaur_tui.services.work import open_judging

    data = await served.data()
    html = await served.page("/judge")
    assert "practice (not counted)" in html  # the practice place comes first, marked as in the terminal
    with Store(served.study.database) as store:
        source = open_judging(served.study, store, "ann")
        place = source.queue()[0]
        item = source.item(place.key)
    assert str(place.key) not in html.split('id="seat-data"')[1]  # the page names places by handle only
    assert html_lib.escape(item.option_1.split("\n")[0][:40]) in html
    for name in ("Alpha", "Beta", "Gamma", "Delta", "North", "South", "East", "West", "simulated/"):
        assert name not in html, name
    assert len(data["place"]) == 24 and data["dimensions"]


async def test_hostile_deliverables_render_inert_and_readable(served: Seat) -> None:
    from centaur_tui.services.work import open_judging

    with Store(served.study.database) as store:
        source = open_judging(served.study, store, "ann")
        comparison = next(q for q in source.queue() if not q.practice)
    conn = sqlite3.connect(served.study.database)
    a, b = conn.execute(
        "SELECT c.output_a, c.output_b FROM expert_assignments x JOIN comparisons c ON c.id = x.comparison_id"
        " WHERE x.id = ?",
        (int(comparison.key),),
    ).fetchone()
    conn.execute("UPDATE outputs SET text = ? WHERE id = ?", (HOSTILE_DELIVERABLE, a))
    conn.execute("UPDATE outputs SET text = ? WHERE id = ?", (LONG_DELIVERABLE, b))
    conn.commit()
    conn.close()
    handle = served.server._handle("j", "ann", comparison.key)
    html = await served.page("/judge?place=" + handle)
    page = _parse(html)
    inside = [(tag, attrs) for tag, attrs, within in page.tags if within]
    assert inside, "no deliverable parsed"
    tags = {tag for tag, _ in inside}
    assert not tags & {"script", "iframe", "img", "style", "svg", "object", "form", "input", "embed", "link"}
    for tag, attrs in inside:
        assert not any(k.startswith("on") or k == "style" or k == "src" for k in attrs), (tag, attrs)
        if tag == "a":
            assert attrs["href"].startswith(("https://", "http://")), attrs
            assert "noopener" in (attrs.get("rel") or "")
    hrefs = [attrs.get("href") for tag, attrs in inside if tag == "a"]
    assert "https://example.org/page" in hrefs and "https://hidden.example" in hrefs
    assert (
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html or "&lt;script&gt;alert('x')&lt;/script&gt;" in html
    )
    assert "&lt;iframe" in html and "javascript:alert" not in " ".join(h or "" for h in hrefs)
    assert html.count("word") >= 20_000  # both views (rendered and plain) hold the 10,000 words
    assert "[r]: https://hidden.example" in html  # the plain view shows what Markdown hides


async def test_a_judgment_through_the_api_is_stored_with_its_times(served: Seat) -> None:
    data = await served.data()
    status, body = await served.post(
        "/api/judging/save", {"place": data["place"], "base": data["base"], "draft": _complete(data)}
    )
    assert status == 200 and int(body["version"]) > 0
    again = await served.data()
    assert again["draft"]["scores"] == {d: [7, 4] for d in data["dimensions"]} and again["base"] == body["version"]
    status, body = await served.post(
        "/api/judging/submit", {"place": data["place"], "base": again["base"], "draft": _complete(data)}
    )
    assert status == 200 and body["next"].startswith("/judge")
    assert body["reference"] and "reference verdict" in body["reference"]  # the practice place's verdict
    following = await served.data(body["next"])
    status, body = await served.post(
        "/api/judging/submit",
        {"place": following["place"], "base": following["base"], "draft": _complete(following, "option_2")},
    )
    assert status == 200 and body["reference"] is None
    rows = _rows(
        served.study,
        "SELECT winner, option2, seconds, active_seconds, lower_average_confirmed FROM judgments WHERE judge = 'ann'",
    )
    assert len(rows) == 1
    winner, option2, seconds, active, lower = rows[0]
    assert winner == option2 and seconds == 12.5 and active == 9.0 and lower is None  # not confirmed: stored so


async def test_an_incomplete_or_malformed_judgment_is_refused_with_its_reason(served: Seat) -> None:
    data = await served.data()
    place, base = data["place"], data["base"]
    incomplete = _complete(data, rationale="short")
    status, body = await served.post("/api/judging/submit", {"place": place, "base": base, "draft": incomplete})
    assert status == 409 and "rationale" in body["error"]
    dim = data["dimensions"][0]
    for draft, field in (
        ({"scores": {dim: [11, 1]}}, "1-10"),
        ({"scores": {dim: [True, 1]}}, "1-10"),
        ({"scores": {dim: [1]}}, "two scores"),
        ({"scores": {"not_a_dimension": [1, 1]}}, "not a dimension"),
        ({"scores": []}, "scores"),
        ({"winner": "option_3"}, "winner"),
        ({"rationale": 5}, "rationale"),
        ({"seconds": "NaN"}, "seconds"),
        ({"seconds": float("inf")}, "seconds"),
        ("nope", "draft"),
    ):
        status, body = await served.post("/api/judging/save", {"place": place, "base": base, "draft": draft})
        assert status == 400 and field in body["error"], (draft, body)
    for body_text in ("not json", "[1, 2]", ""):
        response = await served.client.post(
            "/api/judging/save", data=body_text, headers={**served.post_headers(), "Content-Type": "application/json"}
        )
        assert response.status == 400
    status, body = await served.post("/api/judging/save", {"place": "forged", "base": 0, "draft": {}})
    assert status == 400 and "reload" in body["error"]
    response = await served.client.post(
        "/api/judging/save",
        data=b"x" * (300 * 1024),
        headers={**served.post_headers(), "Content-Type": "application/json"},
    )
    assert response.status == 413
    assert _rows(served.study, "SELECT count(*) FROM judgments WHERE judge = 'ann'") == [(0,)]


async def test_posts_need_this_origin_and_the_csrf_token(served: Seat) -> None:
    data = await served.data()
    body = {"place": data["place"], "base": data["base"], "draft": _complete(data)}
    good = served.post_headers()
    for headers in (
        {**good, "Origin": "https://evil.example"},
        {k: v for k, v in good.items() if k != "Origin"},
        {**good, "Origin": "null"},
        {k: v for k, v in good.items() if k != "X-CSRF-Token"},
        {**good, "X-CSRF-Token": csrf_token(served.tokens["bob"])},
        {**good, "X-CSRF-Token": "0" * 64},
    ):
        status, _ = await served.post("/api/judging/save", body, headers=headers)
        assert status == 403, headers
    assert _rows(served.study, "SELECT count(*) FROM expert_drafts") == [(0,)]
    status, _ = await served.post("/api/judging/save", body, headers=good)
    assert status == 200


async def test_two_tabs_never_overwrite_each_other_silently(served: Seat) -> None:
    one = await served.data()
    two = await served.data()
    assert one["base"] == two["base"] == "0"
    status, first = await served.post(
        "/api/judging/save", {"place": one["place"], "base": one["base"], "draft": {"rationale": "tab one"}}
    )
    assert status == 200
    status, stale = await served.post(
        "/api/judging/save", {"place": two["place"], "base": two["base"], "draft": {"rationale": "tab two"}}
    )
    assert status == 409 and stale["stale"]
    reloaded = await served.data()
    assert reloaded["draft"]["rationale"] == "tab one" and reloaded["base"] == first["version"]
    status, _ = await served.post(
        "/api/judging/save", {"place": one["place"], "base": first["version"], "draft": {"rationale": "tab one again"}}
    )
    assert status == 200
    status, _ = await served.post(
        "/api/judging/submit", {"place": two["place"], "base": reloaded["base"], "draft": _complete(two)}
    )
    assert status == 409  # tab one saved after the reload: this tab is stale again


async def test_skip_flag_with_a_note_and_revise(served: Seat) -> None:
    data = await served.data()
    status, body = await served.post(
        "/api/judging/state",
        {
            "place": data["place"],
            "base": data["base"],
            "state": "flagged",
            "note": "odd task",
            "draft": {"rationale": "kept"},
        },
    )
    assert status == 200
    notes = _rows(served.study, "SELECT expert, note FROM expert_flag_notes")
    assert notes == [("ann", "odd task")]
    assert _rows(served.study, "SELECT count(*) FROM meta WHERE key LIKE 'flag-note/%'") == [(0,)]
    nxt = await served.data(body["next"])
    assert nxt["place"] != data["place"]
    status, body = await served.post(
        "/api/judging/state", {"place": nxt["place"], "base": nxt["base"], "state": "done", "draft": {}}
    )
    assert status == 400
    status, body = await served.post(
        "/api/judging/state", {"place": nxt["place"], "base": nxt["base"], "state": "skipped", "draft": {}}
    )
    assert status == 200
    third = await served.data(body["next"])
    status, body = await served.post(
        "/api/judging/submit", {"place": third["place"], "base": third["base"], "draft": _complete(third)}
    )
    assert status == 200
    revise = await served.data("/judge/revise")
    assert revise["revising"] and revise["place"] == third["place"] and revise["draft"]["winner"] == "option_1"
    status, _ = await served.post(
        "/api/judging/submit",
        {"place": revise["place"], "base": revise["base"], "revise": True, "draft": _complete(third, "option_2")},
    )
    assert status == 200
    revisions = _rows(served.study, "SELECT revision FROM judgments WHERE judge = 'ann' ORDER BY revision")
    assert [r for (r,) in revisions][-2:] == [0, 1] or [r for (r,) in revisions] == [1, 2]
    flagged = await served.page("/judge?place=" + data["place"])
    assert "You flagged this one" in flagged and "kept" in flagged


async def test_writing_saves_previews_submits_then_reads_only(served: Seat) -> None:
    data = await served.data("/write")
    html = await served.page("/write")
    assert "Assistance text" in html and ("None: you write" in html or "who wrote them is hidden" in html)
    hostile = "# Mine\n\n<script>alert(1)</script> [x](javascript:alert(1))"
    status, body = await served.post(
        "/api/writing/save",
        {"place": data["place"], "base": data["base"], "text": hostile, "seconds": 3, "edits": 4, "pastes": 1},
    )
    assert status == 200 and "<h3>Mine</h3>" in body["preview"] and "<script" not in body["preview"]
    status, stale = await served.post(
        "/api/writing/save", {"place": data["place"], "base": data["base"], "text": "other tab"}
    )
    assert status == 409 and stale["stale"]
    for bad in ({"text": 5}, {"text": "x", "edits": -1}, {"text": "x", "seconds": "a"}, {"text": "x" * 200_001}):
        status, _ = await served.post("/api/writing/save", {"place": data["place"], "base": body["version"], **bad})
        assert status == 400, bad
    status, empty = await served.post(
        "/api/writing/submit", {"place": data["place"], "base": body["version"], "text": "  "}
    )
    assert status == 409 and "empty" in empty["error"]
    # The refused submit saved its text first: the page gets its new base back, not a stale tab.
    assert int(empty["version"]) > int(body["version"])
    status, done = await served.post(
        "/api/writing/submit", {"place": data["place"], "base": empty["version"], "text": hostile, "seconds": 5}
    )
    assert status == 200
    locked = await served.data(done["next"])
    assert locked["locked"] and locked["text"] == hostile
    assert "readonly" in await served.page(done["next"])
    status, again = await served.post("/api/writing/save", {"place": data["place"], "base": "0", "text": "late"})
    assert status == 409 and again["locked"]
    assert _rows(served.study, "SELECT count(*) FROM outputs WHERE worker = 'ann' AND worker_kind = 'expert'") == [(1,)]


def _work_key(served: Seat, data: dict) -> str:
    from centaur_tui.services.work import open_work

    with Store(served.study.database) as store:
        for q in open_work(served.study, store, "ann").queue():
            if served.server._handle("w", "ann", q.key) == data["place"]:
                return str(q.key)
    raise AssertionError("no such work place")


async def test_revoking_a_link_ends_the_open_page_on_its_next_request(served: Seat) -> None:
    data = await served.data()
    with Store(served.study.database) as store:
        revoke_link(served.study, store, "ann")
    status, body = await served.post("/api/judging/save", {"place": data["place"], "base": data["base"], "draft": {}})
    assert status == 403 and body["ended"]
    response = await served.client.get("/api/alive", headers=served.headers())
    assert response.status == 403
    bob = await served.client.get("/api/alive", headers=served.headers("bob"))
    assert bob.status == 204


async def test_failed_link_checks_are_rate_limited_per_address(seat: Path) -> None:
    clock = [1000.0]
    served, store = await _seat(seat, limits=Limits(failures=5, failure_window=60.0), clock=lambda: clock[0])
    try:
        for _ in range(5):
            response = await served.client.get("/e/" + new_token(), allow_redirects=False)
            assert response.status == 403
        blocked = await served.client.get("/e/" + served.tokens["ann"], allow_redirects=False)
        assert blocked.status == 429 and "Set-Cookie" not in blocked.headers  # even the right token, for now
        cookie = await served.client.get("/", headers=served.headers())
        assert cookie.status == 429
        clock[0] += 61  # the window has passed
        opened = await served.client.get("/e/" + served.tokens["ann"], allow_redirects=False)
        assert opened.status == 200
    finally:
        await served.client.close()
        store.close()


async def test_requests_per_expert_are_limited(served: Seat) -> None:
    limits = served.server.connections
    for _ in range(limits.per_expert):
        assert limits.enter("ann")
    try:
        response = await served.client.get("/", headers=served.headers())
        assert response.status == 429
        bob = await served.client.get("/", headers=served.headers("bob"))
        assert bob.status == 200
    finally:
        for _ in range(limits.per_expert):
            limits.leave("ann")
    assert (await served.client.get("/", headers=served.headers())).status == 200


async def _raw(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port)


async def test_idle_half_open_and_surplus_connections_are_closed_and_tokens_never_logged(seat: Path, capfd) -> None:
    import aiohttp

    from centaur_tui.settings import settings

    study = load_session(seat)
    with Store(study.database) as store:
        live = make_link(study, store, "ann").token
    assert live is not None
    log_file = settings().log_path()
    assert log_file is not None
    before = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    store = Store(study.database)
    server = ExpertServer(study, store, limits=Limits(keepalive_timeout=0.3, per_address=3))
    runner, base = await server.start("127.0.0.1", 0)
    port = int(base.rsplit(":", 1)[1])
    try:
        idle_reader, _idle = await _raw(port)  # sends nothing
        half_reader, half = await _raw(port)
        half.write(b"GET / HTTP/1.1\r\nHost: x\r\nCookie: centaur_link=" + live.encode())  # never finished
        await half.drain()
        assert await asyncio.wait_for(idle_reader.read(), 10) == b""  # closed by the server
        assert await asyncio.wait_for(half_reader.read(), 10) == b""  # half-open: closed too
        held = [await _raw(port) for _ in range(3)]
        surplus_reader, _surplus = await _raw(port)
        assert await asyncio.wait_for(surplus_reader.read(), 10) == b""  # a 4th connection from one address
        assert server.connections.closed >= 1
        for _reader, writer in held:
            writer.close()
        async with aiohttp.ClientSession() as http:
            huge = f"{COOKIE}={live}; pad=" + "A" * 9000
            async with http.get(base + "/", headers={"Cookie": huge}) as response:
                assert response.status in (400, 431)
            async with http.get(f"{base}/e/{live}") as response:
                assert response.status == 200
    finally:
        await runner.cleanup()
        store.close()
    captured = capfd.readouterr()
    text = log_file.read_text(encoding="utf-8")[len(before) :]
    assert "exchanged for a cookie" in text
    for where in (text, captured.out, captured.err):
        assert live not in where and live[:20] not in where
        assert "Traceback" not in where


def test_a_public_url_must_be_scheme_and_host(seat: Path) -> None:
    from centaur_tui.serve.server import ServeError

    study = load_session(seat)
    for bad in ("judge.example.org", "ftp://x", "https://x/path", "https://x?q=1", "javascript:alert(1)"):
        with pytest.raises(ServeError):
            ExpertServer(study, None, public_url=bad)
    assert ExpertServer(study, None, public_url="https://judge.example.org/").secure


def test_markdown_is_sanitised_by_nh3_after_markdown_it() -> None:
    from centaur_tui.serve.markup import markdown_html

    for hostile, absent in (
        ("<script>alert(1)</script>", "<script"),
        ("[x](javascript:alert(1))", 'href="javascript'),
        ("[x](JaVaScRiPt:alert(1))", 'href="javascript'),
        ("[x](data:text/html,hi)", 'href="data'),
        ("![x](https://tracker.example/p.png)", "<img"),
        ('<a href="x" onclick="y">a</a>', '<a href="x" onclick'),
        ("<style>*{}</style>", "<style"),
        ("<!-- hidden -->", "<!--"),
    ):
        assert absent not in markdown_html(hostile).lower(), hostile
    assert markdown_html("&amp; &lt;b&gt;") == "<p>&amp; &lt;b&gt;</p>\n"
    assert "<table>" in markdown_html("| a | b |\n|---|---|\n| 1 | 2 |")


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


def test_the_serve_command_prints_each_link_once_and_expert_link_uses_its_address(seat: Path, monkeypatch) -> None:
    import centaur_tui.serve as serve_package

    seen: list[tuple[str, int]] = []

    def fake_run(server: ExpertServer, host: str, port: int, ready) -> None:
        seen.append((host, port))
        ready(f"http://127.0.0.1:{port or 8765}")

    monkeypatch.setattr(serve_package, "run_server", fake_run)
    runner = CliRunner()
    before = runner.invoke(cli, ["expert", "link", str(seat), "bob"])
    assert before.exit_code == 0 and "http://127.0.0.1:8000/e/" in before.output and "has not run" in before.output
    first = runner.invoke(cli, ["serve", str(seat), "--port", "0"])
    assert first.exit_code == 0, first.output
    links = re.findall(r"http://127\.0\.0\.1:8765/e/(\S+)", first.output)
    assert len(links) == 1 and all(well_formed(t) for t in links)  # ann; bob's link (made above) stands
    made = runner.invoke(cli, ["expert", "link", str(seat), "ann"])
    assert made.exit_code == 0 and "http://127.0.0.1:8765/e/" in made.output  # the port the server used
    again = runner.invoke(cli, ["serve", str(seat), "--host", "0.0.0.0", "--public-url", "http://x.example"])
    assert again.exit_code == 0 and "stands" in again.output and not any(t in again.output for t in links)
    assert "without HTTPS" in again.output
    public = runner.invoke(cli, ["expert", "link", str(seat), "ann"])
    assert "http://x.example/e/" in public.output
    told = runner.invoke(cli, ["expert", "link", str(seat), "ann", "--url", "https://judge.example.org"])
    assert "https://judge.example.org/e/" in told.output
    assert seen == [("127.0.0.1", 0), ("0.0.0.0", 8000)]
    bad = runner.invoke(cli, ["serve", str(seat), "--public-url", "judge.example.org"])
    assert bad.exit_code == 2 and "--public-url" in bad.output and "Traceback" not in bad.output


async def test_binding_a_taken_port_is_a_clear_error(seat: Path) -> None:
    from centaur_tui.serve.server import ServeError

    study = load_session(seat)
    store = Store(study.database)
    server = ExpertServer(study, store)
    runner, base = await server.start("127.0.0.1", 0)
    try:
        port = int(base.rsplit(":", 1)[1])
        with pytest.raises(ServeError, match=f"127.0.0.1:{port}"):
            await ExpertServer(study, store).start("127.0.0.1", port)
    finally:
        await runner.cleanup()
        store.close()


def test_headings_of_untrusted_markdown_move_under_the_page_s_own() -> None:
    from centaur_tui.serve.markup import markdown_html

    assert markdown_html("# Title\n\n###### Deep", 2) == "<h3>Title</h3>\n<h6>Deep</h6>\n"
    assert markdown_html("# Title") == "<h1>Title</h1>\n"


async def test_a_page_served_before_a_restart_still_saves_after_it(seat: Path) -> None:
    first, store = await _seat(seat)
    try:
        data = await first.data()
    finally:
        await first.client.close()
        store.close()
    second, store = await _seat(seat)  # a new server process on the same database (new links too)
    try:
        status, body = await second.post(
            "/api/judging/save", {"place": data["place"], "base": data["base"], "draft": {"rationale": "kept"}}
        )
        assert status == 200 and body["version"]
        assert (await second.data())["draft"]["rationale"] == "kept"
    finally:
        await second.client.close()
        store.close()


async def test_a_stale_tab_is_refused_after_a_restart_of_the_server(seat: Path) -> None:
    """The register of draft versions is the database: a restart in between changes nothing."""
    first, store = await _seat(seat)
    try:
        one = await first.data()  # tab one
        two = await first.data()  # tab two, same place, same base
        written = await first.data("/write")
        also = await first.data("/write")
        assert one["place"] == two["place"] and one["base"] == two["base"] == "0"
        status, saved = await first.post(
            "/api/judging/save", {"place": one["place"], "base": one["base"], "draft": {"rationale": "tab one"}}
        )
        assert status == 200
        status, wrote = await first.post(
            "/api/writing/save", {"place": written["place"], "base": written["base"], "text": "tab one"}
        )
        assert status == 200
    finally:
        await first.client.close()
        store.close()
    second, store = await _seat(seat, tokens=first.tokens)  # a new server: nothing of the first in memory
    try:
        for path, body in (
            ("/api/judging/save", {"place": two["place"], "base": two["base"], "draft": {"rationale": "tab two"}}),
            ("/api/judging/state", {**{"place": two["place"], "base": two["base"]}, "state": "flagged", "draft": {}}),
            ("/api/judging/submit", {"place": two["place"], "base": two["base"], "draft": _complete(two)}),
            ("/api/writing/save", {"place": also["place"], "base": also["base"], "text": "tab two"}),
            ("/api/writing/submit", {"place": also["place"], "base": also["base"], "text": "tab two"}),
        ):
            status, stale = await second.post(path, body)
            assert status == 409 and stale["stale"], (path, status, stale)
        reloaded = await second.data()
        assert reloaded["draft"]["rationale"] == "tab one" and reloaded["base"] == saved["version"]
        assert (await second.data("/write"))["text"] == "tab one"
        assert _rows(second.study, "SELECT count(*) FROM judgments WHERE judge = 'ann'") == [(0,)]
        # Tab one (its base current) goes on saving on the new server.
        status, again = await second.post(
            "/api/judging/save", {"place": one["place"], "base": saved["version"], "draft": {"rationale": "one+"}}
        )
        assert status == 200 and int(again["version"]) > int(saved["version"])
        status, _ = await second.post(
            "/api/writing/save", {"place": written["place"], "base": wrote["version"], "text": "one+"}
        )
        assert status == 200
    finally:
        await second.client.close()
        store.close()


@pytest.mark.parametrize("base", [None, 5, "", "-1", "1e3", "٣", "9" * 20, "99999999999999999999", " 1"])
async def test_a_hostile_base_is_refused_with_its_field_named(served: Seat, base: object) -> None:
    data = await served.data()
    status, body = await served.post("/api/judging/save", {"place": data["place"], "base": base, "draft": {}})
    assert status == 400 and "base" in body["error"]
    assert _rows(served.study, "SELECT count(*) FROM expert_drafts") == [(0,)]


async def test_a_guesser_sharing_the_address_never_locks_out_an_expert_with_a_good_cookie(seat: Path) -> None:
    """Behind a reverse proxy without --trust-proxy everyone is one address: known-good cookies still pass."""
    clock = [1000.0]
    served, store = await _seat(seat, limits=Limits(failures=5, failure_window=60.0), clock=lambda: clock[0])
    try:
        assert (await served.client.get("/", headers=served.headers())).status == 200  # ann is known now
        for _ in range(5):
            assert (await served.client.get("/e/" + new_token())).status == 403
        assert (await served.client.get("/", headers={"Cookie": f"{COOKIE}={new_token()}"})).status == 429
        assert (await served.client.get("/", headers=served.headers())).status == 200  # ann: not locked out
        data = await served.data()
        status, _ = await served.post("/api/judging/save", {"place": data["place"], "base": data["base"], "draft": {}})
        assert status == 200
        assert (await served.client.get("/", headers=served.headers("bob"))).status == 429  # never seen: waits
        with Store(served.study.database) as other:
            revoke_link(served.study, other, "ann")
        assert (await served.client.get("/", headers=served.headers())).status == 403  # known, but revoked
    finally:
        await served.client.close()
        store.close()


async def test_with_trust_proxy_failures_count_per_forwarded_address(seat: Path) -> None:
    clock = [1000.0]
    served, store = await _seat(
        seat, limits=Limits(failures=5, failure_window=60.0), clock=lambda: clock[0], trust_proxy=True
    )
    try:
        guesser = {"X-Forwarded-For": "203.0.113.9"}
        for _ in range(5):
            assert (await served.client.get("/e/" + new_token(), headers=guesser)).status == 403
        assert (await served.client.get("/e/" + new_token(), headers=guesser)).status == 429
        # The guesser forging an earlier hop is still the proxy's last hop: blocked.
        forged = {"X-Forwarded-For": "198.51.100.1, 203.0.113.9"}
        assert (await served.client.get("/e/" + new_token(), headers=forged)).status == 429
        # An expert behind the same proxy, never seen before, opens their link.
        ann = {"X-Forwarded-For": "198.51.100.1"}
        opened = await served.client.get("/e/" + served.tokens["bob"], headers=ann)
        assert opened.status == 200 and COOKIE in opened.cookies
    finally:
        await served.client.close()
        store.close()


@pytest.mark.parametrize(
    ("remote", "forwarded", "trust", "counted"),
    [
        ("127.0.0.1", ["203.0.113.9"], False, "127.0.0.1"),  # not trusted: the peer
        ("127.0.0.1", [], True, "127.0.0.1"),  # no header: the peer
        ("127.0.0.1", ["198.51.100.1, 203.0.113.9"], True, "203.0.113.9"),  # the last hop
        ("127.0.0.1", ["198.51.100.1", "203.0.113.9 "], True, "203.0.113.9"),  # two headers: the last one
        ("127.0.0.1", ["2001:db8::1"], True, "2001:db8::1"),
        ("127.0.0.1", ["203.0.113.9, not-an-address"], True, "127.0.0.1"),  # junk last hop: the peer
        ("127.0.0.1", ["203.0.113.9,"], True, "127.0.0.1"),
        ("127.0.0.1", ["x" * 10_000], True, "127.0.0.1"),
        ("127.0.0.1", ["203.0.113.9\x00"], True, "127.0.0.1"),
        (None, ["unknown"], True, "?"),
    ],
    ids=range(10),
)
def test_the_counted_address_is_the_proxy_s_last_hop_only_when_trusted(
    remote: str | None, forwarded: list[str], trust: bool, counted: str
) -> None:
    from centaur_tui.serve.guard import client_address

    assert client_address(remote, forwarded, trust) == counted


def test_known_tokens_keep_hashes_only_and_forget_the_oldest() -> None:
    from centaur_tui.serve.guard import KnownTokens

    known = KnownTokens(limit=2)
    first, second, third = new_token(), new_token(), new_token()
    for token in (first, second, third):
        known.add(token)
    assert not known.has(first) and known.has(second) and known.has(third)
    assert not any(third.encode() in h for h in known._hashes)
    for hostile in (None, "", 5, "x" * 201, b"bytes"):
        assert not known.has(hostile)
