"""Provides what a cut-off reply is: the stop reasons providers give for a text ended at `max_tokens`.

litellm maps most providers' reasons to OpenAI's "length", but not every path does: an
OpenAI-compatible server's own word passes through unchanged, and stored calls keep what the
provider said. So every spelling seen in the wild counts: OpenAI, vLLM and llama.cpp "length",
Anthropic and Bedrock "max_tokens", Gemini "MAX_TOKENS", the Responses API "max_output_tokens",
Cohere "MAX_TOKENS", vLLM's "model_length" (the context was full), and "max_tokens_reached".
"""

from __future__ import annotations

CUT_OFF_REASONS = frozenset({"length", "max_tokens", "max_output_tokens", "model_length", "max_tokens_reached"})
"""Stop reasons (lower case) that mean the reply was cut off before its end."""

CUT_OFF_SQL = "(" + ", ".join(f"'{r}'" for r in sorted(CUT_OFF_REASONS)) + ")"
"""The reasons as an SQL list, to compare with `lower(finish_reason)`."""

CUT_OFF_NOTE = (
    "Note from the study, not from either option: {which} was cut off at the length limit (max_tokens) before its end; "
    "judge it as the incomplete deliverable it is."
)
"""What judges are told after the two options when an option was cut off (on_truncated = judge_marked)."""


def is_cut_off(finish_reason: str | None) -> bool:
    """Whether a provider's stop reason says the reply was cut off at its token limit."""
    return finish_reason is not None and finish_reason.strip().lower() in CUT_OFF_REASONS


def raised_max_tokens(max_tokens: int, cap: int) -> int | None:
    """The max_tokens of a re-ask after a cut-off reply: doubled, at most `cap`; None when it cannot grow."""
    raised = min(cap, 2 * max_tokens)
    return raised if raised > max_tokens else None


def cut_off_note(option_1: bool, option_2: bool) -> str | None:
    """The note judges read about cut-off options, or None when neither was cut off."""
    if option_1 and option_2:
        which = "each of the deliverables in <option_1> and <option_2>"
    elif option_1 or option_2:
        which = "the deliverable in <option_1>" if option_1 else "the deliverable in <option_2>"
    else:
        return None
    return CUT_OFF_NOTE.format(which=which)
