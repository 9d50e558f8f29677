"""Provides the study's full-text search: an SQLite FTS5 index of rationales, deliverables and assistance texts.

The index is a file of its own beside the session database (`NAME.search.db`), built and kept
with sqlite-utils (`enable_fts` with triggers on its `docs` table) and opened read-only for
searching. It follows the session: every refresh adds the rows written since the last one
(judgments, outputs and assistance texts are append-only, so a rowid high-water mark per table
says what is new), in one BEGIN IMMEDIATE transaction on the index file; the session database
itself is only read. An index made for another database (its `meta.session_id` differs), or
one that cannot be read, is rebuilt from scratch. Experts never reach this module: only the
organiser's front ends (the app's results and audit screens, `centaur search`) call it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from centaur_tui.store.db import Store

SOURCES: tuple[tuple[str, str, str], ...] = (
    # kind, table, SQL of its rows after a rowid: (rowid, ref, task, text)
    ("rationale", "judgments", "SELECT j.rowid, j.id, c.task, j.rationale FROM judgments j JOIN comparisons c"
     " ON c.id = j.comparison_id WHERE j.rowid > ? AND j.rationale IS NOT NULL AND j.rationale != ''"),
    ("deliverable", "outputs", "SELECT rowid, id, task, text FROM outputs WHERE rowid > ?"),
    ("assistance", "assistance_texts", "SELECT rowid, id, task, text FROM assistance_texts WHERE rowid > ?"),
)  # fmt: skip
"""What is indexed: every rationale (superseded and invalid judgments too), deliverable and assistance text."""


@dataclass(frozen=True)
class SearchHit:
    """One text that matches: its kind, the row it comes from, its task and a snippet around the match."""

    kind: str
    ref: str
    task: str
    snippet: str


def index_path(database: Path) -> Path:
    """Where the search index of a session database lives (beside it)."""
    return database.with_name(database.stem + ".search.db")


def _open(path: Path) -> Any:
    import sqlite_utils  # only here: 61 ms to import, and no other use case needs it

    conn = sqlite3.connect(path, timeout=10, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    return sqlite_utils.Database(conn)


def _prepare(db: Any, session_id: str) -> None:
    """Create the index's tables (sqlite-utils), or empty them when they were made for another database."""
    meta = db["index_meta"]
    found = dict(db.execute("SELECT key, value FROM index_meta").fetchall()) if meta.exists() else {}
    if found.get("session_id") != session_id:
        for name in ("docs", "marks", "index_meta"):
            if db[name].exists():
                db[name].drop()
        for name in db.table_names():  # the FTS shadow tables of a dropped docs table
            if name.startswith("docs_fts"):
                db.execute(f"DROP TABLE IF EXISTS [{name}]")
    if not db["docs"].exists():
        db["docs"].create({"id": str, "kind": str, "ref": str, "task": str, "text": str}, pk="id")
        db["docs"].enable_fts(["text"], create_triggers=True, tokenize="unicode61 remove_diacritics 2")
        db["marks"].create({"source": str, "high": int}, pk="source")
        db["index_meta"].create({"key": str, "value": str}, pk="key")
        db["index_meta"].insert({"key": "session_id", "value": session_id})


def refresh(store: Store) -> int:
    """Bring the index up to date with the session database; returns how many texts were added.

    Raises:
        StoreError: the index file cannot be written (a read-only folder, a full disk).
    """
    from centaur_tui.domain.errors import StoreError

    path = index_path(store.path)
    session_id = store.meta().get("session_id", "")
    try:
        try:
            db = _open(path)
            _prepare(db, session_id)
        except sqlite3.DatabaseError:  # not an index (a damaged or foreign file): start again
            path.unlink(missing_ok=True)
            db = _open(path)
            _prepare(db, session_id)
        try:
            db.execute("BEGIN IMMEDIATE")
            added = 0
            marks = dict(db.execute("SELECT source, high FROM marks").fetchall())
            for kind, table, sql in SOURCES:
                rows = store.read_table(sql, (int(marks.get(table, 0)),)).rows
                if not rows:
                    continue
                db["docs"].insert_all(
                    (
                        {"id": f"{kind}:{r[1]}", "kind": kind, "ref": str(r[1]), "task": r[2], "text": r[3]}
                        for r in rows
                    ),
                    replace=True,
                )
                db["marks"].upsert({"source": table, "high": max(int(r[0]) for r in rows)}, pk="source")
                added += len(rows)
            db.execute("COMMIT")
        except BaseException:
            db.conn.rollback()
            raise
        finally:
            db.conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot build the search index there ({exc})", title="Search index") from None
    return added


def search(store: Store, query: str, limit: int = 50) -> list[SearchHit]:
    """The texts matching `query` (words, quoted as phrases: no FTS syntax), best first; the index opened read-only.

    Raises:
        StoreError: the index does not exist yet (call `refresh` first) or cannot be read.
    """
    import sqlite_utils

    from centaur_tui.domain.errors import StoreError

    path = index_path(store.path)
    if not path.exists():
        raise StoreError(f"{path}: no search index yet (it is built on first search)", title="Search index")
    # Each word a quoted phrase (no FTS syntax): quotes and control characters dropped first, as
    # sqlite-utils' quote_fts leaves an empty query for a lone '"', which FTS5 rejects.
    words = " ".join("".join(ch for ch in query if ch.isprintable() and ch != '"').split())
    if not words:
        return []
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            db = sqlite_utils.Database(conn)
            rows = db.execute(
                "SELECT d.kind, d.ref, d.task, snippet(docs_fts, 0, '[', ']', '…', 12) FROM docs_fts"
                " JOIN docs d ON d.rowid = docs_fts.rowid WHERE docs_fts MATCH ? ORDER BY rank LIMIT ?",
                (db.quote_fts(words), limit),
            ).fetchall()
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot search the index ({exc})", title="Search index") from None
    return [SearchHit(str(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


def comparisons_of(store: Store, hit: SearchHit) -> list[str]:
    """The comparisons a hit belongs to (a judgment's one; every comparison holding the output or its assistance)."""
    if hit.kind == "rationale":
        rows = store.read("SELECT comparison_id AS id FROM judgments WHERE id = ?", (int(hit.ref),))
    elif hit.kind == "deliverable":
        rows = store.read("SELECT id FROM comparisons WHERE output_a = ? OR output_b = ? ORDER BY id", (hit.ref,) * 2)
    else:
        rows = store.read(
            "SELECT DISTINCT c.id FROM comparisons c JOIN outputs o ON o.id IN (c.output_a, c.output_b)"
            " WHERE o.assistance_id = ? ORDER BY c.id",
            (hit.ref,),
        )
    return [str(r["id"]) for r in rows]
