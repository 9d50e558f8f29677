"""Judging packets that cannot be fooled (issue 13): integrity, strict validation, all or nothing, drafts, idempotency.

Every tampering case edits a judged packet the way a hostile or careless sender could (plain
sqlite3 on the file, or its bytes), imports it with the CLI and checks: exit 2, no traceback,
an error naming the item and the field, and the session's judgment tables unchanged row for
row (hashed before and after).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import cli
from centaur_tui.domain.blinding import Draft
from centaur_tui.services.judging import PacketJudging, SessionJudging
from centaur_tui.store import ExpertStore, Store
from tests.support.experts import judged_session

TABLES = ("judgments", "scores", "expert_drafts", "expert_assignments", "expert_packets", "session_secret")
"""The tables an import could change; each is hashed row by row before and after a refused import."""


def table_hash(database: Path) -> dict[str, str]:
    with sqlite3.connect(database) as conn:
        hashes = {
            t: hashlib.sha256(repr(conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall()).encode()).hexdigest()
            for t in TABLES
        }
    conn.close()
    return hashes


def complete(rubric, first: int = 7, second: int = 4, winner: str = "option_1") -> Draft:
    draft = Draft()
    for d in rubric.all:
        draft.set_score(d.id, 1, first)
        draft.set_score(d.id, 2, second)
    draft.winner = winner  # type: ignore[assignment]
    draft.rationale = "Option one meets more of the stated requirements."
    draft.seconds = 12.5
    return draft


def cli_run(*args: str) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def export(session: Path, expert: str, out: Path, n: int = 5) -> Path:
    assigned = cli_run("assign", session, "--expert", expert, "--n", str(n))
    assert assigned.exit_code == 0, assigned.output
    exported = cli_run("packet", "export", session, "--expert", expert, "--out", out)
    assert exported.exit_code == 0, exported.output
    return out


def judge(packet: Path, results: int = 5, draft: bool = False) -> list[str]:
    """Judge the first `results` items of a packet as `centaur judge` would; optionally a partial draft next."""
    source = PacketJudging(packet)
    keys = [q.key for q in source.queue()]
    for key in keys[:results]:
        source.submit(key, complete(source.item(key).rubric))
    if draft:
        partial = Draft(rationale="half way there")
        partial.set_score(source.item(keys[results]).rubric.all[0].id, 1, 6)
        source.save_draft(keys[results], partial, version=10**18)
    source.close()
    return keys


@pytest.fixture
def session(tmp_path: Path) -> Path:
    return judged_session(tmp_path)


@pytest.fixture
def packet(session: Path, tmp_path: Path) -> Path:
    """Bob's packet of five comparisons, all five judged (the issue's case: one of five was stored before a crash)."""
    path = export(session, "bob", tmp_path / "bob.packet")
    judge(path)
    return path


def edit(packet: Path, *statements: str, params: tuple = ()) -> None:
    conn = sqlite3.connect(packet)
    with conn:
        for statement in statements:
            conn.execute(statement, params if "?" in statement else ())
    conn.close()


def edit_scores(packet: Path, change: Callable[[dict], object], position: int = 3) -> None:
    """Rewrite the scores JSON of the result of item `position`."""
    conn = sqlite3.connect(packet)
    token = conn.execute("SELECT token FROM items WHERE position = ?", (position,)).fetchone()[0]
    scores = json.loads(conn.execute("SELECT scores FROM results WHERE token = ?", (token,)).fetchone()[0])
    with conn:
        conn.execute("UPDATE results SET scores = ? WHERE token = ?", (json.dumps(change(scores)), token))
    conn.close()


def third(column: str, value: object) -> Callable[[Path], None]:
    """Set one column of the third item's result (the first two stay valid: nothing may be stored from them)."""

    def tamper(packet: Path) -> None:
        edit(
            packet,
            f"UPDATE results SET {column} = ? WHERE token = (SELECT token FROM items WHERE position = 3)",
            params=(value,),
        )

    return tamper


def first_dimension(value: object) -> Callable[[Path], None]:
    def tamper(packet: Path) -> None:
        edit_scores(packet, lambda s: {**s, sorted(s)[0]: [value, 4]})

    return tamper


def drop_dimension(scores: dict) -> dict:
    return {k: v for k, v in scores.items() if k != sorted(scores)[0]}


def draft_of_twelve(packet: Path) -> None:
    """Item 5 turned back into a draft whose first score is 12."""
    conn = sqlite3.connect(packet)
    token, scores = conn.execute(
        "SELECT r.token, r.scores FROM results r JOIN items i ON i.token = r.token WHERE i.position = 5"
    ).fetchone()
    dimension = sorted(json.loads(scores))[0]
    with conn:
        conn.execute("DELETE FROM results WHERE token = ?", (token,))
        conn.execute(
            "INSERT INTO drafts (token, scores, winner, rationale, seconds, version, updated_at)"
            " VALUES (?, ?, NULL, '', 0, 5, 'now')",
            (token, json.dumps({dimension: [12, None]})),
        )
    conn.close()


TAMPERING: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "broken JSON": (third("scores", '{"clarity": [7, 4],'), ("item 3", "field scores: not well-formed JSON")),
    "seconds abc": (third("seconds", "abc"), ("item 3", "field seconds", '"abc" is not a number')),
    "seconds negative": (third("seconds", -4.0), ("item 3", "field seconds", "at least 0")),
    "seconds NaN": (third("seconds", "NaN"), ("item 3", "field seconds", "not a number")),
    "seconds infinite": (third("seconds", float("inf")), ("item 3", "field seconds", "finite")),
    "scores as a list": (third("scores", "[[7, 4], [6, 5]]"), ("item 3", "field scores: a JSON object")),
    "missing dimension": (lambda p: edit_scores(p, drop_dimension), ("item 3", "missing: every dimension")),
    "unknown dimension": (lambda p: edit_scores(p, lambda s: {**s, "charm": [5, 5]}), ("item 3", "charm")),
    "score 0": (first_dimension(0), ("item 3", "(option 1)", "0 is not a whole number 1-10")),
    "score 11": (first_dimension(11), ("item 3", "(option 1)", "11 is not a whole number 1-10")),
    "score 7.5": (first_dimension(7.5), ("item 3", "(option 1)", "7.5 is not a whole number 1-10")),
    "score true": (first_dimension(True), ("item 3", "true is not a whole number")),
    "score pair of three": (lambda p: edit_scores(p, lambda s: {k: [7, 4, 1] for k in s}), ("list of two scores",)),
    "winner not an option": (third("winner", "option_3"), ("item 3", "field winner", '"option_3"')),
    "short rationale": (third("rationale", "x"), ("item 3", "field rationale", "1 characters", "at least 20")),
    "rationale not text": (third("rationale", b"\x00\xff"), ("item 3", "field rationale", "not text")),
    "item token changed": (
        lambda p: edit(
            p,
            "UPDATE results SET token = 'p0000000000000000000' WHERE token ="
            " (SELECT token FROM items WHERE position = 2)",
            "UPDATE items SET token = 'p0000000000000000000' WHERE position = 2",
        ),
        ("item 2 (token p0000000000000000000): field token: not an assignment of bob",),
    ),
    "item text changed": (
        lambda p: edit(p, "UPDATE items SET option_1 = option_1 || ' (written by Alpha)' WHERE position = 4"),
        ("item 4 (token p", "changed after export"),
    ),
    "item rubric changed": (
        lambda p: edit(p, "UPDATE items SET rubric = rubric || ' ' WHERE position = 1"),
        ("item 1 (token p", "changed after export"),
    ),
    "item dropped": (
        lambda p: edit(
            p,
            "DELETE FROM results WHERE token = (SELECT token FROM items WHERE position = 5)",
            "DELETE FROM items WHERE position = 5",
        ),
        ("packet_meta: changed after export", "4 item(s), 5 exported"),
    ),
    "ties allowed in the packet's meta": (
        lambda p: edit(
            p,
            "UPDATE packet_meta SET value = 'true' WHERE key = 'allow_ties'",
            "UPDATE packet_meta SET value = '0' WHERE key = 'min_rationale'",
        ),
        ("packet_meta: changed after export",),
    ),
    "packet of another expert (meta)": (
        lambda p: edit(p, "UPDATE packet_meta SET value = 'ann' WHERE key = 'expert_id'"),
        ("packet_meta expert_id 'ann'", "exported for 'bob'"),
    ),
    "result for an unassigned comparison": (
        lambda p: edit(
            p,
            "INSERT INTO results (token, scores, winner, rationale, seconds, judged_at) SELECT"
            " 'pffffffffffffffffff9', scores, winner, rationale, seconds, judged_at FROM results"
            " LIMIT 1",
        ),
        ('result (token "pffffffffffffffffff9"): not an item of this packet', "not a comparison assigned to bob"),
    ),
    "two results for one item": (
        lambda p: edit(
            p,
            "CREATE TABLE r2 AS SELECT * FROM results",
            "DROP TABLE results",
            "ALTER TABLE r2 RENAME TO results",
            "INSERT INTO results SELECT * FROM results WHERE rowid = 1",
        ),
        ("more than one result",),
    ),
    "draft with a score of 12": (draft_of_twelve, ("item 5", "draft: field scores.", "12 is not a whole number 1-10")),
    "state not a state": (
        lambda p: edit(p, "UPDATE items SET state = 'done' WHERE position = 2"),
        ("item 2 (token p", "field state", '"done" is not one of pending, skipped, flagged'),
    ),
    "exported state changed": (
        lambda p: edit(p, "UPDATE items SET exported_state = 'flagged' WHERE position = 2"),
        ("item 2 (token p", "changed after export"),
    ),
    "packet_meta version changed": (
        lambda p: edit(p, "UPDATE packet_meta SET value = '1' WHERE key = 'version'"),
        ("packet_meta version '1'", "export the packet again"),
    ),
    "packet_meta version not a number": (
        lambda p: edit(p, "UPDATE packet_meta SET value = 'abc' WHERE key = 'version'"),
        ("packet_meta version 'abc'",),
    ),
    "active seconds abc": (third("active_seconds", "abc"), ("item 3", "field active_seconds", "not a number")),
    "active seconds negative": (third("active_seconds", -1.0), ("item 3", "field active_seconds", "at least 0")),
    "active seconds over the time spent": (
        third("active_seconds", 99.0),
        ("item 3", "field active_seconds", "more than the time spent (12.5)"),
    ),
    "confirmed_lower 2": (third("confirmed_lower", 2), ("item 3", "field confirmed_lower", "2 is not 0 or 1")),
    "guidelines added to the packet's meta": (
        lambda p: edit(p, "INSERT INTO packet_meta (key, value) VALUES ('guidelines', 'Always pick option 1.')"),
        ("packet_meta: changed after export",),
    ),
    "idle time changed in the packet's meta": (
        lambda p: edit(p, "UPDATE packet_meta SET value = '3600.0' WHERE key = 'idle_s'"),
        ("packet_meta: changed after export",),
    ),
    "packet_meta version 2 (before issue 14)": (
        lambda p: edit(p, "UPDATE packet_meta SET value = '2' WHERE key = 'version'"),
        ("packet_meta version '2'", "export the packet again"),
    ),
    "truncated file": (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), ("bob.packet",)),
    "garbage file": (lambda p: p.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8), ("not a",)),
    "text file": (lambda p: p.write_text("not a database"), ("not a judging packet",)),
    "no results table": (lambda p: edit(p, "DROP TABLE results"), ("not a readable judging packet", "results")),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_a_tampered_packet_is_refused_whole_and_nothing_is_written(case: str, session: Path, packet: Path) -> None:
    tamper, expected = TAMPERING[case]
    database = load_session(session).database
    tamper(packet)
    before = table_hash(database)
    out = cli_run("packet", "import", session, packet)
    assert out.exit_code == 2, out.output
    assert isinstance(out.exception, SystemExit) and "Traceback" not in out.output, out.output
    for words in expected:
        assert words in out.output, (words, out.output)
    assert table_hash(database) == before


def test_a_tie_is_refused_where_the_session_allows_none(session: Path, tmp_path: Path) -> None:
    session.write_text(session.read_text().replace("[judging]", "[judging]\nallow_ties = false"))
    path = export(session, "bob", tmp_path / "bob.packet")
    judge(path)
    third("winner", "tie")(path)
    before = table_hash(load_session(session).database)
    out = cli_run("packet", "import", session, path)
    assert out.exit_code == 2 and "item 3" in out.output and "does not allow ties" in out.output, out.output
    assert table_hash(load_session(session).database) == before


def test_every_problem_is_listed_by_item_and_field(session: Path, packet: Path) -> None:
    third("seconds", "abc")(packet)
    edit(
        packet,
        "UPDATE results SET rationale = 'ok', winner = 'both' WHERE token ="
        " (SELECT token FROM items WHERE position = 5)",
    )
    out = cli_run("packet", "import", session, packet)
    assert out.exit_code == 2 and "(3 problem(s))" in out.output, out.output
    for words in ("item 3 (token p", "result: field seconds", "item 5 (token p", "field winner", "field rationale"):
        assert words in out.output, words


def test_another_sessions_packet_is_refused_even_with_the_same_names(session: Path, tmp_path: Path) -> None:
    # Two databases of one session file: same name, seed, candidates and comparison ids.
    other = judged_session(tmp_path / "other")
    path = export(session, "bob", tmp_path / "bob.packet")
    judge(path)
    other_db = load_session(other).database
    before = table_hash(other_db)
    # The two databases are copies of one template file, secret included (migration 23 writes it
    # at creation): the keyed fingerprint matches, and the packet id, never exported there, refuses it.
    out = cli_run("packet", "import", other, path)
    assert out.exit_code == 2 and "was not exported from this database" in out.output, out.output
    assert table_hash(other_db) == before
    with sqlite3.connect(other_db) as conn:  # a database made on its own has a secret of its own
        conn.execute("UPDATE session_secret SET secret = ? WHERE id = 1", ("ab" * 32,))
    export(other, "bob", tmp_path / "other-bob.packet")
    before = table_hash(other_db)
    out = cli_run("packet", "import", other, path)
    assert out.exit_code == 2 and "belongs to another session" in out.output, out.output
    assert table_hash(other_db) == before


def test_a_packet_of_another_expert_is_refused(session: Path, tmp_path: Path) -> None:
    bob = export(session, "bob", tmp_path / "bob.packet")
    judge(bob)
    ann = export(session, "ann", tmp_path / "ann.packet", n=3)
    database = load_session(session).database
    before = table_hash(database)
    out = cli_run("packet", "import", session, bob, "--expert", "ann")
    assert out.exit_code == 2 and "this is bob's packet, not ann's" in out.output, out.output
    # Bob's results under ann's packet id: bob's tokens map to none of ann's assignments.
    with sqlite3.connect(ann) as conn:
        ann_id = conn.execute("SELECT value FROM packet_meta WHERE key = 'packet_id'").fetchone()[0]
    conn.close()
    edit(bob, "UPDATE packet_meta SET value = ? WHERE key = 'packet_id'", params=(ann_id,))
    out = cli_run("packet", "import", session, bob)
    assert out.exit_code == 2 and "exported for 'ann'" in out.output, out.output
    edit(bob, "UPDATE packet_meta SET value = 'ann' WHERE key = 'expert_id'")
    out = cli_run("packet", "import", session, bob)
    assert out.exit_code == 2 and "field token: not an assignment of ann" in out.output, out.output
    assert table_hash(database) == before


def test_results_and_drafts_import_once_and_drafts_come_back_as_drafts(session: Path, tmp_path: Path) -> None:
    study = load_session(session)
    cli_run("assign", session, "--expert", "bob", "--n", "5")
    with Store(study.database) as store:  # a draft begun in the app travels in the packet unchanged
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "bob"))
        last = judging.queue()[4].key
        judging.save_draft(last, Draft(rationale="begun in the app"), version=5)
    path = tmp_path / "bob.packet"
    assert cli_run("packet", "export", session, "--expert", "bob", "--out", path).exit_code == 0
    keys = judge(path, results=3, draft=True)
    source = PacketJudging(path)
    source.set_state(keys[4], "flagged")
    source.close()

    out = cli_run("packet", "import", session, path)
    assert out.exit_code == 0, out.output
    assert "3 new judgment(s), 0 already stored, 2 still open" in out.output, out.output
    assert "drafts: 1 stored as bob's drafts" in out.output and "1 already stored" in out.output, out.output
    assert "1 place(s) newly skipped, flagged or pending; refused: none" in out.output, out.output
    with Store(study.database) as store:
        assert ExpertStore(store).workload()["bob"] == (5, 3)
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "bob"))
        queue = judging.queue()
        half = judging.draft(queue[3].key)
        assert half is not None and half.rationale == "half way there" and judging.resume_key() == queue[3].key
        assert judging.draft(queue[4].key) == Draft(rationale="begun in the app") and queue[4].state == "flagged"
        assert len(keys) == 5
    after_first = table_hash(study.database)

    out = cli_run("packet", "import", session, path)
    assert out.exit_code == 0 and "0 new judgment(s), 3 already stored" in out.output, out.output
    assert "drafts: 0 stored as bob's drafts (finish them in the app), 2 already stored" in out.output, out.output
    assert "0 place(s) newly skipped" in out.output
    assert table_hash(study.database) == after_first

    # Work continued in the app after the import is newer than the packet's: it is kept.
    with Store(study.database) as store:
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "bob"))
        judging.save_draft(judging.queue()[3].key, Draft(rationale="finished in the app"), version=4 * 10**18)
    out = cli_run("packet", "import", session, path)
    assert out.exit_code == 0 and "1 kept from the session" in out.output, out.output
    with Store(study.database) as store:
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "bob"))
        assert judging.draft(judging.queue()[3].key).rationale == "finished in the app"  # type: ignore[union-attr]


def test_a_judgment_made_differently_in_the_app_is_kept_and_reported(session: Path, tmp_path: Path) -> None:
    study = load_session(session)
    path = export(session, "bob", tmp_path / "bob.packet", n=2)
    judge(path, results=2)
    with Store(study.database) as store:
        judging = SessionJudging(store, study, ExpertStore(store).expert(study, "bob"))
        first = judging.queue()[0].key
        judging.submit(first, complete(judging.item(first).rubric, first=3, second=9, winner="option_2"))
    out = cli_run("packet", "import", session, path)
    assert out.exit_code == 0, out.output
    assert "1 new judgment(s), 0 already stored" in out.output and "refused: 1 result(s)" in out.output, out.output
    assert "item 1 (token p" in out.output and "the stored one is kept" in out.output
    with Store(study.database) as store:
        winners = store.read("SELECT winner FROM judgments WHERE judge = 'bob' ORDER BY id")
    assert len(winners) == 2


def test_the_session_secret_never_reaches_the_packet(session: Path, tmp_path: Path) -> None:
    path = export(session, "bob", tmp_path / "bob.packet")
    with sqlite3.connect(load_session(session).database) as conn:
        secret = conn.execute("SELECT secret FROM session_secret").fetchone()[0]
        token_secrets = [r[0] for r in conn.execute("SELECT secret FROM expert_packets")]
    conn.close()
    raw = path.read_bytes()
    assert len(secret) == 64
    for value in (secret, *token_secrets):
        assert value.encode() not in raw
    copy = tmp_path / "copy.packet"
    shutil.copy(path, copy)
    assert cli_run("packet", "import", session, copy).exit_code == 0  # a copy of an untouched packet is fine
