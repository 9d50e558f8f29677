"""Provides the storing of imported judgments, and the session binding of an export (session.json).

The files are read and checked in `formats/export.py`; this module writes what they hold in one
`BEGIN IMMEDIATE` transaction, idempotently: a judgment is identified by (comparison_id, judge,
presentation, revision), the table's unique key; an identical stored judgment is left alone, a
different one is a conflict (a correction must come as a new revision). Judgment ids from the
file are kept when they are free, so an export imported into a copy of the session without
judgments exports to the same files.

An import is bound to its session (issue 13): an export carries `session.json` with the
session's name and a fingerprint of the random id its database got at creation (migration 5,
`meta.session_id`), and a folder exported from another database is refused, even when its
comparison ids match (they hash only run, task, mode and candidate names).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from centaur_tui.domain.errors import ImportConflictError, ImportFileError
from centaur_tui.domain.plan import canonical_json, digest
from centaur_tui.domain.records import JudgmentRecord
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.store import chain
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store

__all__ = ["ImportConflictError", "ImportFileError"]

MANIFEST = "session.json"
"""The file beside an export's CSVs that names the session it comes from."""
MANIFEST_FORMAT = "centaur-export"
MANIFEST_VERSION = 2
"""2: signed (`files`, `signature`); a version 1 session.json could be copied beside any files (issue 23)."""
SIGNED_FIELDS = ("format", "version", "session", "fingerprint", "files")
"""The fields of session.json its signature covers (`rows` and `exported_at` are information only)."""


@dataclass(frozen=True)
class JudgeTally:
    """What an import stored for one judge."""

    judge: str
    kind: str
    inserted: int
    unchanged: int


@dataclass(frozen=True)
class ImportSummary:
    """What an import did: totals, per judge, and the experts it registered."""

    judgments: int
    inserted: int
    unchanged: int
    scores: int
    by_judge: tuple[JudgeTally, ...] = ()
    experts_added: tuple[str, ...] = ()
    bound: bool = False
    """The files carried this session's signed session.json (False: --external data)."""
    unsigned: str | None = None
    """Why --external files are not signed by this session (None: they are, or the import was not of a folder)."""
    winner_only: int = 0
    """Judgments stored without rubric scores (a winner only): pairwise statistics count them, rubric ones cannot."""
    ignored: Mapping[str, int] = field(default_factory=dict)
    """Undocumented columns of the files, left out (set by the caller that read them)."""


_COMPARED = (
    "judge_kind",
    "judge_family",
    "option1",
    "option2",
    "winner",
    "option1_mean",
    "option2_mean",
    "valid",
    "invalid_reason",
    "rationale",
    "attempts",
    "seconds",
)


def store_judgments(
    store: Store, records: Sequence[JudgmentRecord], new_experts: Sequence[ExpertSpec] = ()
) -> ImportSummary:
    """Store judgments with their scores in one BEGIN IMMEDIATE transaction, idempotently.

    Args:
        store: The session database.
        records: Validated judgments (`read_export`); `id` is kept as the row id when free.
        new_experts: Experts to register (table `app_experts`) in the same transaction.

    Returns:
        How many were inserted and how many were already stored identically, per judge too.

    Raises:
        ImportConflictError: a stored judgment with the same key differs (or is another kind of
            judge's); nothing is written.
    """
    with store.write() as c:
        return store_judgments_in(c, records, new_experts)


def store_judgments_in(
    c: sqlite3.Connection, records: Sequence[JudgmentRecord], new_experts: Sequence[ExpertSpec] = ()
) -> ImportSummary:
    """`store_judgments` inside the caller's transaction (an import that also stores outputs and comparisons)."""
    inserted = unchanged = n_scores = winner_only = 0
    tallies: dict[tuple[str, str], list[int]] = {}
    now = utc_now()
    c.executemany(
        "INSERT OR IGNORE INTO app_experts (id, name, tasks, created_at) VALUES (?, ?, ?, ?)",
        [(e.id, e.name, json.dumps(list(e.tasks)), now) for e in new_experts],
    )
    taken = {row[0] for row in c.execute("SELECT id FROM judgments")}
    for rec in records:
        tally = tallies.setdefault((rec.judge, rec.judge_kind), [0, 0])
        row = c.execute(
            "SELECT id, " + ", ".join(_COMPARED) + " FROM judgments"
            " WHERE comparison_id = ? AND judge = ? AND presentation = ? AND revision = ?",
            (rec.comparison_id, rec.judge, rec.presentation, rec.revision),
        ).fetchone()
        if row is not None:
            stored = dict(zip(_COMPARED, row[1:], strict=True))
            stored["valid"] = bool(stored["valid"])
            scores = c.execute(
                "SELECT candidate, dimension, dimension_kind, score FROM scores WHERE judgment_id = ? ORDER BY rowid",
                (row[0],),
            ).fetchall()
            same = all(stored[k] == getattr(rec, k) for k in _COMPARED) and [tuple(s) for s in scores] == [
                (s.candidate, s.dimension, s.dimension_kind, s.score) for s in rec.scores
            ]
            if stored["judge_kind"] != rec.judge_kind:
                # Never "already stored" for another kind of judge with the same name (issue 13).
                raise ImportConflictError(
                    f"{rec.judge_kind} judge {rec.judge!r} has the name of an {stored['judge_kind']} judge whose "
                    f"judgment of {rec.comparison_id} (presentation {rec.presentation}, revision {rec.revision}) "
                    f"is stored as id {row[0]}. Nothing was imported."
                )
            if not same:
                diff = [k for k in _COMPARED if stored[k] != getattr(rec, k)] or ["scores"]
                raise ImportConflictError(
                    f"judgment of {rec.judge!r} on {rec.comparison_id} (presentation {rec.presentation}, "
                    f"revision {rec.revision}) is already stored as id {row[0]} with a different "
                    f"{', '.join(diff)}; a correction must come as a new revision. Nothing was imported."
                )
            unchanged += 1
            tally[1] += 1
            continue
        judgment_id = rec.id if rec.id is not None and rec.id not in taken else None
        cur = c.execute(
            "INSERT INTO judgments (id, comparison_id, judge, judge_kind, judge_family, presentation, revision,"
            " option1, option2, winner, option1_mean, option2_mean, valid, invalid_reason, rationale, call_key,"
            " attempts, seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                judgment_id,
                rec.comparison_id,
                rec.judge,
                rec.judge_kind,
                rec.judge_family,
                rec.presentation,
                rec.revision,
                rec.option1,
                rec.option2,
                rec.winner,
                rec.option1_mean,
                rec.option2_mean,
                int(rec.valid),
                rec.invalid_reason,
                rec.rationale,
                rec.call_key,
                rec.attempts,
                rec.seconds,
                now,
            ),
        )
        new_id = cur.lastrowid
        taken.add(new_id)
        c.executemany(
            "INSERT INTO scores (judgment_id, candidate, dimension, dimension_kind, score) VALUES (?, ?, ?, ?, ?)",
            [(new_id, s.candidate, s.dimension, s.dimension_kind, s.score) for s in rec.scores],
        )
        chain.append(c, "judgments", new_id)
        inserted += 1
        tally[0] += 1
        n_scores += len(rec.scores)
        winner_only += int(rec.valid and not rec.scores)
    return ImportSummary(
        judgments=len(records),
        inserted=inserted,
        unchanged=unchanged,
        scores=n_scores,
        winner_only=winner_only,
        by_judge=tuple(JudgeTally(j, k, n[0], n[1]) for (j, k), n in sorted(tallies.items())),
        experts_added=tuple(e.id for e in new_experts),
    )


def session_id(store: Store) -> str:
    """The random id the session database got when it was created (migration 5)."""
    value = store.read_value("SELECT value FROM meta WHERE key = 'session_id'")
    if not value:  # only a database edited by hand lacks it: the migration writes it
        raise ImportFileError(f"{store.path}: meta.session_id is missing; the database cannot bind its exports")
    return str(value)


def export_fingerprint(store: Store) -> str:
    """The tag an export carries: a digest of the database's random id (the id itself stays in the database)."""
    return digest("export-session", session_id(store))[:32]


def _signature(secret: str, manifest: Mapping[str, Any]) -> str:
    """HMAC-SHA256 (hex), keyed with the session secret, over what an export's signature vouches for."""
    signed = [manifest.get(k) for k in SIGNED_FIELDS]
    return hmac.new(
        secret.encode("utf-8"), canonical_json(["centaur-export", *signed]).encode("utf-8"), hashlib.sha256
    ).hexdigest()


def export_manifest(
    store: Store,
    session_name: str,
    written: Mapping[str, int],
    digests: Mapping[str, str],
    *,
    stamp: bool = True,
) -> dict[str, Any]:
    """The content of an export's session.json: format, session, fingerprint, files' SHA-256, signature, (time,) rows.

    The signature is an HMAC over the format, session name, fingerprint and the files' SHA-256,
    keyed with the session database's secret (`session_secret`, the packets' key), which never
    leaves the database: a session.json copied beside other files no longer verifies. A database
    with no secret yet writes an unsigned manifest (the caller creates the secret first when it can
    write: `centaur export` does). Without `stamp` there is no `exported_at` (the publishable
    bundle: the same database, the same bytes; the HMAC is deterministic).
    """
    from centaur_tui.store.packets import session_secret

    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "session": session_name,
        "fingerprint": export_fingerprint(store),
        "exported_at": utc_now(),
        "rows": dict(written),
        "files": dict(sorted(digests.items())),
    }
    secret = session_secret(store)
    if secret is not None:
        out["signature"] = _signature(secret, out)
    if not stamp:
        del out["exported_at"]
    return out


def verify_manifest(
    store: Store, session_name: str, path: Path, manifest: Mapping[str, Any], digests: Mapping[str, str]
) -> None:
    """Refuse an export folder this session's database did not sign exactly as it is.

    Args:
        store: The session database imported into.
        session_name: The session's name, for messages.
        path: The folder's session.json, for messages.
        manifest: Its content (read by `formats.export.read_manifest`).
        digests: SHA-256 of the files the import reads, as they are now (`formats.export.file_digests`).

    Raises:
        ImportFileError: naming the file and the field: another format or version, another
            session's database, no or a wrong signature (a copied manifest), or a file whose
            SHA-256 is not the signed one (edited, added or removed after the export).
    """
    from centaur_tui.store.packets import session_secret

    what_to_do = (
        "nothing was imported. Export again from this session (`centaur export`), or, for data made "
        "elsewhere, pass --external (imported as external data, every other check still applies)"
    )
    if manifest.get("format") != MANIFEST_FORMAT or manifest.get("version") != MANIFEST_VERSION:
        raise ImportFileError(
            f"{path}, field format/version: {manifest.get('format')!r} version {manifest.get('version')!r}, "
            f"expected {MANIFEST_FORMAT!r} version {MANIFEST_VERSION} (an export from before exports were "
            f"signed, or another tool's); {what_to_do}"
        )
    theirs = manifest.get("fingerprint")
    if theirs != export_fingerprint(store):
        other = manifest.get("session")
        why = (
            f"another database of a session named {other!r} (created separately: its comparison ids may match, "
            "its judgments are not this study's)"
            if other == session_name
            else f"session {other!r}"
        )
        raise ImportFileError(
            f"{path}, field fingerprint: these files were exported from {why}, not from this session's database "
            f"({session_name!r}, {store.path.name}); {what_to_do}"
        )
    secret = session_secret(store)
    signature = manifest.get("signature")
    if (
        secret is None
        or not isinstance(signature, str)
        or not hmac.compare_digest(signature, _signature(secret, manifest))
    ):
        raise ImportFileError(
            f"{path}, field signature: {'missing' if signature is None else 'does not verify'}: this session's "
            f"database did not sign this session.json (copied from another export, or edited); {what_to_do}"
        )
    files = manifest.get("files")
    signed = dict(files) if isinstance(files, dict) else {}
    for name in sorted(set(signed) | set(digests)):
        if name not in digests and name not in ("judgments.csv", "scores.csv"):
            continue  # outputs.csv is signed but not read by an import: its absence changes nothing imported
        if name not in signed:
            problem = "is not one of the signed files"
        elif name not in digests:
            problem = "is missing (it was exported and signed)"
        elif not hmac.compare_digest(str(signed[name]), digests[name]):
            problem = "changed after the export (its SHA-256 is not the signed one)"
        else:
            continue
        raise ImportFileError(f"{path.parent / name}: {problem}; {what_to_do}")
