"""Provides the identity use cases: a session file agrees with its database, and `centaur migrate` records changes.

See domain/identity.py for what may change freely and what is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from centaur_tui.domain.errors import CentaurError

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.store import Store


def check_identity(study: Study, store: Store) -> None:
    """Refuse a session file that differs from what its database's items were made under (domain/identity.py).

    Every use case that opens a session's database goes through here (`open_store`, the report),
    before it reads or writes anything else: a renamed or removed candidate, worker or judge, a
    changed seed or another session's file on the same database would otherwise be reported
    beside the old names or rewrite `meta`.

    Raises:
        IdentityMismatchError: naming each difference and what to do (exit status 2).
    """
    from centaur_tui.domain.identity import require_identity
    from centaur_tui.store import stored_identity

    require_identity(study.session, stored_identity(store), str(study.database), str(study.session_file))


def identity_problems(study: Study) -> list[str]:
    """How the session file differs from its database, read without migrating or writing (`centaur check`).

    Returns:
        One sentence per difference; empty when they agree or the session has no database yet.
    """
    from centaur_tui.domain.identity import identity_differences
    from centaur_tui.store import stored_identity_at

    if not study.database.is_file():
        return []
    stored = stored_identity_at(study.database)
    if stored is None:
        return []
    return identity_differences(study.session, stored, str(study.database), str(study.session_file))


@dataclass(frozen=True)
class MigrateResult:
    """What `centaur migrate` did, and what still differs between the session file and its database."""

    changes: list[tuple[str, str, str, str | None, int]]
    """(action, kind, old name, new name, stored rows touched) per change, in order."""
    remaining: list[str] = field(default_factory=list)
    """Differences left after the changes (domain/identity.py); empty when they agree."""


def migrate_identity(study: Study, renames: list[tuple[str, str]], retires: list[str]) -> MigrateResult:
    """Record the legitimate changes of a session's identity in its database: renamed and retired entries.

    A rename moves every stored item of the old name (calls, outputs, assistance texts,
    comparisons, judgments, scores, expert queues) to the new one, so nothing answered is sent
    again; a retirement keeps the items stored and out of every statistic (counted). The session
    file must already say the new state (the new name in it, the retired name gone from it).

    Raises:
        CentaurError: the session has never been run.
        IdentityMismatchError: the database belongs to another session.
        SessionBusyError: a run holds the session.
        StoreError: a change does not apply (see `store.identity`); earlier changes of the same
            command are kept and said.
    """
    from centaur_tui.domain.identity import ENTRY_KINDS, EntryKind, IdentityMismatchError, identity_differences
    from centaur_tui.store import SessionLock, Store, rename_entry, retire_entry, stored_identity

    if not study.database.exists():
        raise CentaurError(f"{study.database} does not exist yet: nothing to migrate", title="Nothing to migrate")
    done: list[tuple[str, str, str, str | None, int]] = []
    with Store(study.database) as store, SessionLock(store.path):
        ident = stored_identity(store)
        if ident.session is not None and ident.session != study.session.name:
            raise IdentityMismatchError(
                f"{study.database} belongs to session {ident.session!r}, not {study.session.name!r}: "
                "nothing was changed (a session file of its own needs a database of its own)"
            )

        def kinds_of(name: str) -> list[EntryKind]:
            found = [k for k in ENTRY_KINDS if ident.names.get(k, {}).get(name)]
            if not found:
                held = sorted({n for k in ENTRY_KINDS for n in ident.names.get(k, {})})
                raise CentaurError(
                    f"{study.database}: no stored item is named {name!r} (stored names: {', '.join(held) or 'none'})"
                    + _applied(done),
                    title="Nothing to migrate",
                )
            return found

        try:
            for old, new in renames:
                for kind in kinds_of(old):
                    c = rename_entry(store, study.session, kind, old, new)
                    done.append((c.action, c.kind, c.old, c.new, c.rows))
                    ident = stored_identity(store)
            for name in retires:
                for kind in kinds_of(name):
                    c = retire_entry(store, study.session, kind, name)
                    done.append((c.action, c.kind, c.old, c.new, c.rows))
                    ident = stored_identity(store)
        except CentaurError as exc:
            if done and not exc.message.endswith(_applied(done)):
                exc.message += _applied(done)
                exc.args = (exc.message,)
            raise
        remaining = identity_differences(
            study.session, stored_identity(store), str(study.database), str(study.session_file)
        )
    return MigrateResult(done, remaining)


def _applied(done: list[tuple[str, str, str, str | None, int]]) -> str:
    if not done:
        return ""
    return " (already applied by this command: " + ", ".join(f"{a} {k} {o!r}" for a, k, o, _n, _r in done) + ")"
