"""Issue 26 in the seat: the blind guess after a judgment, and the normalised presentation (services.judging)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import Draft, JudgingItem
from centaur_tui.domain.guessing import DONT_KNOW
from centaur_tui.domain.presentation import words
from centaur_tui.domain.seat import JudgingError
from centaur_tui.services.judging import open_judging
from centaur_tui.services.report import blinding_section
from centaur_tui.store import Store, session_blinding
from centaur_tui.store.guesses import guess_records
from tests.support.experts import judged_session
from tests.support.judging import RATIONALE, assign

LABEL = re.compile(r"Candidate [A-Z]\d*")


def _complete(item: JudgingItem) -> Draft:
    return Draft({d.id: [8, 3] for d in item.rubric.all}, "option_1", RATIONALE, 30.0, 20.0)  # type: ignore[arg-type]


def _session(tmp_path: Path, extra: str) -> Path:
    path = judged_session(tmp_path)
    with path.open("a", encoding="utf-8") as f:
        f.write("\n[blinding]\n" + extra + "\n")
    assign(path, "ann", 3)
    return path


def _judgments(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, comparison_id, judge, winner, rationale, revision FROM judgments").fetchall()
    finally:
        conn.close()


@pytest.fixture
def guessing(tmp_path: Path):
    path = _session(tmp_path, "guess_share = 1.0\nnormalise_presentation = true")
    study = load_session(path)
    with Store(study.database) as store:
        yield study, store


def test_the_guess_comes_after_the_judgment_with_blind_labels_only(guessing) -> None:
    study, store = guessing
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    item = source.item(key)
    assert source.guess_question(key) is None  # not judged yet: nothing asked
    with pytest.raises(JudgingError, match="judge this comparison first"):
        source.save_guess(key, "Candidate A")
    source.submit(key, _complete(item))
    question = source.guess_question(key)
    assert question is not None and question.option == 1 and question.answered is None
    assert question.labels[-1] == DONT_KNOW and all(LABEL.fullmatch(x) for x in question.labels[:-1])
    # Blinding is sacred: no label names a model or a family in any spelling the session masks.
    blinding = session_blinding(study)
    for label in question.labels:
        assert blinding.mask(label)[1] == [], label
    names = {m.name for m in study.session.models} | {m.family for m in study.session.models if m.family}
    names |= {m.model for m in study.session.models}
    assert not any(n.lower() in " ".join(question.labels).lower() for n in names)
    # The same labels after a reload (drawn from the session secret).
    again = open_judging(study, store, "ann").guess_question(key)
    assert again is not None and again.labels == question.labels


def test_a_guess_is_stored_apart_and_never_changes_the_judgment(guessing) -> None:
    study, store = guessing
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    source.submit(key, _complete(source.item(key)))
    before = _judgments(study.database)
    question = source.guess_question(key)
    assert question is not None
    for hostile in ("", "GPT-4o", "Candidate Z9", "candidate a", "Don't Know", "\x1b[2J", 3, None):
        with pytest.raises(JudgingError, match="labels offered"):
            source.save_guess(key, hostile)  # type: ignore[arg-type]
    assert guess_records(store) == []
    source.save_guess(key, question.labels[0])
    source.save_guess(key, DONT_KNOW)  # a second answer: the newest counts
    (record,) = guess_records(store)
    assert record.label == DONT_KNOW and record.guessed is None and record.candidates == len(question.labels) - 1
    assert record.truth in {m.name for m in study.session.models} | {"plain"}
    assert _judgments(study.database) == before
    assert open_judging(study, store, "ann").guess_question(key).answered == DONT_KNOW  # type: ignore[union-attr]
    section = blinding_section(study, store)
    assert section is not None
    (row,) = [g for g in section.guesses if g.group == "expert"]
    assert (row.name, row.guesses, row.dont_know, row.index) == ("ann", 1, 1, 0.0)


def test_no_guess_without_a_share_and_none_on_a_packet_or_unknown_place(tmp_path: Path) -> None:
    path = _session(tmp_path, "guess_share = 0.0")
    study = load_session(path)
    with Store(study.database) as store:
        source = open_judging(study, store, "ann")
        key = source.queue()[0].key
        source.submit(key, _complete(source.item(key)))
        assert source.guess_question(key) is None
        with pytest.raises(JudgingError, match="no guess"):
            source.save_guess(key, "Candidate A")
        assert source.guess_question("999999") is None


def test_the_normalised_presentation_keeps_every_word(tmp_path: Path) -> None:
    plain_path = _session(tmp_path / "a", "normalise_presentation = false")
    norm_path = _session(tmp_path / "b", "normalise_presentation = true")
    shown = []
    for path in (plain_path, norm_path):
        study = load_session(path)
        with Store(study.database) as store:
            source = open_judging(study, store, "ann")
            shown.append([source.item(q.key) for q in source.queue()])
    for written, normalised in zip(*shown, strict=True):
        assert words(written.option_1) == words(normalised.option_1)
        assert words(written.option_2) == words(normalised.option_2)
        assert "**" not in normalised.option_1 + normalised.option_2


async def test_the_html_seat_asks_the_guess_after_a_judgment_and_stores_it_apart(tmp_path: Path) -> None:
    from tests.support.seat import with_judging
    from tests.support.work import work_session
    from tests.test_serve import _complete as complete_page
    from tests.test_serve import _seat

    path = work_session(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + "\n[blinding]\nguess_share = 1.0\n", encoding="utf-8")
    assign(with_judging(path), "ann", 2)
    assign(path, "bob", 1)
    served, store = await _seat(path)
    try:
        data = await served.data()
        status, body = await served.post(
            "/api/judging/submit", {"place": data["place"], "base": data["base"], "draft": complete_page(data)}
        )
        assert status == 200 and body["guess"]["option"] == 1
        labels = body["guess"]["labels"]
        assert labels[-1] == DONT_KNOW and all(LABEL.fullmatch(x) for x in labels[:-1])
        page = await served.page("/judge")
        assert 'id="guess"' in page
        before = _judgments(served.study.database)
        for hostile in ("GPT", "", "x" * 101, 7, None):
            status, answer = await served.post("/api/judging/guess", {"place": data["place"], "label": hostile})
            assert status in (400, 409), (hostile, status, answer)
        status, answer = await served.post("/api/judging/guess", {"place": data["place"], "label": labels[0]})
        assert status == 200 and answer == {"stored": True}
        (record,) = guess_records(store)
        assert record.label == labels[0] and record.expert == "ann"
        assert _judgments(served.study.database) == before  # the guess never touches the judgment
    finally:
        await served.client.close()
        store.close()


async def test_the_terminal_seat_asks_the_guess_after_a_judgment_and_stores_it_apart(tmp_path: Path) -> None:
    from textual.widgets import OptionList

    from centaur_tui.ui.app import create_app
    from centaur_tui.ui.screens.dialogs import GuessDialog
    from tests.support.judging import fill_in, settle
    from tests.support.waits import wait_until

    path = _session(tmp_path, "guess_share = 1.0")
    app = create_app(sessions_dir=path.parent, session=path, expert="ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await settle(pilot)
        await fill_in(pilot, screen)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, GuessDialog), "the guess dialog")
        dialog = app.screen
        assert isinstance(dialog, GuessDialog)
        shown = [str(o.prompt) for o in dialog.query_one("#guess-options", OptionList).options]
        assert shown[-1] == DONT_KNOW and all(LABEL.fullmatch(x) for x in shown[:-1])
        text = " ".join(str(w.render()) for w in dialog.query("Static"))
        for name in ("Alpha", "Beta", "Gamma", "Delta", "North", "South", "East", "West"):
            assert name.lower() not in (text + " ".join(shown)).lower()
        await pilot.press("down", "enter")  # the second label
        await wait_until(pilot, lambda: not isinstance(app.screen, GuessDialog), "the dialog closed")
        await settle(pilot)
        study = load_session(path)
        with Store(study.database, readonly=True) as store:
            await wait_until(pilot, lambda: len(guess_records(store)) == 1, "the guess stored")
            (record,) = guess_records(store)
    assert record.label == shown[1] and record.expert == "ann"


def test_the_report_prints_blinding_in_text_markdown_and_json(guessing) -> None:
    from centaur_tui.report import ReportDocument, to_json, to_markdown, to_text
    from centaur_tui.services.report import session_report

    study, store = guessing
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    source.submit(key, _complete(source.item(key)))
    question = source.guess_question(key)
    assert question is not None
    source.save_guess(key, question.labels[0])
    document = session_report(study, store, bootstrap=0).document
    part = document.blinding
    assert part is not None and {r.presentation for r in part.identifiability} == {"as written", "normalised"}
    assert all(r.deliverables > 0 for r in part.identifiability)  # every cell keeps its n, classified or not
    text, markdown = to_text(document), to_markdown(document)
    for rendered in (text, markdown):
        assert "Blinding: can a classifier name the candidate" in rendered
        assert "Bang's blinding index" in rendered and "ann" in rendered
    again = ReportDocument.from_json(to_json(document))
    assert again.blinding == part
