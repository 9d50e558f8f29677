"""Provides what the outcome of every planned item is derived from, and the record of calls in flight.

`stored_facts` reads which planned items the store holds (outputs, assistance texts, LLM
judgments with their validity) for `domain.outcomes.session_outcomes`; `final_errors` reads the
last error of every call that failed for good and was not answered since.

`calls_in_flight` (migration 6) holds one row per call being sent: written before the request
leaves, deleted when it is answered, fails or is abandoned (a stopped run). Rows that remain
belong to a process that died mid-call (`kill -9`, a power cut): those calls are sent again on
the next run, and the provider may have billed them, so the run says how many there were and
records each in `unanswered_spend` (migration 14) at its reservation, like a timed-out attempt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from centaur_tui.domain.outcomes import StoredFacts
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


def stored_facts(store: Store) -> StoredFacts:
    """Ids of the stored outputs and assistance texts, and each LLM judgment slot's validity (latest revision)."""
    judgments: dict[tuple[str, str, int], bool] = {}
    for r in store.read(
        "SELECT comparison_id, judge, presentation, valid FROM judgments WHERE judge_kind = 'llm' ORDER BY revision"
    ):
        judgments[(r["comparison_id"], r["judge"], r["presentation"])] = bool(r["valid"])
    failed: set[object] = set()
    for r in store.read("SELECT item FROM failed_items"):
        parts = str(r["item"]).rsplit("|", 2)
        if len(parts) == 3 and parts[2].isdigit():
            failed.add((parts[0], parts[1], int(parts[2])))
        else:
            failed.add(str(r["item"]))
    outputs = store.read("SELECT id, cut_off FROM outputs")
    assistance = store.read("SELECT id, cut_off FROM assistance_texts")
    return StoredFacts(
        outputs=frozenset(r["id"] for r in outputs),
        assistance=frozenset(r["id"] for r in assistance),
        judgments=judgments,
        failed=frozenset(failed),
        cut_off=frozenset(r["id"] for r in (*outputs, *assistance) if r["cut_off"]),
    )


@dataclass(frozen=True)
class FinalError:
    """The last error of a call that failed for good and has no answer stored (`final_errors`)."""

    key: str
    stage: str
    model: str
    error_type: str
    message: str
    created_at: str


def final_errors(store: Store) -> list[FinalError]:
    """The last error of every call that failed for good and has no answer stored, by stage and model."""
    table = store.read_table(
        "SELECT e.key, e.stage, e.model, e.error_type, e.message, e.created_at FROM call_errors e"
        " WHERE e.final = 1 AND e.key NOT IN (SELECT key FROM calls)"
        " AND e.id = (SELECT max(id) FROM call_errors f WHERE f.key = e.key AND f.final = 1)"
        " ORDER BY e.stage, e.model, e.key"
    )
    return [FinalError(*row) for row in table.rows]


def judgment_item(comparison_id: str, judge: str, presentation: int) -> str:
    """The `failed_items` name of one LLM judgment slot."""
    return f"{comparison_id}|{judge}|{presentation}"


def record_failed_item(store: Store, item: str, stage: str, error: str) -> None:
    """Record that a planned item's call failed for good (its latest failure replaces an earlier one)."""
    with store.write() as c:
        c.execute(
            "INSERT OR REPLACE INTO failed_items (item, stage, error, created_at) VALUES (?, ?, ?, ?)",
            (item, stage, error[:2000], utc_now()),
        )


def mark_in_flight(store: Store, key: str, stage: str, model: str, reserved_usd: float | None = None) -> None:
    """Record a call as being sent by this process (before the request leaves), with its budget reservation."""
    with store.write() as c:
        c.execute(
            "INSERT OR REPLACE INTO calls_in_flight (key, stage, model, pid, started_at, reserved_usd)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (key, stage, model, os.getpid(), utc_now(), reserved_usd),
        )


UNANSWERED_CAUSES = ("timeout", "broken", "stopped", "killed")
"""Why a request may have been billed without an answer: it timed out, its reply was cut or no answer,
the run stopped (Ctrl-C, SIGTERM) while it was out, or a killed run left it in flight."""


def record_unanswered(
    store: Store, key: str, stage: str, model: str, cause: str, usd: float | None, error_type: str | None = None
) -> None:
    """Record a request the provider may have billed without an answer, and forget it as in flight."""
    if cause not in UNANSWERED_CAUSES:
        raise ValueError(f"not a cause of unanswered spend: {cause}")
    with store.write() as c:
        c.execute(
            "INSERT INTO unanswered_spend (key, stage, model, cause, error_type, usd, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, stage, model, cause, error_type, usd, utc_now()),
        )


def clear_in_flight(store: Store, key: str) -> None:
    """Forget a call that was answered, failed or abandoned."""
    with store.write() as c:
        c.execute("DELETE FROM calls_in_flight WHERE key = ?", (key,))


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a live process of another user
        return True
    return True


def take_interrupted(store: Store) -> int:
    """Count and forget the calls in flight left by processes that died mid-call.

    Rows of a live process (this one, or a run in another process) are left alone. Counted once:
    the rows are deleted, since their calls are about to be sent again.
    """
    rows = store.read(
        "SELECT key, stage, model, pid, reserved_usd, key IN (SELECT key FROM calls) AS answered FROM calls_in_flight"
    )
    dead = [r for r in rows if not _alive(int(r["pid"]))]
    # A process killed between storing the answer and deleting its row left an answered call: not re-sent.
    resent = sum(1 for r in dead if not r["answered"])
    if dead:
        now = utc_now()
        with store.write() as c:
            c.executemany("DELETE FROM calls_in_flight WHERE key = ?", [(r["key"],) for r in dead])
            # Sent and never settled: the provider may have billed them (estimated at their reservation).
            c.executemany(
                "INSERT INTO unanswered_spend (key, stage, model, cause, error_type, usd, created_at)"
                " VALUES (?, ?, ?, 'killed', NULL, ?, ?)",
                [(r["key"], r["stage"], r["model"], r["reserved_usd"], now) for r in dead if not r["answered"]],
            )
            if resent:  # kept until a run completes: a resumed run stopped in turn must still say it
                _add_meta(c, BILLED_TWICE_INTERRUPTED, resent)
    return resent


BILLED_TWICE_INTERRUPTED = "billed_twice_interrupted"
"""meta key: calls left in flight by killed runs and sent again since the last complete run."""
BILLED_TWICE_RESENT = "billed_twice_resent"
"""meta key: timed-out attempts sent again by runs that did not complete, since the last complete run."""


def _add_meta(c: Any, key: str, n: int) -> None:
    c.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET"
        " value = CAST(CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER) AS TEXT)",
        (key, str(n)),
    )


def billed_twice_pending(store: Store) -> tuple[int, int]:
    """(calls re-sent after a killed run, timed-out attempts re-sent by runs that did not complete), both counted
    since the last run that completed: what "may have been billed twice" says until a run completes."""
    meta = store.meta()

    def count(key: str) -> int:
        value = meta.get(key, "0")
        return int(value) if value.isdigit() else 0

    return count(BILLED_TWICE_INTERRUPTED), count(BILLED_TWICE_RESENT)


def note_resent(store: Store, n: int) -> None:
    """Add a run's re-sent timed-out attempts to the pending count (a run that did not complete)."""
    if n:
        with store.write() as c:
            _add_meta(c, BILLED_TWICE_RESENT, n)


def clear_billed_twice(store: Store) -> None:
    """Forget the pending counts: a run completed and said them."""
    with store.write() as c:
        c.execute("DELETE FROM meta WHERE key IN (?, ?)", (BILLED_TWICE_INTERRUPTED, BILLED_TWICE_RESENT))
