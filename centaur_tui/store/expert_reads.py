"""Provides the reads the experts-vs-LLM statistics need beyond Store's own: output lengths and texts per comparison.

Both are single SQL queries over the comparisons and outputs tables; neither writes, so they
are safe on any session database (including one whose expert tables were never created).
"""

from __future__ import annotations

from typing import Any

from centaur_tui.domain.records import RowTable
from centaur_tui.store.db import Store


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
    return store._table(  # noqa: SLF001 - same package; Store's lock guards the shared connection
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
    rows = store._rows(  # noqa: SLF001 - see comparison_lengths
        "SELECT c.id, oa.text AS text_a, ob.text AS text_b"
        " FROM comparisons c JOIN outputs oa ON oa.id = c.output_a JOIN outputs ob ON ob.id = c.output_b"
    )
    return {r["id"]: (r["text_a"], r["text_b"]) for r in rows}
