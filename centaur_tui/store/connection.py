"""Provides the SQLite connection habits every store file shares: how it is opened, BEGIN IMMEDIATE writes, timestamps.

Every write transaction starts with `BEGIN IMMEDIATE`: a plain `BEGIN` (what sqlite-utils'
`db.atomic()` issues) failed 27-39 of 400 writes with "database is locked" when an expert
judged while the pipeline ran, busy timeout or not; `BEGIN IMMEDIATE` with a 10 s busy
timeout failed none (NOTES.md).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path

BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another process's write transaction before giving up."""


def connect(path: Path, *, journal: str = "WAL", read_only: bool = False) -> sqlite3.Connection:
    """Open one SQLite file in autocommit mode (transactions are explicit), usable from any thread.

    Args:
        path: The database file.
        journal: The journal mode: WAL for session databases (readers beside a writer), DELETE
            for judging packets (one self-contained file to send back, no -wal beside it).
        read_only: Open with `mode=ro`: nothing is created, nothing can be written.

    Raises:
        sqlite3.Error: the file cannot be opened; callers turn it into their own CentaurError.
    """
    if read_only:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10, isolation_level=None,
                               check_same_thread=False)
    conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


@contextmanager
def immediate_transaction(
    conn: sqlite3.Connection, lock: AbstractContextManager[object]
) -> Iterator[sqlite3.Connection]:
    """A write transaction started with BEGIN IMMEDIATE under `lock`; rolled back on any error.

    Shared by the session database, its migrations and judging packets (each its own SQLite file).
    """
    with lock:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")


def utc_now() -> str:
    """The timestamp stored in `created_at`/`updated_at` columns: UTC, ISO 8601, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
