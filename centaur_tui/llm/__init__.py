"""Provides the litellm gateway and the simulated provider; the only package importing litellm."""

from centaur_tui.llm.costing import Price, TokenCounter, price_of
from centaur_tui.llm.gateway import (
    CallFailed,
    CallRequest,
    CallResult,
    FatalProviderError,
    Gateway,
    NotSent,
    missing_keys,
    require_keys,
    supports_json_mode,
    supports_seed,
)
from centaur_tui.llm.simulation import make_world

__all__ = [
    "CallFailed",
    "CallRequest",
    "CallResult",
    "FatalProviderError",
    "Gateway",
    "NotSent",
    "Price",
    "TokenCounter",
    "make_world",
    "missing_keys",
    "price_of",
    "require_keys",
    "supports_json_mode",
    "supports_seed",
]
