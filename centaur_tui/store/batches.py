"""Provides the bookkeeping of batch mode: every batch sent through a provider's batch API and each request in it.

The life of a batch (migration 10), each step committed before the next leaves this process:

1. `open_batch`: the batch (state `preparing`) and every request (custom_id, content address,
   messages, params; state `pending`) in one transaction, before anything is uploaded;
2. `update_batch(state="uploaded", input_file_id=...)` once the input file is uploaded;
3. `update_batch(state="creating")` before the batch is created at the provider, then
   `state="submitted"` with the provider's batch id (a run killed between the two finds the
   batch by its metadata, `llm.batch.METADATA_KEY`);
4. `collect_batch`: in one transaction, every answered request's call (the `calls` row an
   online call would have written), every other request's end (`errored`, `expired`, `failed`,
   `cancelled` or `missing`, with its message, also as a final row of `call_errors`) and the
   batch's state `collected`.

A content address is pending in at most one batch (`open_batch` refuses otherwise); once a
batch has ended without answering it, a new batch may carry it again, and both rows stay.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from typing import Any

from centaur_tui.domain.errors import StoreError
from centaur_tui.domain.records import CallFailure, CallRecord
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store, insert_failure_row

REQUEST_ENDS = ("errored", "expired", "failed", "cancelled", "missing")
"""States of a request that a batch ended without answering (its call failed for this run)."""

_BATCH_COLUMNS = frozenset(
    {
        "state",
        "status",
        "input_file_id",
        "provider_batch_id",
        "output_file_id",
        "error_file_id",
        "completed",
        "failed",
        "message",
        "ended_at",
        "unreadable_polls",
    }
)


@dataclass(frozen=True)
class BatchRequestRow:
    """One request of a batch as stored before it is sent."""

    custom_id: str
    key: str
    stage: str
    model: str
    sample: str
    messages_json: str
    params_json: str


def open_batch(
    store: Store, batch_id: str, stage: str, endpoint: dict[str, Any], provider: str, requests: list[BatchRequestRow]
) -> None:
    """Store a new batch and all its requests (state `pending`) in one transaction, before anything is sent.

    `endpoint` is where the batch goes (model, api_base, api_key_env: the name of the key's
    variable, never a key), so a later run reaches the same provider to collect it.

    Raises:
        StoreError: a request's content address is already pending in another batch, or answered.
    """
    now = utc_now()
    with store.write() as c:
        keys = [(r.key,) for r in requests]
        c.execute("CREATE TEMP TABLE IF NOT EXISTS new_batch_keys (key TEXT PRIMARY KEY)")
        c.execute("DELETE FROM new_batch_keys")
        c.executemany("INSERT OR IGNORE INTO new_batch_keys (key) VALUES (?)", keys)
        clash = c.execute(
            "SELECT r.key, r.batch_id FROM batch_requests r JOIN new_batch_keys n ON n.key = r.key"
            " WHERE r.state = 'pending' LIMIT 1"
        ).fetchone()
        answered = c.execute("SELECT c.key FROM calls c JOIN new_batch_keys n ON n.key = c.key LIMIT 1").fetchone()
        c.execute("DELETE FROM new_batch_keys")
        if clash is not None:
            raise StoreError(f"call {clash[0][:12]} is pending in batch {clash[1]} already: not sent twice")
        if answered is not None:
            raise StoreError(f"call {answered[0][:12]} is answered already: not sent again")
        c.execute(
            "INSERT INTO batches (id, stage, model, provider, endpoint, state, requests, pid, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, 'preparing', ?, ?, ?, ?)",
            (
                batch_id,
                stage,
                endpoint["model"],
                provider,
                json.dumps(endpoint, sort_keys=True),
                len(requests),
                os.getpid(),
                now,
                now,
            ),
        )
        c.executemany(
            "INSERT INTO batch_requests (batch_id, custom_id, key, stage, model, sample, messages, params, state,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
            [
                (batch_id, r.custom_id, r.key, r.stage, r.model, r.sample, r.messages_json, r.params_json, now)
                for r in requests
            ],
        )


def update_batch(store: Store, batch_id: str, **fields: Any) -> None:
    """Set columns of a batch (state, status, file and batch ids, counts, message, ended_at) in one transaction."""
    unknown = set(fields) - _BATCH_COLUMNS
    if unknown:
        raise ValueError(f"not a batch column: {', '.join(sorted(unknown))}")
    names = sorted(fields)
    with store.write() as c:
        c.execute(
            f"UPDATE batches SET {', '.join(f'{n} = ?' for n in names)}, updated_at = ? WHERE id = ?",
            (*(fields[n] for n in names), utc_now(), batch_id),
        )


@dataclass(frozen=True)
class BatchRow:
    """One stored batch (a row of `batches`): where it went, its state here and its status at the provider."""

    id: str
    stage: str
    model: str
    provider: str
    endpoint: str
    """JSON of the endpoint's identity (model, api_base, api_key_env), never a key."""
    state: str
    status: str | None
    input_file_id: str | None
    provider_batch_id: str | None
    output_file_id: str | None
    error_file_id: str | None
    requests: int
    completed: int
    failed: int
    message: str | None
    pid: int
    created_at: str
    updated_at: str
    ended_at: str | None
    unreadable_polls: int


@dataclass(frozen=True)
class BatchRequest:
    """One stored request of a batch (a row of `batch_requests`); messages and params are NULL once answered."""

    batch_id: str
    custom_id: str
    key: str
    stage: str
    model: str
    sample: str
    messages: str | None
    params: str | None
    state: str
    message: str | None
    updated_at: str


_BATCH_SELECT = ", ".join(f.name for f in fields(BatchRow))
_REQUEST_SELECT = ", ".join(f.name for f in fields(BatchRequest))


def unfinished_batches(store: Store) -> list[BatchRow]:
    """Every batch not collected yet, oldest first: what a run resumes before it sends anything new."""
    table = store.read_table(f"SELECT {_BATCH_SELECT} FROM batches WHERE state != 'collected' ORDER BY created_at, id")
    return [BatchRow(*row) for row in table.rows]


def batch_rows(store: Store) -> list[BatchRow]:
    """Every batch, oldest first (progress and overview)."""
    table = store.read_table(f"SELECT {_BATCH_SELECT} FROM batches ORDER BY created_at, id")
    return [BatchRow(*row) for row in table.rows]


def requests_of(store: Store, batch_id: str) -> list[BatchRequest]:
    """The requests of one batch, with their stored messages and params while pending."""
    table = store.read_table(
        f"SELECT {_REQUEST_SELECT} FROM batch_requests WHERE batch_id = ? ORDER BY rowid", (batch_id,)
    )
    return [BatchRequest(*row) for row in table.rows]


def pending_keys(store: Store) -> dict[str, str]:
    """Content address -> batch id of every request pending in a batch not collected yet."""
    return {
        r["key"]: r["batch_id"]
        for r in store.read(
            "SELECT r.key, r.batch_id FROM batch_requests r JOIN batches b ON b.id = r.batch_id"
            " WHERE r.state = 'pending' AND b.state != 'collected'"
        )
    }


def collect_batch(
    store: Store,
    batch_id: str,
    answered: list[tuple[str, CallRecord]],
    ended: list[tuple[str, str, CallFailure]],
    **fields: Any,
) -> None:
    """Store an ended batch's results in one transaction and mark it collected.

    Args:
        answered: (custom_id, call) of each answered request: the call is stored as an online
            answer would be; the request's copy of its messages is dropped (the call holds them).
        ended: (custom_id, state, failure) of each request the batch did not answer: its state
            (one of REQUEST_ENDS) and message, and the failure as a final row of call_errors.
        fields: Batch columns to set with it (status, counts, message).
    """
    unknown = set(fields) - _BATCH_COLUMNS
    if unknown:
        raise ValueError(f"not a batch column: {', '.join(sorted(unknown))}")
    now = utc_now()
    values = {**fields, "state": "collected", "ended_at": fields.get("ended_at") or now}
    names = sorted(values)
    with store.write() as c:
        for _, record in answered:
            Store.insert_call(c, record)
        c.executemany(
            "UPDATE batch_requests SET state = 'answered', messages = NULL, params = NULL, message = NULL,"
            " updated_at = ? WHERE batch_id = ? AND custom_id = ? AND state = 'pending'",
            [(now, batch_id, custom_id) for custom_id, _ in answered],
        )
        for custom_id, state, failure in ended:
            if state not in REQUEST_ENDS:
                raise ValueError(f"not a request end: {state}")
            cur = c.execute(
                "UPDATE batch_requests SET state = ?, message = ?, updated_at = ?"
                " WHERE batch_id = ? AND custom_id = ? AND state = 'pending'",
                (state, failure.message[:2000], now, batch_id, custom_id),
            )
            if cur.rowcount:
                insert_failure_row(c, failure)
        c.execute(
            f"UPDATE batches SET {', '.join(f'{n} = ?' for n in names)}, updated_at = ? WHERE id = ?",
            (*(values[n] for n in names), now, batch_id),
        )


def batches_in_flight(store: Store) -> tuple[int, int]:
    """(batches not collected, requests pending in them): what a run leaves for the next one to collect."""
    row = store.read(
        "SELECT count(DISTINCT b.id) AS batches, count(r.custom_id) AS requests FROM batches b"
        " LEFT JOIN batch_requests r ON r.batch_id = b.id AND r.state = 'pending' WHERE b.state != 'collected'"
    )[0]
    return int(row["batches"] or 0), int(row["requests"] or 0)


def batch_counts(store: Store) -> tuple[int, int]:
    """(LLM judgments whose call a batch answered, latest revision per slot; batches not collected yet)."""
    judged = store.read_value(
        "SELECT count(*) FROM judgments j WHERE j.judge_kind = 'llm' AND j.call_key IN"
        " (SELECT key FROM batch_requests WHERE state = 'answered')"
        " AND j.revision = (SELECT max(revision) FROM judgments k WHERE k.comparison_id = j.comparison_id"
        " AND k.judge = j.judge AND k.presentation = j.presentation)"
    )
    in_flight = store.read_value("SELECT count(*) FROM batches WHERE state != 'collected'")
    return int(judged or 0), int(in_flight or 0)


def batched_judgment_ids(store: Store) -> set[int]:
    """Row ids of the judgments whose call was answered in a batch (the export's `batch` column)."""
    return {
        int(r["id"])
        for r in store.read(
            "SELECT id FROM judgments WHERE call_key IN (SELECT key FROM batch_requests WHERE state = 'answered')"
        )
    }


def batched_keys(store: Store) -> set[str]:
    """Content addresses of the calls answered through a batch."""
    return {r["key"] for r in store.read("SELECT DISTINCT key FROM batch_requests WHERE state = 'answered'")}


def batch_overhead(store: Store) -> dict[str, int]:
    """Rows and bytes of the batch bookkeeping (the benchmark's measure): SQLite's dbstat when available."""
    out = {
        "batches": int(store.read_value("SELECT count(*) FROM batches") or 0),
        "batch_requests": int(store.read_value("SELECT count(*) FROM batch_requests") or 0),
    }
    try:
        rows = store.read(
            "SELECT name, sum(pgsize) AS bytes FROM dbstat WHERE name IN ('batches', 'batch_requests',"
            " 'batch_requests_key', 'sqlite_autoindex_batches_1', 'sqlite_autoindex_batch_requests_1', 'calls')"
            " GROUP BY name"
        )
    except Exception:  # noqa: BLE001 - dbstat is a compile-time option of SQLite
        return out
    for r in rows:
        out[f"bytes:{r['name']}"] = int(r["bytes"] or 0)
    return out


def check_no_double_send(store: Store) -> list[str]:
    """Content addresses that were pending in two batches at once or answered twice (the invariant; tests)."""
    rows = store.read(
        "SELECT key, sum(state = 'answered') AS answered, sum(state = 'pending') AS pending FROM batch_requests"
        " GROUP BY key HAVING answered > 1 OR pending > 1 OR (answered >= 1 AND pending >= 1)"
    )
    return [r["key"] for r in rows]
