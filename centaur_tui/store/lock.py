"""Provides SessionLock: one pipeline run per session at a time, held with an OS lock on `NAME.db.lock`.

Two `centaur run` on one session at once sent every call twice (980 requests for 490 calls,
issue 12). The run takes `fcntl.flock(LOCK_EX | LOCK_NB)` on a lock file beside the database:
the operating system releases it when the holder exits in any way (`kill -9` included), so a
crashed run never blocks the next one, and no stale-pid guessing is needed. The holder writes
its pid, host and start time into the file, only so that a refused run can say who holds it.
The file itself is never deleted: deleting a lock file while another process opens it lets
two processes hold "the" lock on two different files.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path
from types import TracebackType

from centaur_tui.domain.errors import SessionBusyError, StoreError
from centaur_tui.store.connection import utc_now


def lock_path(database: Path) -> Path:
    """The lock file of a session database: `NAME.db.lock` beside it."""
    return database.with_name(database.name + ".lock")


def lock_holder(database: Path) -> dict[str, object] | None:
    """What the lock file says about its last holder (pid, host, since), or None when it says nothing readable."""
    try:
        data = json.loads(lock_path(database).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class SessionLock:
    """The exclusive right to run one session's pipeline, for as long as it is held.

    Use as a context manager, or `acquire()`/`release()`.

    Args:
        database: The session database the lock protects.
    """

    def __init__(self, database: Path) -> None:
        self.database = Path(database)
        self.path = lock_path(self.database)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> SessionLock:
        """Take the lock at once, or refuse.

        Raises:
            SessionBusyError: another process (or another run in this one) holds it; the
                message names its pid, host and start time.
            StoreError: the lock file cannot be created.
        """
        if self._fd is not None:
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create the session's lock file ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusyError(self._busy_message()) from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"{self.path}: cannot lock the session ({exc.strerror})") from None
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "since": utc_now()}
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(holder).encode("utf-8"))
        self._fd = fd
        return self

    def _busy_message(self) -> str:
        holder = lock_holder(self.database) or {}
        who = (
            f"process {holder.get('pid', '?')} on {holder.get('host', '?')} since {holder.get('since', '?')}"
            if holder
            else "another process"
        )
        return (
            f"{self.database}: this session is being run already by {who} (lock file {self.path}); "
            "wait for that run to finish or stop it, then run again"
        )

    def release(self) -> None:
        """Give the lock back (also done by the operating system when the process ends)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)  # the holder's details are stale from now on
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> SessionLock:
        return self.acquire()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
