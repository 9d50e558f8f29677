"""The seat's use cases through services.judging and services.writing (issue 21): hostile keys, incomplete and
repeated submissions, the lower-average fact, revisions, packets that cannot revise, one expert's work only."""

from __future__ import annotations

import inspect
import sqlite3
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import Draft, JudgingItem
from centaur_tui.domain.seat import JudgingError, WorkDraft, WorkError
from centaur_tui.services import work
from centaur_tui.services.judging import JudgingSource, PacketJudging, SessionJudging, export_packet, open_judging
from centaur_tui.services.writing import SessionWork, WorkSource
from centaur_tui.store import Store
from tests.support.experts import judged_session
from tests.support.judging import RATIONALE, assign
from tests.support.seat import with_judging
from tests.support.work import work_session

HOSTILE_KEYS = ["", "abc", "-1", "1.0", "999999", "1; DROP TABLE judgments", "c" + "0" * 19, "p123", "\x1b[2J", "٣"]
"""Keys no queue holds: empty, words, negative, float, unknown numbers, SQL, a check-shaped or packet-shaped
token, an escape sequence, a non-ASCII digit (str.isdigit accepts it, int() too)."""


def _counts(path: Path) -> tuple[int, ...]:
    conn = sqlite3.connect(path)
    try:
        counts = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("judgments", "expert_drafts")]
        checks = conn.execute("SELECT count(*) FROM expert_checks").fetchone()[0]
        return (*counts, checks, conn.execute("SELECT group_concat(state) FROM expert_assignments").fetchone()[0])
    finally:
        conn.close()


def _complete(item: JudgingItem, first: int = 8, second: int = 3, winner: str = "option_1") -> Draft:
    return Draft({d.id: [first, second] for d in item.rubric.all}, winner, RATIONALE, 30.0, 20.0)  # type: ignore[arg-type]


@pytest.fixture
def seat(tmp_path: Path):
    path = judged_session(tmp_path)
    assign(path, "ann", 3)
    assign(path, "bob", 2)
    study = load_session(path)
    with Store(study.database) as store:
        yield study, store


def test_the_stable_api_of_open_judging_keeps_every_method_of_the_judging_source(seat) -> None:
    """The HTML seat builds on `services.work.open_judging`: every JudgingSource method, same names and parameters."""
    study, store = seat
    source = work.open_judging(study, store, "ann")
    for name in (
        "queue",
        "item",
        "draft",
        "resume_key",
        "save_draft",
        "draft_version",
        "submit",
        "set_state",
        "revise",
        "submitted_before",
        "submitted_draft",
        "close",
    ):
        wanted = list(inspect.signature(getattr(JudgingSource, name)).parameters)[1:]
        assert list(inspect.signature(getattr(source, name)).parameters) == wanted, name
    typed: JudgingSource = source  # mypy checks both sources against the Protocol
    typed_work: WorkSource = SessionWork(store, study, study.session.experts[0])
    assert typed is source and typed_work.expert_name


def test_a_key_of_no_place_of_the_queue_is_refused_and_writes_nothing(seat) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    before = _counts(study.database)
    item = source.item(source.queue()[0].key)
    for key in HOSTILE_KEYS:
        for name, act in (
            ("item", lambda key=key: source.item(key)),
            ("submit", lambda key=key: source.submit(key, _complete(item))),
            ("save_draft", lambda key=key: source.save_draft(key, _complete(item), 5)),
            ("set_state", lambda key=key: source.set_state(key, "skipped")),
            ("submitted_draft", lambda key=key: source.submitted_draft(key)),
            ("revise", lambda key=key: source.revise(key, _complete(item))),
        ):
            with pytest.raises(JudgingError):
                act()
                pytest.fail(f"{name}({key!r}) was not refused")
        assert source.draft(key) is None and source.reference(key) is None
    assert _counts(study.database) == before


def test_another_experts_places_are_not_this_experts(seat) -> None:
    study, store = seat
    ann, bob = open_judging(study, store, "ann"), open_judging(study, store, "bob")
    theirs = bob.queue()[0].key
    item = bob.item(theirs)
    before = _counts(study.database)
    for act in (
        lambda: ann.item(theirs),
        lambda: ann.submit(theirs, _complete(item)),
        lambda: ann.save_draft(theirs, _complete(item), 1),
        lambda: ann.set_state(theirs, "flagged"),
    ):
        with pytest.raises(JudgingError, match="no such place in Ann"):
            act()
    assert ann.draft(theirs) is None and _counts(study.database) == before


@pytest.mark.parametrize("state", ["done", "", "SKIPPED", "pending; --", None])
def test_an_unknown_state_is_refused(seat, state) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    with pytest.raises(JudgingError, match="unknown state"):
        source.set_state(source.queue()[0].key, state)


def test_an_incomplete_draft_says_what_it_lacks_and_a_second_submit_keeps_the_first(seat) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    item = source.item(key)
    source.save_draft(key, Draft(rationale="half"), 1)
    for lacking, words in (
        (Draft(), "scores"),
        (Draft({d.id: [5, 5] for d in item.rubric.all}, None, RATIONALE), "winner"),
        (Draft({d.id: [5, 5] for d in item.rubric.all}, "option_1", "too short"), "rationale"),
    ):
        with pytest.raises(JudgingError, match=f"still missing: .*{words}"):
            source.submit(key, lacking)
    assert source.draft(key) is not None  # the draft survives a refused submit
    source.submit(key, _complete(item))
    assert source.draft(key) is None  # a stored judgment deletes its draft
    with pytest.raises(JudgingError, match="already judged"):
        source.submit(key, _complete(item, 2, 9, "option_2"))
    assert source.queue()[0].state == "done"


@pytest.mark.parametrize(
    ("scores", "winner", "confirmed", "stored"),
    [
        ((8, 3), "option_1", False, 0),  # the higher average wins: not a lower-average winner
        ((8, 3), "option_2", False, None),  # lower average, not confirmed
        ((8, 3), "option_2", True, 1),  # lower average, confirmed
        ((5, 5), "option_2", False, 0),  # equal averages
    ],
)
def test_the_lower_average_fact_is_stored_with_the_judgment(seat, scores, winner, confirmed, stored) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    key = source.queue()[0].key
    draft = _complete(source.item(key), *scores, winner)
    draft.confirmed_lower = confirmed
    source.submit(key, draft)
    assert store.read_value("SELECT lower_average_confirmed FROM judgments WHERE judge = 'ann'") == stored


def test_a_revision_is_the_next_row_and_steps_back_through_the_submissions(seat) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    first, second = (q.key for q in source.queue()[:2])
    for key in (first, second):
        source.submit(key, _complete(source.item(key)))
    latest = source.submitted_before(None)
    assert latest is not None and latest.key == second
    back = source.submitted_before(second)
    assert back is not None and back.key == first and source.submitted_before(first) is None
    stored = source.submitted_draft(first)
    assert stored.winner == "option_1" and stored.rationale == RATIONALE
    source.revise(first, _complete(source.item(first), 2, 9, "option_2"))
    assert source.submitted_draft(first).winner == "option_2"
    assert store.read_value("SELECT count(*) FROM judgments WHERE judge = 'ann'") == 3  # append-only
    assert source.submitted_before(None).key == first  # the revision is the latest submission
    with pytest.raises(JudgingError, match="no stored judgment"):
        source.submitted_draft(source.queue()[2].key)


def test_practice_and_gold_are_judged_apart_and_practice_answers_with_its_reference(tmp_path: Path) -> None:
    path = with_judging(judged_session(tmp_path), "expert_gold_rate = 0.5", "expert_practice = 1")
    assign(path, "ann", 2)
    study = load_session(path)
    with Store(study.database) as store:
        source = open_judging(study, store, "ann")
        checks = [q for q in source.queue() if source.checks.owns(q.key)]
        assert len(checks) == 2 and checks[0].practice and not checks[1].practice
        for q in checks:
            assert source.reference(q.key) is None  # not judged yet
            with pytest.raises(JudgingError, match="still missing"):
                source.submit(q.key, Draft())
            source.submit(q.key, _complete(source.item(q.key)))
            with pytest.raises(JudgingError, match="already judged"):
                source.submit(q.key, _complete(source.item(q.key)))
        assert "reference verdict" in (source.reference(checks[0].key) or "")
        assert source.reference(checks[1].key) is None  # gold never says it was gold
        assert store.read_value("SELECT count(*) FROM judgments WHERE judge = 'ann'") == 0
        assert store.read_value("SELECT count(judged_at) FROM expert_checks WHERE expert = 'ann'") == 2


def test_a_packet_judges_with_the_same_rules_and_cannot_revise(seat, tmp_path: Path) -> None:
    study, store = seat
    ann = open_judging(study, store, "ann")
    export_packet(store, study, ann.expert, tmp_path / "a.packet")
    packet = PacketJudging(tmp_path / "a.packet")
    try:
        typed: JudgingSource = packet
        assert not typed.can_revise and isinstance(ann, SessionJudging) and ann.can_revise
        key = packet.queue()[0].key
        item = packet.item(key)
        with pytest.raises(JudgingError, match="still missing"):
            packet.submit(key, Draft())
        for hostile in HOSTILE_KEYS:
            with pytest.raises(JudgingError):
                packet.item(hostile)
            with pytest.raises(JudgingError):
                packet.save_draft(hostile, Draft(), 1)
            with pytest.raises(JudgingError):
                packet.set_state(hostile, "skipped")
        with pytest.raises(JudgingError, match="unknown state"):
            packet.set_state(key, "done")
        packet.submit(key, _complete(item))
        with pytest.raises(JudgingError, match="already judged"):
            packet.submit(key, _complete(item))
        assert packet.submitted_before(None) is None and packet.reference(key) is None
        with pytest.raises(JudgingError, match="cannot revise"):
            packet.revise(key, _complete(item))
        with pytest.raises(JudgingError, match="cannot revise"):
            packet.submitted_draft(key)
    finally:
        packet.close()


def test_an_expert_worker_reaches_only_their_own_tasks_and_an_empty_deliverable_is_refused(tmp_path: Path) -> None:
    path = work_session(tmp_path)
    study = load_session(path)
    with Store(study.database) as store:
        ann, bob = work.open_work(study, store, "ann"), work.open_work(study, store, "bob")
        mine, theirs = ann.queue()[0].key, bob.queue()[0].key
        outputs = store.read_value("SELECT count(*) FROM outputs")
        for key in (theirs, -1, 0, 10**9):
            for act in (
                lambda key=key: ann.item(key),
                lambda key=key: ann.draft(key),
                lambda key=key: ann.save_draft(key, WorkDraft("mine now"), 1),
                lambda key=key: ann.submit(key, WorkDraft("mine now"), 1),
            ):
                with pytest.raises(WorkError):
                    act()
        assert bob.draft(theirs) is None
        for empty in ("", "   \n\t "):
            with pytest.raises(WorkError, match="empty"):
                ann.submit(mine, WorkDraft(empty), 1)
        assert ann.save_draft(mine, WorkDraft("a start"), 1) and not ann.save_draft(mine, WorkDraft("older"), 0)
        ann.submit(mine, WorkDraft("## Done\n\nThe deliverable."), 2)
        with pytest.raises(WorkError, match="already submitted"):
            ann.submit(mine, WorkDraft("again"), 3)
        assert not ann.save_draft(mine, WorkDraft("after"), 9)  # locked
        assert store.read_value("SELECT count(*) FROM outputs") == outputs + 1
        assert ann.next_place() is not None and ann.next_place().key != mine


def _draft_sources(tmp_path: Path, store: Store, study) -> list[tuple[str, JudgingSource, str]]:
    """One place of each kind a seat saves drafts of: a comparison, a practice check, a packet place, a task."""
    session = open_judging(study, store, "ann")
    comparison = next(q.key for q in session.queue() if not session.checks.owns(q.key))
    practice = next(q.key for q in session.queue() if session.checks.owns(q.key))
    export_packet(store, study, session.expert, tmp_path / "a.packet")
    packet = PacketJudging(tmp_path / "a.packet")
    return [
        ("comparison", session, comparison),
        ("check", session, practice),
        ("packet", packet, packet.queue()[0].key),
    ]


def test_save_draft_says_whether_it_was_stored_and_refuses_another_base(tmp_path: Path) -> None:
    path = with_judging(judged_session(tmp_path), "expert_practice = 1")
    assign(path, "ann", 2)
    study = load_session(path)
    with Store(study.database) as store:
        for kind, source, key in _draft_sources(tmp_path, store, study):
            assert source.draft_version(key) == 0, kind
            assert source.save_draft(key, Draft(rationale="first"), 100, base=0), kind
            assert source.draft_version(key) == 100, kind
            # An older version, the same version, and a save made on another base: not stored.
            assert not source.save_draft(key, Draft(rationale="older"), 50), kind
            assert not source.save_draft(key, Draft(rationale="same"), 100), kind
            assert not source.save_draft(key, Draft(rationale="stale"), 200, base=0), kind
            assert not source.save_draft(key, Draft(rationale="stale"), 200, base=99), kind
            assert (source.draft(key) or Draft()).rationale == "first", kind
            # The current base, or no base at all (the terminal seat): stored.
            assert source.save_draft(key, Draft(rationale="second"), 200, base=100), kind
            assert source.save_draft(key, Draft(rationale="third"), 300), kind
            assert (source.draft(key) or Draft()).rationale == "third" and source.draft_version(key) == 300, kind
            source.close()
        work_path = work_session(tmp_path / "w")
        work_study = load_session(work_path)
        with Store(work_study.database) as work_store:
            writing = work.open_work(work_study, work_store, work_study.session.human_workers.experts[0])  # type: ignore[union-attr]
            task = writing.queue()[0].key
            assert writing.draft_version(task) == 0
            assert writing.save_draft(task, WorkDraft("first"), 100, base=0)
            assert not writing.save_draft(task, WorkDraft("stale"), 200, base=0)
            assert writing.save_draft(task, WorkDraft("second"), 200, base=100)
            assert (writing.draft(task) or WorkDraft()).text == "second" and writing.draft_version(task) == 200
