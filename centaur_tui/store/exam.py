"""Provides the admission exam's rows: planted-flaw pairs, each judge's verdict per order, and the exam's sources.

Tables `exam_pairs` and `exam_verdicts` (migration 25). A pair is written once (the plan is a
function of the seed, so the same pair id always holds the same copy); a verdict is stored per
(pair, judge, presentation) as answered, invalid or failed; a failed one is replaced when a
later run answers it, an answered or invalid one is final (its call is in `calls` anyway).
"""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.domain.exam import ExamPair, ExamSource
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


@dataclass(frozen=True)
class ExamVerdictRow:
    """One judge's answer to one exam pair in one order (presentation 1: the intact copy shown first)."""

    pair_id: str
    judge: str
    model: str
    presentation: int
    status: str
    """answered, invalid or failed."""
    picked: str | None
    """intact, flawed or tie (answered only)."""
    reason: str | None
    call_key: str | None
    attempts: int


def exam_sources(store: Store) -> list[ExamSource]:
    """Every stored deliverable the exam may plant flaws in (cut-off ones excluded: they are incomplete by design)."""
    return [
        ExamSource(r["id"], r["task"], r["mode"], r["candidate"], r["text"] or "")
        for r in store.read("SELECT id, task, mode, candidate, text FROM outputs WHERE cut_off = 0 ORDER BY id")
    ]


def save_exam_pairs(store: Store, seed: str, pairs: list[ExamPair]) -> None:
    """Store the plan's pairs not stored yet (one transaction)."""
    now = utc_now()
    with store.write() as c:
        c.executemany(
            "INSERT OR IGNORE INTO exam_pairs (id, seed, task, kind, slot, output_id, flawed, line, description,"
            " requirement, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (p.id, seed, p.task, p.kind, p.slot, p.output_id, p.flawed, p.line, p.description, p.requirement, now)
                for p in pairs
            ],
        )


def exam_pairs(store: Store, seed: str | None = None) -> list[ExamPair]:
    """The stored pairs (of one seed, or all), in plan order."""
    where, params = ("WHERE seed = ?", (seed,)) if seed is not None else ("", ())
    return [
        ExamPair(
            r["id"],
            r["task"],
            r["kind"],
            r["slot"],
            r["output_id"],
            r["flawed"],
            r["line"],
            r["description"],
            r["requirement"],
        )
        for r in store.read(f"SELECT * FROM exam_pairs {where} ORDER BY task, kind, slot, id", params)
    ]


def exam_seeds(store: Store) -> list[str]:
    """The seeds the session's exam was built with (normally one)."""
    return [r["seed"] for r in store.read("SELECT DISTINCT seed FROM exam_pairs ORDER BY seed")]


def save_exam_verdict(store: Store, row: ExamVerdictRow) -> None:
    """Store one verdict; a failed one is replaced by any later one, an answered or invalid one is kept."""
    with store.write() as c:
        old = c.execute(
            "SELECT status FROM exam_verdicts WHERE pair_id = ? AND judge = ? AND presentation = ?",
            (row.pair_id, row.judge, row.presentation),
        ).fetchone()
        if old is not None and old[0] != "failed":
            return
        c.execute(
            "INSERT OR REPLACE INTO exam_verdicts (pair_id, judge, model, presentation, status, picked, reason,"
            " call_key, attempts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.pair_id,
                row.judge,
                row.model,
                row.presentation,
                row.status,
                row.picked,
                (row.reason or "")[:2000] or None,
                row.call_key,
                row.attempts,
                utc_now(),
            ),
        )


def exam_verdicts(store: Store) -> list[ExamVerdictRow]:
    """Every stored exam verdict."""
    return [
        ExamVerdictRow(
            r["pair_id"],
            r["judge"],
            r["model"],
            r["presentation"],
            r["status"],
            r["picked"],
            r["reason"],
            r["call_key"],
            r["attempts"],
        )
        for r in store.read("SELECT * FROM exam_verdicts ORDER BY pair_id, judge, presentation")
    ]


def exam_done(store: Store) -> set[tuple[str, str, int]]:
    """(pair, judge, presentation) of the verdicts that are final (answered or invalid): never asked again."""
    return {
        (r["pair_id"], r["judge"], r["presentation"])
        for r in store.read("SELECT pair_id, judge, presentation FROM exam_verdicts WHERE status != 'failed'")
    }
