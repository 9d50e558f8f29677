"""The store's schema: numbered migrations, an old database upgraded in place, a newer one refused, no private access.

`tests/data/store_v1.db` was made by the store of 3874c43, before the schema was versioned
(user_version 0, meta schema_version 1): a one-task simulated session with two experts, run,
then a work assignment per expert (one submitted, one drafted), an expert added in the app,
four judging places per expert (two judged, one corrected, one drafted, one flagged) and a
packet exported for the second expert. It must open with today's code, be upgraded, and read
back every row.
"""

from __future__ import annotations

import ast
import re
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from centaur_tui.domain.errors import CentaurError, StoreError
from centaur_tui.store import (
    SCHEMA_VERSION,
    ExpertStore,
    Store,
    WorkStore,
    cell_audit,
    fingerprint,
    left_out,
    option_score_rows,
    schema,
)
from centaur_tui.store.connection import connect

DATA = Path(__file__).resolve().parent / "data"
V1 = DATA / "store_v1.db"
STORE_PACKAGE = Path(schema.__file__).resolve().parent


def _old_copy(tmp_path: Path) -> Path:
    path = tmp_path / "old.db"
    shutil.copy(V1, path)
    return path


def _tables(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, read with plain sqlite3 (no store code), in rowid order."""
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: conn.execute(f"SELECT * FROM {n} ORDER BY rowid").fetchall() for n in names}


def _schema_of(conn: sqlite3.Connection) -> dict[tuple[str, str], str]:
    rows = conn.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    return {(kind, name): " ".join(sql.split()) for kind, name, sql in rows}


def test_the_fixture_is_an_unversioned_database() -> None:
    """Guards the fixture itself: if it were rewritten by today's code, the upgrade test would prove nothing."""
    with sqlite3.connect(V1) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    assert meta["schema_version"] == "1" and meta["expert_schema_version"] == "1"


def test_migration_1_is_exactly_the_unversioned_schema(tmp_path: Path) -> None:
    conn = connect(tmp_path / "new.db")
    assert schema.migrate(conn, tmp_path / "new.db", target=1) == 1
    with sqlite3.connect(V1) as old:
        assert _schema_of(conn) == _schema_of(old)
    conn.close()


def test_an_unversioned_database_is_upgraded_and_every_row_still_reads(tmp_path: Path) -> None:
    path = _old_copy(tmp_path)
    before = _tables(path)
    with Store(path) as store:
        assert store.read_value("PRAGMA user_version") == SCHEMA_VERSION == len(schema.MIGRATIONS)
        meta = store.meta()
        counts = store.counts()
        outputs, comparisons = store.outputs(), store.comparisons()
        judgments = store.judgment_table()
        experts = ExpertStore(store)
        existing, workload, maskings = experts.existing(), experts.workload(), experts.maskings()
        work = WorkStore(store)
        productivity = work.productivity_rows()
        work_experts = [a.expert for a in work.assignments()]
        scores = option_score_rows(store, ["clarity"])
        some = next(iter(comparisons.values()))
        audit = cell_audit(store, some.task, some.mode, some.candidate_a)
        witness = fingerprint(store)
        skipped = left_out(store)
    after = _tables(path)

    # Migration 2 changes the version rows of meta; migration 3 adds a NULL finish_reason
    # (not recorded) as the last column of calls and call_errors; migration 4 adds an empty table;
    # migration 5 adds a random 32-hex-digit session_id to meta; migration 6 adds calls_in_flight;
    # migration 8 adds a NULL served_model (not recorded) as the last column of calls; migration 9
    # adds origin 'generated' as the last column of outputs (every output of an old file was generated);
    # migration 11 adds NULL cached_tokens and deployment after served_model; migration 12 the
    # expert's seat (below).
    assert meta["schema_version"] == str(SCHEMA_VERSION) and "expert_schema_version" not in meta
    assert re.fullmatch(r"[0-9a-f]{32}", meta["session_id"])
    old_meta = {k: v for k, v in before.pop("meta") if k not in ("schema_version", "expert_schema_version")}
    new_meta = ("schema_version", "session_id", "chain_head", "chain_length")
    assert {k: v for k, v in after.pop("meta") if k not in new_meta} == old_meta
    # Migration 20 adds a NULL pasted_chars (not recorded) to judgments and expert_drafts.
    assert all(row[-1] is None for row in after["judgments"]) and all(row[-1] is None for row in after["expert_drafts"])
    after["judgments"] = [row[:-1] for row in after["judgments"]]
    after["expert_drafts"] = [row[:-1] for row in after["expert_drafts"]]
    assert after.pop("organiser_links") == []
    # Migration 21 adds the empty tables of adjudication.
    assert after.pop("adjudications") == [] and after.pop("adjudication_reopenings") == []
    # Migration 25 adds the empty tables of the judges' admission exam.
    assert after.pop("exam_pairs") == [] and after.pop("exam_verdicts") == []
    # Migration 17 adds chain_seq, chain_content and chain_hash to the chained tables, back-filled
    # for every judgment and submitted deliverable (tests/test_chain.py checks the values).
    for table in ("judgments", "work_drafts"):
        assert all(row[-3] is not None or table == "work_drafts" for row in after[table])
        after[table] = [row[:-3] for row in after[table]]
    # Migration 23 writes the session secret (it signs exports and packets) into every database.
    secret_rows = after.pop("session_secret")
    assert len(secret_rows) == 1 and re.fullmatch(r"[0-9a-f]{64}", secret_rows[0][1])
    assert all(row[-4:] == (None,) * 4 for row in after["calls"])  # finish_reason ... deployment
    after["calls"] = [row[:-4] for row in after["calls"]]
    assert all(row[-1] is None for row in after["call_errors"])
    after["call_errors"] = [row[:-1] for row in after["call_errors"]]
    # Migration 14 adds cut_off 0 and cut_off_reasks 0 after origin (the old calls recorded no finish reason).
    assert all(row[-3:] == ("generated", 0, 0) for row in after["outputs"])
    after["outputs"] = [row[:-3] for row in after["outputs"]]
    # Migration 6 adds the empty table of calls in flight, migration 7 the work screen's masking log.
    assert after.pop("calls_in_flight") == []
    assert after.pop("failed_items") == []  # migration 14
    assert all(row[-2:] == (0, 0) for row in after["assistance_texts"])  # migration 14: cut_off, cut_off_reasks
    after["assistance_texts"] = [row[:-2] for row in after["assistance_texts"]]
    assert after.pop("work_maskings") == []
    # Migration 10 adds the empty tables of batch mode.
    assert after.pop("batches") == [] and after.pop("batch_requests") == []
    # Migration 12 adds NULL active_seconds and lower_average_confirmed (not recorded) to
    # judgments, a NULL active_seconds to expert_drafts, and the empty expert_checks table.
    assert all(row[-2:] == (None, None) for row in after["judgments"])
    after["judgments"] = [row[:-2] for row in after["judgments"]]
    assert all(row[-1] is None for row in after["expert_drafts"])
    after["expert_drafts"] = [row[:-1] for row in after["expert_drafts"]]
    assert after.pop("expert_checks") == []
    assert after.pop("expert_links") == []  # migration 13: `centaur serve` links, made on demand
    assert after.pop("unanswered_spend") == []  # migration 15: spend billed without an answer
    assert after.pop("session_changes") == []  # migration 16: `centaur migrate` records renames and retirements
    # Migration 19 moves flag notes out of meta (the fixture has none) into their own table; its
    # AUTOINCREMENT key adds the table to sqlite_sequence.
    assert after.pop("expert_flag_notes") == []
    assert after.pop("dialogue_turns") == []  # migration 26 (issue 28): a dialogue's turns, none in an old file
    assert after.pop("expert_guesses") == []  # migration 27 (issue 26): experts' guesses of who wrote option 1
    after["sqlite_sequence"] = [row for row in after["sqlite_sequence"] if row[0] != "expert_flag_notes"]
    # Migration 24: a NULL draw probability on every place (none was drawn by active allocation).
    assert all(row[-1] is None for row in after["expert_assignments"])
    after["expert_assignments"] = [row[:-1] for row in after["expert_assignments"]]
    # Migration 18: a NULL question and prompt (a task of a file) on every comparison.
    assert all(row[-2:] == (None, None) for row in after["comparisons"])
    after["comparisons"] = [row[:-2] for row in after["comparisons"]]
    assert after == before  # every other row of every table, unchanged
    assert sum(len(rows) for rows in before.values()) == 826  # the fixture as committed

    assert counts.calls == len(before["calls"]) == 42 and counts.judgments == len(before["judgments"])
    assert len(outputs) == len(before["outputs"]) and len(comparisons) == len(before["comparisons"]) == 16
    assert len(judgments) == 32 and {"ann"} <= {r[judgments.columns.index("judge")] for r in judgments.rows}
    assert len(existing) == len(before["expert_assignments"]) == 8
    assert workload == {"ann": (4, 2), "bob": (4, 0)}
    assert maskings == [] and len(productivity) == 1 and productivity[0].expert == "ann"
    assert len(scores["rows"]) == len({(r[0], r[1]) for r in before["scores"]})
    assert audit.comparisons and audit.calls
    assert all(c.served_model is None and c.finish_reason is None for c in audit.calls.values())
    assert witness[0] == 32 and skipped.invalid_total == 0 and skipped.errors_total == 0
    assert sorted(r[1] for r in before["work_assignments"]) == work_experts == ["ann", "bob"]


def test_reopening_an_upgraded_database_changes_nothing(tmp_path: Path) -> None:
    path = _old_copy(tmp_path)
    Store(path).close()
    upgraded = _tables(path)
    Store(path).close()
    assert _tables(path) == upgraded


def test_two_processes_opening_an_old_database_at_once_migrate_it_once(tmp_path: Path) -> None:
    """Each opener migrates under BEGIN IMMEDIATE and re-reads the version first; threads stand in for processes."""
    path = _old_copy(tmp_path)
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_it() -> None:
        try:
            start.wait(timeout=10)
            Store(path).close()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_database_of_a_newer_program_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    Store(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError) as err:
        Store(path)
    assert isinstance(err.value, CentaurError)
    assert str(path) in str(err.value) and f"version {SCHEMA_VERSION + 1}" in str(err.value)
    assert "newer" in str(err.value) and err.value.title == "Newer session database"


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("these are not the droids\n" * 200, encoding="utf-8")
    with pytest.raises(StoreError, match=r"notes\.db"):
        Store(path)


def test_a_failing_migration_is_rolled_back_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.db"
    Store(path).close()
    broken = schema.Migration(
        SCHEMA_VERSION + 1, "broken on purpose", ("CREATE TABLE half_done (a)", "INSERT INTO no_such_table VALUES (1)")
    )
    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, broken))
    conn = connect(path)
    with pytest.raises(StoreError, match=f"s.db: schema migration {SCHEMA_VERSION + 1} .*no_such_table"):
        schema.migrate(conn, path, target=SCHEMA_VERSION + 1)
    assert schema.schema_version(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    conn.close()


def test_migrations_are_numbered_in_order_from_one() -> None:
    assert [m.version for m in schema.MIGRATIONS] == list(range(1, len(schema.MIGRATIONS) + 1))


def _private_uses(path: Path) -> list[str]:
    """`x._name` where x is not self or cls: a module reaching into another object's private members."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{path.name}:{node.lineno}: .{node.attr}")
    return found


def test_store_modules_use_only_each_others_public_surface() -> None:
    modules = sorted(STORE_PACKAGE.glob("*.py"))
    assert len(modules) >= 10
    assert [use for m in modules for use in _private_uses(m)] == []
