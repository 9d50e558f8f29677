"""Provides the session database: one SQLite file per session, the only place that touches SQL."""

from centaur_tui.store.db import SCHEMA_VERSION, Store

__all__ = ["SCHEMA_VERSION", "Store"]
