"""Provides the adjudication tables: the verdicts judges gave, adjudicated verdicts and their reopenings.

Adjudications live apart from `judgments` (schema migration 22): no statistic reads them unless
it asks (`active_adjudications`). Nothing is updated: recording and reopening each append one
chained row, inside one BEGIN IMMEDIATE transaction that first checks the comparison has no
active adjudication, so two adjudicators racing on one comparison store one verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from centaur_tui.domain.adjudication import Verdict
from centaur_tui.domain.agreement import ScoredVerdict
from centaur_tui.domain.errors import StoreError
from centaur_tui.store import chain
from centaur_tui.store.db import Store


class AdjudicationError(StoreError):
    """An adjudication that cannot be stored or reopened (already adjudicated, unknown id)."""


@dataclass(frozen=True)
class Adjudication:
    """One stored adjudicated verdict; `reopened` when a later reopening set it aside."""

    id: int
    comparison_id: str
    adjudicator: str
    presentation: int
    winner: str
    rationale: str
    reason: str
    created_at: str
    reopened: bool


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def verdicts(store: Store) -> list[Verdict]:
    """Every judge's latest valid verdict per comparison and presented order (superseded revisions left out)."""
    rows = store.read_table(
        "SELECT j.id, j.comparison_id, j.judge, j.judge_kind, j.winner FROM judgments j"
        " JOIN (SELECT comparison_id, judge, presentation, max(revision) AS revision FROM judgments"
        " GROUP BY comparison_id, judge, presentation) m"
        " ON j.comparison_id = m.comparison_id AND j.judge = m.judge AND j.presentation = m.presentation"
        " AND j.revision = m.revision"
        " WHERE j.valid = 1 AND j.winner IS NOT NULL ORDER BY j.id"
    ).rows
    return [Verdict(str(r[1]), int(r[0]), str(r[2]), r[3], str(r[4])) for r in rows]


def adjudications(store: Store) -> list[Adjudication]:
    """Every stored adjudication, reopened ones included, oldest first."""
    rows = store.read(
        "SELECT a.*, r.id IS NOT NULL AS reopened FROM adjudications a"
        " LEFT JOIN adjudication_reopenings r ON r.adjudication_id = a.id ORDER BY a.id"
    )
    return [
        Adjudication(
            r["id"],
            r["comparison_id"],
            r["adjudicator"],
            r["presentation"],
            r["winner"],
            r["rationale"],
            r["reason"],
            r["created_at"],
            bool(r["reopened"]),
        )
        for r in rows
    ]


def active_adjudications(store: Store) -> dict[str, Adjudication]:
    """The adjudication in force per comparison (the one not reopened): what a report may use as reference."""
    return {a.comparison_id: a for a in adjudications(store) if not a.reopened}


def record_adjudication(
    store: Store, comparison_id: str, adjudicator: str, presentation: int, winner: str, rationale: str, reason: str
) -> int:
    """Store one adjudicated verdict and chain it; returns its id.

    Raises:
        AdjudicationError: the comparison is unknown or already has an adjudication in force.
    """
    with store.write() as c:
        if c.execute("SELECT 1 FROM comparisons WHERE id = ?", (comparison_id,)).fetchone() is None:
            raise AdjudicationError(f"no comparison {comparison_id!r} in this session", title="Unknown comparison")
        found = c.execute(
            "SELECT a.id FROM adjudications a LEFT JOIN adjudication_reopenings r ON r.adjudication_id = a.id"
            " WHERE a.comparison_id = ? AND r.id IS NULL",
            (comparison_id,),
        ).fetchone()
        if found is not None:
            raise AdjudicationError(
                f"comparison {comparison_id} is already adjudicated (adjudication {found[0]}); reopen it by hand "
                f"first (centaur adjudicate SESSION --reopen {found[0]})",
                title="Already adjudicated",
            )
        cursor = c.execute(
            "INSERT INTO adjudications (comparison_id, adjudicator, presentation, winner, rationale, reason,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (comparison_id, adjudicator, presentation, winner, rationale, reason, _now()),
        )
        chain.append(c, "adjudications", cursor.lastrowid)
        return int(cursor.lastrowid or 0)


def reopen_adjudication(store: Store, adjudication_id: int, by: str, note: str = "") -> str:
    """Set an adjudication aside (a reopening row; the adjudication stays stored); returns its comparison id.

    Raises:
        AdjudicationError: no such adjudication, or it is already reopened.
    """
    with store.write() as c:
        row = c.execute(
            "SELECT a.comparison_id, r.id FROM adjudications a"
            " LEFT JOIN adjudication_reopenings r ON r.adjudication_id = a.id WHERE a.id = ?",
            (adjudication_id,),
        ).fetchone()
        if row is None:
            raise AdjudicationError(f"no adjudication {adjudication_id} in this session", title="Unknown adjudication")
        if row[1] is not None:
            raise AdjudicationError(f"adjudication {adjudication_id} is already reopened", title="Already reopened")
        cursor = c.execute(
            "INSERT INTO adjudication_reopenings (adjudication_id, reopened_by, note, created_at) VALUES (?, ?, ?, ?)",
            (adjudication_id, by, note, _now()),
        )
        chain.append(c, "adjudication_reopenings", cursor.lastrowid)
        return str(row[0])


def scored_verdicts(store: Store) -> list[ScoredVerdict]:
    """Every judge's latest valid judgment per comparison and presented order, with its rubric scores."""
    rows = store.read_table(
        "SELECT j.id, j.comparison_id, j.judge, j.judge_kind, j.presentation, j.revision, c.candidate_a,"
        " c.candidate_b, j.winner FROM judgments j JOIN comparisons c ON c.id = j.comparison_id"
        " JOIN (SELECT comparison_id, judge, presentation, max(revision) AS revision FROM judgments"
        " GROUP BY comparison_id, judge, presentation) m"
        " ON j.comparison_id = m.comparison_id AND j.judge = m.judge AND j.presentation = m.presentation"
        " AND j.revision = m.revision WHERE j.valid = 1 AND j.winner IS NOT NULL ORDER BY j.id"
    ).rows
    scores: dict[int, list[tuple[str, str, int]]] = {}
    for s in store.read_table(
        "SELECT s.judgment_id, s.candidate, s.dimension, s.score FROM scores s JOIN judgments j ON j.id = s.judgment_id"
        " WHERE j.valid = 1"
    ).rows:
        scores.setdefault(int(s[0]), []).append((str(s[1]), str(s[2]), int(s[3])))
    return [
        ScoredVerdict(int(r[0]), str(r[1]), str(r[2]), str(r[3]), int(r[4]), int(r[5]), str(r[6]), str(r[7]),
                      str(r[8]), tuple(scores.get(int(r[0]), ())))
        for r in rows
    ]  # fmt: skip


def adjudicated_verdicts(store: Store) -> list[ScoredVerdict]:
    """The adjudications in force as verdicts of the judge "adjudicated" (no scores), for a report that asks."""
    comps = {r["id"]: r for r in store.read("SELECT id, candidate_a, candidate_b FROM comparisons")}
    return [
        ScoredVerdict(-a.id, a.comparison_id, "adjudicated", "adjudicated", 1, 0, comps[a.comparison_id]["candidate_a"],
                      comps[a.comparison_id]["candidate_b"], a.winner, ())
        for a in active_adjudications(store).values()
        if a.comparison_id in comps
    ]  # fmt: skip
