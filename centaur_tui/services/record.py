"""Provides the tamper-evident record's use cases: verify a session's hash chain, read its head.

The chain itself (what is hashed, how a break is found) is `store.chain`; see docs/verify.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from centaur_tui.domain.study import Study
from centaur_tui.services.session import open_store

if TYPE_CHECKING:
    from centaur_tui.store import ChainCheck

BROKEN_EXIT = 1
"""`centaur verify`'s exit status when the chain has a break (2 stays for bad input: no database, unreadable)."""


def verify_session(study: Study) -> ChainCheck:
    """Recompute the hash chain of a session's database and list every break, the first first.

    Raises:
        NoDatabaseError: the session has not been run.
        StoreError: the file is not a session database.
    """
    from centaur_tui.store import verify_store

    with open_store(study, title="Nothing to verify", readonly=True) as store:
        return verify_store(store)


def check_json(check: ChainCheck) -> dict[str, object]:
    """A verification as the JSON `centaur verify --json` prints (sorted keys, every break)."""
    return {
        "clean": check.clean,
        "head": check.head,
        "length": check.length,
        "recomputed_head": check.recomputed_head,
        "rows": dict(sorted(check.rows.items())),
        "breaks": [
            {"table": b.table, "row_id": b.row_id, "position": b.position, "what": b.what} for b in check.breaks
        ],
    }
