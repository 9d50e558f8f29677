"""Issue 26 in the seat: the blind guess after a judgment, and the normalised presentation (services.judging)."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import Draft, JudgingItem
from centaur_tui.domain.guessing import MAX_GUESS_CHARS, QUESTION, GuessMatcher, score_guess, suspects
from centaur_tui.domain.presentation import words
from centaur_tui.domain.seat import JudgingError
from centaur_tui.services.judging import open_judging
from centaur_tui.services.report import blinding_section
from centaur_tui.store import Store, session_blinding
from centaur_tui.store.guesses import guess_records
from tests.support.experts import judged_session
from tests.support.judging import RATIONALE, assign

NAMES = ("Alpha", "Beta", "Gamma", "Delta", "North", "South", "East", "West")


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


def test_the_guess_comes_after_the_judgment_as_a_question_naming_nobody(guessing) -> None:
    study, store = guessing
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    item = source.item(key)
    assert source.guess_question(key) is None  # not judged yet: nothing asked
    with pytest.raises(JudgingError, match="judge this comparison first"):
        source.save_guess(key, "Alpha")
    source.submit(key, _complete(item))
    question = source.guess_question(key)
    assert question is not None and question.option == 1 and question.answered is None
    assert question.text == QUESTION
    # Blinding is sacred: the question names no model or family in any spelling the session masks.
    assert session_blinding(study).mask(question.text)[1] == []
    assert not any(n.lower() in question.text.lower() for n in NAMES)
    again = open_judging(study, store, "ann").guess_question(key)
    assert again == question


def _judged_place(study, store, model_written: bool = True):
    """Judge places until one whose option 1 a model wrote (not the unaided 'plain'); its key and truth."""
    source = open_judging(study, store, "ann")
    for q in source.queue():
        source.submit(q.key, _complete(source.item(q.key)))
        source.save_guess(q.key, "")
        truth = guess_records(store)[-1].truth
        if (truth != "plain") == model_written:
            return source, q.key, truth
    raise AssertionError("no such place")


def test_a_free_text_guess_is_matched_stored_apart_and_never_changes_the_judgment(guessing) -> None:
    study, store = guessing
    source, key, truth = _judged_place(study, store)
    family = study.session.model(truth).family
    other = next(m for m in study.session.models if m.family != family)
    before = _judgments(study.database)

    def stored(text: object) -> tuple[str, str | None, str, str]:
        source.save_guess(key, text)  # type: ignore[arg-type]
        mine = [g for g in guess_records(store) if g.assignment_id == guess_records(store)[-1].assignment_id]
        g = next(r for r in guess_records(store) if r.label == mine[-1].label and r.truth == truth)
        return g.label, g.guessed, g.outcome, g.family_outcome

    for hostile in (3, None, ["Alpha"]):
        with pytest.raises(JudgingError, match="must be text"):
            source.save_guess(key, hostile)  # type: ignore[arg-type]
    assert stored("") == ("", None, "dont_know", "dont_know")
    assert stored(f"  I think {truth.upper()}  ") == (f"I think {truth.upper()}", truth, "correct", "correct")
    # The spellings masking catches: Cyrillic look-alikes, full-width, zero-width, bidirectional overrides.
    homoglyph = truth.replace("a", "\u0430").replace("e", "\u0435").replace("o", "\u043e")
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in truth)
    for spelled in (homoglyph, fullwidth, "\u202e" + truth[:2] + "\u200b" + truth[2:] + "\u202c"):
        label, guessed, outcome, _ = stored(spelled)
        assert (guessed, outcome) == (truth, "correct"), spelled
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u200b]", label)
    assert stored(family)[2:] == ("family_only", "correct")
    assert stored(other.name)[1:] == (other.name, "incorrect", "incorrect")
    # Two names, one of them right: a hedge, counted incorrect.
    assert stored(f"{truth} or {other.name}")[1:] == (None, "incorrect", "incorrect")
    assert stored("some lab in Paris")[1:] == (None, "unmatched", "unmatched")
    label, _, outcome, _ = stored("\x1b[2J" + "x" * 10_000 + truth)
    assert len(label) == MAX_GUESS_CHARS and "\x1b" not in label and outcome == "unmatched"  # cut before the name
    assert _judgments(study.database) == before  # the guess never touches the judgment
    source.save_guess(key, f"maybe {truth}")
    assert open_judging(study, store, "ann").guess_question(key).answered == f"maybe {truth}"  # type: ignore[union-attr]
    section = blinding_section(study, store)
    assert section is not None
    rows = {(r.level, r.group): r for r in section.guesses if r.name == "ann"}
    assert rows[("candidate", "expert")].correct >= 1 and rows[("family", "expert")].correct >= 1
    assert all(r.guesses == len(guess_records(store)) for r in rows.values())


def test_the_matcher_on_the_session_names_two_levels_and_hedges(guessing) -> None:
    study, _ = guessing
    pool = suspects(study.session, "automation", ["Alpha", "Beta", "Gamma", "Delta"])
    matcher = GuessMatcher(pool)
    alpha = next(s for s in pool if s.name == "Alpha")
    cases = {
        "alpha": ("correct", "correct"),
        "ALPHA by North": ("correct", "correct"),
        "simulated/alpha": ("correct", "correct"),
        "\u0391\u217c\u0440\u04bb\u0430": ("correct", "correct"),  # Greek, Roman numeral, Cyrillic look-alikes
        "north": ("family_only", "correct"),
        "Beta": ("incorrect", "correct"),  # the same family: right at the family level only
        "Gamma": ("incorrect", "incorrect"),
        "alpha or gamma": ("incorrect", "incorrect"),
        "alpha, beta": ("incorrect", "correct"),
        "GPT-5": ("unmatched", "unmatched"),
        "alphabet": ("unmatched", "unmatched"),
        " \t\n": ("dont_know", "dont_know"),
    }
    for text, expected in cases.items():
        assert score_guess(matcher.match(text), alpha, 3) == expected, text
    assert score_guess(matcher.match("alpha"), alpha, 1) == ("correct", "one_family")


def test_no_guess_without_a_share_and_none_on_a_packet_or_unknown_place(tmp_path: Path) -> None:
    path = _session(tmp_path, "guess_share = 0.0")
    study = load_session(path)
    with Store(study.database) as store:
        source = open_judging(study, store, "ann")
        key = source.queue()[0].key
        source.submit(key, _complete(source.item(key)))
        assert source.guess_question(key) is None
        with pytest.raises(JudgingError, match="no guess"):
            source.save_guess(key, "Alpha")
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
        assert body["guess"] == {"option": 1, "question": QUESTION, "answered": ""}  # no list, no name
        page = await served.page("/judge")
        assert 'id="guess-text"' in page and "Candidate A" not in page
        before = _judgments(served.study.database)
        for hostile in ("x" * 20_001, 7, None, ["Alpha"]):
            status, answer = await served.post("/api/judging/guess", {"place": data["place"], "text": hostile})
            assert status == 400, (hostile, status, answer)
        status, answer = await served.post("/api/judging/guess", {"place": data["place"], "label": "Alpha"})
        assert status == 400  # the old field: refused, nothing stored
        assert guess_records(store) == []
        status, answer = await served.post(
            "/api/judging/guess", {"place": data["place"], "text": "\u202eAlpha\x1b[2J" + "y" * 10_000}
        )
        assert status == 200 and answer == {"stored": True}  # says nothing of what the text matched
        (record,) = guess_records(store)
        assert record.label.startswith("Alpha [2J") and len(record.label) == MAX_GUESS_CHARS and record.expert == "ann"
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
        assert not dialog.query(OptionList)  # no candidate list
        text = " ".join(str(w.render()) for w in dialog.query("Static"))
        assert QUESTION in text
        for name in NAMES:
            assert name.lower() not in text.lower()
        await pilot.press(*"gamma?")
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, GuessDialog), "the dialog closed")
        await settle(pilot)
        study = load_session(path)
        with Store(study.database, readonly=True) as store:
            await wait_until(pilot, lambda: len(guess_records(store)) == 1, "the guess stored")
            (record,) = guess_records(store)
    assert record.label == "gamma?" and record.expert == "ann"
    assert record.outcome == ("correct" if record.truth == "Gamma" else "incorrect")


def test_the_report_prints_blinding_in_text_markdown_and_json(guessing) -> None:
    from centaur_tui.report import ReportDocument, to_json, to_markdown, to_text
    from centaur_tui.services.report import session_report

    study, store = guessing
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    source.submit(key, _complete(source.item(key)))
    assert source.guess_question(key) is not None
    source.save_guess(key, "Alpha")
    document = session_report(study, store, bootstrap=0).document
    part = document.blinding
    assert part is not None and {r.presentation for r in part.identifiability} == {"as written", "normalised"}
    assert all(r.deliverables > 0 for r in part.identifiability)  # every cell keeps its n, classified or not
    text, markdown = to_text(document), to_markdown(document)
    for rendered in (text, markdown):
        assert "Blinding: can a classifier name the candidate" in rendered
        assert "Bang's blinding index" in rendered and "ann" in rendered and "family only" in rendered
    again = ReportDocument.from_json(to_json(document))
    assert again.blinding == part
