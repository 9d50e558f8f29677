"""Provides the diagnostics log: the `centaur_tui` loggers write to a rotating file, never to the screen.

A stream handler on stdout or stderr would write over the Textual app's screen, so there is
none: with the file disabled (`CENTAUR_LOG_FILE=""`) records go nowhere. litellm's loggers are
sent to the same file (warnings and worse) or nowhere. Modules log through
`logging.getLogger(__name__)`; only the entry point calls `configure_logging()`.
"""

from __future__ import annotations

import logging
import logging.handlers
from io import TextIOWrapper
from pathlib import Path

from centaur_tui.settings import Settings, settings

LOGGER = "centaur_tui"
"""The logger every module of the program logs under (`logging.getLogger(__name__)`)."""

LITELLM_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm")
"""The loggers litellm 1.110 creates; it adds a stderr handler to the first three at import."""

MAX_BYTES = 1_000_000
"""A log file is rotated at 1 MB: about 8,000 lines of 120 characters."""

BACKUPS = 3
"""Rotated files kept (centaur.log.1 .. .3): at most 4 MB on disk."""

FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

_handler: logging.Handler | None = None


def configure_logging(config: Settings | None = None) -> Path | None:
    """Send the program's log records to the log file the settings name (or nowhere).

    Safe to call again (the CLI and tests do): the previous file handler is replaced, never
    stacked. The file and its folder are created on the first record, not here.

    Args:
        config: The settings to follow; read from the environment when None.

    Returns:
        The log file, or None when logging to a file is disabled.
    """
    global _handler
    config = config or settings()
    path = config.log_path()
    logger = logging.getLogger(LOGGER)
    if _handler is not None:
        logger.removeHandler(_handler)
        _handler.close()
        _handler = None
    # No record reaches the root logger's handlers (or logging's last-resort stderr handler).
    logger.propagate = False
    logger.setLevel(config.level())
    if path is None:
        logger.addHandler(logging.NullHandler())
    else:
        _handler = _FileHandler(path)
        _handler.setFormatter(logging.Formatter(FORMAT))
        logger.addHandler(_handler)
    route_litellm()
    return path


def route_litellm() -> None:
    """Send litellm's warnings and errors to the log file, or nowhere; call again after importing litellm.

    litellm attaches a stderr handler to its loggers when imported, which would corrupt the
    app's screen (NOTES.md), so the gateway calls this right after the import.
    """
    handlers: list[logging.Handler] = [_handler] if _handler is not None else [logging.NullHandler()]
    for name in LITELLM_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = list(handlers)
        logger.propagate = False
        # litellm logs every call at INFO and DEBUG (about 10 lines per completion): warnings only.
        logger.setLevel(logging.WARNING)


def log_file() -> Path | None:
    """The file the program logs to now, or None."""
    return Path(_handler.baseFilename) if isinstance(_handler, logging.FileHandler) else None


class _FileHandler(logging.handlers.RotatingFileHandler):
    """A rotating file handler that makes the log's folder when it first writes, and stays quiet on failure."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True)

    def _open(self) -> TextIOWrapper:
        Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:
        # logging's default prints a traceback to stderr (over the app's screen); a log that
        # cannot be written must not stop or disfigure the program, so the record is dropped.
        pass
