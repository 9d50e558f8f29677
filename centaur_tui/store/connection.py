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

from centaur_tui.domain.errors import DatabaseLockedError

BUSY_TIMEOUT_MS = 10_000
"""How long a writer waits for another process's write transaction before giving up."""


def connect(
    path: Path, *, journal: str = "WAL", read_only: bool = False, busy_timeout_ms: int = BUSY_TIMEOUT_MS
) -> sqlite3.Connection:
    """Open one SQLite file in autocommit mode (transactions are explicit), usable from any thread.

    Args:
        path: The database file.
        journal: The journal mode: WAL for session databases (readers beside a writer), DELETE
            for judging packets (one self-contained file to send back, no -wal beside it).
        read_only: Open with `mode=ro`: nothing is created, nothing can be written, and no
            lock that blocks a writer is taken (WAL readers never wait for a writer).
        busy_timeout_ms: How long a statement waits for another connection's lock.

    Raises:
        sqlite3.Error: the file cannot be opened; callers turn it into their own CentaurError.
    """
    timeout = busy_timeout_ms / 1000
    if read_only:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro",
            uri=True,
            timeout=timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        return conn
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    conn.execute(f"PRAGMA journal_mode={journal}")
    return conn


def is_locked(exc: sqlite3.Error) -> bool:
    """Whether an error is another connection's lock outlasting the busy timeout ("database is locked"/"busy")."""
    if isinstance(exc, sqlite3.OperationalError):
        code = getattr(exc, "sqlite_errorcode", None)
        if code is not None:
            return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
        return "locked" in str(exc) or "busy" in str(exc)
    return False


@contextmanager
def immediate_transaction(
    conn: sqlite3.Connection, lock: AbstractContextManager[object]
) -> Iterator[sqlite3.Connection]:
    """A write transaction started with BEGIN IMMEDIATE under `lock`; rolled back on any error.

    Shared by the session database, its migrations and judging packets (each its own SQLite file).

    Raises:
        DatabaseLockedError: another program held the write lock beyond the busy timeout;
            nothing was written (callers that can wait retry, `pipeline.calls.Calls`).
    """
    with lock:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not is_locked(exc):
                raise
            raise DatabaseLockedError(
                f"{database_name(conn)}: the database is locked by another program (waited "
                f"{busy_timeout_s(conn):g} s); nothing was written, try again when it is done"
            ) from None
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")


def database_name(conn: sqlite3.Connection) -> str:
    """The file of a connection's main database, for error messages."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return row[2] if row and row[2] else "the database"


def busy_timeout_s(conn: sqlite3.Connection) -> float:
    """The connection's busy timeout in seconds."""
    return int(conn.execute("PRAGMA busy_timeout").fetchone()[0]) / 1000


def utc_now() -> str:
    """The timestamp stored in `created_at`/`updated_at` columns: UTC, ISO 8601, milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")
