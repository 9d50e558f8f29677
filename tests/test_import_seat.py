"""The expert seat on imported public data (issue 22): each comparison's own prompt, and cut-off flags in packets.

A study of people only is imported in MT-Bench's layout (no task file: one generic task); a new
expert is assigned its comparisons and judges them through the services the terminal and HTML
seats use (`services.judging`), and through a judging packet.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from centaur_tui.catalog import load_session
from centaur_tui.domain.blinding import clean_text
from centaur_tui.domain.seat import JudgingError
from centaur_tui.services.exchange import import_packet
from centaur_tui.services.judging import PacketJudging, export_packet, open_judging
from centaur_tui.store import Store
from centaur_tui.store.packets import PacketError
from tests.support.judging import assign
from tests.test_import_public import _import, _mtbench, _study, _write
from tests.test_seat_services import _complete


def _question(qid: int, text: str) -> dict[str, object]:
    row = _mtbench(qid, "claude-v1", "alpaca-13b", "model_a", "author_0")
    for side in ("conversation_a", "conversation_b"):
        conversation = [dict(m) for m in row[side]]  # type: ignore[union-attr]
        conversation[0]["content"] = text
        row[side] = conversation
    return row


@pytest.fixture()
def imported(tmp_path: Path) -> Path:
    """Two questions under the generic task, each judged once; `newbie` is an expert with no judgment."""
    session = _study(tmp_path, "people", "mtbench")
    rows = [
        _question(81, "Plan a trip to Hawaii, in the style of claude-v1 if you can."),
        _question(82, "Explain \u201cphotosynthesis\u201d to a child."),
    ]
    file = _write(tmp_path, "human.jsonl", rows, crlf=False, bom=False)
    code, out = _import(session, file, "--new-judges-are-experts", "--add-experts", "newbie")
    assert code == 0, out
    assign(session, "newbie", 2)
    return session


def test_the_seat_shows_each_comparisons_own_prompt_masked_and_cleaned(imported: Path) -> None:
    study = load_session(imported)
    with Store(study.database) as store:
        seat = open_judging(study, store, "newbie")
        prompts = sorted(seat.item(q.key).task_prompt for q in seat.queue() if not seat.checks.owns(q.key))
    generic = study.task("mtbench").prompt
    assert generic not in prompts
    # A candidate's name in the question is masked like in a deliverable (the import refuses
    # control characters in it; the seat cleans it again, like any text it shows).
    assert prompts[0] == clean_text("Explain \u201cphotosynthesis\u201d to a child.")
    assert "claude" not in prompts[1].lower() and "[masked]" in prompts[1]
    assert prompts[1].startswith("Plan a trip to Hawaii")


def _cut_first_option(study_path: Path) -> str:
    """Mark option 1's text of newbie's first place as cut off at the length limit; its key."""
    study = load_session(study_path)
    with Store(study.database) as store:
        seat = open_judging(study, store, "newbie")
        key = next(q.key for q in seat.queue() if not seat.checks.owns(q.key))
        before = seat.item(key)
        assert before.cut_off == (False, False)
    with sqlite3.connect(study.database) as db:
        a, b, flipped = db.execute(
            "SELECT c.output_a, c.output_b, x.flipped FROM comparisons c JOIN expert_assignments x"
            " ON x.comparison_id = c.id WHERE x.id = ?",
            (int(key),),
        ).fetchone()
        db.execute("UPDATE outputs SET cut_off = 1 WHERE id = ?", (b if flipped else a,))
    return key


def test_a_packet_carries_the_cut_off_flags_as_the_session_seat_shows_them(imported: Path, tmp_path: Path) -> None:
    key = _cut_first_option(imported)
    study = load_session(imported)
    with Store(study.database) as store:
        seat = open_judging(study, store, "newbie")
        shown = seat.item(key)
        prompts = sorted(seat.item(q.key).task_prompt for q in seat.queue() if not seat.checks.owns(q.key))
        export_packet(store, study, seat.expert, tmp_path / "n.packet")
    assert shown.cut_off == (True, False) and shown.cut_off_note is not None
    packet = PacketJudging(tmp_path / "n.packet")
    try:
        items = {q.key: packet.item(q.key) for q in packet.queue()}
        cut = [i for i in items.values() if i.cut_off != (False, False)]
        assert [i.cut_off for i in cut] == [(True, False)] and cut[0].option_1 == shown.option_1
        assert cut[0].cut_off_note == shown.cut_off_note
        assert sorted(i.task_prompt for i in items.values()) == prompts
        for token, item in items.items():
            packet.submit(token, _complete(item))
    finally:
        packet.close()
    result = import_packet(study, tmp_path / "n.packet")
    assert result.added == 2


@pytest.mark.parametrize("value", ["00", "2x", ""])
def test_a_changed_cut_off_flag_fails_the_items_integrity_check(imported: Path, tmp_path: Path, value: str) -> None:
    _cut_first_option(imported)
    study = load_session(imported)
    with Store(study.database) as store:
        seat = open_judging(study, store, "newbie")
        export_packet(store, study, seat.expert, tmp_path / "n.packet")
    with sqlite3.connect(tmp_path / "n.packet") as db:
        db.execute("UPDATE items SET cut_off = ? WHERE cut_off = '10'", (value,))
    packet = PacketJudging(tmp_path / "n.packet")
    try:
        for q in packet.queue():
            if value == "00":
                assert packet.item(q.key).cut_off == (False, False)  # read as the file says ...
            else:
                with pytest.raises(JudgingError, match="cut-off flags cannot be read"):
                    packet.item(q.key)
                break
    finally:
        packet.close()
    # ... and refused on import: the item's HMAC covers its cut-off flags.
    with pytest.raises(PacketError, match="integrity check fails"):
        import_packet(study, tmp_path / "n.packet")
    with sqlite3.connect(study.database) as db:
        assert db.execute("SELECT count(*) FROM judgments WHERE judge = 'newbie'").fetchone() == (0,)
