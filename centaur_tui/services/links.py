"""Provides the use cases of experts' personal links (`centaur serve`, `centaur expert link`): make, revoke, check.

A link holds a secret token; the database keeps only its hash (`domain.links`), so a token is
shown once, when it is made, and never again: `centaur serve` makes links for the experts that
have none and says, for the others, that their link stands (renew it to get a new one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.domain.links import match_token, new_token, token_hash
from centaur_tui.services.session import expert

if TYPE_CHECKING:
    from centaur_tui.domain.session import ExpertSpec
    from centaur_tui.domain.study import Study
    from centaur_tui.store import Store

LINK_PATH = "/e/"
"""A link is the server's address, this path and the token."""


def link_url(base_url: str, token: str) -> str:
    """The personal link for a token on a server reached at `base_url` (`http://127.0.0.1:8000`)."""
    return base_url.rstrip("/") + LINK_PATH + token


@dataclass(frozen=True)
class ExpertLink:
    """An expert and their link: the token when it was made just now, else when the standing one was made."""

    expert: ExpertSpec
    token: str | None
    since: str | None
    renewed: int = 0
    """Earlier links this one ended."""


def make_link(study: Study, store: Store, expert_id: str) -> ExpertLink:
    """Make (or renew) an expert's link: a new token, and any earlier link of theirs ends.

    Raises:
        CentaurError: no such expert.
    """
    from centaur_tui.store import LinkStore

    spec = expert(study, store, expert_id)
    token = new_token()
    ended = LinkStore(store).replace(spec.id, token_hash(token))
    return ExpertLink(spec, token, None, ended)


def revoke_link(study: Study, store: Store, expert_id: str) -> int:
    """End an expert's link (their next page load or websocket is refused; an open one closes); returns 0 or 1.

    Raises:
        CentaurError: no such expert.
    """
    from centaur_tui.store import LinkStore

    return LinkStore(store).revoke(expert(study, store, expert_id).id)


def links_for_serving(study: Study, store: Store) -> list[ExpertLink]:
    """Every registered expert with their link: made now for those without one, the standing one's date otherwise."""
    from centaur_tui.store import ExpertStore, LinkStore

    links = LinkStore(store)
    states = links.states()
    result: list[ExpertLink] = []
    for spec in ExpertStore(store).experts(study):
        state = states.get(spec.id)
        if state is not None:
            result.append(ExpertLink(spec, None, state.created_at))
        else:
            token = new_token()
            links.replace(spec.id, token_hash(token))
            result.append(ExpertLink(spec, token, None))
    return result


def expert_of_token(store: Store, token: object) -> str | None:
    """The id of the expert whose active link holds this token, or None (malformed, unknown, revoked).

    Read from the database on every call, so a revocation made by another program counts at once.
    """
    from centaur_tui.store import LinkStore

    return match_token(token, LinkStore(store).active())


ORGANISER_PATH = "/o/"
"""The organiser's console link is the server's address, this path and the token (never an expert's path)."""


def organiser_url(base_url: str, token: str) -> str:
    """The organiser's console link for a token on a server reached at `base_url`."""
    return base_url.rstrip("/") + ORGANISER_PATH + token


def make_organiser_link(store: Store) -> tuple[str, int]:
    """Make (or renew) the organiser's console link: a new token (shown once) and how many earlier links it ended."""
    from centaur_tui.store import OrganiserLinkStore

    token = new_token()
    return token, OrganiserLinkStore(store).replace(token_hash(token))


def revoke_organiser_link(store: Store) -> int:
    """End the organiser's console link (its next page load is refused); returns 0 or 1."""
    from centaur_tui.store import OrganiserLinkStore

    return OrganiserLinkStore(store).revoke()


def is_organiser_token(store: Store, token: object) -> bool:
    """Whether this token is the active organiser link's (an expert's token never is: another table)."""
    from centaur_tui.store import OrganiserLinkStore

    return match_token(token, OrganiserLinkStore(store).active()) is not None


SERVER_URL_KEY = "serve_url"
"""The meta key holding the address `centaur serve` last listened on (or its --public-url)."""


def remember_server_url(store: Store, url: str) -> None:
    """Record the address experts open (`centaur serve` calls this once it listens): `centaur expert link` uses it."""
    store.set_meta({SERVER_URL_KEY: url.rstrip("/")})


def server_url(store: Store) -> str | None:
    """The address `centaur serve` last recorded for this session, or None when it never ran."""
    return store.meta().get(SERVER_URL_KEY) or None
