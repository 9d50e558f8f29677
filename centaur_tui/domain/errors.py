"""Provides the error types shown to people: each carries a title and a message."""

from __future__ import annotations


class CentaurError(Exception):
    """An error meant for the user: the CLI prints it and exits 2, the TUI notifies.

    Args:
        message: What went wrong and where, in words a user can act on.
        title: A short heading for the error.
    """

    exit_code = 2
    title = "Error"

    def __init__(self, message: str, *, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if title is not None:
            self.title = title

    def __str__(self) -> str:
        return self.message


class ConfigError(CentaurError):
    """A task or session file is malformed or inconsistent; names the file and the field."""

    title = "Invalid configuration"

    def __init__(self, file: str, field: str | None, problem: str) -> None:
        where = f"{file}: {field}" if field else file
        super().__init__(f"{where}: {problem}")
        self.file = file
        self.field = field
        self.problem = problem


class UnknownSessionError(CentaurError):
    """A session named on the command line has no file; says which file was looked for."""

    title = "Unknown session"


class SettingsError(CentaurError):
    """An environment variable the program reads (`CENTAUR_*`) holds a value it cannot use; names it."""

    title = "Invalid setting"


class ProviderError(CentaurError):
    """A model provider refused or failed in a way retrying will not fix."""

    title = "Provider error"


class MissingKeyError(CentaurError):
    """A real model needs an API key that is not in the environment."""

    title = "Missing API key"


class StoreError(CentaurError):
    """The session database cannot be used as asked."""

    title = "Store error"


class DatabaseLockedError(StoreError):
    """Another program held the session database's write lock for longer than the busy timeout.

    The pipeline waits and retries on it (showing "waiting for the database"); any other
    writer reports it as this one clear line instead of sqlite3's "database is locked".
    """

    title = "Database busy"


class SessionBusyError(StoreError):
    """Another process is running this session already (its lock file names the pid, host and start)."""

    title = "Session already running"


class ImportFileError(CentaurError):
    """A file to import is malformed or does not fit the session; lists every problem found."""

    title = "Invalid import"


class ImportConflictError(CentaurError):
    """A judgment or output in the files differs from the stored one with the same key."""

    title = "Import conflict"


class PacketError(CentaurError):
    """A judging packet that cannot be read, or does not belong to this session."""

    title = "Judging packet"


class PacketRefused(PacketError):
    """A packet whose items were changed, or whose results break the session's rules; nothing was imported."""

    title = "Judging packet refused"


MAX_LISTED = 40
"""Problems listed in a packet's refusal; a packet with more says how many were left out."""


def packet_refusal(path: object, problems: list[str], count: int | None = None) -> PacketRefused:
    """The refusal of a packet, listing its problems by item and field (the first `MAX_LISTED` of `count`)."""
    total = len(problems) if count is None else count
    listed = problems[:MAX_LISTED]
    more = f"\n  ... and {total - len(listed)} more" if total > len(listed) else ""
    return PacketRefused(f"{path}: refused, nothing imported ({total} problem(s)):\n  " + "\n  ".join(listed) + more)
