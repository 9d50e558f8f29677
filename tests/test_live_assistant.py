"""The live assistant (issue 28): a human worker asks the condition's assistant while writing, through the organiser."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from centaur_tui.catalog import load_session
from centaur_tui.domain.links import COOKIE
from centaur_tui.domain.plan import DIALOGUE_STAGE
from centaur_tui.domain.prompts import DIALOGUE_CONSTRAINT
from centaur_tui.domain.seat import WorkError
from centaur_tui.serve.guard import csrf_token
from centaur_tui.serve.server import ExpertServer
from centaur_tui.services.links import make_link
from centaur_tui.services.live_assistant import MAX_QUESTION, LiveAssistant, live_dialogue_id
from centaur_tui.store import Store, dialogue_turns
from tests.support.dialogue import live_session

QUESTIONS = (
    "What should I check first?",
    "Here is my outline: feelings, validation, next steps. What does it miss?",
    "What should I verify before I submit?",
)
SECRET = "sk-live-assistant-test-secret-0123456789"


@pytest.fixture(scope="module")
def session_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return live_session(tmp_path_factory.mktemp("live"))


@pytest.fixture
def fresh(session_path: Path, tmp_path: Path) -> Path:
    """A copy of the run session, so each test starts with no question asked."""
    import shutil

    shutil.copy(session_path, tmp_path / "live.toml")
    shutil.copy(session_path.parent / "live.db", tmp_path / "live.db")
    return tmp_path / "live.toml"


def _place(path: Path, assisted: bool = True) -> tuple[str, int]:
    """(expert, work assignment) of an assisted place, or of a plain one (two experts, conditions Steady and plain)."""
    with sqlite3.connect(path.parent / "live.db") as conn:
        rows = conn.execute("SELECT expert, id, condition FROM work_assignments ORDER BY id").fetchall()
    return next((e, k) for e, k, c in rows if (c != "plain") == assisted)


def test_three_questions_are_answered_in_order_with_times_under_the_constraint(fresh: Path) -> None:
    study = load_session(fresh)
    expert, key = _place(fresh)
    with Store(study.database) as store:
        live = LiveAssistant(study, store, expert)
        assert live.state(key).offered and live.state(key).left == 3
        for q in QUESTIONS:
            turn = live.ask_blocking(key, q)
            assert turn.answer and turn.error is None
        state = live.state(key)
        assert [t.question for t in state.turns] == list(QUESTIONS) and state.left == 0
        assert all(t.asked_at <= (t.answered_at or "") for t in state.turns)
        stored = dialogue_turns(store, live_dialogue_id(key))
        assert [t.turn for t in stored] == [1, 2, 3] and all(t.worker_kind == "expert" for t in stored)
        assert all(t.seconds is not None and t.seconds >= 0 for t in stored)
        pipeline_turns = store.read_value("SELECT count(*) FROM calls WHERE stage = ?", (DIALOGUE_STAGE,))
        live_calls = store.read("SELECT messages, sample FROM calls WHERE sample LIKE 'live:%' ORDER BY created_at")
        assert len(live_calls) == 3
        for n, row in enumerate(live_calls, 1):
            sent = json.loads(row["messages"])
            asked = [m["content"] for m in sent[3::2]]
            assert len(asked) == n and all(DIALOGUE_CONSTRAINT in m for m in asked)
        with pytest.raises(WorkError, match="asked your 3 question"):
            live.ask_blocking(key, "A fourth question?")
    # The pipeline's two dialogues (3 rounds of a question and an answer each) and the 3 live answers: one stage.
    assert pipeline_turns == 2 * 2 * 3 + 3


@pytest.mark.parametrize(
    ("question", "message"),
    [("", "empty"), ("   \n\t", "empty"), ("x" * (MAX_QUESTION + 1), "at most"), (None, "empty"), (42, "empty")],
)
def test_hostile_questions_are_refused_and_nothing_is_sent_or_stored(
    fresh: Path, question: object, message: str
) -> None:
    study = load_session(fresh)
    expert, key = _place(fresh)
    with Store(study.database) as store:
        before = store.read_value("SELECT count(*) FROM calls")
        with pytest.raises(WorkError, match=message):
            LiveAssistant(study, store, expert).ask_blocking(key, question)
        assert store.read_value("SELECT count(*) FROM calls") == before
        assert not dialogue_turns(store, live_dialogue_id(key))


def test_plain_another_experts_place_and_a_submitted_one_are_refused(fresh: Path) -> None:
    study = load_session(fresh)
    expert, key = _place(fresh)
    other, plain = _place(fresh, assisted=False)
    assert other != expert
    with Store(study.database) as store:
        mine = LiveAssistant(study, store, other)
        assert not mine.state(plain).offered
        with pytest.raises(WorkError, match="without an assistant"):
            mine.ask_blocking(plain, "Any tips?")
        with pytest.raises(WorkError, match="no work assignment"):
            mine.ask_blocking(key, "Any tips?")  # another expert's place
        from centaur_tui.services.work import WorkDraft, open_work

        open_work(study, store, expert).submit(key, WorkDraft(text="Done."), 1)
        with pytest.raises(WorkError, match="submitted already"):
            LiveAssistant(study, store, expert).ask_blocking(key, "Too late?")


def test_a_session_of_one_turn_offers_no_questions(tmp_path: Path) -> None:
    path = live_session(tmp_path, turns=1)
    study = load_session(path)
    with Store(study.database) as store:
        expert, key = _place(path)
        live = LiveAssistant(study, store, expert)
        assert not live.state(key).offered
        with pytest.raises(WorkError, match="offers no questions"):
            live.ask_blocking(key, "Hello?")


def test_an_answer_that_names_a_model_is_masked_and_logged(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import centaur_tui.llm.simulated as simulated

    def naming(task, skill, rng) -> str:
        return "As Steady (simulated/steady, North family) and unlike Talker or GPT-4: check the brief first."

    monkeypatch.setattr(simulated, "dialogue_answer", naming)
    study = load_session(fresh)
    expert, key = _place(fresh)
    with Store(study.database) as store:
        turn = LiveAssistant(study, store, expert).ask_blocking(key, "Who are you?")
        assert turn.answer is not None
        for name in ("Steady", "steady", "Talker", "North", "GPT"):
            assert name not in turn.answer
        assert "[masked]" in turn.answer
        logged = {r["term"] for r in store.read("SELECT term FROM work_maskings WHERE assignment_id = ?", (key,))}
        assert {"Steady", "Talker", "North"} <= logged
        raw = dialogue_turns(store, live_dialogue_id(key))[0].answer
        assert raw is not None and "Steady" in raw  # the organiser's record keeps what was said


def test_a_provider_error_is_one_failed_turn_and_the_worker_goes_on(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from centaur_tui.llm import CallFailed
    from centaur_tui.pipeline.calls import Calls

    async def failing(self, *args, **kwargs):
        raise CallFailed("simulated provider: 503 mid-dialogue", "ServiceUnavailableError", 3)

    study = load_session(fresh)
    expert, key = _place(fresh)
    with Store(study.database) as store:
        live = LiveAssistant(study, store, expert)
        assert live.ask_blocking(key, QUESTIONS[0]).answer
        monkeypatch.setattr(Calls, "call", failing)
        failed = live.ask_blocking(key, QUESTIONS[1])
        assert failed.answer is None and failed.error and "could not answer" in failed.error
        monkeypatch.undo()
        assert live.state(key).left == 2  # a failed turn uses no question
        assert live.ask_blocking(key, QUESTIONS[1]).answer
        stored = dialogue_turns(store, live_dialogue_id(key))
        assert [(t.turn, t.outcome) for t in stored] == [(1, "answered"), (2, "failed"), (3, "answered")]
        assert "ServiceUnavailableError" in (stored[1].error or "")
        from centaur_tui.services.work import WorkDraft, open_work

        work = open_work(study, store, expert)
        assert work.save_draft(key, WorkDraft(text="Still writing."), 1)  # writing goes on


# -- the HTML seat -----------------------------------------------------------------------------------


async def test_the_html_seat_asks_three_questions_through_the_organisers_server(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # the organiser's process holds a key; the expert's never sees it
    study = load_session(fresh)
    expert, key = _place(fresh)
    with Store(study.database) as store:
        token = make_link(study, store, expert).token
    store = Store(study.database)
    server = ExpertServer(study, store)
    client = TestClient(TestServer(server.application()))
    await client.start_server()
    try:
        origin = str(client.make_url("")).rstrip("/")
        cookie = {"Cookie": f"{COOKIE}={token}"}
        post = {**cookie, "Origin": origin, "X-CSRF-Token": csrf_token(token)}
        url = "/write?place=" + server._handle("w", expert, key)
        page = await (await client.get(url, headers=cookie)).text()
        assert "Ask your assistant" in page and '<span id="live-left">3</span> of 3 question(s) left' in page
        data = json.loads(re.search(r'id="seat-data">(.*?)</script>', page, re.S).group(1))
        bodies = []
        for q in QUESTIONS:
            response = await client.post("/api/writing/ask", json={"place": data["place"], "question": q}, headers=post)
            assert response.status == 200, await response.text()
            bodies.append(await response.text())
        assert [json.loads(b)["left"] for b in bodies] == [2, 1, 0]
        refused = await client.post("/api/writing/ask", json={"place": data["place"], "question": "4th"}, headers=post)
        assert refused.status == 409 and "question" in (await refused.json())["error"]
        for bad in ({"question": 5}, {"question": ""}, {"question": "x" * (MAX_QUESTION + 1)}, {}):
            r = await client.post("/api/writing/ask", json={"place": data["place"], **bad}, headers=post)
            assert r.status in (400, 409), bad
        forged = await client.post("/api/writing/ask", json={"place": "forged", "question": "hi"}, headers=post)
        assert forged.status == 400
        no_csrf = await client.post("/api/writing/ask", json={"place": data["place"], "question": "hi"}, headers=cookie)
        assert no_csrf.status == 403
        page = await (await client.get(url, headers=cookie)).text()
        for q in QUESTIONS:
            assert json.dumps(q)[1:-1].replace('"', "&#34;") in page or q.replace('"', "&#34;") in page
        everything = page + "".join(bodies)
        assert SECRET not in everything
        for name in ("Steady", "Talker", "simulated/", "North", "South"):
            assert name not in everything, name
    finally:
        await client.close()
        store.close()
    with Store(study.database) as check:
        stored = dialogue_turns(check, live_dialogue_id(key))
        assert [t.question for t in stored] == list(QUESTIONS)
        assert all(t.asked_at and t.answered_at and t.asked_at <= t.answered_at for t in stored)


# -- the terminal seat ---------------------------------------------------------------------------------


@pytest.mark.slow
async def test_the_terminal_seat_asks_three_questions_from_the_work_screen(fresh: Path) -> None:
    from centaur_tui.ui.app import create_app
    from centaur_tui.ui.screens.session import SessionScreen
    from centaur_tui.ui.screens.work import AskAssistant, WorkScreen
    from tests.support.waits import wait_for

    expert, key = _place(fresh)
    app = create_app(sessions_dir=fresh.parent, session=fresh)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(
            pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.state is not None, "the overview"
        )
        app.screen.query_one("#experts").move_cursor(row=["ann", "bob"].index(expert))
        await pilot.pause()
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, WorkScreen) and not app.screen.busy, "the work screen")
        work = app.screen
        assert work.current is not None and work.current.key == key
        assert work.check_action("ask", ()) is True
        await pilot.press("f6")
        await wait_for(pilot, lambda: isinstance(app.screen, AskAssistant) and app.screen.state is not None, "ask")
        ask = app.screen
        assert ask.state.left == 3
        for n, question in enumerate(QUESTIONS, 1):
            ask.query_one("#ask-question").value = question
            await pilot.press("enter")
            await wait_for(
                pilot, lambda n=n: not ask.asking and ask.state is not None and len(ask.state.turns) == n, "an answer"
            )
        assert ask.state.left == 0 and ask.query_one("#ask-question").disabled
        shown = app.screen_text() if hasattr(app, "screen_text") else ""
        for name in ("Steady", "Talker", "simulated/"):
            assert name not in shown
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is work, "back to writing")
    study = load_session(fresh)
    with Store(study.database) as store:
        stored = dialogue_turns(store, live_dialogue_id(key))
    assert [t.question for t in stored] == list(QUESTIONS) and [t.turn for t in stored] == [1, 2, 3]
    assert all(t.outcome == "answered" and t.asked_at and t.answered_at for t in stored)


def test_work_report_gives_the_live_assistant_per_condition(fresh: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from centaur_tui.cli.main import cli

    study = load_session(fresh)
    expert, key = _place(fresh)
    with Store(study.database) as store:
        live = LiveAssistant(study, store, expert)
        for q in QUESTIONS[:2]:
            live.ask_blocking(key, q)
    out = tmp_path / "work.json"
    result = CliRunner().invoke(cli, ["work-report", str(fresh), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "Live assistant (questions while writing, at most 3 per deliverable" in result.output
    rows = {r["condition"]: r for r in json.loads(out.read_text("utf-8"))["live_assistant"]}
    assert rows["Steady"]["deliverables"] == 1 and rows["Steady"]["with_questions"] == 1
    assert rows["Steady"]["answered"] == 2 and rows["Steady"]["failed"] == 0
    assert rows["plain"]["answered"] == 0 and rows["plain"]["deliverables"] == 1
