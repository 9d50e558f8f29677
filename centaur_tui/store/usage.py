"""Provides what a cost estimate reads of a session database: recorded usage, stored texts, judged slots, spend.

`estimate_facts` opens the file read-only and never migrates it: `centaur check` writes nothing,
so it reads only columns every schema since migration 1 has (`calls.stage, model,
prompt_tokens, completion_tokens, cost, latency_s`, the outputs, assistance texts and
judgments), also from a database an older program wrote.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from centaur_tui.domain.errors import StoreError
from centaur_tui.store.connection import connect
from centaur_tui.store.db import Store


@dataclass(frozen=True)
class StageModelUsage:
    """Recorded calls of one (stage, model string): how many, their tokens, cost and latency."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    completion_calls: int
    """Calls that reported completion tokens (the mean's denominator)."""
    cost: float
    unpriced: int
    """Calls whose cost is unknown (no usage reported, or no price)."""
    latency_s: float

    @property
    def mean_completion(self) -> float | None:
        return self.completion_tokens / self.completion_calls if self.completion_calls else None

    @property
    def mean_latency_s(self) -> float | None:
        return self.latency_s / self.calls if self.calls else None

    @property
    def tokens_per_s(self) -> float | None:
        """Completion tokens per second of call time (prompt processing included), None without both."""
        return self.completion_tokens / self.latency_s if self.completion_tokens and self.latency_s > 0 else None


@dataclass(frozen=True)
class UnansweredSpend:
    """Requests the provider may have billed without an answer: how many per cause, and their estimate."""

    requests: int = 0
    usd: float = 0.0
    unknown: int = 0
    """Requests among them with no estimate (sent without a budget, so no reservation)."""
    by_cause: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class EstimateFacts:
    """What a session database holds that an estimate needs (empty for a session never run)."""

    usage: dict[tuple[str, str], StageModelUsage] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    """Output id -> text."""
    assistance: dict[str, str] = field(default_factory=dict)
    """Assistance id -> text."""
    judged: frozenset[tuple[str, str, int]] = frozenset()
    """(comparison id, judge, presentation) of every stored LLM judgment, valid or not."""
    entries: dict[tuple[str, str], StageModelUsage] = field(default_factory=dict)
    """Recorded calls per (stage, session entry name): the calls behind each stored text and judgment (a judgment's
    last attempt), so that two entries on one model string (two servers, two prices) are told apart."""
    unanswered: UnansweredSpend = field(default_factory=UnansweredSpend)
    """Requests billed without an answer, estimated (apart from `spent`, which is what answered calls cost)."""
    exam_pairs: dict[str, tuple[str, str]] = field(default_factory=dict)
    """The admission exam's planted pairs (issue 26): pair id -> (task, output id)."""
    exam_done: frozenset[tuple[str, str, int]] = frozenset()
    """(pair id, judge, presentation) of the exam's final verdicts (answered or invalid)."""

    @property
    def spent(self) -> float:
        return sum(u.cost for u in self.usage.values())

    @property
    def unpriced(self) -> int:
        return sum(u.unpriced for u in self.usage.values())


def _usage(conn: sqlite3.Connection) -> dict[tuple[str, str], StageModelUsage]:
    rows = conn.execute(
        "SELECT stage, model, count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),"
        " count(completion_tokens), coalesce(sum(cost), 0), sum(cost IS NULL), coalesce(sum(latency_s), 0)"
        " FROM calls GROUP BY stage, model"
    ).fetchall()
    return {(r[0], r[1]): StageModelUsage(r[2], r[3], r[4], r[5], float(r[6]), int(r[7]), float(r[8])) for r in rows}


_ENTRY_CALLS = (
    ("automation", "SELECT candidate AS name, call_key FROM outputs WHERE mode = 'automation'"),
    ("worker", "SELECT worker AS name, call_key FROM outputs WHERE mode = 'augmentation'"),
    ("assistance", "SELECT assistant AS name, call_key FROM assistance_texts"),
    ("judging", "SELECT judge AS name, call_key FROM judgments WHERE judge_kind = 'llm'"),
)


def _entry_usage(conn: sqlite3.Connection) -> dict[tuple[str, str], StageModelUsage]:
    """Usage per (stage, entry): the calls each stored item names, joined on their key (columns of every schema)."""
    out: dict[tuple[str, str], StageModelUsage] = {}
    for stage, items in _ENTRY_CALLS:
        rows = conn.execute(
            "SELECT i.name, count(*), coalesce(sum(c.prompt_tokens), 0), coalesce(sum(c.completion_tokens), 0),"
            " count(c.completion_tokens), coalesce(sum(c.cost), 0), sum(c.cost IS NULL), coalesce(sum(c.latency_s), 0)"
            f" FROM ({items}) AS i JOIN calls c ON c.key = i.call_key GROUP BY i.name"
        ).fetchall()
        for r in rows:
            out[(stage, r[0])] = StageModelUsage(r[1], r[2], r[3], r[4], float(r[5]), int(r[6]), float(r[7]))
    return out


def session_spend(store: Store) -> tuple[float, int]:
    """(USD recorded for the session's calls, calls whose cost is unknown)."""
    row = store.read("SELECT coalesce(sum(cost), 0) AS cost, coalesce(sum(cost IS NULL), 0) AS unpriced FROM calls")
    return float(row[0]["cost"]), int(row[0]["unpriced"])


def answered_calls(store: Store) -> int:
    """How many calls of the session were answered and stored (the calls table: what `session_spend` sums)."""
    return int(store.read_value("SELECT count(*) FROM calls") or 0)


_UNANSWERED_SQL = "SELECT cause, count(*), coalesce(sum(usd), 0), sum(usd IS NULL) FROM unanswered_spend GROUP BY cause"


def _unanswered_of(rows: list[tuple[object, ...]]) -> UnansweredSpend:
    return UnansweredSpend(
        requests=sum(int(str(r[1])) for r in rows),
        usd=sum(float(str(r[2])) for r in rows),
        unknown=sum(int(str(r[3])) for r in rows),
        by_cause={str(r[0]): int(str(r[1])) for r in rows},
    )


def _unanswered(conn: sqlite3.Connection) -> UnansweredSpend:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'unanswered_spend'").fetchone():
        return UnansweredSpend()  # a database older than migration 14 (read without migrating it)
    return _unanswered_of(conn.execute(_UNANSWERED_SQL).fetchall())


def unanswered_spend(store: Store) -> UnansweredSpend:
    """What the session's requests billed without an answer are estimated at (store/outcomes.py records them)."""
    return _unanswered_of([tuple(r.values()) for r in store.read(_UNANSWERED_SQL)])


def _exam(conn: sqlite3.Connection) -> tuple[dict[str, tuple[str, str]], frozenset[tuple[str, str, int]]]:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'exam_pairs'").fetchone():
        return {}, frozenset()  # a database older than migration 25 (read without migrating it)
    pairs = {
        str(r[0]): (str(r[1]), str(r[2]))
        for r in conn.execute("SELECT id, task, output_id FROM exam_pairs WHERE output_id IS NOT NULL")
    }
    done = frozenset(
        (str(r[0]), str(r[1]), int(r[2]))
        for r in conn.execute("SELECT pair_id, judge, presentation FROM exam_verdicts WHERE status != 'failed'")
    )
    return pairs, done


def estimate_facts(path: Path) -> EstimateFacts:
    """Read a session database for an estimate, read-only and without migrating it; empty when it does not exist.

    Raises:
        StoreError: the file exists but is not a readable session database.
    """
    if not path.is_file():
        return EstimateFacts()
    try:
        conn = connect(path, read_only=True)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the session database read-only ({exc})") from None
    try:
        exam_pairs, exam_done = _exam(conn)
        return EstimateFacts(
            exam_pairs=exam_pairs,
            exam_done=exam_done,
            usage=_usage(conn),
            entries=_entry_usage(conn),
            unanswered=_unanswered(conn),
            outputs=dict(conn.execute("SELECT id, text FROM outputs").fetchall()),
            assistance=dict(conn.execute("SELECT id, text FROM assistance_texts").fetchall()),
            judged=frozenset(
                (r[0], r[1], int(r[2]))
                for r in conn.execute(
                    "SELECT comparison_id, judge, presentation FROM judgments WHERE judge_kind = 'llm'"
                )
            ),
        )
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: not a readable session database ({exc})") from None
    finally:
        conn.close()
