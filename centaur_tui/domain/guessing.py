"""Provides the blind guess an expert may give after a judgment: who is asked, and the labels offered.

Issue 26: on a share of comparisons (`[blinding] guess_share`) the seat asks, once the judgment is
stored, "which candidate do you think wrote option 1?". The answers are blind labels ("Candidate
A", "Candidate B", ...) in a mapping shuffled per expert, task and mode, never a model name or
family; "Don't know" is always offered. Both the draw and the mapping come from the session secret
(HMAC-SHA-256), so a reload asks the same question with the same labels, and nothing an expert
sees tells them who a label stands for.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Sequence
from dataclasses import dataclass

DONT_KNOW = "Don't know"
"""The answer that names nobody (counted in n, as neither right nor wrong)."""


@dataclass(frozen=True)
class GuessQuestion:
    """The question after a judgment: the blind labels offered (the last is `DONT_KNOW`) and any answer given."""

    option: int
    labels: tuple[str, ...]
    answered: str | None


def _unit(secret: str, message: str) -> float:
    digest = hmac.new(secret.encode(), message.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def asks_guess(secret: str, expert: str, assignment_id: int, share: float) -> bool:
    """Whether this place is one of the share of places followed by the guess (stable for a secret)."""
    return share > 0 and _unit(secret, f"guess|{expert}|{assignment_id}") < share


def label_name(index: int) -> str:
    """The blind label of the index-th candidate: Candidate A..Z, then Candidate A2..Z2, ..."""
    letter, round_ = chr(ord("A") + index % 26), index // 26
    return f"Candidate {letter}{round_ + 1 if round_ else ''}"


def blind_labels(secret: str, expert: str, task: str, mode: str, candidates: Sequence[str]) -> dict[str, str]:
    """{blind label: candidate} for the candidates of one task and mode, shuffled per expert (stable for a secret)."""
    order = sorted(set(candidates))
    seed = hmac.new(secret.encode(), f"labels|{expert}|{task}|{mode}".encode(), hashlib.sha256).hexdigest()
    random.Random(seed).shuffle(order)
    return {label_name(i): c for i, c in enumerate(order)}
