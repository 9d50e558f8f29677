"""Provides the tamper-evident record: one hash chain over a session database's judgments, submissions and audit events.

One chain per session database (not one per table): every writer already takes the database's
one write lock (`BEGIN IMMEDIATE`), so a single sequence costs no extra contention, and one head
(`meta.chain_head`, with `meta.chain_length`) ties a published number to one state of the whole
file. Each chained row holds three columns (schema migration 14):

- `chain_seq`: its position in the chain, 1..n, in the order the rows were written;
- `chain_content`: SHA-256 of its canonical content (the table, the row id and the columns in
  `CHAINED`, plus its rubric scores for a judgment), JSON with fixed key order, no whitespace;
- `chain_hash`: SHA-256 of (the previous row's `chain_hash`, or 64 zeros for the first row; its
  position; its `chain_content`).

`append` runs inside the writer's own transaction and reads the head there, so two writers (the
pipeline and an expert's seat) can never fork the chain: the second waits for the first's lock
and then sees its head. `verify` recomputes everything and names the first break.

What the chain can and cannot tell: an edit, deletion, reordering or insertion by anyone who does
not also recompute every later hash and the head is found and located. Someone who rewrites the
whole chain and its head makes a consistent file; only a head published earlier (the report
prints it, the bundle's manifest carries it) tells that file from the original.

Columns a later migration adds to a chained table are not covered until a new chain format says
so (`CHAIN_FORMAT`); the columns listed here are frozen, so old rows keep verifying.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from centaur_tui.store.db import Store

CHAIN_FORMAT = 1
"""The canonical form's version (part of every content hash)."""

GENESIS = "0" * 64
"""The `previous hash` of the first row."""


@dataclass(frozen=True)
class Chained:
    """One chained table: the columns its hash covers, which rows are chained, their write-time column."""

    table: str
    columns: tuple[str, ...]
    when: str
    """The rows that belong in the chain (a submitted deliverable: `locked = 1`; others: all)."""
    written_at: str
    """The column whose order (then the row id) is the insertion order when back-filling old rows."""


CHAINED: tuple[Chained, ...] = (
    Chained(
        "judgments",
        (
            "id",
            "comparison_id",
            "judge",
            "judge_kind",
            "judge_family",
            "presentation",
            "revision",
            "option1",
            "option2",
            "winner",
            "option1_mean",
            "option2_mean",
            "valid",
            "invalid_reason",
            "rationale",
            "call_key",
            "attempts",
            "seconds",
            "created_at",
            "active_seconds",
            "lower_average_confirmed",
        ),
        "1",
        "created_at",
    ),
    # A human deliverable is chained when it is submitted (locked); drafts before that change freely.
    Chained(
        "work_drafts",
        ("assignment_id", "text", "seconds", "edits", "pastes", "version", "locked", "updated_at"),
        "locked = 1",
        "updated_at",
    ),
    # The audit events: every identity phrase masked in a text an expert was shown.
    Chained(
        "expert_maskings",
        ("id", "assignment_id", "option", "output_id", "term", "occurrences", "created_at"),
        "1",
        "created_at",
    ),
    Chained(
        "work_maskings",
        ("id", "assignment_id", "assistance_id", "term", "occurrences", "created_at"),
        "1",
        "created_at",
    ),
    # Issue 27 (schema migration 22): the adjudicators' final verdicts and their reopenings, each
    # append-only; their tables are created with the chain columns.
    Chained(
        "adjudications",
        ("id", "comparison_id", "adjudicator", "presentation", "winner", "rationale", "reason", "created_at"),
        "1",
        "created_at",
    ),
    Chained(
        "adjudication_reopenings",
        ("id", "adjudication_id", "reopened_by", "note", "created_at"),
        "1",
        "created_at",
    ),
)
"""Every chained table. An adjudication table joins by adding its entry here and its columns in a migration."""

CHAINED_BY_MIGRATION_17 = ("judgments", "work_drafts", "expert_maskings", "work_maskings")
"""The tables migration 17 gave chain columns; later tables are created with them."""

_BY_TABLE = {t.table: t for t in CHAINED}


def migration_statements() -> tuple[str, ...]:
    """The statements of schema migration 14: the chain columns and an index on each position."""
    out: list[str] = []
    for t in CHAINED:
        if t.table not in CHAINED_BY_MIGRATION_17:
            continue
        out += [
            f"ALTER TABLE {t.table} ADD COLUMN chain_seq INTEGER",
            f"ALTER TABLE {t.table} ADD COLUMN chain_content TEXT",
            f"ALTER TABLE {t.table} ADD COLUMN chain_hash TEXT",
            f"CREATE INDEX IF NOT EXISTS {t.table}_chain ON {t.table} (chain_seq)",
        ]
    return tuple(out)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def link_hash(previous: str, seq: int, content: str) -> str:
    """The chain hash of the row at position `seq` whose content hash is `content`."""
    return _sha(f"{previous}\n{seq}\n{content}")


def _scores(c: sqlite3.Connection, ids: Iterable[int] | None) -> dict[int, list[list[Any]]]:
    sql = "SELECT judgment_id, candidate, dimension, dimension_kind, score FROM scores"
    if ids is None:
        rows = c.execute(sql).fetchall()
    else:
        wanted = list(ids)
        rows = c.execute(f"{sql} WHERE judgment_id IN ({','.join('?' * len(wanted))})", wanted).fetchall()
    out: dict[int, list[list[Any]]] = {}
    for r in rows:
        out.setdefault(r[0], []).append(list(r[1:]))
    for v in out.values():
        v.sort(key=lambda s: (str(s[0]), str(s[1]), str(s[2]), str(s[3])))
    return out


def content_hashes(c: sqlite3.Connection, table: str, rowid: int | None = None) -> dict[int, str]:
    """The content hash of one row (`rowid`) or of every chain-eligible row of a chained table, by row id."""
    t = _BY_TABLE[table]
    where = f"({t.when})" + (" AND rowid = ?" if rowid is not None else "")
    rows = c.execute(
        f"SELECT rowid, {', '.join(t.columns)} FROM {t.table} WHERE {where}",
        () if rowid is None else (rowid,),
    ).fetchall()
    scores = _scores(c, None if rowid is None else [rowid]) if table == "judgments" else {}
    out: dict[int, str] = {}
    for r in rows:
        body: list[Any] = [CHAIN_FORMAT, table, r[0], list(r[1:])]
        if table == "judgments":
            body.append(scores.get(r[0], []))
        out[r[0]] = _sha(json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=True))
    return out


def head(c: sqlite3.Connection) -> tuple[str, int]:
    """The stored head (hash, length) of the chain: (GENESIS, 0) for an empty chain."""
    rows = dict(c.execute("SELECT key, value FROM meta WHERE key IN ('chain_head', 'chain_length')").fetchall())
    return rows.get("chain_head", GENESIS), int(rows.get("chain_length", "0"))


def _set_head(c: sqlite3.Connection, value: str, length: int) -> None:
    c.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [("chain_head", value), ("chain_length", str(length))],
    )


def append(c: sqlite3.Connection, table: str, rowid: int | None) -> None:
    """Chain one row just written, inside the caller's BEGIN IMMEDIATE transaction (after its scores)."""
    if rowid is None:
        return
    content = content_hashes(c, table, rowid).get(rowid)
    if content is None:  # not eligible (an unlocked draft)
        return
    previous, length = head(c)
    seq = length + 1
    value = link_hash(previous, seq, content)
    c.execute(
        f"UPDATE {table} SET chain_seq = ?, chain_content = ?, chain_hash = ? WHERE rowid = ?",
        (seq, content, value, rowid),
    )
    _set_head(c, value, seq)


def backfill(c: sqlite3.Connection) -> None:
    """Chain every eligible row not chained yet, in insertion order (schema migration 14, old databases).

    Insertion order across tables: each row's write-time column, then the table's place in
    `CHAINED`, then its row id (SQLite's own insertion order within a table).
    """
    pending: list[tuple[str, int, int, str, str]] = []
    for order, t in enumerate(CHAINED):
        if not _exists(c, t.table):  # migration 17 runs before the later chained tables exist
            continue
        contents = content_hashes(c, t.table)
        unchained = c.execute(
            f"SELECT rowid, coalesce({t.written_at}, '') FROM {t.table} WHERE ({t.when}) AND chain_seq IS NULL"
        ).fetchall()
        pending += [(str(when), order, rowid, t.table, contents[rowid]) for rowid, when in unchained]
    pending.sort()
    previous, length = head(c)
    updates: dict[str, list[tuple[int, str, str, int]]] = {}
    for _when, _order, rowid, table, content in pending:
        length += 1
        previous = link_hash(previous, length, content)
        updates.setdefault(table, []).append((length, content, previous, rowid))
    for table, rows in updates.items():
        c.executemany(f"UPDATE {table} SET chain_seq = ?, chain_content = ?, chain_hash = ? WHERE rowid = ?", rows)
    _set_head(c, previous, length)


def _exists(c: sqlite3.Connection, table: str) -> bool:
    return c.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def rechain(c: sqlite3.Connection, change_id: int) -> str:
    """Chain every row again from the start, inside the caller's transaction; returns the head before.

    Only for a change the program makes and records (`centaur migrate --rename` rewrites names in
    chained rows, logged in `session_changes`): the head before it is kept in meta as
    `chain_head_before_change_<id>`, so a number published under the old head stays traceable.
    """
    before, _ = head(c)
    for t in CHAINED:
        c.execute(f"UPDATE {t.table} SET chain_seq = NULL, chain_content = NULL, chain_hash = NULL")
    _set_head(c, GENESIS, 0)
    backfill(c)
    c.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (f"chain_head_before_change_{change_id}", before)
    )
    return before


@dataclass(frozen=True)
class ChainBreak:
    """Where the chain stops holding: the row (table and id, or `meta` and the key) and what differs."""

    table: str
    row_id: str
    position: int | None
    what: str


@dataclass(frozen=True)
class ChainCheck:
    """The result of `verify`: the stored head, the recomputed one, the rows per table and every break."""

    head: str
    length: int
    recomputed_head: str
    rows: dict[str, int]
    breaks: tuple[ChainBreak, ...]

    @property
    def clean(self) -> bool:
        """Whether the chain verified with no break."""
        return not self.breaks


def verify(c: sqlite3.Connection) -> ChainCheck:
    """Recompute the chain of a database and list every break, the first (by chain position) first."""
    entries: list[tuple[int, str, int, str | None, str | None, str | None]] = []
    breaks: list[tuple[tuple[int, int], ChainBreak]] = []
    rows: dict[str, int] = {}
    for t in CHAINED:
        contents = content_hashes(c, t.table)
        rows[t.table] = len(contents)
        chained = c.execute(
            f"SELECT rowid, chain_seq, chain_content, chain_hash FROM {t.table} WHERE chain_seq IS NOT NULL"
        ).fetchall()
        seen = set()
        for rowid, seq, content, value in chained:
            seen.add(rowid)
            entries.append((int(seq), t.table, rowid, content, value, contents.get(rowid)))
        for rowid in sorted(set(contents) - seen):
            breaks.append(
                (
                    (1 << 62, rowid),
                    ChainBreak(t.table, str(rowid), None, "the row is not in the chain (written outside centaur)"),
                )
            )
    entries.sort(key=lambda e: (e[0], e[1], e[2]))
    previous, expected = GENESIS, 1
    for seq, table, rowid, stored, value, recomputed in entries:
        where = (seq, 0)

        def found(what: str, table: str = table, rowid: int = rowid, seq: int = seq, where: tuple[int, int] = where):
            breaks.append((where, ChainBreak(table, str(rowid), seq, what)))

        if seq > expected:
            found(
                f"chain position {expected}" + (f"-{seq - 1}" if seq - 1 > expected else "") + " is missing before "
                "this row (a chained row was deleted, or positions were renumbered)"
            )
        elif seq < expected:
            found(f"chain position {seq} is held by another row too (a row was inserted or copied)")
        if recomputed is None:
            found("the row is chained but no longer belongs in the chain (its submission was undone)")
        elif recomputed != stored:
            found(
                "its content differs from the hash stored when it was written (a field, or one of its scores, was "
                f"edited): stored {str(stored)[:12]}, now {recomputed[:12]}"
            )
        if value != link_hash(previous, seq, str(stored)):
            found(
                "its link to the previous row differs (rows before it were reordered, deleted or inserted, or its "
                "position was changed)"
            )
        previous, expected = str(value), max(expected, seq + 1)
    stored_head, length = head(c)
    end = (1 << 61, 0)
    if length != len(entries) or stored_head != previous:
        what = (
            f"the stored head ({stored_head[:12]}, length {length}) is not the chain's end "
            f"({previous[:12]}, length {len(entries)}): the head was replaced, or rows after it were "
            "deleted or added"
        )
        breaks.append((end, ChainBreak("meta", "chain_head", len(entries) or None, what)))
    breaks.sort(key=lambda b: b[0])
    return ChainCheck(stored_head, length, previous, rows, tuple(b for _, b in breaks))


def verify_store(store: Store) -> ChainCheck:
    """`verify` on one consistent snapshot of a session database (writers may go on meanwhile)."""
    with store.snapshot() as c:
        return verify(c)


def chain_head(store: Store) -> tuple[str, int]:
    """The stored head of a session database's chain: (hash, length)."""
    with store.snapshot() as c:
        return head(c)
