"""Provides a session's identity and the check that a session file and its database agree.

A session database holds items made under one identity: the session's name, its seed (which
drew every presented order and every simulated reply) and its entries (candidates, the worker,
the LLM judges, each with its model string and family). A session file that differs from the
database on any of these would attribute stored items to the wrong entry, or mix orders drawn
from two seeds, so it is refused; `centaur migrate` records the legitimate changes (a renamed
entry keeps its stored items under its new name; a retired entry's items stay stored and are
left out of every statistic, counted).

What may change freely (nothing stored depends on it): adding candidates, judges, tasks, runs
or experts; limits, prices, concurrency, deployments, timeouts, batch settings and statistics
options. What is refused: another session's name, another seed, a stored candidate, worker or
LLM judge missing from the file (renamed or removed), and an entry whose model string or family
changed (its stored items were made by another model: give the new model a new name).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.session import PLAIN, Session

EntryKind = Literal["candidate", "worker", "judge"]
ENTRY_KINDS: tuple[EntryKind, ...] = ("candidate", "worker", "judge")


class IdentityMismatchError(CentaurError):
    """The session file and its database disagree on what the stored items belong to."""

    title = "Session file and database disagree"


@dataclass(frozen=True)
class Entry:
    """One entry of a session as the database records it: kind, name, model string, family."""

    kind: EntryKind
    name: str
    model: str
    family: str


def session_entries(session: Session) -> list[Entry]:
    """Every entry of a session whose name the database stores: candidates, the worker, LLM judges."""
    entries = [Entry("candidate", m.name, m.model, m.family) for m in session.models]
    entries += [Entry("candidate", c.name, "imported", c.family) for c in session.candidates]
    for worker in session.worker_panel:  # the one [worker], or each of a [[workers]] panel
        entries.append(Entry("worker", worker.name, worker.model, worker.family))
    entries += [Entry("judge", j.name, j.model, j.family) for j in session.judges]
    return entries


def entries_json(session: Session) -> str:
    """The session's entries as the compact JSON the database keeps in `meta.entries`."""
    return json.dumps(
        [[e.kind, e.name, e.model, e.family] for e in session_entries(session)], separators=(",", ":"), sort_keys=False
    )


def parse_entries(text: str | None) -> list[Entry] | None:
    """`meta.entries` back into entries; None when absent or unreadable (a database older than the record)."""
    if not text:
        return None
    try:
        data = json.loads(text)
        return [Entry(k, n, m, f) for k, n, m, f in data if k in ENTRY_KINDS]
    except (ValueError, TypeError):
        return None


@dataclass(frozen=True)
class StoredIdentity:
    """What a database says about the identity its items were made under.

    Attributes:
        session: `meta.session` (None: never run).
        seed: `meta.seed` (None: never run).
        entries: `meta.entries` (None: a database written before entries were recorded).
        names: Per kind, the names its stored items carry (outputs, assistance texts, LLM judgments
            the pipeline made), with how many stored items carry each.
        retired: (kind, name) of the entries `centaur migrate --retire` took out of the session.
    """

    session: str | None
    seed: str | None
    entries: list[Entry] | None
    names: dict[EntryKind, dict[str, int]] = field(default_factory=dict)
    retired: frozenset[tuple[str, str]] = frozenset()


def _current_names(session: Session) -> dict[EntryKind, set[str]]:
    names: dict[EntryKind, set[str]] = {"candidate": set(), "worker": set(), "judge": set()}
    for e in session_entries(session):
        names[e.kind].add(e.name)
    names["candidate"].add(PLAIN)
    names["candidate"].update(session.dialogue_candidates)  # made by the session's assistants ([augmentation] turns)
    return names


def identity_differences(
    session: Session, stored: StoredIdentity, database: str, session_file: str = "SESSION"
) -> list[str]:
    """Every way a session file differs from what its database's items were made under, in words.

    Args:
        session: The session file's session.
        stored: What the database records.
        database: The database path, for the messages.
        session_file: The session file, for the commands the messages suggest.

    Returns:
        One sentence per difference, each saying what to do; empty when they agree.
    """
    problems: list[str] = []
    if stored.session is not None and stored.session != session.name:
        problems.append(
            f"{database} belongs to session {stored.session!r} (meta.session) but this file is session "
            f"{session.name!r}: point `database` at a file of its own (two session files on one database would mix "
            "their items)"
        )
        return problems  # another session's database: the other differences would only repeat it
    if stored.seed is not None and stored.seed != str(session.seed):
        problems.append(
            f"seed is {session.seed} but {database} was made with seed {stored.seed}: its stored presented orders and "
            f"simulated replies come from that seed; set `seed = {stored.seed}` again, or start a new database for the "
            "new seed (another `database`, or another session name)"
        )
    current = _current_names(session)
    for kind in ENTRY_KINDS:
        for name, count in sorted(stored.names.get(kind, {}).items()):
            if name in current[kind] or (kind, name) in stored.retired:
                continue
            others = sorted(current[kind] - set(stored.names.get(kind, {})) - {PLAIN})
            suggested = others[0] if len(others) == 1 else "NEW"
            problems.append(
                f"{kind} {name!r} has {count} stored item(s) in {database} but is not in the session file. If it "
                f"was renamed, run `centaur migrate {session_file} --rename {name}={suggested}` (its stored items "
                f"move to the new name; nothing is sent again). If it was removed, run `centaur migrate {session_file} "
                f"--retire {name}` (its items stay stored and are left out of every statistic, counted)"
            )
    if stored.entries is not None:
        now = {(e.kind, e.name): e for e in session_entries(session)}
        for old in stored.entries:
            new = now.get((old.kind, old.name))
            if new is None:
                continue
            for what, before, after in (("model", old.model, new.model), ("family", old.family, new.family)):
                if before != after and stored.names.get(old.kind, {}).get(old.name):
                    problems.append(
                        f"{old.kind} {old.name!r}: {what} is {after!r} but its stored items in {database} were made "
                        f"with {what} {before!r}: give the changed entry a new name (a new entry), and retire the old "
                        f"one if it no longer takes part (`centaur migrate {session_file} --retire {old.name}`)"
                    )
    return problems


def require_identity(session: Session, stored: StoredIdentity, database: str, session_file: str = "SESSION") -> None:
    """Raise when the session file and its database disagree (see `identity_differences`).

    Raises:
        IdentityMismatchError: naming every difference and what to do; nothing was written.
    """
    problems = identity_differences(session, stored, database, session_file)
    if problems:
        raise IdentityMismatchError(
            f"{session.name}: the session file does not match its database; nothing was run or written:\n"
            + "\n".join(f"- {p}" for p in problems)
        )
