"""Provides the storing of what was made elsewhere: imported outputs, their comparisons, winner-only judgments.

The files are read and checked in `formats/` (outputs.py, winners.py); this module only writes
what they hold, in one `BEGIN IMMEDIATE` transaction (outputs, their assistance texts, the
round-robin comparisons built from them and the judgments), so an import is all or nothing.
Importing the same file again stores nothing new, and a file that disagrees with what is stored
(another text for an output, another winner for a judgment) is refused as a conflict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from centaur_tui.domain.errors import ImportConflictError
from centaur_tui.domain.plan import Mode, assistance_id, candidate_output_id, candidates_for, comparisons
from centaur_tui.domain.records import ComparisonRecord, ImportedOutput, JudgmentRecord
from centaur_tui.domain.session import ExpertSpec, Session
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store
from centaur_tui.store.importer import ImportSummary, store_judgments_in


@dataclass(frozen=True)
class OutputsSummary:
    """What an import of outputs (and judgments) stored."""

    outputs: int
    inserted: int
    unchanged: int
    assistance: int
    comparisons: int
    """Comparisons new in the store."""
    comparisons_total: int
    """Comparisons the imported outputs take part in (new or already stored)."""
    judgments: ImportSummary | None = None
    ignored: dict[str, int] = field(default_factory=dict)
    """Undocumented columns of the file, left out (set by the caller that read the file)."""


def _insert_outputs(
    c: Any, session: Session, outputs: Iterable[ImportedOutput], expert_workers: set[str], path: str
) -> tuple[int, int, int, int, set[tuple[int, str, str]]]:
    read = inserted = unchanged = assistance = 0
    tournaments: set[tuple[int, str, str]] = set()
    now = utc_now()
    for o in outputs:  # an iterator of a file read again (formats.output_texts): one text held at a time
        read += 1
        oid = o.id(session)
        aid = assistance_id(o.run, o.task, o.candidate) if o.assistance_text is not None else None
        if o.question is None:  # a generic task's answers meet only in the comparisons the file gives
            tournaments.add((o.run, o.task, o.mode))
        row = c.execute(
            "SELECT o.text, o.worker, o.origin, a.text FROM outputs o LEFT JOIN assistance_texts a"
            " ON a.id = o.assistance_id WHERE o.id = ?",
            (oid,),
        ).fetchone()
        if row is not None:
            if tuple(row) != (o.text, o.worker, "imported", o.assistance_text):
                what = [
                    name
                    for name, stored, new in (
                        ("text", row[0], o.text),
                        ("worker", row[1], o.worker),
                        ("origin", row[2], "imported"),
                        ("assistance text", row[3], o.assistance_text),
                    )
                    if stored != new
                ]
                raise ImportConflictError(
                    f"{path} line {o.line}: the output of {o.candidate!r} for task {o.task!r}, {o.mode}, run {o.run} "
                    f"is already stored with a different {', '.join(what)}; an imported output cannot be replaced "
                    "(import into a new session). Nothing was imported."
                )
            unchanged += 1
            continue
        if aid is not None:
            c.execute(
                "INSERT INTO assistance_texts (id, run, task, assistant, text, call_key, created_at)"
                " VALUES (?, ?, ?, ?, ?, NULL, ?)",
                (aid, o.run, o.task, o.candidate, o.assistance_text, now),
            )
            assistance += 1
        c.execute(
            "INSERT INTO outputs (id, run, task, mode, candidate, worker, worker_kind, text, assistance_id,"
            " call_key, created_at, origin, cut_off) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 'imported', ?)",
            (
                oid,
                o.run,
                o.task,
                o.mode,
                o.candidate,
                o.worker,
                "expert" if o.worker in expert_workers else "model",
                o.text,
                aid,
                now,
                int(o.cut_off),
            ),
        )
        inserted += 1
    return read, inserted, unchanged, assistance, tournaments


def _build_comparisons(c: Any, session: Session, tournaments: Iterable[tuple[int, str, str]]) -> tuple[int, int]:
    """Insert the round robin of each tournament among the candidates with a stored output; (new, total)."""
    new = total = 0
    for run, task, mode in sorted(tournaments):
        names = candidates_for(session, cast(Mode, mode))
        ids = {n: candidate_output_id(session, run, task, mode, n) for n in names}
        stored = {
            r[0]
            for r in c.execute(
                f"SELECT id FROM outputs WHERE id IN ({', '.join('?' * len(ids))})", tuple(ids.values())
            ).fetchall()
        }
        for comp in comparisons(session, run, task, cast(Mode, mode)):
            a, b = ids[comp.candidate_a], ids[comp.candidate_b]
            if a not in stored or b not in stored:
                continue
            total += 1
            cur = c.execute(
                "INSERT OR IGNORE INTO comparisons (id, run, task, mode, candidate_a, candidate_b, output_a, output_b)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (comp.id, run, task, mode, comp.candidate_a, comp.candidate_b, a, b),
            )
            new += cur.rowcount
    return new, total


def store_imported(
    store: Store,
    session: Session,
    outputs: Iterable[ImportedOutput],
    *,
    path: str,
    expert_workers: set[str] | None = None,
    judgments: Sequence[JudgmentRecord] = (),
    new_experts: Sequence[ExpertSpec] = (),
    tournaments: Iterable[tuple[int, str, str]] = (),
    comparisons: Sequence[ComparisonRecord] = (),
) -> OutputsSummary:
    """Store outputs, the comparisons built from them and judgments in one BEGIN IMMEDIATE transaction.

    `comparisons` are stored as they are (a generic task's, one per question and pair, with the
    question and its prompt), beside the round robins built for `tournaments`.

    Raises:
        ImportConflictError: an output or judgment differs from the stored one (nothing written).
    """
    with store.write() as c:
        read, inserted, unchanged, assistance, touched = _insert_outputs(
            c, session, outputs, expert_workers or set(), path
        )
        new, total = _build_comparisons(c, session, touched | set(tournaments))
        if comparisons:
            before = c.total_changes
            c.executemany(
                "INSERT OR IGNORE INTO comparisons (id, run, task, mode, candidate_a, candidate_b, output_a, output_b,"
                " question, prompt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        r.id,
                        r.run,
                        r.task,
                        r.mode,
                        r.candidate_a,
                        r.candidate_b,
                        r.output_a,
                        r.output_b,
                        r.question,
                        r.prompt,
                    )
                    for r in comparisons
                ],
            )
            new += c.total_changes - before
            total += len(comparisons)
        summary = store_judgments_in(c, judgments, new_experts) if (judgments or new_experts) else None
    return OutputsSummary(read, inserted, unchanged, assistance, new, total, summary)


def stored_texts(store: Store) -> dict[str, str]:
    """Text of every stored output, by id (what a winner-only file's conversations are checked against)."""
    return {r["id"]: r["text"] for r in store.read("SELECT id, text FROM outputs")}


def stored_orders(store: Store) -> dict[tuple[str, str], dict[str, int]]:
    """(comparison, judge) -> {option shown first: presentation} of the stored judgments (first revision)."""
    orders: dict[tuple[str, str], dict[str, int]] = {}
    for r in store.read("SELECT comparison_id, judge, presentation, option1 FROM judgments WHERE revision = 0"):
        orders.setdefault((r["comparison_id"], r["judge"]), {})[r["option1"]] = r["presentation"]
    return orders
