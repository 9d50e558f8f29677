"""The organiser's console page of `centaur serve` (issue 27): its own token, revocable; expert tokens refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.blinding import Draft
from centaur_tui.domain.links import COOKIE, TOKEN_LENGTH
from centaur_tui.serve.server import ORGANISER_COOKIE, ExpertServer
from centaur_tui.services.console import build_console
from centaur_tui.services.judging import SessionJudging
from centaur_tui.services.links import make_link, make_organiser_link, revoke_organiser_link
from centaur_tui.services.session import expert
from centaur_tui.store import Store
from tests.support.experts import judged_session
from tests.support.judging import assign

NOTE = "<script>alert(1)</script> option 2 is cut off"


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    assign(path, "ann", 3)
    assign(path, "bob", 1)
    study = load_session(path)
    with Store(study.database) as store:
        source = SessionJudging(store, study, expert(study, store, "ann"))
        keys = [str(p.id) for p in source.rows.places()]
        rubric = source.item(keys[0]).rubric
        text = "the first one meets more of the brief than the second"
        source.submit(keys[0], Draft({d.id: [7, 5] for d in rubric.all}, "option_1", text, 40.0, 30.0, pasted_chars=0))  # type: ignore[misc]
        source.set_state(keys[1], "flagged", NOTE)
    return path


class Served:
    def __init__(self, client: TestClient, server: ExpertServer, organiser: str, ann: str, store: Store) -> None:
        self.client, self.server, self.organiser, self.ann, self.store = client, server, organiser, ann, store


@pytest.fixture
async def served(session: Path):
    study = load_session(session)
    with Store(study.database) as store:
        ann = make_link(study, store, "ann").token
        organiser, _ = make_organiser_link(store)
    assert ann
    store = Store(study.database)
    server = ExpertServer(study, store)
    client = TestClient(TestServer(server.application()))
    await client.start_server()
    try:
        yield Served(client, server, organiser, ann, store)
    finally:
        await client.close()
        store.close()


async def test_the_organiser_link_opens_the_console_with_the_services_figures(served: Served) -> None:
    response = await served.client.get("/o/" + served.organiser, allow_redirects=False)
    assert response.status == 200
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(ORGANISER_COOKIE + "=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert served.organiser not in await response.text()
    page = await served.client.get("/console", headers={"Cookie": f"{ORGANISER_COOKIE}={served.organiser}"})
    assert page.status == 200 and page.headers["Cache-Control"] == "no-store"
    html = await page.text()
    console = build_console(served.server.study, served.store)
    ann = next(e for e in console.experts if e.expert == "ann")
    assert f"<td>{ann.per_hour:.1f}</td>" in html and f"<td>{ann.done}/{ann.assigned}</td>" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; option 2 is cut off" in html and "<script>" not in html
    assert f"{console.done} judged of {console.assigned} places" in html
    assert 'id="burn"' in html and 'id="signals"' in html


async def test_expert_tokens_and_no_token_never_open_the_console(served: Served) -> None:
    served.server.failures.limit = 10_000
    for headers in (
        {},
        {"Cookie": f"{COOKIE}={served.ann}"},  # an expert's cookie
        {"Cookie": f"{ORGANISER_COOKIE}={served.ann}"},  # an expert's token as the organiser's cookie
        {"Cookie": f"{ORGANISER_COOKIE}={'x' * TOKEN_LENGTH}"},
        {"Cookie": f"{ORGANISER_COOKIE}={'é' * 500}"},
    ):
        response = await served.client.get("/console", headers=headers)
        assert response.status == 403, headers
        assert "ann" not in await response.text()
    for bad in ("/o/" + served.ann, "/o/", "/o/a/b", "/o/" + "A" * 5000, "/o/" + served.organiser[:-1]):
        refused = await served.client.get(bad, allow_redirects=False)
        assert refused.status == 403 and "Set-Cookie" not in refused.headers, bad
    # The organiser's token is no expert's: it opens no seat page.
    seat = await served.client.get("/", headers={"Cookie": f"{COOKIE}={served.organiser}"})
    assert seat.status == 403
    posted = await served.client.post("/console", headers={"Cookie": f"{ORGANISER_COOKIE}={served.organiser}"})
    assert posted.status == 405


async def test_a_revoked_or_renewed_organiser_link_is_refused_at_once(served: Served) -> None:
    headers = {"Cookie": f"{ORGANISER_COOKIE}={served.organiser}"}
    assert (await served.client.get("/console", headers=headers)).status == 200
    assert revoke_organiser_link(served.store) == 1
    assert (await served.client.get("/console", headers=headers)).status == 403
    assert revoke_organiser_link(served.store) == 0
    token, ended = make_organiser_link(served.store)
    again, ended_again = make_organiser_link(served.store)
    assert (ended, ended_again) == (0, 1)
    assert (await served.client.get("/console", headers={"Cookie": f"{ORGANISER_COOKIE}={token}"})).status == 403
    assert (await served.client.get("/console", headers={"Cookie": f"{ORGANISER_COOKIE}={again}"})).status == 200
    rows = served.store.read("SELECT token_hash FROM organiser_links")
    assert all(token not in r["token_hash"] and again not in r["token_hash"] for r in rows)  # hashes only


def test_the_organiser_link_command_prints_a_link_once_and_revokes_it(session: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(cli, ["organiser", "link", str(session), "--url", "http://127.0.0.1:9"])
    assert made.exit_code == 0, made.output
    assert "http://127.0.0.1:9/o/" in made.output
    revoked = runner.invoke(cli, ["organiser", "link", str(session), "--revoke"])
    assert revoked.exit_code == 0 and "revoked" in revoked.output
    none = runner.invoke(cli, ["organiser", "link", str(session), "--revoke"])
    assert none.exit_code == 0 and "nothing to revoke" in none.output
    unknown = runner.invoke(cli, ["organiser", "link", "nosuch"])
    assert unknown.exit_code == 2 and "nosuch" in unknown.output


async def test_the_html_seat_stores_the_characters_pasted_and_refuses_hostile_counts(tmp_path: Path) -> None:
    """A scripted expert pastes their rationale in the browser: the page sends the count, the judgment keeps it."""
    from tests.test_serve import RATIONALE, _complete, _seat, seat

    path = seat.__wrapped__(tmp_path)  # type: ignore[attr-defined]
    served, store = await _seat(path)
    try:
        data = await served.data()
        assert data["draft"]["pasted_chars"] is None  # nothing recorded yet: the page starts at 0
        place, base = data["place"], data["base"]
        for hostile in (-1, True, 1.5, "12", 10**9):
            status, body = await served.post(
                "/api/judging/save", {"place": place, "base": base, "draft": {"pasted_chars": hostile}}
            )
            assert status == 400 and "pasted_chars" in body["error"], hostile
        draft = {**_complete(data), "pasted_chars": 5}  # the practice place (stored apart from judgments)
        status, body = await served.post("/api/judging/submit", {"place": place, "base": base, "draft": draft})
        assert status == 200
        following = await served.data(body["next"])
        draft = {**_complete(following, "option_2"), "pasted_chars": 10_000}  # more than the rationale has
        status, _ = await served.post(
            "/api/judging/submit", {"place": following["place"], "base": following["base"], "draft": draft}
        )
        assert status == 200
        rows = store.read("SELECT rationale, pasted_chars FROM judgments WHERE judge = 'ann' ORDER BY id")
        assert [(r["rationale"], r["pasted_chars"]) for r in rows] == [(RATIONALE, len(RATIONALE))]
    finally:
        await served.client.close()
        store.close()
