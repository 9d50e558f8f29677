"""Provides the database side of a session's identity: what its items were made under, renames and retirements.

`stored_identity` reads what `domain.identity` compares with a session file. `rename_entry`
moves every stored item of an entry to its new name in one transaction: names, the ids derived
from names (outputs, assistance texts, comparisons) and the content addresses of its calls
(`domain.plan.entry_json` names the entry), so a run after the rename sends nothing that was
answered before it. `retire_entry` records that an entry left the session; its items stay.
Both are logged in `session_changes` with the number of rows they touched.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from centaur_tui.domain.errors import StoreError
from centaur_tui.domain.identity import (
    Entry,
    EntryKind,
    StoredIdentity,
    parse_entries,
    session_entries,
)
from centaur_tui.domain.plan import Comparison, assistance_id, call_key_of, entry_json, output_id
from centaur_tui.domain.session import IMPORTED, PLAIN, Endpoint, Session
from centaur_tui.store import chain
from centaur_tui.store.connection import connect, utc_now
from centaur_tui.store.db import Store

_NAME_SQL: dict[EntryKind, tuple[str, ...]] = {
    # Outputs and assistance texts carry candidate names; only the pipeline's own augmentation
    # outputs carry the worker model's name; LLM judgments the pipeline made (a call key) carry
    # the judge's (imported judgments may name judges of elsewhere, on purpose).
    "candidate": (
        "SELECT candidate, count(*) FROM outputs GROUP BY candidate",
        "SELECT assistant, count(*) FROM assistance_texts GROUP BY assistant",
    ),
    "worker": (
        "SELECT worker, count(*) FROM outputs WHERE worker_kind = 'model' AND origin = 'generated'"
        " AND mode = 'augmentation' GROUP BY worker",
    ),
    "judge": (
        "SELECT judge, count(*) FROM judgments WHERE judge_kind = 'llm' AND call_key IS NOT NULL GROUP BY judge",
    ),
}


def stored_identity(store: Store) -> StoredIdentity:
    """What a session database records about the identity its items were made under."""
    return _identity(lambda sql: list(store.read_table(sql).rows))


def stored_identity_at(path: Path) -> StoredIdentity | None:
    """The same, read through a read-only connection that neither migrates nor waits (`centaur check`).

    Returns:
        None when the file is not a session database this program can read as it is (an older
        schema is read as far as it goes: a database from before `session_changes` has no retirement).
    """
    try:
        conn = connect(path, read_only=True)
    except sqlite3.Error:
        return None
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "outputs", "judgments", "assistance_texts"} <= tables:
            return None

        def rows(sql: str) -> list[tuple[Any, ...]]:
            if "session_changes" in sql and "session_changes" not in tables:
                return []
            return conn.execute(sql).fetchall()

        return _identity(rows)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _identity(rows: Callable[[str], list[tuple[Any, ...]]]) -> StoredIdentity:
    meta = {str(k): str(v) for k, v in rows("SELECT key, value FROM meta")}
    names: dict[EntryKind, dict[str, int]] = {}
    for kind, queries in _NAME_SQL.items():
        counts: dict[str, int] = {}
        for sql in queries:
            for name, n in rows(sql):
                if name != PLAIN:
                    counts[str(name)] = counts.get(str(name), 0) + int(n)
        names[kind] = counts
    retired = frozenset(
        (str(k), str(o)) for k, o in rows("SELECT kind, old FROM session_changes WHERE action = 'retire'")
    )
    return StoredIdentity(
        session=meta.get("session"),
        seed=meta.get("seed"),
        entries=parse_entries(meta.get("entries")),
        names=names,
        retired=retired,
    )


@dataclass(frozen=True)
class Change:
    """One identity change `centaur migrate` made: action, kind, old name, new name, rows touched."""

    action: str
    kind: str
    old: str
    new: str | None
    rows: int


def changes(store: Store) -> list[Change]:
    """Every identity change recorded in the database, oldest first."""
    return [
        Change(r["action"], r["kind"], r["old"], r["new"], int(r["rows"]))
        for r in store.read("SELECT action, kind, old, new, rows FROM session_changes ORDER BY id")
    ]


def _endpoint(session: Session, kind: EntryKind, name: str) -> Endpoint | None:
    if kind == "candidate":
        return next((m for m in session.models if m.name == name), None)
    if kind == "worker":
        return session.worker if session.worker is not None and session.worker.name == name else None
    return next((j for j in session.judges if j.name == name), None)


def _apply(c: sqlite3.Connection, mapping: dict[str, str], columns: tuple[tuple[str, str], ...]) -> int:
    """Replace old values by new ones in every (table, column), through an indexed temporary map."""
    if not mapping:
        return 0
    c.execute("CREATE TEMP TABLE IF NOT EXISTS id_map (old TEXT PRIMARY KEY, new TEXT NOT NULL)")
    c.execute("DELETE FROM temp.id_map")
    c.executemany("INSERT INTO temp.id_map (old, new) VALUES (?, ?)", list(mapping.items()))
    touched = 0
    for table, column in columns:
        cur = c.execute(
            f"UPDATE {table} SET {column} = (SELECT new FROM temp.id_map WHERE old = {table}.{column})"
            f" WHERE {column} IN (SELECT old FROM temp.id_map)"
        )
        touched += max(cur.rowcount, 0)
    c.execute("DELETE FROM temp.id_map")
    return touched


_CALL_KEY_COLUMNS = (
    ("calls", "key"),
    ("outputs", "call_key"),
    ("assistance_texts", "call_key"),
    ("judgments", "call_key"),
    ("call_errors", "key"),
    ("calls_in_flight", "key"),
    ("batch_requests", "key"),
)
_OUTPUT_ID_COLUMNS = (
    ("outputs", "id"),
    ("comparisons", "output_a"),
    ("comparisons", "output_b"),
    ("expert_maskings", "output_id"),
    ("expert_checks", "output_id"),
)
_ASSISTANCE_ID_COLUMNS = (
    ("assistance_texts", "id"),
    ("outputs", "assistance_id"),
    ("work_assignments", "assistance_id"),
    ("work_maskings", "assistance_id"),
)
_COMPARISON_ID_COLUMNS = (
    ("comparisons", "id"),
    ("judgments", "comparison_id"),
    ("expert_assignments", "comparison_id"),
)


def rename_entry(store: Store, session: Session, kind: EntryKind, old: str, new: str) -> Change:
    """Move every stored item of entry `old` to the name `new` (an entry of the session file), logged.

    Raises:
        StoreError: `old` has no stored item, is still in the session file, or `new` is not an
            entry of that kind in the session file or already has stored items; nothing written.
    """
    ident = stored_identity(store)
    held = ident.names.get(kind, {})
    current = {e.name for e in session_entries(session) if e.kind == kind}
    where = f"{store.path}: cannot rename {kind} {old!r} to {new!r}"
    if old == new:
        raise StoreError(f"{where}: the two names are the same")
    if not held.get(old):
        raise StoreError(
            f"{where}: no stored item is named {old!r} (stored {kind}s: {', '.join(sorted(held)) or 'none'})"
        )
    if old in current:
        raise StoreError(f"{where}: {old!r} is still a {kind} of the session file; rename it there first")
    if new not in current:
        raise StoreError(f"{where}: {new!r} is not a {kind} of the session file; add it there first")
    if held.get(new):
        raise StoreError(
            f"{where}: {new!r} already has {held[new]} stored item(s); a rename never merges two entries' items"
        )
    if ident.entries is not None:
        before = next((e for e in ident.entries if e.kind == kind and e.name == old), None)
        after = next(e for e in session_entries(session) if e.kind == kind and e.name == new)
        if before is not None and (before.model, before.family) != (after.model, after.family):
            raise StoreError(
                f"{where}: {old!r} was model {before.model!r} (family {before.family!r}) and {new!r} is "
                f"{after.model!r} (family {after.family!r}); a rename keeps the same model: retire {old!r} instead"
            )
    endpoint = _endpoint(session, kind, new)

    def name(value: str) -> str:
        return new if value == old else value

    with store.write() as c:
        # Primary keys change while rows still point at them: checked at commit, not per statement.
        c.execute("PRAGMA defer_foreign_keys = ON")
        touched = 0
        keys: dict[str, str] = {}
        if endpoint is not None:
            old_entry = entry_json(endpoint.model_copy(update={"name": old}))
            new_entry = entry_json(endpoint)
            for key, model, messages, params, sample in c.execute(
                "SELECT key, model, messages, params, sample FROM calls WHERE model = ?", (endpoint.model,)
            ).fetchall():
                if call_key_of(model, messages, params, sample, old_entry) == key:
                    keys[key] = call_key_of(model, messages, params, sample, new_entry)
        outputs: dict[str, str] = {}
        assistance: dict[str, str] = {}
        comparisons: dict[str, str] = {}
        if kind in ("candidate", "worker"):
            column = "candidate" if kind == "candidate" else "worker"
            extra = "" if kind == "candidate" else " AND worker_kind = 'model'"
            for oid, run, task, mode, cand, worker in c.execute(
                f"SELECT id, run, task, mode, candidate, worker FROM outputs WHERE {column} = ?{extra}", (old,)
            ).fetchall():
                new_cand, new_worker = (name(cand), worker) if kind == "candidate" else (cand, name(worker))
                for w_old, w_new in ((worker, new_worker), (IMPORTED, IMPORTED)):
                    if output_id(run, task, mode, cand, w_old) == oid:
                        outputs[oid] = output_id(run, task, mode, new_cand, w_new)
                        break
        if kind == "candidate":
            for aid, run, task in c.execute(
                "SELECT id, run, task FROM assistance_texts WHERE assistant = ?", (old,)
            ).fetchall():
                if assistance_id(run, task, old) == aid:
                    assistance[aid] = assistance_id(run, task, new)
            rows = c.execute(
                "SELECT c.id, c.run, c.task, c.mode, c.candidate_a, c.candidate_b, c.output_a, c.output_b,"
                " oa.worker, ob.worker FROM comparisons c JOIN outputs oa ON oa.id = c.output_a"
                " JOIN outputs ob ON ob.id = c.output_b WHERE c.candidate_a = ? OR c.candidate_b = ?",
                (old, old),
            ).fetchall()
            for cid, run, task, mode, a, b, out_a, out_b, wa, wb in rows:
                na, nb = name(a), name(b)
                new_id = cid
                if Comparison(run, task, mode, a, b).id == cid:
                    # A tournament's pair is stored in canonical order: a rename may swap it.
                    if nb < na:
                        na, nb, out_a, out_b = nb, na, out_b, out_a
                    new_id = Comparison(run, task, mode, na, nb).id
                elif Comparison(run, task, mode, a, b, f"{wa}|{wb}").id == cid:
                    new_id = Comparison(run, task, mode, na, nb, f"{wa}|{wb}").id
                c.execute(
                    "UPDATE comparisons SET candidate_a = ?, candidate_b = ?, output_a = ?, output_b = ? WHERE id = ?",
                    (na, nb, out_a, out_b, cid),
                )
                touched += 1
                if new_id != cid:
                    comparisons[cid] = new_id
            names = {old: new}
            touched += _apply(
                c,
                names,
                (
                    ("outputs", "candidate"),
                    ("assistance_texts", "assistant"),
                    ("judgments", "option1"),
                    ("judgments", "option2"),
                    ("judgments", "winner"),
                    ("scores", "candidate"),
                    ("work_assignments", "condition"),
                ),
            )
        elif kind == "worker":
            cur = c.execute("UPDATE outputs SET worker = ? WHERE worker = ? AND worker_kind = 'model'", (new, old))
            touched += max(cur.rowcount, 0)
        else:
            cur = c.execute("UPDATE judgments SET judge = ? WHERE judge = ? AND judge_kind = 'llm'", (new, old))
            touched += max(cur.rowcount, 0)
        touched += _apply(c, keys, _CALL_KEY_COLUMNS)
        touched += _apply(c, outputs, _OUTPUT_ID_COLUMNS)
        touched += _apply(c, assistance, _ASSISTANCE_ID_COLUMNS)
        touched += _apply(c, comparisons, _COMPARISON_ID_COLUMNS)
        _rename_in_entries(c, kind, old, new)
        cur = c.execute(
            "INSERT INTO session_changes (action, kind, old, new, rows, created_at) VALUES ('rename', ?, ?, ?, ?, ?)",
            (kind, old, new, touched, utc_now()),
        )
        # The rename rewrote names inside chained rows (judgments, scores): the chain is built again,
        # recorded, and the head before it kept (store/chain.py `rechain`), so `centaur verify` holds.
        if cur.lastrowid is not None:
            chain.rechain(c, cur.lastrowid)
        problems = c.execute("PRAGMA foreign_key_check").fetchall()
        if problems:  # never commit a half-renamed database (rolled back by the transaction)
            raise StoreError(f"{where}: the rename would leave {len(problems)} dangling reference(s); nothing changed")
    return Change("rename", kind, old, new, touched)


def _rename_in_entries(c: sqlite3.Connection, kind: str, old: str, new: str) -> None:
    row = c.execute("SELECT value FROM meta WHERE key = 'entries'").fetchone()
    entries = parse_entries(row[0]) if row else None
    if not entries:
        return
    renamed = [Entry(e.kind, new if (e.kind, e.name) == (kind, old) else e.name, e.model, e.family) for e in entries]
    c.execute(
        "UPDATE meta SET value = ? WHERE key = 'entries'",
        (json.dumps([[e.kind, e.name, e.model, e.family] for e in renamed], separators=(",", ":")),),
    )


def retire_entry(store: Store, session: Session, kind: EntryKind, old: str) -> Change:
    """Record that an entry left the session: its items stay stored and every statistic leaves them out, counted.

    Raises:
        StoreError: `old` is still in the session file, has no stored item, or is retired already.
    """
    ident = stored_identity(store)
    held = ident.names.get(kind, {})
    where = f"{store.path}: cannot retire {kind} {old!r}"
    if old in {e.name for e in session_entries(session) if e.kind == kind}:
        raise StoreError(f"{where}: it is still a {kind} of the session file; remove it there first")
    if not held.get(old):
        raise StoreError(
            f"{where}: no stored item is named {old!r} (stored {kind}s: {', '.join(sorted(held)) or 'none'})"
        )
    if (kind, old) in ident.retired:
        raise StoreError(f"{where}: it is retired already")
    if kind == "worker":
        # Augmentation comparisons are identified without their worker (domain.plan.Comparison):
        # another worker's outputs would be judged under the stored verdicts of this one's.
        raise StoreError(
            f"{where}: a session's augmentation tournaments are written by one worker; a new worker needs a "
            "database of its own (another `database` or session name), or rename it back"
        )
    with store.write() as c:
        c.execute(
            "INSERT INTO session_changes (action, kind, old, new, rows, created_at)"
            " VALUES ('retire', ?, ?, NULL, ?, ?)",
            (kind, old, held[old], utc_now()),
        )
    return Change("retire", kind, old, None, held[old])
