"""Provides LinkStore: the experts' personal links of `centaur serve` (table `expert_links`, token hashes only)."""

from __future__ import annotations

from dataclasses import dataclass

from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store


@dataclass(frozen=True)
class LinkState:
    """An expert's active link: since when (the token itself is never stored)."""

    expert: str
    created_at: str


class LinkStore:
    """The personal links of one session database.

    Args:
        store: The session database (read-only is enough for `active` and `states`).
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    def replace(self, expert_id: str, token_hash: str) -> int:
        """Make `token_hash` the expert's one active link; returns how many earlier links it ended."""
        now = utc_now()
        with self.store.write() as c:
            ended = c.execute(
                "UPDATE expert_links SET revoked_at = ? WHERE expert = ? AND revoked_at IS NULL", (now, expert_id)
            ).rowcount
            c.execute(
                "INSERT INTO expert_links (expert, token_hash, created_at) VALUES (?, ?, ?)",
                (expert_id, token_hash, now),
            )
        return ended

    def revoke(self, expert_id: str) -> int:
        """End the expert's active link; returns how many were ended (0 or 1)."""
        with self.store.write() as c:
            return c.execute(
                "UPDATE expert_links SET revoked_at = ? WHERE expert = ? AND revoked_at IS NULL",
                (utc_now(), expert_id),
            ).rowcount

    def active(self) -> list[tuple[str, str]]:
        """(expert, token hash) of every active link."""
        return [
            (r["expert"], r["token_hash"])
            for r in self.store.read("SELECT expert, token_hash FROM expert_links WHERE revoked_at IS NULL")
        ]

    def states(self) -> dict[str, LinkState]:
        """Per expert with an active link: since when."""
        return {
            r["expert"]: LinkState(r["expert"], r["created_at"])
            for r in self.store.read(
                "SELECT expert, max(created_at) AS created_at FROM expert_links"
                " WHERE revoked_at IS NULL GROUP BY expert"
            )
        }


ORGANISER = "organiser"
"""The owner `OrganiserLinkStore.active` names (a word, never an expert id: the two tables never mix)."""


class OrganiserLinkStore:
    """The organiser's console links of one session database (table `organiser_links`, token hashes only).

    Apart from `expert_links`, so that no expert's token can ever open the console.
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    def replace(self, token_hash: str) -> int:
        """Make `token_hash` the one active organiser link; returns how many earlier links it ended."""
        now = utc_now()
        with self.store.write() as c:
            ended = c.execute("UPDATE organiser_links SET revoked_at = ? WHERE revoked_at IS NULL", (now,)).rowcount
            c.execute("INSERT INTO organiser_links (token_hash, created_at) VALUES (?, ?)", (token_hash, now))
        return ended

    def revoke(self) -> int:
        """End the active organiser link; returns how many were ended (0 or 1)."""
        with self.store.write() as c:
            return c.execute(
                "UPDATE organiser_links SET revoked_at = ? WHERE revoked_at IS NULL", (utc_now(),)
            ).rowcount

    def active(self) -> list[tuple[str, str]]:
        """(ORGANISER, token hash) of the active organiser link (none or one)."""
        return [
            (ORGANISER, r["token_hash"])
            for r in self.store.read("SELECT token_hash FROM organiser_links WHERE revoked_at IS NULL")
        ]
