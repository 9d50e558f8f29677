"""Tests of the tamper-evident record: the hash chain, its migration, `centaur verify` and the report's head."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
from centaur_tui.store import Store, chain_head, verify_store
from centaur_tui.store.chain import CHAINED, GENESIS, link_hash
from tests.support.experts import judged_session
from tests.support.judging import assign
from tests.support.reports import cli_doc
from tests.support.seat import judge_comparisons

V1 = Path(__file__).resolve().parent / "data" / "store_v1.db"


def _verify(path: Path) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["verify", str(path), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def _db(session: Path) -> Path:
    return load_session(session).database


def _at(conn: sqlite3.Connection, position: int) -> int:
    """The judgment id at a chain position."""
    return conn.execute("SELECT id FROM judgments WHERE chain_seq = ?", (position,)).fetchone()[0]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    path = judged_session(tmp_path)
    assign(path, "ann", 4)
    assert judge_comparisons(path, "ann") == 4  # expert judgments join the chain after the LLM ones
    return path


def test_an_untouched_database_verifies_clean_and_the_report_prints_its_head(session: Path) -> None:
    status, out = _verify(session)
    assert status == 0 and out["clean"] and out["breaks"] == []
    db = _db(session)
    with Store(db, readonly=True) as store:
        n = store.read_value("SELECT count(*) FROM judgments")
        experts = store.read_value("SELECT count(*) FROM judgments WHERE judge_kind = 'expert'")
    assert experts == 4 and out["length"] == n == out["rows"]["judgments"]
    assert out["head"] == out["recomputed_head"] != GENESIS
    doc = cli_doc(session)
    assert doc.record is not None and (doc.record.head, doc.record.length) == (out["head"], n)
    assert json.loads(doc.to_json())["record"] == {"head": out["head"], "length": n}
    text = CliRunner().invoke(cli, ["report", str(session)])
    assert text.exit_code == 0 and f"Chain head {out['head']}" in text.stdout


def test_every_chained_row_links_to_the_one_before_it(session: Path) -> None:
    conn = sqlite3.connect(_db(session))
    rows = sorted(
        r
        for t in CHAINED
        for r in conn.execute(f"SELECT chain_seq, chain_content, chain_hash FROM {t.table} WHERE chain_seq IS NOT NULL")
    )
    previous = GENESIS
    for i, (seq, content, value) in enumerate(rows, start=1):
        assert seq == i and value == link_hash(previous, seq, content)
        previous = value
    head = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'chain_%'").fetchall())
    conn.close()
    assert head == {"chain_head": previous, "chain_length": str(len(rows))}


def _edit_field(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    jid = _at(c, 5)
    c.execute("UPDATE judgments SET rationale = rationale || ' (edited)' WHERE id = ?", (jid,))
    return "judgments", str(jid), 5


def _edit_winner(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    jid = _at(c, 7)
    # One statement: two in a row swapped a winner of option1 to option2 and straight back (no tamper at all).
    c.execute(
        "UPDATE judgments SET winner = CASE WHEN winner = option1 THEN option2 ELSE option1 END WHERE id = ?", (jid,)
    )
    return "judgments", str(jid), 7


def _edit_score(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    jid = _at(c, 3)
    c.execute(
        "UPDATE scores SET score = 11 - score WHERE rowid = (SELECT min(rowid) FROM scores WHERE judgment_id = ?)",
        (jid,),
    )
    return "judgments", str(jid), 3


def _delete_row(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    jid = _at(c, 4)
    c.execute("DELETE FROM scores WHERE judgment_id = ?", (jid,))
    c.execute("DELETE FROM judgments WHERE id = ?", (jid,))
    return "judgments", str(_at(c, 5)), 5


def _delete_last_row(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    last = int(c.execute("SELECT value FROM meta WHERE key = 'chain_length'").fetchone()[0])
    jid = _at(c, last)
    c.execute("DELETE FROM scores WHERE judgment_id = ?", (jid,))
    c.execute("DELETE FROM judgments WHERE id = ?", (jid,))
    return "meta", "chain_head", last - 1


def _reorder_positions(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    a, b = _at(c, 6), _at(c, 7)
    c.execute("UPDATE judgments SET chain_seq = 7 WHERE id = ?", (a,))
    c.execute("UPDATE judgments SET chain_seq = 6 WHERE id = ?", (b,))
    return "judgments", str(b), 6


def _reorder_ids(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    a, b = _at(c, 8), _at(c, 9)
    for table, column in (("judgments", "id"), ("scores", "judgment_id")):
        c.execute(f"UPDATE {table} SET {column} = -1 WHERE {column} = ?", (a,))
        c.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (a, b))
        c.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = -1", (b,))
    return "judgments", str(b), 8


def _insert_row(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    cols = [r[1] for r in c.execute("PRAGMA table_info(judgments)") if r[1] != "id" and not r[1].startswith("chain_")]
    listed = ", ".join(cols)
    c.execute(
        f"INSERT INTO judgments ({listed}) SELECT {listed.replace('revision', 'revision + 7')} FROM judgments"
        " WHERE id = ?",
        (_at(c, 2),),
    )
    return "judgments", str(c.execute("SELECT max(id) FROM judgments").fetchone()[0]), None


def _insert_forged_row(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    """An inserted row that copies the chain columns of the last row onto the next position."""
    cols = [r[1] for r in c.execute("PRAGMA table_info(judgments)") if r[1] != "id" and not r[1].startswith("chain_")]
    listed = ", ".join(cols)
    last = int(c.execute("SELECT value FROM meta WHERE key = 'chain_length'").fetchone()[0])
    c.execute(
        f"INSERT INTO judgments ({listed}, chain_seq, chain_content, chain_hash) SELECT"
        f" {listed.replace('revision', 'revision + 7')}, chain_seq + 1, chain_content, chain_hash FROM judgments"
        " WHERE chain_seq = ?",
        (last,),
    )
    return "judgments", str(c.execute("SELECT max(id) FROM judgments").fetchone()[0]), last + 1


def _replace_head(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    c.execute("UPDATE meta SET value = ? WHERE key = 'chain_head'", ("ab" * 32,))
    length = int(c.execute("SELECT value FROM meta WHERE key = 'chain_length'").fetchone()[0])
    return "meta", "chain_head", length


def _expert_rationale(c: sqlite3.Connection) -> tuple[str, str, int | None]:
    jid, seq = c.execute("SELECT id, chain_seq FROM judgments WHERE judge_kind = 'expert' ORDER BY id").fetchone()
    c.execute("UPDATE judgments SET rationale = 'a planted rationale' WHERE id = ?", (jid,))
    return "judgments", str(jid), seq


TAMPERS: dict[str, Callable[[sqlite3.Connection], tuple[str, str, int | None]]] = {
    "edit a rationale": _edit_field,
    "edit a winner": _edit_winner,
    "edit a score": _edit_score,
    "edit an expert's rationale": _expert_rationale,
    "delete a row": _delete_row,
    "delete the last row": _delete_last_row,
    "reorder two positions": _reorder_positions,
    "reorder two row ids": _reorder_ids,
    "insert a row": _insert_row,
    "insert a forged row": _insert_forged_row,
    "replace the chain head": _replace_head,
}


@pytest.mark.parametrize("tamper", sorted(TAMPERS))
def test_a_tampered_database_names_the_first_broken_row(session: Path, tamper: str) -> None:
    conn = sqlite3.connect(_db(session), isolation_level=None)
    conn.execute("PRAGMA foreign_keys = OFF")
    table, row_id, position = TAMPERS[tamper](conn)
    conn.close()
    status, out = _verify(session)
    assert status == 1 and not out["clean"]
    first = out["breaks"][0]
    assert (first["table"], first["row_id"], first["position"]) == (table, row_id, position), first


def test_the_text_of_a_break_names_table_row_and_what_differs(session: Path) -> None:
    conn = sqlite3.connect(_db(session), isolation_level=None)
    _table, row_id, _position = _edit_field(conn)
    conn.close()
    result = CliRunner().invoke(cli, ["verify", str(session)])
    assert result.exit_code == 1
    assert f"chain broken at judgments row {row_id} (chain position 5)" in result.stderr
    assert "content differs" in result.stderr and "Traceback" not in result.output


def test_an_old_database_opens_migrates_and_verifies_clean(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    with Store(path) as store:
        check = verify_store(store)
        order = store.read_table("SELECT created_at, id FROM judgments ORDER BY chain_seq").rows
        locked = store.read_value("SELECT chain_seq FROM work_drafts WHERE locked = 1")
    assert (
        check.clean
        and check.length == 33
        and check.rows
        == {
            "judgments": 32,
            "work_drafts": 1,
            "expert_maskings": 0,
            "work_maskings": 0,
            "adjudications": 0,
            "adjudication_reopenings": 0,
        }
    )
    assert order == sorted(order)  # back-filled in insertion order: write time, then row id
    assert locked is not None
    # The same back-fill on a second copy gives the same head: nothing random or clock-bound in it.
    again = tmp_path / "again.db"
    shutil.copy(V1, again)
    with Store(again) as store:
        assert chain_head(store) == (check.head, 33)


def test_a_submitted_deliverable_is_chained_and_an_edit_to_it_is_found(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    Store(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    key = conn.execute("SELECT assignment_id FROM work_drafts WHERE locked = 1").fetchone()[0]
    conn.execute("UPDATE work_drafts SET text = text || ' more' WHERE assignment_id = ?", (key,))
    conn.close()
    with Store(path, readonly=True) as store:
        check = verify_store(store)
    assert [(b.table, b.row_id) for b in check.breaks] == [("work_drafts", str(key))]


def test_two_writers_at_once_never_fork_the_chain(session: Path) -> None:
    db = _db(session)
    with Store(db, readonly=True) as store:
        base = store.read("SELECT * FROM judgments WHERE judge_kind = 'llm' AND valid = 1 ORDER BY id LIMIT 1")[0]
        scores = store.read(
            "SELECT candidate, dimension, dimension_kind, score FROM scores WHERE judgment_id = ?", (base["id"],)
        )
        before = chain_head(store)[1]

    def record(revision: int) -> JudgmentRecord:
        keep = ("comparison_id", "judge", "judge_kind", "judge_family", "presentation", "option1", "option2")
        return JudgmentRecord(
            **{k: base[k] for k in keep},
            winner=base["winner"],
            option1_mean=base["option1_mean"],
            option2_mean=base["option2_mean"],
            valid=True,
            invalid_reason=None,
            rationale=f"revision {revision}",
            call_key=None,
            attempts=1,
            scores=tuple(ScoreRecord(**s) for s in scores),
            revision=revision,
        )

    errors: list[BaseException] = []

    def writer(first: int) -> None:
        try:
            with Store(db) as store:
                for r in range(first, first + 40, 2):
                    store.save_judgment(record(r))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    with Store(db, readonly=True) as store:
        check = verify_store(store)
    assert check.clean and check.length == before + 40


@pytest.mark.parametrize(
    ("name", "content"),
    [("missing.toml", None), ("notadb", b"this is not a database at all, just bytes" * 40)],
)
def test_verify_of_a_missing_or_broken_database_says_so_with_status_2(
    session: Path, name: str, content: bytes | None
) -> None:
    db = _db(session)
    if content is None:
        db.unlink()
    else:
        db.write_bytes(content)
        for extra in db.parent.glob(db.name + "-*"):
            extra.unlink()
    result = CliRunner().invoke(cli, ["verify", str(session)])
    assert result.exit_code == 2, result.output
    assert str(db.name) in result.stderr and "Traceback" not in result.output
