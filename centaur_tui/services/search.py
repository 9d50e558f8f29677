"""Provides the organiser's search across a study: rationales, deliverables and assistance texts (FTS5).

Only organiser front ends call it (the app's results and audit screens, `centaur search`): the
expert-only app and `centaur serve`'s expert pages have no way to it (tests/test_search.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from centaur_tui.store import Store
    from centaur_tui.store.search import SearchHit


@dataclass(frozen=True)
class Found:
    """One hit with the comparisons it opens in the audit view."""

    hit: SearchHit
    comparisons: tuple[str, ...]


def search_study(store: Store, query: str, limit: int = 50) -> list[Found]:
    """Refresh the index with what was written since (it follows new judgments), then search it.

    Args:
        store: The session database (only read; the index is a file beside it).
        query: Words to find; FTS syntax is not interpreted (each word is quoted).
        limit: The most hits to return.
    """
    from centaur_tui.store.search import comparisons_of, refresh, search

    refresh(store)
    return [Found(h, tuple(comparisons_of(store, h))) for h in search(store, query, limit)]
