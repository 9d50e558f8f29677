"""Provides token counting (litellm's tokenizers, cached by paragraph) and token prices (the session's or litellm's).

Counting 17,150 prompts of the paper's session whole would tokenise every output text once per
judge call that shows it (each output is in about 30 judge prompts); `TokenCounter` counts a
text paragraph by paragraph and caches each paragraph's count per tokenizer, so a task prompt,
a rubric or an output is tokenised once per model. Summing paragraphs differs from counting the
whole text by the few tokens that would merge across a paragraph break (measured on the demo
prompts below 0.5 %).

A price is known only when the session gives both token prices of an entry, or litellm's price
map does (non-zero); anything else is "unknown", never $0 (litellm#36999: an unpriced model
silently costs $0 there). Session prices win over litellm's map, for estimates and recorded costs alike.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

from centaur_tui.domain.session import Endpoint
from centaur_tui.llm.runtime import litellm

MESSAGE_OVERHEAD = 4
"""Tokens per chat message beyond its content (role and separators), as OpenAI counts them."""
REPLY_PRIMING = 3
"""Tokens every chat request adds for the start of the reply."""

# A paragraph and the blank lines after it: the unit that is counted and cached.
_PARAGRAPH = re.compile(r"[^\n]*(?:\n(?!\n)[^\n]*)*\n*")


@dataclass(frozen=True)
class Price:
    """USD per token of one entry; `source` is "session" or "litellm"."""

    input: float
    output: float
    cached_input: float
    source: str

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(max(0, cached_tokens), prompt_tokens)
        return (prompt_tokens - cached) * self.input + cached * self.cached_input + completion_tokens * self.output


def price_of(endpoint: Endpoint, model: str | None = None) -> Price | None:
    """The entry's token prices, or None when neither the session nor litellm's map gives a non-zero price."""
    if endpoint.priced:
        assert endpoint.input_cost_per_mtok is not None and endpoint.output_cost_per_mtok is not None
        cached = endpoint.cached_input_cost_per_mtok
        return Price(
            endpoint.input_cost_per_mtok / 1e6,
            endpoint.output_cost_per_mtok / 1e6,
            (endpoint.input_cost_per_mtok if cached is None else cached) / 1e6,
            "session",
        )
    if endpoint.simulated:
        return None
    try:
        info: Any = litellm().get_model_info(model=model or endpoint.model)
    except Exception:  # noqa: BLE001 - a model litellm does not know has no price
        return None
    p_in, p_out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if not p_in or not p_out:  # missing or 0: litellm#36999, an unpriced model would look free
        return None
    cached = info.get("cache_read_input_token_cost")
    return Price(float(p_in), float(p_out), float(cached) if cached else float(p_in), "litellm")


class TokenCounter:
    """Counts tokens of texts and chat messages with litellm's tokenizer for each model, cached by paragraph.

    Thread-safe; one instance serves a whole estimate or run.
    """

    def __init__(self) -> None:
        self._llm = litellm()
        self._cache: dict[tuple[str, str], int] = {}
        self._tokenizers: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _tokenizer(self, model: str) -> Any:
        tok = self._tokenizers.get(model)
        if tok is None:
            tok = self._tokenizers[model] = self._llm.utils.select_tokenizer(model=model.removeprefix("simulated/"))
        return tok

    def _count_piece(self, model: str, piece: str) -> int:
        key = (model, piece)
        n = self._cache.get(key)
        if n is None:
            n = self._llm.token_counter(model=model, custom_tokenizer=self._tokenizer(model), text=piece)
            with self._lock:
                self._cache[key] = n
        return n

    def text(self, model: str, text: str) -> int:
        """Tokens of `text` for `model` (the sum of its paragraphs' counts)."""
        if not text:
            return 0
        return sum(self._count_piece(model, p) for p in _PARAGRAPH.findall(text) if p)

    def messages(self, model: str, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of a chat request: every message's content plus the per-message overhead."""
        total = REPLY_PRIMING
        for m in messages:
            content = m.get("content")
            if isinstance(content, list):  # content blocks (cache_control): their texts
                content = "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
            total += MESSAGE_OVERHEAD + self.text(model, str(content or ""))
        return total
