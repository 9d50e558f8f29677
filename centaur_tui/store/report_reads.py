"""Provides the report's reads: its input rows, a witness of their changes, score aggregates, output lengths, texts.

Nothing here writes. `report_inputs` returns the rows `centaur report` reads, taken from an
already open Store so the app keeps one connection per database. `option_score_rows`
aggregates the scores in SQL, one row per (judgment, option): at the paper's scale that is
30,000 rows instead of 300,000 score rows, which is what keeps `centaur report` within its
time budget (bench/report.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from centaur_tui.domain.records import RowTable
from centaur_tui.store.connection import connect
from centaur_tui.store.db import Store


def report_inputs(
    store: Store, general_dimensions: Sequence[str], pool: Executor | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """The store's meta and the rows the report statistics read, exactly as `centaur report` reads them.

    Args:
        store: The session database.
        general_dimensions: General dimension ids (packed score order).
        pool: When given, the score aggregate (the slowest read) runs there on its own
            read-only connection and comes back as a Future, as in the CLI.

    Returns:
        (meta, rows) where rows are the keyword arguments of `build_frames`.
    """
    scores = pool.submit(option_score_rows, store.path, list(general_dimensions)) if pool is not None else None
    meta = store.meta()
    rows = {
        "judgment_rows": store.judgment_table(),
        "score_rows": None,
        "output_rows": None,
        "comparisons": store.comparison_table(),
        "option_score_rows": scores if scores is not None else option_score_rows(store, list(general_dimensions)),
        "comparison_lengths": comparison_lengths(store),
        "assignment_rows": assignment_strategies(store),
        "retired_judges": [
            r["old"] for r in store.read("SELECT old FROM session_changes WHERE action = 'retire' AND kind = 'judge'")
        ],
    }
    return meta, rows


def assignment_strategies(store: Store) -> RowTable:
    """The strategy that put each comparison in each expert's queue (first showing, presentation 0).

    Columns: expert, comparison_id, strategy, probability, position (`build_frames`' `assignment_rows`).
    """
    return store.read_table(
        "SELECT expert, comparison_id, strategy, probability, position FROM expert_assignments"
        " WHERE presentation = 0 ORDER BY expert, position"
    )


def fingerprint(store: Store) -> tuple[Any, ...]:
    """A cheap witness of everything the report reads: it changes whenever a judgment, comparison or meta row does.

    Judgments are append-only (a correction is a new row), and scores are written in the
    same transaction as their judgment, so counts and the highest id cover them. Submitted
    human-worker deliverables (locked drafts, never changed afterwards) feed the human-worker
    section's productivity, so their count is part of it too, and so are the expert
    assignments (their strategies decide the prediction-powered rankings' expert subset) and
    the practice and gold-check verdicts (the seat section), and the calls' spend and errors (the
    outcomes section).
    """
    judgments = store.read_table("SELECT count(*), coalesce(max(id), 0), coalesce(sum(valid), 0) FROM judgments").rows[
        0
    ]
    comparisons = store.read_value("SELECT count(*) FROM comparisons")
    meta = tuple(store.read_table("SELECT key, value FROM meta ORDER BY key").rows)
    # work_drafts exists in every migrated database (schema migration 1).
    submitted = store.read_value("SELECT count(*) FROM work_drafts WHERE locked = 1")
    # Which strategy drew each expert comparison decides what the prediction-powered rankings use;
    # assignments are only added, and their strategy is never changed, so count and highest rowid cover them.
    assigned = tuple(store.read_table("SELECT count(*), coalesce(max(rowid), 0) FROM expert_assignments").rows[0])
    # Practice and gold verdicts (expert_checks) feed the seat section and who it leaves out.
    checks = tuple(
        store.read_table("SELECT count(*), count(judged_at), coalesce(sum(passed), 0) FROM expert_checks").rows[0]
    )
    # The outcomes section's spend and failed calls (issue 23): answered calls, requests billed
    # without an answer and call errors are only added, so counts (and sums) cover them.
    spend = tuple(
        store.read_table(
            "SELECT (SELECT count(*) FROM calls), (SELECT coalesce(max(id), 0) FROM call_errors),"
            " (SELECT count(*) FROM unanswered_spend), (SELECT coalesce(sum(usd), 0) FROM unanswered_spend)"
        ).rows[0]
    )
    return (*judgments, comparisons, meta, submitted, *assigned, *checks, *spend)


PACK_BASE = 16
"""General-dimension scores (1-10) are packed into one integer, 4 bits each, in the given order."""
MAX_PACKED = 15
"""At most 15 scores fit a 64-bit integer; more general dimensions get one column each."""


def option_score_rows(database: Store | Path, general_dimensions: Sequence[str]) -> dict[str, Any]:
    """Scores aggregated per (judgment, option), for the statistics (`build_frames(option_score_rows=...)`).

    One SQL aggregate: per (judgment_id, candidate), the number of dimensions scored, their
    unweighted mean, and the general dimensions' scores packed into one integer (score of
    the k-th general dimension times 16**k; 0 = not scored). Packing costs SQLite one CASE
    per row, where one column per dimension cost five (4.2 s against 2.8 s at ten times the
    paper's scale). Given a path, it opens its own read-only connection, so it can run in a
    worker thread while the caller reads the other tables (SQLite aggregates without the
    GIL; WAL lets readers run beside a writer).

    Args:
        database: The session database (a Store, or the path of its file).
        general_dimensions: General dimension ids, in the order of their packed digits.

    Returns:
        {"columns": [...], "rows": [tuples], "packed": [dimension ids]}: columns are
        judgment_id, candidate, dims, mean, then `general` (the packed scores) when there are
        at most 15 general dimensions, else one `dim:<id>` column per dimension (and
        "packed" is empty).
    """
    dims = list(general_dimensions)
    if len(dims) <= MAX_PACKED:
        case = "CASE dimension " + " ".join(f"WHEN ? THEN {PACK_BASE**k}" for k in range(len(dims))) + " ELSE 0 END"
        picks = f", SUM(score * ({case}))" if dims else ""
        tail, packed = (["general"] if dims else []), dims
    else:
        picks = "".join(", MAX(CASE WHEN dimension = ? THEN score END)" for _ in dims)
        tail, packed = [f"dim:{d}" for d in dims], []
    sql = f"SELECT judgment_id, candidate, COUNT(*), AVG(score){picks} FROM scores GROUP BY judgment_id, candidate"
    columns = ["judgment_id", "candidate", "dims", "mean", *tail]
    if isinstance(database, Store):
        rows = database.read_table(sql, tuple(dims)).rows
    else:
        conn = connect(Path(database), read_only=True)
        try:
            rows = conn.execute(sql, tuple(dims)).fetchall()
        finally:
            conn.close()
    return {"columns": columns, "rows": rows, "packed": packed}


def comparison_lengths(store: Store) -> RowTable:
    """Length in characters of each candidate's output, per comparison, computed in SQL.

    Characters (SQLite's `length()` of TEXT counts characters, not bytes) rather than words
    or tokens: every output has them, whatever model or person wrote it, and the length
    bias only compares the two outputs of one comparison.

    Args:
        store: The session database.

    Returns:
        One row per comparison: comparison_id, length_a (output of candidate_a), length_b.
    """
    return store.read_table(
        "SELECT c.id AS comparison_id, length(oa.text) AS length_a, length(ob.text) AS length_b"
        " FROM comparisons c JOIN outputs oa ON oa.id = c.output_a JOIN outputs ob ON ob.id = c.output_b"
        " ORDER BY c.id"
    )


def comparison_texts(store: Store) -> dict[str, tuple[str, str]]:
    """The two output texts of every comparison, (text of candidate_a, text of candidate_b).

    Args:
        store: The session database.

    Returns:
        A mapping from comparison id to its two texts.
    """
    rows = store.read(
        "SELECT c.id, oa.text AS text_a, ob.text AS text_b"
        " FROM comparisons c JOIN outputs oa ON oa.id = c.output_a JOIN outputs ob ON ob.id = c.output_b"
    )
    return {r["id"]: (r["text_a"], r["text_b"]) for r in rows}
