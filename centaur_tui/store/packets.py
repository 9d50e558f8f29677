"""Provides judging packets: export an expert's open assignments to a file, judge it anywhere, import the results.

A judging packet is a small SQLite file (rollback journal, so it is always one consistent
file to send back) holding only the task, rubric and masked texts of an expert's open
assignments, keyed by tokens derived from a per-packet secret kept in the session database
(`expert_packets`); it names no model, judge or comparison, only the session's name.

Trust (issue 13): the packet carries the session's fingerprint and HMAC-SHA256 checks keyed
with a per-session secret that never leaves the session database (`session_secret`): one per
item over what the expert was shown and the assignment it maps to, one over the packet's
metadata and item list. Results written by `centaur judge` cannot be signed (the judge's
machine has no secret), so import verifies the items are untampered and validates every
result and draft against the session's rules, then writes all of them in one transaction or
none (`PacketRefused` lists every problem by item and field).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from centaur_tui.domain.blinding import MIN_RATIONALE_CHARS, Draft, JudgingItem, clean_text
from centaur_tui.domain.errors import PacketError, PacketRefused, packet_refusal
from centaur_tui.domain.plan import canonical_json, digest
from centaur_tui.domain.records import JudgmentRecord, PacketResult
from centaur_tui.domain.seat import STATES, JudgingError, PlaceState, expert_record
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import Dimension, Rubric
from centaur_tui.domain.untrusted import strip_controls
from centaur_tui.store import chain
from centaur_tui.store.connection import connect, immediate_transaction, utc_now
from centaur_tui.store.db import Store, insert_judgment_row, insert_scores
from centaur_tui.store.schema import PACKET_FORMAT, PACKET_TABLES, PACKET_VERSION

PACKET_TABLE_NAMES = ("packet_meta", "items", "drafts", "results")


__all__ = ["PacketError", "PacketRefused"]

READ_LIMIT_S = 10.0
"""Longest any one statement on a packet file may run: a view or a crafted file must not hang a read."""
PROGRESS_STEPS = 10_000
"""SQLite VM steps between two checks of the time limit (a check costs well under a microsecond)."""


def _check_regular(path: Path) -> None:
    """Refuse a path that is not a regular file before SQLite opens it (opening a FIFO waits for a writer forever)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise PacketError(f"{path}: no such file") from None
    except OSError as exc:
        raise PacketError(f"{path}: cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise PacketError(f"{path}: not a regular file (a FIFO, device or folder); a judging packet is a file")


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a packet whose known tables are not plain tables, or that holds any view or trigger.

    Reading `sqlite_master` runs nothing: a view is only parsed there. Checked before any row is
    read, so a view named `results` over an endless recursive query never runs, and a trigger on
    a table `centaur judge` writes never fires.
    """
    kinds = {name: kind for kind, name in conn.execute("SELECT type, name FROM sqlite_master")}
    odd = sorted(f"{kind} {name!r}" for name, kind in kinds.items() if kind in ("view", "trigger"))
    wrong = sorted(f"{name!r} is a {kinds[name]}" for name in PACKET_TABLE_NAMES if kinds.get(name, "table") != "table")
    missing = [name for name in PACKET_TABLE_NAMES if name not in kinds]
    if odd or wrong or missing:
        what = "; ".join([*wrong, *(f"holds {o}" for o in odd[:5]), *(f"no table {m!r}" for m in missing)])
        raise PacketError(f"{path}: not a readable judging packet ({what}); a packet holds four plain tables only")


def _mac(key: str, *parts: Any) -> str:
    """HMAC-SHA256 (hex) of the canonical JSON of `parts`, keyed with a session secret."""
    return hmac.new(key.encode("utf-8"), canonical_json(list(parts)).encode("utf-8"), hashlib.sha256).hexdigest()


def session_secret(store: Store, create: bool = False) -> str | None:
    """The session database's packet key (64 hex digits), written on first need when `create`; None if none yet."""
    if create:
        with store.write() as c:
            c.execute(
                "INSERT OR IGNORE INTO session_secret (id, secret, created_at) VALUES (1, ?, ?)",
                (secrets.token_hex(32), utc_now()),
            )
    value = store.read_value("SELECT secret FROM session_secret WHERE id = 1")
    return str(value) if value else None


def forget_secrets(store: Store) -> None:
    """Remove the session secret and every packet's secret from a copy of a database made to be given away.

    A reviewer holding the secret could sign an export or a packet as this session (issue 23);
    `secure_delete` zeroes the freed bytes, so the copy's file holds no trace of them.
    """
    with store.write() as c:
        c.execute("PRAGMA secure_delete = ON")
        c.execute("DELETE FROM session_secret")
        c.execute("UPDATE expert_packets SET secret = ''")


def session_fingerprint(study: Study) -> str:
    """Opaque tag of a session's configuration (name and seed); two databases of one session file share it."""
    return digest("packet-session", study.session.name, study.session.seed)[:16]


def keyed_fingerprint(study: Study, secret: str) -> str:
    """Tag tying a packet to one session database: two sessions of the same name and candidates differ here."""
    return _mac(secret, "session-fingerprint", study.session.name)[:16]


SIGNED_META = (
    "format",
    "version",
    "packet_id",
    "session",
    "session_name",
    "expert_id",
    "expert_name",
    "allow_ties",
    "min_rationale",
    "simulated",
    "created_at",
    "guidelines",
    "idle_s",
)
"""The `packet_meta` keys the packet's HMAC covers (`mac` itself is the only other key)."""


def _item_mac(secret: str, packet_id: str, assignment_id: int, item: dict[str, Any]) -> str:
    """The HMAC of one item as exported: what the expert is shown, and the assignment it maps to."""
    return _mac(secret, "packet-item", packet_id, assignment_id, *(item[k] for k in _ITEM_FIELDS))


_ITEM_FIELDS = (
    "token",
    "position",
    "task_title",
    "task_prompt",
    "deliverable",
    "rubric",
    "option_1",
    "option_2",
    "exported_state",
    "cut_off",
)


def _packet_mac(secret: str, meta: dict[str, Any], items: list[dict[str, Any]]) -> str:
    """The HMAC of the packet's metadata and its list of items (so none can be added, dropped or reordered)."""
    return _mac(
        secret, "packet", {k: meta.get(k) for k in SIGNED_META}, [[i["position"], i["token"], i["mac"]] for i in items]
    )


class _PacketFile:
    """The connection of one packet file, shared across threads under a lock."""

    def __init__(self, path: Path, create: bool = False, read_only: bool = False) -> None:
        if not create:
            _check_regular(path)
        self._deadline = time.monotonic() + READ_LIMIT_S
        try:
            # DELETE journal: one self-contained file to send back, no -wal beside it.
            conn = connect(path, journal="DELETE", read_only=read_only)
            conn.row_factory = sqlite3.Row
            # Every statement has a time limit (`_deadline`, set before each): an interrupted one
            # raises OperationalError "interrupted", reported as a packet that cannot be read.
            conn.set_progress_handler(self._over_time, PROGRESS_STEPS)
            conn.execute("PRAGMA trusted_schema = OFF")  # no function of the file's schema runs
            if create:
                for statement in PACKET_TABLES:
                    conn.execute(statement)
            else:
                _check_schema(conn, path)
            meta = {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM packet_meta")}
        except sqlite3.DatabaseError as exc:
            raise PacketError(f"{path}: not a judging packet ({_sqlite_problem(exc)})") from None
        if not create and meta.get("format") != PACKET_FORMAT:
            raise PacketError(f"{path}: not a judging packet")
        if not create and meta.get("version") != str(PACKET_VERSION):
            raise PacketError(
                f"{path}: packet_meta version {_quoted(meta.get('version'))}: this program reads packet "
                f"version {PACKET_VERSION} only; export the packet again"
            )
        self.path = path
        self.meta = {str(k): v for k, v in meta.items()}
        self._conn = conn
        self._lock = threading.RLock()

    def _over_time(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def write(self) -> AbstractContextManager[sqlite3.Connection]:
        self._deadline = time.monotonic() + READ_LIMIT_S
        return immediate_transaction(self._conn, self._lock)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            self._deadline = time.monotonic() + READ_LIMIT_S
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _one_line(value: object, limit: int = 200) -> str:
    """A name or title from a packet as one inert line: escape sequences and controls removed, bounded."""
    text = " ".join(strip_controls(str(value)).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _clean_rubric(rubric: Rubric) -> Rubric:
    """A packet's rubric with every text shown to the expert cleaned (the ids are slugs already)."""

    def clean(dimension: Dimension) -> Dimension:
        return dimension.model_copy(
            update={
                "name": _one_line(dimension.name),
                "description": clean_text(dimension.description),
                "low": clean_text(dimension.low),
                "high": clean_text(dimension.high),
            }
        )

    return rubric.model_copy(
        update={
            "task_dimensions": tuple(map(clean, rubric.task_dimensions)),
            "general_dimensions": tuple(map(clean, rubric.general_dimensions)),
        }
    )


def _packet_rubric(raw: object) -> Rubric:
    """An item's rubric, validated and cleaned; JudgingError (shown to the expert) when it is not one."""
    try:
        return _clean_rubric(Rubric.model_validate_json(str(raw)))
    except ValueError:
        raise JudgingError("this place's rubric cannot be read: the packet was changed; ask for a new one") from None


def _cut_off(raw: object) -> tuple[bool, bool]:
    """An item's cut-off flags ("00", "10", "01", "11"); JudgingError (shown to the expert) for anything else."""
    if raw not in ("00", "10", "01", "11"):
        raise JudgingError("this place's cut-off flags cannot be read: the packet was changed; ask for a new one")
    text = str(raw)
    return text[0] == "1", text[1] == "1"


def _min_rationale(value: str | None) -> int:
    """A packet's `min_rationale` (signed at export; checked again: 0-1000 characters, else the default)."""
    try:
        number = int(value) if value is not None and len(value) < 6 else MIN_RATIONALE_CHARS
    except (TypeError, ValueError):
        return MIN_RATIONALE_CHARS
    return number if 0 <= number <= 1000 else MIN_RATIONALE_CHARS


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


@dataclass(frozen=True)
class PacketPlace:
    """One open place to export, as the session would show it (`services.judging.export_packet` decides which)."""

    assignment_id: int
    item: JudgingItem
    """Masked and cleaned, in presented order."""
    state: str
    draft: Draft | None


def write_packet(
    store: Store,
    study: Study,
    expert: ExpertSpec,
    out: Path,
    places: list[PacketPlace],
    *,
    min_rationale: int,
    simulated: bool,
    idle_seconds: float,
    guidelines: str | None,
    maskings: int,
) -> PacketExport:
    """Write a judging packet of these places (tokens and integrity checks keyed by session secrets).

    The file is written beside `out` and moved there when complete; the packet's secret is
    kept in `expert_packets` so the results can be merged back.
    """
    open_items = places
    packet_id = "k" + secrets.token_hex(8)
    secret = secrets.token_hex(16)
    key = session_secret(store, create=True)
    assert key is not None
    tmp = out.with_name(out.name + ".partial")
    tmp.unlink(missing_ok=True)
    db = _PacketFile(tmp, create=True)
    try:
        with db.write() as c:
            meta = {
                "format": PACKET_FORMAT,
                "version": str(PACKET_VERSION),
                "packet_id": packet_id,
                "session": keyed_fingerprint(study, key),
                "session_name": study.session.name,
                "expert_id": expert.id,
                "expert_name": expert.name,
                "allow_ties": "true" if study.session.judging.allow_ties else "false",
                "min_rationale": str(min_rationale),
                "simulated": "true" if simulated else "false",
                "created_at": utc_now(),
                "idle_s": repr(float(idle_seconds)),
            }
            if guidelines:
                meta["guidelines"] = guidelines  # masked like the texts
            items: list[dict[str, Any]] = []
            for position, place in enumerate(open_items, start=1):
                item = place.item
                row: dict[str, Any] = {
                    "token": _token(secret, place.assignment_id),
                    "position": position,
                    "task_title": item.task_title,
                    "task_prompt": item.task_prompt,
                    "deliverable": item.deliverable,
                    "rubric": _rubric_json(item.rubric),
                    "option_1": item.option_1,
                    "option_2": item.option_2,
                    "exported_state": place.state if place.state in STATES else "pending",
                    "cut_off": "".join("1" if cut else "0" for cut in item.cut_off),
                }
                row["mac"] = _item_mac(key, packet_id, place.assignment_id, row)
                items.append(row)
                c.execute(
                    "INSERT INTO items (token, position, task_title, task_prompt, deliverable, rubric, option_1,"
                    " option_2, exported_state, cut_off, state, mac) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*(row[k] for k in _ITEM_FIELDS), row["exported_state"], row["mac"]),
                )
                saved = place.draft
                if saved is not None:
                    c.execute(
                        "INSERT INTO drafts (token, scores, winner, rationale, seconds, active_seconds, version,"
                        " updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
                        (
                            row["token"],
                            saved.to_json(),
                            saved.winner,
                            saved.rationale,
                            saved.seconds,
                            saved.active_seconds,
                            utc_now(),
                        ),
                    )
            meta["mac"] = _packet_mac(key, meta, items)
            c.executemany("INSERT INTO packet_meta (key, value) VALUES (?, ?)", list(meta.items()))
    finally:
        db.close()
    with store.write() as c:
        c.execute(
            "INSERT INTO expert_packets (id, expert, secret, items, created_at) VALUES (?, ?, ?, ?, ?)",
            (packet_id, expert.id, secret, len(open_items), utc_now()),
        )
    tmp.replace(out)
    return PacketExport(out, packet_id, len(open_items), maskings)


@dataclass(frozen=True)
class PacketMeta:
    """A packet's rules and labels as exported (the session's, at export time)."""

    expert_name: str
    simulated: bool
    allow_ties: bool
    min_rationale: int
    guidelines: str | None
    idle_seconds: float


@dataclass(frozen=True)
class PacketPlaceRow:
    """One place of a packet's queue."""

    token: str
    position: int
    state: str
    task_title: str
    done: bool


@dataclass(frozen=True)
class PacketItemRow:
    """What a packet holds for one place (texts as stored: the seat cleans them again)."""

    task_title: str
    task_prompt: str
    deliverable: str
    rubric: Rubric
    option_1: str
    option_2: str
    cut_off: tuple[bool, bool] = (False, False)
    """Whether option 1 / option 2 was cut off at the length limit (the seat tells the expert)."""


class PacketRows:
    """The rows of a packet file being judged (`services.judging.PacketJudging` applies the rules).

    Args:
        path: The packet file from `centaur packet export`.

    Raises:
        PacketError: not a readable judging packet of this program's version.
    """

    def __init__(self, path: Path) -> None:
        self.db = _PacketFile(path)
        # Nothing in a packet is trusted on the judge's machine (it holds no secret to check the
        # HMACs): every text that reaches the screen is cleaned, names and titles too (an OSC
        # sequence in the expert's name set the terminal's title).
        m = self.db.meta
        guidelines = m.get("guidelines")
        self.meta = PacketMeta(
            expert_name=_one_line(m.get("expert_name") or "Expert"),
            simulated=m.get("simulated") == "true",
            allow_ties=m.get("allow_ties") == "true",
            min_rationale=_min_rationale(m.get("min_rationale")),
            guidelines=clean_text(guidelines) if isinstance(guidelines, str) else None,
            idle_seconds=_idle_seconds(m.get("idle_s")),
        )

    def places(self) -> list[PacketPlaceRow]:
        rows = self.db.rows(
            "SELECT i.token, i.position, i.state, i.task_title, r.token IS NOT NULL AS done"
            " FROM items i LEFT JOIN results r ON r.token = i.token ORDER BY i.position"
        )
        return [
            PacketPlaceRow(r["token"], r["position"], r["state"], _one_line(r["task_title"]), bool(r["done"]))
            for r in rows
        ]

    def has(self, token: str) -> bool:
        """Whether the packet has this place."""
        return bool(self.db.rows("SELECT 1 FROM items WHERE token = ?", (token,)))

    def item(self, token: str) -> PacketItemRow | None:
        rows = self.db.rows(
            "SELECT task_title, task_prompt, deliverable, rubric, option_1, option_2, cut_off FROM items"
            " WHERE token = ?",
            (token,),
        )
        if not rows:
            return None
        r = rows[0]
        # A packet may have travelled: clean its texts again rather than trust the file.
        return PacketItemRow(
            _one_line(r["task_title"]),
            clean_text(r["task_prompt"]),
            clean_text(r["deliverable"]),
            _packet_rubric(r["rubric"]),
            clean_text(r["option_1"]),
            clean_text(r["option_2"]),
            _cut_off(r["cut_off"]),
        )

    def draft(self, token: str) -> Draft | None:
        rows = self.db.rows(
            "SELECT scores, winner, rationale, seconds, active_seconds FROM drafts WHERE token = ?", (token,)
        )
        if not rows:
            return None
        r = rows[0]
        return Draft(
            Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"], r["active_seconds"]
        )

    def resume_token(self) -> str | None:
        """The open place whose draft was saved last."""
        rows = self.db.rows(
            "SELECT d.token FROM drafts d LEFT JOIN results r ON r.token = d.token WHERE r.token IS NULL"
            " ORDER BY d.version DESC LIMIT 1"
        )
        return str(rows[0]["token"]) if rows else None

    def draft_version(self, token: str) -> int:
        """The version of a place's saved draft; 0 when it has none."""
        rows = self.db.rows("SELECT version FROM drafts WHERE token = ?", (token,))
        return int(rows[0]["version"]) if rows else 0

    def save_draft(self, token: str, draft: Draft, version: int, base: int | None = None) -> bool:
        """Save a draft; whether it was stored (not: a version no higher than the stored one, or not `base`)."""
        with self.db.write() as c:
            if base is not None:
                row = c.execute("SELECT version FROM drafts WHERE token = ?", (token,)).fetchone()
                if (0 if row is None else int(row[0])) != base:
                    return False
            cur = c.execute(
                "INSERT INTO drafts (token, scores, winner, rationale, seconds, active_seconds, version, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token) DO UPDATE SET scores = excluded.scores,"
                " winner = excluded.winner, rationale = excluded.rationale, seconds = excluded.seconds,"
                " active_seconds = excluded.active_seconds, version = excluded.version,"
                " updated_at = excluded.updated_at WHERE excluded.version > drafts.version",
                (
                    token,
                    draft.to_json(),
                    draft.winner,
                    draft.rationale,
                    draft.seconds,
                    draft.active_seconds,
                    version,
                    utc_now(),
                ),
            )
        return cur.rowcount > 0

    def store_result(self, token: str, draft: Draft) -> bool:
        """Store a complete draft as the place's result and delete its draft; False when it has a result already."""
        with self.db.write() as c:
            cur = c.execute(
                "INSERT OR IGNORE INTO results (token, scores, winner, rationale, seconds, active_seconds,"
                " confirmed_lower, judged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    token,
                    draft.to_json(),
                    draft.winner,
                    draft.rationale.strip(),
                    round(draft.seconds, 1),
                    None if draft.active_seconds is None else round(draft.active_seconds, 1),
                    int(draft.confirmed_lower),
                    utc_now(),
                ),
            )
            if cur.rowcount == 0:
                return False
            c.execute("DELETE FROM drafts WHERE token = ?", (token,))
        return True

    def set_state(self, token: str, state: PlaceState) -> bool:
        """Mark a place; False when the packet has no such place."""
        with self.db.write() as c:
            cur = c.execute("UPDATE items SET state = ? WHERE token = ?", (state, token))
        return cur.rowcount > 0

    def close(self) -> None:
        self.db.close()


@dataclass(frozen=True)
class PacketImport:
    """What `packet import` did: judgments and drafts added or already stored, and what the session kept instead."""

    packet_id: str
    expert: str
    added: int
    already_stored: int
    open_items: int
    drafts_added: int = 0
    drafts_already: int = 0
    drafts_kept: int = 0
    """Drafts not taken because the session holds a newer draft of the same place, or its judgment."""
    kept: tuple[str, ...] = ()
    """Results not taken because the session holds a different judgment of that place (named by item)."""
    states: int = 0
    """Open places whose state (skipped, flagged, pending) the expert changed in the packet."""


@dataclass
class PacketContents:
    """A packet's rows as plain values, read once (the file is closed before anything is checked)."""

    path: Path
    meta: dict[str, str]
    items: list[dict[str, Any]]
    results: list[dict[str, Any]]
    drafts: list[dict[str, Any]]


def _sqlite_problem(exc: sqlite3.Error) -> str:
    if "interrupted" in str(exc):
        return f"reading it took longer than {READ_LIMIT_S:g} s"
    return str(exc)


def read_packet(path: Path) -> PacketContents:
    """Copy a packet's rows out with plain SELECTs on its four known tables, each under a time limit.

    Raises:
        PacketError: not a regular file, not a packet (a view, trigger or missing table), damaged,
            or a read that outran its time limit.
    """
    db = _PacketFile(path, read_only=True)
    try:
        check = [r[0] for r in db.rows("PRAGMA quick_check")]
        if check != ["ok"]:
            raise PacketError(
                f"{path}: damaged file, not a usable judging packet ({'; '.join(map(_shown, check[:3]))})"
            )
        items = db.rows(f"SELECT {', '.join(_ITEM_FIELDS)}, mac, state FROM items ORDER BY position, token")
        results = db.rows(
            "SELECT token, scores, winner, rationale, seconds, active_seconds, confirmed_lower FROM results"
            " ORDER BY rowid"
        )
        drafts = db.rows(
            "SELECT token, scores, winner, rationale, seconds, active_seconds, version FROM drafts ORDER BY rowid"
        )
    except sqlite3.Error as exc:
        raise PacketError(f"{path}: not a readable judging packet ({_sqlite_problem(exc)})") from None
    finally:
        db.close()
    return PacketContents(
        path, db.meta, [dict(r) for r in items], [dict(r) for r in results], [dict(r) for r in drafts]
    )


def _idle_seconds(value: str | None) -> float:
    """A packet's `idle_s` (signed at export; checked again: 5-3600 s, else the default 60 s)."""
    try:
        seconds = float(value) if value is not None else 60.0
    except (TypeError, ValueError):
        return 60.0
    return seconds if math.isfinite(seconds) and 5.0 <= seconds <= 3600.0 else 60.0


def _shown(value: Any) -> str:
    """A value as the packet holds it, short and inert, for an error message."""
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, str) and len(value) > 40:
        value = value[:37]
    text = json.dumps(value)  # ASCII escapes: no control character reaches a terminal
    return text if len(text) <= 40 else text[:37] + "..."


def _quoted(value: Any) -> str:
    """A packet_meta value, short and inert (repr escapes every control and invisible character)."""
    text = repr(value[:40] if isinstance(value, str) else value)
    return text if len(text) <= 44 else text[:41] + "..."


def _word(value: Any) -> str:
    """A token or position as it is, when it is plain letters and digits; otherwise shown inert."""
    text = str(value)
    return text if text.isascii() and text.isalnum() and len(text) <= 40 else _shown(value)


def _insert_judgment(c: sqlite3.Connection, record: JudgmentRecord) -> None:
    """Insert one expert judgment with its scores inside the caller's transaction (as Store.save_judgment does)."""
    cur = insert_judgment_row(c, record)
    insert_scores(c, cur.lastrowid, record)
    chain.append(c, "judgments", cur.lastrowid)


def _same_judgment(c: sqlite3.Connection, stored: tuple[Any, ...], record: JudgmentRecord) -> bool:
    """Whether a stored judgment (id, judge_kind, winner, rationale) is the one `record` would store."""
    judgment_id, kind, winner, rationale = stored
    if (kind, winner, rationale) != ("expert", record.winner, record.rationale):
        return False
    rows = c.execute("SELECT candidate, dimension, score FROM scores WHERE judgment_id = ?", (judgment_id,))
    return {tuple(r) for r in rows} == {(s.candidate, s.dimension, s.score) for s in record.scores}


@dataclass(frozen=True)
class VerifiedPacket:
    """A packet whose items are this session's, untampered: its rows, its owner and each item's assignment."""

    rows: PacketContents
    packet_id: str
    owner: str
    assignments: dict[str, tuple[str, dict[str, Any]]]
    """By item token: the item's label ("item 3 (token ...)") and its assignment row."""

    def places(self) -> dict[str, tuple[str, str]]:
        """By item token: its label and its task (what the results' checks need)."""
        return {token: (label, a["task"]) for token, (label, a) in self.assignments.items()}


def verify_packet(store: Store, study: Study, path: Path, expert_id: str | None = None) -> VerifiedPacket:
    """Read a packet and check it is one of this session's, with every item as exported (HMACs).

    Raises:
        PacketError: the file is not a readable packet, or not one of this session (or of `expert_id`).
        PacketRefused: an item or the packet's metadata was changed after export (listed by item).
    """
    packet = read_packet(path)
    meta = packet.meta
    key = session_secret(store)
    fingerprint = keyed_fingerprint(study, key) if key else None
    if key is None or meta.get("session") != fingerprint:
        raise PacketError(
            f"{path}: this packet belongs to another session (packet_meta session_name "
            f"{_quoted(meta.get('session_name'))}, fingerprint {_quoted(meta.get('session'))}; this session "
            f"{study.session.name!r} has {fingerprint or 'exported no packet'})"
        )
    packet_id = meta.get("packet_id", "")
    exported = store.read("SELECT expert, secret, items FROM expert_packets WHERE id = ?", (packet_id,))
    if not exported:
        raise PacketError(f"{path}: packet_meta packet_id {_quoted(packet_id)} was not exported from this database")
    owner, token_secret = exported[0]["expert"], exported[0]["secret"]
    if meta.get("expert_id") != owner:
        raise PacketRefused(
            f"{path}: packet_meta expert_id {_quoted(meta.get('expert_id'))}, but packet {packet_id} "
            f"was exported for {owner!r}; nothing imported"
        )
    if expert_id is not None and expert_id != owner:
        raise PacketError(f"{path}: this is {owner}'s packet, not {expert_id}'s; nothing imported")
    assignments = store.read(
        "SELECT a.id, a.comparison_id, a.presentation, a.flipped, c.task, c.candidate_a, c.candidate_b"
        " FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id WHERE a.expert = ?",
        (owner,),
    )
    by_token = {_token(token_secret, a["id"]): a for a in assignments}
    problems: list[str] = []
    items: dict[str, tuple[str, dict[str, Any]]] = {}
    for item in packet.items:
        label = f"item {_word(item['position'])} (token {_word(item['token'])})"
        a = by_token.get(item["token"])
        if a is None:
            problems.append(f"{label}: field token: not an assignment of {owner} exported in this packet")
        elif not hmac.compare_digest(str(item["mac"]), _item_mac(key, packet_id, a["id"], item)):
            problems.append(f"{label}: changed after export (its integrity check fails)")
        elif item["state"] not in STATES:
            problems.append(f"{label}: field state: {_shown(item['state'])} is not one of {', '.join(STATES)}")
        else:
            items[item["token"]] = (f"item {item['position']} (token {item['token']})", a)
    if not problems and not hmac.compare_digest(str(meta.get("mac", "")), _packet_mac(key, meta, packet.items)):
        problems.append(
            f"packet_meta: changed after export, or items added, dropped or reordered (the packet's "
            f"integrity check fails; {len(packet.items)} item(s), {exported[0]['items']} exported)"
        )
    if problems:
        raise packet_refusal(path, problems)
    return VerifiedPacket(packet, packet_id, owner, items)


def merge_packet(store: Store, study: Study, packet: VerifiedPacket, results: Sequence[PacketResult]) -> PacketImport:
    """Merge a verified packet's checked results and drafts (formats/packet.py) all at once; twice adds nothing."""
    owner = packet.owner
    added = already = drafts_added = drafts_already = drafts_kept = states = 0
    kept: list[str] = []
    with store.write() as c:
        for item in packet.rows.items:
            # A place skipped or flagged in the packet is so in the session, unless the session changed
            # it too since the export (then the session's is newer); a judgment makes it done anyway.
            if item["state"] != item["exported_state"]:
                cur = c.execute(
                    "UPDATE expert_assignments SET state = ? WHERE id = ? AND state = ?",
                    (item["state"], packet.assignments[item["token"]][1]["id"], item["exported_state"]),
                )
                states += cur.rowcount
        for result in results:
            a = packet.assignments[result.token][1]
            draft = result.draft
            stored = c.execute(
                "SELECT id, judge_kind, winner, rationale FROM judgments WHERE comparison_id = ? AND judge = ?"
                " AND presentation = ? ORDER BY revision LIMIT 1",
                (a["comparison_id"], owner, a["presentation"]),
            ).fetchone()
            if result.kind == "draft":
                if stored is not None:
                    drafts_kept += 1
                    continue
                current = c.execute(
                    "SELECT scores, winner, rationale, seconds, version FROM expert_drafts WHERE assignment_id = ?",
                    (a["id"],),
                ).fetchone()
                if current is not None and tuple(current[:4]) == (
                    draft.to_json(),
                    draft.winner,
                    draft.rationale,
                    draft.seconds,
                ):
                    drafts_already += 1
                elif current is not None and current[4] >= result.version:
                    drafts_kept += 1
                else:
                    c.execute(
                        "INSERT INTO expert_drafts (assignment_id, scores, winner, rationale, seconds,"
                        " active_seconds, version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                        " ON CONFLICT (assignment_id) DO UPDATE SET scores = excluded.scores,"
                        " winner = excluded.winner, rationale = excluded.rationale, seconds = excluded.seconds,"
                        " active_seconds = excluded.active_seconds, version = excluded.version,"
                        " updated_at = excluded.updated_at",
                        (
                            a["id"],
                            draft.to_json(),
                            draft.winner,
                            draft.rationale,
                            draft.seconds,
                            draft.active_seconds,
                            result.version,
                            utc_now(),
                        ),
                    )
                    drafts_added += 1
                continue
            rubric = study.rubric(a["task"])
            first, second = (
                (a["candidate_b"], a["candidate_a"]) if a["flipped"] else (a["candidate_a"], a["candidate_b"])
            )
            record = expert_record(a["comparison_id"], owner, a["presentation"], first, second, rubric, draft)
            if stored is None:
                _insert_judgment(c, record)
                c.execute("DELETE FROM expert_drafts WHERE assignment_id = ?", (a["id"],))
                added += 1
            elif _same_judgment(c, tuple(stored), record):
                already += 1
            else:
                kept.append(
                    f"{result.label}: {owner} has a different judgment of this comparison stored "
                    f"already (judged in the app?); the stored one is kept"
                )
    done = sum(1 for r in results if r.kind == "result")
    return PacketImport(
        packet.packet_id,
        owner,
        added,
        already,
        len(packet.rows.items) - done,
        drafts_added,
        drafts_already,
        drafts_kept,
        tuple(kept),
        states,
    )
