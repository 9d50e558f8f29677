"""Provides the one description of a failed provider call that is printed and stored: cleaned, redacted, with a hint.

A provider's error text is untrusted data: it may carry terminal escape sequences, echo the key
it was sent, or be a whole HTML page. `describe_failure` turns an exception into one line that
keeps the server's explanation (the body of a 400, trimmed to `EXPLANATION_CHARS`), names the
endpoint when it could not be reached, and ends with a hint where one is known.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from centaur_tui.domain.session import Endpoint
from centaur_tui.domain.untrusted import clean_untrusted

EXPLANATION_CHARS = 600
"""Characters of a server's explanation kept in a stored error (a llama.cpp 400 is about 150)."""

# Variables litellm reads by default when an endpoint names no `api_key_env`: their values are
# redacted too. Any other variable whose name ends like a key is included (see `secrets_in_env`).
_KEY_NAME = re.compile(r"(?:API_KEY|_KEY|_TOKEN|_SECRET|_PASSWORD)$")

_UNREACHABLE = ("APIConnectionError", "Timeout", "TimeoutError", "ServiceUnavailableError", "BadGatewayError")

# litellm prefixes its own labels ("litellm.BadRequestError: OpenAIException - ..."): dropped,
# since the error type is stored in its own column.
_LITELLM_PREFIX = re.compile(r"^(?:(?:litellm\.)?[A-Za-z]+Error:\s*)+(?:[A-Za-z]+Exception\s*-\s*)?")


def secrets_in_env(key_envs: Iterable[str] = ()) -> dict[str, str]:
    """name -> value of the key variables in use (`key_envs`) and of every set variable named like a key."""
    found = {name: os.environ[name] for name in key_envs if os.environ.get(name)}
    for name, value in os.environ.items():
        if value and _KEY_NAME.search(name):
            found.setdefault(name, value)
    return found


_UNREACHABLE_TEXT = (
    "connection error",
    "connection refused",
    "connection reset",
    "timed out",
    "name or service",
    "nodename nor servname",
    "network is unreachable",
    "remote end closed",
)


def _unreachable(exc: BaseException, kind: str, raw: str) -> bool:
    """Whether the server was not reached or did not answer in time.

    litellm 1.110.2 reports a refused connection as an InternalServerError "Connection error."
    with status 500, so the exception chain and the text are read, not only the type.
    """
    if kind in _UNREACHABLE or isinstance(exc, TimeoutError):
        return True
    node: BaseException | None = exc
    for _ in range(8):  # a bounded walk: chains are 2-4 deep here
        if node is None:
            break
        name = type(node).__name__
        if "Connect" in name or "Timeout" in name:
            return True
        node = node.__cause__ or node.__context__
    lowered = raw.lower()
    return any(t in lowered for t in _UNREACHABLE_TEXT)


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def hint_for(kind: str, status: int | None, text: str, endpoint: Endpoint) -> str | None:
    """What the user can change, for errors whose cause is known; None otherwise."""
    lowered = text.lower()
    if (status == 400 or kind == "BadRequestError") and ("response_format" in lowered or "json_schema" in lowered):
        return "this server rejects structured output: set structured_output = false under [judging]"
    if kind == "ContextWindowExceededError" or "context length" in lowered or "context window" in lowered:
        return "the prompt is longer than this model's context window: use a model with a larger one"
    if status == 401 or kind == "AuthenticationError":
        where = (
            f"the environment variable {endpoint.api_key_env}"
            if endpoint.api_key_env
            else ("the key variable litellm reads for this provider (or set api_key_env)")
        )
        return f"check {where}: the provider refused the key"
    if status == 403 or kind == "PermissionDeniedError":
        return "the key is valid but not allowed to use this model: check the account's access"
    if status == 404 or kind == "NotFoundError":
        return f"check the model string {endpoint.model!r} (and api_base, if set): the provider does not know it"
    return None


def describe_failure(exc: BaseException, kind: str, endpoint: Endpoint, secrets: Mapping[str, str]) -> str:
    """One line for `call_errors` and the progress line: explanation, endpoint when unreachable, hint."""
    raw = str(exc)
    text = clean_untrusted(_LITELLM_PREFIX.sub("", raw.strip()), secrets, limit=EXPLANATION_CHARS, one_line=True)
    text = text or kind
    status = _status(exc)
    if _unreachable(exc, kind, raw):
        where = endpoint.api_base or "the provider's default address"
        text = f"{text} (model {endpoint.model} at {clean_untrusted(where, secrets, limit=200)})"
    elif status is not None and f"{status}" not in text[:40]:
        text = f"HTTP {status}: {text}"
    hint = hint_for(kind, status, raw, endpoint)
    return f"{text} - hint: {hint}" if hint else text
