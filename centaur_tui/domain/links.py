"""Provides the secret tokens of experts' personal links (`centaur serve`): made, hashed, checked for shape.

A token is 32 random bytes from `secrets`, URL-safe base64 without padding (43 characters).
Only its SHA-256 goes into the session database: a copy of the database (which a researcher
may share for auditing) opens no expert's queue. Hashes are compared with
`hmac.compare_digest`, so the time a check takes does not depend on how much of a guess is right.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string

TOKEN_BYTES = 32
"""Random bytes in a token: 256 bits, far beyond guessing at any request rate."""

TOKEN_LENGTH = 43
"""Characters of a token: URL-safe base64 of TOKEN_BYTES, without padding."""

_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")

COOKIE = "centaur_link"
"""The name of the cookie a link's token is exchanged for (HttpOnly, SameSite=Strict)."""


def new_token() -> str:
    """A fresh link token (shown once, to the researcher who makes the link)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def well_formed(token: object) -> bool:
    """Whether a presented value has a token's shape: 43 URL-safe ASCII characters, nothing else.

    Checked before hashing, so short, overlong, non-ASCII or control-character input is refused
    without touching the database.
    """
    return isinstance(token, str) and len(token) == TOKEN_LENGTH and all(c in _ALPHABET for c in token)


def token_hash(token: str) -> str:
    """The SHA-256 of a token, hex: what the database stores and lookups compare."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def same_hash(presented: str, stored: str) -> bool:
    """Timing-safe comparison of two hex hashes."""
    return hmac.compare_digest(presented.encode("ascii"), stored.encode("ascii"))


def match_token(token: object, stored: list[tuple[str, str]]) -> str | None:
    """The owner of the stored hash a presented token matches, or None.

    Args:
        token: What the request carried (any type: a cookie, a path segment).
        stored: (owner, hash) of every active link.

    Every stored hash is compared (no early exit), each with `hmac.compare_digest`.
    """
    if not well_formed(token):
        return None
    assert isinstance(token, str)
    presented = token_hash(token)
    found: str | None = None
    for owner, digest in stored:
        if same_hash(presented, digest) and found is None:
            found = owner
    return found
