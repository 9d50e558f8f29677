"""Flag notes (issue 24): one table, written through services.judging by both seats, moved out of meta, reported."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.seat import MAX_FLAG_NOTE, JudgingError
from centaur_tui.services.judging import PacketJudging, export_packet, open_judging
from centaur_tui.services.report import seat_section
from centaur_tui.store import Store, schema
from centaur_tui.store.connection import connect
from tests.support.experts import judged_session
from tests.support.judging import assign
from tests.support.seat import with_judging

V1 = Path(__file__).resolve().parent / "data" / "store_v1.db"


@pytest.fixture
def seat(tmp_path: Path):
    path = with_judging(judged_session(tmp_path), "expert_practice = 1")
    assign(path, "ann", 2)
    study = load_session(path)
    with Store(study.database) as store:
        yield study, store


def _notes(store: Store) -> list[tuple[str, str, str]]:
    return [(r["expert"], r["place"], r["note"]) for r in store.read("SELECT * FROM expert_flag_notes ORDER BY id")]


def test_a_flag_keeps_its_note_for_comparisons_and_checks_and_the_report_quotes_it(seat) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    practice = next(q.key for q in source.queue() if source.checks.owns(q.key))
    comparison = next(q.key for q in source.queue() if not source.checks.owns(q.key))
    source.set_state(comparison, "flagged", "  the task asks two things\x1b[2J  ")
    source.set_state(comparison, "flagged", "second look: still odd")
    source.set_state(practice, "flagged", "x" * (MAX_FLAG_NOTE + 500))
    source.set_state(comparison, "skipped")  # no note: nothing added
    source.set_state(practice, "flagged", "   ")  # blank: nothing added
    notes = _notes(store)
    assert [(e, p) for e, p, _ in notes] == [("ann", comparison), ("ann", comparison), ("ann", practice)]
    assert "\x1b" not in notes[0][2] and notes[0][2].startswith("the task asks two things")
    assert len(notes[2][2]) == MAX_FLAG_NOTE
    assert source.flag_notes(comparison) == [notes[0][2], "second look: still odd"]
    section = seat_section(study, store)
    row = next(r for r in section.rows if r.expert == "ann")
    assert row.flag_notes == 3 and [n.note for n in section.flag_notes] == [n for _, _, n in notes]
    task = source.item(comparison).task_title
    assert all(n.task is not None for n in section.flag_notes) and task


@pytest.mark.parametrize("note", [5, None, b"bytes", ["a"]])
def test_a_note_that_is_not_text_is_refused_and_nothing_is_written(seat, note: object) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    key = source.queue()[-1].key
    with pytest.raises(JudgingError, match="note must be text"):
        source.set_state(key, "flagged", note)  # type: ignore[arg-type]
    assert _notes(store) == [] and source.queue()[-1].state == "pending"


def test_a_note_with_another_state_or_an_unknown_place_is_refused(seat) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    key = source.queue()[-1].key
    with pytest.raises(JudgingError, match="only a flag"):
        source.set_state(key, "skipped", "why")
    with pytest.raises(JudgingError, match="no such place"):
        source.set_state("999999", "flagged", "why")
    assert _notes(store) == []


def test_a_packet_takes_no_note_and_says_so(seat, tmp_path: Path) -> None:
    study, store = seat
    source = open_judging(study, store, "ann")
    export_packet(store, study, source.expert, tmp_path / "a.packet")
    packet = PacketJudging(tmp_path / "a.packet")
    try:
        assert source.keeps_notes and not packet.keeps_notes
        key = packet.queue()[0].key
        with pytest.raises(JudgingError, match="keeps no flag notes"):
            packet.set_state(key, "flagged", "a note")
        packet.set_state(key, "flagged")
        assert packet.queue()[0].state == "flagged"
    finally:
        packet.close()


def test_notes_kept_in_meta_move_to_their_table(tmp_path: Path) -> None:
    """The migration moves `flag-note/EXPERT/PLACE` rows (hostile ones too) and leaves meta without them."""
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    conn = connect(path)
    try:
        before_notes = next(m.version for m in schema.MIGRATIONS if "expert_flag_notes" in m.summary) - 1
        schema.migrate(conn, path, target=before_notes)
        conn.executemany(
            "INSERT INTO meta (key, value) VALUES (?, ?)",
            [
                ("flag-note/ann/12", "odd task"),
                ("flag-note/b/o/b/c0ffee", "an expert id with slashes keeps them"),
                ("flag-note/ann/13", "   "),  # blank: dropped
                ("flag-note/", "no expert, no place"),  # malformed: dropped
                ("flag-note/ann/", "no place"),  # malformed: dropped
                ("flag-note//14", "no expert"),  # malformed: dropped
                ("other", "kept"),
            ],
        )
        schema.migrate(conn, path)
        rows = conn.execute("SELECT expert, place, note FROM expert_flag_notes ORDER BY id").fetchall()
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    finally:
        conn.close()
    assert sorted(rows) == [("ann", "12", "odd task"), ("b/o/b", "c0ffee", "an expert id with slashes keeps them")]
    assert meta["other"] == "kept" and not any(k.startswith("flag-note/") for k in meta)
    with sqlite3.connect(path) as plain:
        assert plain.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
