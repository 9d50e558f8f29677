"""Provides the import of sqlite-utils without pulling in pandas (0.4 s at every start)."""

from __future__ import annotations

import sys
from types import ModuleType


def import_sqlite_utils() -> ModuleType:
    """Import sqlite_utils; it imports pandas and numpy if installed, only for optional type support.

    We never hand it pandas or numpy values, so while it is first imported those two are
    masked (a None entry in sys.modules makes `import pandas` raise ImportError, which
    sqlite_utils handles), then unmasked so `stats` can import them normally.
    """
    if "sqlite_utils" in sys.modules:
        return sys.modules["sqlite_utils"]
    masked = [name for name in ("pandas", "numpy") if name not in sys.modules]
    for name in masked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import sqlite_utils
    finally:
        for name in masked:
            sys.modules.pop(name, None)
    return sqlite_utils
