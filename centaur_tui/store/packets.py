"""Provides judging packets: export an expert's open assignments to a file, judge it anywhere, import the results.

A judging packet is a small SQLite file (rollback journal, so it is always one consistent
file to send back) holding only the task, rubric and masked texts of an expert's open
assignments, keyed by tokens derived from a secret kept in the session database
(`expert_packets`); it names no model, judge, session or expert id.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from centaur_tui.domain.blinding import (
    MIN_RATIONALE_CHARS,
    Blinding,
    Draft,
    JudgingItem,
    QueueItem,
    clean_text,
    missing,
)
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import Rubric
from centaur_tui.store.connection import connect, immediate_transaction, utc_now
from centaur_tui.store.db import Store
from centaur_tui.store.judging import STATES, JudgingError, SessionJudging, check_state, expert_record, queue_state
from centaur_tui.store.schema import PACKET_FORMAT, PACKET_TABLES, PACKET_VERSION


class PacketError(CentaurError):
    """A judging packet that cannot be read, or does not belong to this session."""

    title = "Judging packet"


def session_fingerprint(study: Study) -> str:
    """Opaque tag tying a packet to its session without naming it."""
    return digest("packet-session", study.session.name, study.session.seed)[:16]


class _PacketFile:
    """The connection of one packet file, shared across threads under a lock."""

    def __init__(self, path: Path, create: bool = False, read_only: bool = False) -> None:
        if not create and not path.exists():
            raise PacketError(f"{path}: no such file")
        try:
            # DELETE journal: one self-contained file to send back, no -wal beside it.
            conn = connect(path, journal="DELETE", read_only=read_only)
            conn.row_factory = sqlite3.Row
            if create:
                for statement in PACKET_TABLES:
                    conn.execute(statement)
            meta = {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM packet_meta")}
        except sqlite3.DatabaseError as exc:
            raise PacketError(f"{path}: not a judging packet ({exc})") from None
        if not create and meta.get("format") != PACKET_FORMAT:
            raise PacketError(f"{path}: not a judging packet")
        if not create and int(meta.get("version", "0")) != PACKET_VERSION:
            raise PacketError(f"{path}: packet version {meta.get('version')}, this program reads {PACKET_VERSION}")
        self.path = path
        self.meta = meta
        self._conn = conn
        self._lock = threading.RLock()

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self._conn, self._lock)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _rubric_json(rubric: Rubric) -> str:
    return rubric.model_dump_json()


def _token(secret: str, assignment_id: int) -> str:
    return "p" + digest("packet-item", secret, assignment_id)[:19]


@dataclass(frozen=True)
class PacketExport:
    """What `packet export` wrote: the file, its id, its places and the identity phrases masked in it."""

    path: Path
    packet_id: str
    items: int
    maskings: int


def export_packet(store: Store, study: Study, expert: ExpertSpec, out: Path,
                  blinding: Blinding | None = None) -> PacketExport:
    """Write a judging packet of an expert's open assignments; it holds no identity at all.

    Raises:
        PacketError: nothing to export, or the file exists.
    """
    if out.exists():
        raise PacketError(f"{out} already exists; choose another file name")
    judging = SessionJudging(store, study, expert, blinding)
    open_items = [q for q in judging.queue() if q.state != "done"]
    if not open_items:
        raise PacketError(f"{expert.id} has no open assignments; run `centaur assign` first")
    packet_id = "k" + secrets.token_hex(8)
    secret = secrets.token_hex(16)
    tmp = out.with_name(out.name + ".partial")
    tmp.unlink(missing_ok=True)
    db = _PacketFile(tmp, create=True)
    try:
        with db.write() as c:
            meta = {
                "format": PACKET_FORMAT, "version": str(PACKET_VERSION), "packet_id": packet_id,
                "session": session_fingerprint(study), "expert_id": expert.id, "expert_name": expert.name,
                "allow_ties": "true" if study.session.judging.allow_ties else "false",
                "min_rationale": str(judging.min_rationale), "simulated": "true" if judging.simulated else "false",
                "created_at": utc_now(),
            }
            c.executemany("INSERT INTO packet_meta (key, value) VALUES (?, ?)", list(meta.items()))
            for position, q in enumerate(open_items, start=1):
                item = judging.item(q.key)
                c.execute(
                    "INSERT INTO items (token, position, task_title, task_prompt, deliverable, rubric, option_1,"
                    " option_2, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (_token(secret, int(q.key)), position, item.task_title, item.task_prompt, item.deliverable,
                     _rubric_json(item.rubric), item.option_1, item.option_2,
                     q.state if q.state in STATES else "pending"),
                )
                saved = judging.draft(q.key)
                if saved is not None:
                    c.execute(
                        "INSERT INTO drafts (token, scores, winner, rationale, seconds, version, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, 0, ?)",
                        (_token(secret, int(q.key)), saved.to_json(), saved.winner, saved.rationale, saved.seconds,
                         utc_now()),
                    )
    finally:
        db.close()
    with store.write() as c:
        c.execute(
            "INSERT INTO expert_packets (id, expert, secret, items, created_at) VALUES (?, ?, ?, ?, ?)",
            (packet_id, expert.id, secret, len(open_items), utc_now()),
        )
    tmp.replace(out)
    return PacketExport(out, packet_id, len(open_items), judging.masked)


class PacketJudging:
    """An expert judging from a packet file, on any machine; results are written into the file.

    Args:
        path: The packet file from `centaur packet export`.
    """

    def __init__(self, path: Path) -> None:
        self.db = _PacketFile(path)
        self.expert_name = self.db.meta.get("expert_name", "Expert")
        self.simulated = self.db.meta.get("simulated") == "true"
        self.allow_ties = self.db.meta.get("allow_ties") == "true"
        self.min_rationale = int(self.db.meta.get("min_rationale", MIN_RATIONALE_CHARS))

    def _item_row(self, key: str) -> sqlite3.Row:
        rows = self.db.rows("SELECT * FROM items WHERE token = ?", (key,))
        if not rows:
            raise JudgingError("no such place in this packet")
        return rows[0]

    def queue(self) -> list[QueueItem]:
        rows = self.db.rows(
            "SELECT i.token, i.position, i.state, i.task_title, r.token IS NOT NULL AS done"
            " FROM items i LEFT JOIN results r ON r.token = i.token ORDER BY i.position"
        )
        return [QueueItem(r["token"], r["position"], queue_state(r["state"], bool(r["done"])),  # type: ignore[arg-type]
                          r["task_title"]) for r in rows]

    def item(self, key: str) -> JudgingItem:
        r = self._item_row(key)
        # A packet may have travelled: clean its texts again rather than trust the file.
        return JudgingItem(
            key=key, task_title=r["task_title"], task_prompt=clean_text(r["task_prompt"]),
            deliverable=r["deliverable"], rubric=Rubric.model_validate_json(r["rubric"]),
            option_1=clean_text(r["option_1"]), option_2=clean_text(r["option_2"]),
            allow_ties=self.allow_ties, min_rationale=self.min_rationale,
        )

    def draft(self, key: str) -> Draft | None:
        rows = self.db.rows("SELECT scores, winner, rationale, seconds FROM drafts WHERE token = ?", (key,))
        if not rows:
            return None
        r = rows[0]
        return Draft(Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"])

    def resume_key(self) -> str | None:
        rows = self.db.rows(
            "SELECT d.token FROM drafts d LEFT JOIN results r ON r.token = d.token WHERE r.token IS NULL"
            " ORDER BY d.version DESC LIMIT 1"
        )
        return rows[0]["token"] if rows else None

    def save_draft(self, key: str, draft: Draft, version: int) -> None:
        self._item_row(key)
        with self.db.write() as c:
            c.execute(
                "INSERT INTO drafts (token, scores, winner, rationale, seconds, version, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token) DO UPDATE SET scores = excluded.scores,"
                " winner = excluded.winner, rationale = excluded.rationale, seconds = excluded.seconds,"
                " version = excluded.version, updated_at = excluded.updated_at WHERE excluded.version > drafts.version",
                (key, draft.to_json(), draft.winner, draft.rationale, draft.seconds, version, utc_now()),
            )

    def submit(self, key: str, draft: Draft) -> None:
        item = self.item(key)
        lacks = missing(draft, item.rubric, self.allow_ties, self.min_rationale)
        if lacks:
            raise JudgingError("still missing: " + ", ".join(lacks))
        with self.db.write() as c:
            cur = c.execute(
                "INSERT OR IGNORE INTO results (token, scores, winner, rationale, seconds, judged_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (key, draft.to_json(), draft.winner, draft.rationale.strip(), round(draft.seconds, 1), utc_now()),
            )
            if cur.rowcount == 0:
                raise JudgingError("this comparison is already judged; the stored judgment is kept")
            c.execute("DELETE FROM drafts WHERE token = ?", (key,))

    def set_state(self, key: str, state: str) -> None:
        check_state(state)
        self._item_row(key)
        with self.db.write() as c:
            c.execute("UPDATE items SET state = ? WHERE token = ?", (state, key))

    def close(self) -> None:
        self.db.close()


@dataclass(frozen=True)
class PacketImport:
    """What `packet import` did: judgments added, already stored, rejected (with reasons)."""

    added: int
    already_stored: int
    open_items: int
    rejected: tuple[str, ...] = ()


def import_packet(store: Store, study: Study, path: Path) -> PacketImport:
    """Merge a packet's results into the session database; importing twice adds nothing.

    Raises:
        PacketError: the file is not a packet of this session.
    """
    db = _PacketFile(path, read_only=True)
    try:
        if db.meta.get("session") != session_fingerprint(study):
            raise PacketError(f"{path}: this packet belongs to another session")
        packets = store.read("SELECT expert, secret FROM expert_packets WHERE id = ?", (db.meta.get("packet_id", ""),))
        if not packets:
            raise PacketError(f"{path}: packet {db.meta.get('packet_id')!r} was not exported from this database")
        expert_id, secret = packets[0]["expert"], packets[0]["secret"]
        assignments = store.read(
            "SELECT a.id, a.comparison_id, a.presentation, a.flipped, c.task, c.candidate_a, c.candidate_b"
            " FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id WHERE a.expert = ?",
            (expert_id,),
        )
        by_token = {_token(secret, a["id"]): a for a in assignments}
        results = db.rows("SELECT token, scores, winner, rationale, seconds FROM results ORDER BY token")
        n_items = db.rows("SELECT count(*) AS n FROM items")[0]["n"]
    finally:
        db.close()
    added = already = 0
    rejected: list[str] = []
    for r in results:
        a = by_token.get(r["token"])
        if a is None:
            rejected.append(f"{r['token']}: not an assignment of {expert_id} in this session")
            continue
        rubric = study.rubric(a["task"])
        draft = Draft(Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"])
        lacks = missing(draft, rubric, study.session.judging.allow_ties, 1)
        out_of_range = [
            d.id for d in rubric.all for o in (1, 2)
            if draft.score(d.id, o) is not None and draft.score(d.id, o) not in range(1, 11)
        ]
        if lacks or out_of_range or draft.winner not in ("option_1", "option_2", "tie"):
            problem = ", ".join(lacks) or (f"scores outside 1-10: {', '.join(out_of_range)}" if out_of_range
                                           else "winner")
            rejected.append(f"{r['token']}: not usable ({problem})")
            continue
        first, second = (a["candidate_b"], a["candidate_a"]) if a["flipped"] else (a["candidate_a"], a["candidate_b"])
        record = expert_record(a["comparison_id"], expert_id, a["presentation"], first, second, rubric, draft)
        if store.save_judgment(record) is None:
            already += 1
        else:
            added += 1
    return PacketImport(added, already, n_items - len(results), tuple(rejected))
