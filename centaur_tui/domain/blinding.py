"""Provides blind expert judging as pure functions: masking, cleaning, seeded order, drafts and what they lack.

An expert never sees a model name, family, candidate id, run number or comparison id. What
reaches the judging screen (or a judging packet) is a `JudgingItem`: the task, its rubric and
the two deliverables, cleaned of control characters and with identity-revealing phrases
masked, in an order drawn per (expert, comparison) from the session seed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Literal

from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import PLAIN, Session
from centaur_tui.domain.task import Rubric

MASK = "[masked]"
"""What a masked phrase becomes. Shown literally: model text is rendered with markup off."""

MIN_RATIONALE_CHARS = 20
"""Minimum rationale length for expert judgments, until the session file can set it."""

DEFAULT_PHRASES: tuple[str, ...] = (
    "as an AI language model",
    "as a large language model",
    "as a language model",
    "as an AI assistant",
    "as an AI model",
    "as an AI",
    "I am an AI",
    "I'm an AI",
    "I am a language model",
    "I'm a language model",
    "I am a large language model",
    "I'm a large language model",
    "large language model developed by",
    "language model trained by",
)
"""Self-references that reveal a machine author, whatever the model."""

DEFAULT_VENDOR_TERMS: tuple[str, ...] = (
    "OpenAI", "ChatGPT", "GPT", "Anthropic", "Claude", "Google DeepMind", "DeepMind", "Gemini", "Gemma",
    "Bard", "Meta AI", "Llama", "Mistral AI", "Mistral", "Mixtral", "DeepSeek", "Qwen", "Alibaba Cloud",
    "xAI", "Grok", "Cohere", "Copilot", "Perplexity",
)
"""Vendor and product names masked in every session (common words such as "Meta" or "Google"
are masked only when the session names them as a family)."""

_SEPARATORS = r"[\s\-_./]*"
_WORD_EDGE_BEFORE = r"(?<![A-Za-z0-9])"
_WORD_EDGE_AFTER = r"(?![A-Za-z0-9])"
_TOKEN = re.compile(r"[A-Za-z0-9'\u2019]+")

# C0 controls except tab and newline, DEL, C1 controls, and the bidirectional overrides that
# can make text display in an order other than the one stored.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str) -> str:
    """Make untrusted text safe to display: keep newlines and tabs, drop other control characters.

    Carriage returns become newlines (a bare CR would redraw the line over itself); escape
    sequences lose their ESC byte, so they show as inert text instead of reaching the terminal.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _CONTROL.sub("", text)


def _term_pattern(term: str) -> str | None:
    tokens = _TOKEN.findall(term)
    if not tokens:
        return None
    # A typographic apostrophe is as common as a straight one in model output.
    body = _SEPARATORS.join(re.escape(t).replace("'", "['\u2019]") for t in tokens)
    return _WORD_EDGE_BEFORE + body + _WORD_EDGE_AFTER


def session_terms(session: Session) -> list[str]:
    """Identity terms of a session: model, worker and judge names, families, model strings."""
    terms: set[str] = set()
    endpoints = [*session.models, session.worker, *session.judges]
    for e in endpoints:
        terms.add(e.name)
        terms.add(e.family)
        provider, _, model = e.model.partition("/")
        terms.add(model)
        if provider != "simulated":
            terms.add(provider)
    if session.judging.plain_family:
        terms.add(session.judging.plain_family)
    # `plain` names the unaided condition and is an everyday word; it reveals no model.
    terms.discard(PLAIN)
    return sorted(t for t in terms if t.strip())


def parse_term_list(text: str) -> tuple[list[str], list[str]]:
    """Parse a blinding file: one phrase per line, `# comments`, `!phrase` removes a default.

    Returns:
        (phrases to add, phrases to remove).
    """
    add: list[str] = []
    remove: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        (remove if line.startswith("!") else add).append(line.lstrip("!").strip())
    return add, remove


@dataclass(frozen=True)
class Masking:
    """One phrase masked in one text, with how often it occurred."""

    term: str
    occurrences: int


@dataclass(frozen=True)
class Blinding:
    """A compiled list of identity-revealing phrases; `mask()` replaces each with MASK.

    Matching ignores case and treats spaces, hyphens, dots, slashes and underscores as
    optional, so "GPT-5-Mini", "gpt 5 mini" and "GPT5Mini" are all masked.
    """

    terms: tuple[str, ...]
    _regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def build(cls, terms: list[str] | tuple[str, ...]) -> Blinding:
        first: dict[str, str] = {}
        for term in terms:
            if term.strip():
                first.setdefault(term.strip().lower(), term.strip())  # "Alpha" and "alpha" are one term
        # Longest first: "GPT-5-Mini" must win over "GPT" where both match.
        unique = sorted(first.values(), key=lambda t: (-len(t), t.lower()))
        parts = [(t, _term_pattern(t)) for t in unique]
        parts = [(t, p) for t, p in parts if p]
        regex = (
            re.compile("|".join(f"(?P<t{i}>{p})" for i, (_, p) in enumerate(parts)), re.IGNORECASE)
            if parts else None
        )
        return cls(tuple(t for t, _ in parts), regex)

    def mask(self, text: str) -> tuple[str, list[Masking]]:
        """Return the text with every listed phrase replaced, and what was masked."""
        if self._regex is None:
            return text, []
        counts: dict[str, int] = {}

        def replace(match: re.Match[str]) -> str:
            term = self.terms[int(match.lastgroup[1:])]  # type: ignore[index]
            counts[term] = counts.get(term, 0) + 1
            return MASK

        masked = self._regex.sub(replace, text)
        return masked, [Masking(t, n) for t, n in sorted(counts.items())]


def blinding_for(session: Session, extra: str = "") -> Blinding:
    """The session's blinding: defaults, the session's identity terms, then the blinding file's edits.

    Args:
        session: The session whose model, family and judge names are masked.
        extra: Text of the session's blinding file (see `parse_term_list`), if any.
    """
    add, remove = parse_term_list(extra)
    removed = {r.lower() for r in remove}
    terms = [*DEFAULT_PHRASES, *DEFAULT_VENDOR_TERMS, *session_terms(session), *add]
    return Blinding.build([t for t in terms if t.lower() not in removed])


def presented_flip(seed: int, expert: str, comparison_id: str) -> bool:
    """True when an expert sees candidate_b as option 1; seeded per (expert, comparison)."""
    return bool(int(digest("expert-order", seed, comparison_id, expert)[:8], 16) & 1)


# -- what the expert sees and enters ---------------------------------------------------------

Winner = Literal["option_1", "option_2", "tie"]
QueueState = Literal["pending", "skipped", "flagged", "done"]


@dataclass(frozen=True)
class QueueItem:
    """One place in an expert's queue. `key` is an opaque handle, never shown."""

    key: str
    position: int
    state: QueueState
    task_title: str


@dataclass(frozen=True)
class JudgingItem:
    """Everything the judging screen shows for one comparison, and nothing that identifies it."""

    key: str
    task_title: str
    task_prompt: str
    deliverable: str
    rubric: Rubric
    option_1: str
    option_2: str
    allow_ties: bool
    min_rationale: int = MIN_RATIONALE_CHARS


@dataclass
class Draft:
    """An expert's work on one comparison so far, in presented order; saved as it is entered."""

    scores: dict[str, list[int | None]] = field(default_factory=dict)
    winner: Winner | None = None
    rationale: str = ""
    seconds: float = 0.0

    def score(self, dimension: str, option: int) -> int | None:
        pair = self.scores.get(dimension)
        return pair[option - 1] if pair else None

    def set_score(self, dimension: str, option: int, value: int | None) -> None:
        if value is not None and not 1 <= value <= 10:
            raise ValueError(f"score {value} is outside 1-10")
        pair = self.scores.setdefault(dimension, [None, None])
        pair[option - 1] = value

    def to_json(self) -> str:
        return json.dumps(self.scores, sort_keys=True, separators=(",", ":"))

    @staticmethod
    def scores_from_json(text: str | None) -> dict[str, list[int | None]]:
        if not text:
            return {}
        data = json.loads(text)
        return {str(k): [v[0], v[1]] for k, v in data.items() if isinstance(v, list) and len(v) == 2}

    def is_empty(self) -> bool:
        return not any(v is not None for pair in self.scores.values() for v in pair) and not self.winner and not self.rationale


def missing(draft: Draft, rubric: Rubric, allow_ties: bool, min_rationale: int) -> list[str]:
    """What a draft still lacks before it can be submitted, in words for the footer; empty when complete."""
    lacks: list[str] = []
    unscored = sum(1 for d in rubric.all for o in (1, 2) if draft.score(d.id, o) is None)
    if unscored:
        lacks.append(f"{unscored} score{'s' if unscored != 1 else ''}")
    if draft.winner is None or (draft.winner == "tie" and not allow_ties):
        lacks.append("winner")
    length = len(draft.rationale.strip())
    if length < min_rationale:
        lacks.append(f"rationale ({length}/{min_rationale} characters)")
    return lacks


_STATE_RANK = {"pending": 0, "skipped": 1, "flagged": 2}


def next_open(queue: list[QueueItem], after: int | None = None) -> QueueItem | None:
    """The place to judge next: pending first, then skipped, then flagged; within each, the
    first one after position `after` (wrapping round), so skipping moves forward."""
    open_items = [q for q in queue if q.state != "done"]
    if not open_items:
        return None
    return min(
        open_items,
        key=lambda q: (_STATE_RANK[q.state], after is not None and q.position <= after, q.position),
    )
