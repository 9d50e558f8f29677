"""Provides the rule of adjudication: which comparisons the judges disagreed on, and a panel's verdict.

Pure functions of verdicts (no I/O). A verdict is a winning candidate's name or "tie"; an
invalid judgment has none and never takes part. Experts disagree on a comparison when two of
them gave different verdicts. With `experts_and_panel`, a comparison is also queued when an
expert's verdict differs from the LLM panel's (the verdict most of the panel's valid judgments
gave; a panel split evenly between its top verdicts has none, so it raises no disagreement).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

AdjudicateWhen = Literal["experts", "experts_and_panel"]
"""`judging.adjudicate`: who must disagree for a comparison to be adjudicated."""

TIE = "tie"


@dataclass(frozen=True)
class Verdict:
    """One judge's latest valid verdict on a comparison (a judge may hold two, one per presented order)."""

    comparison_id: str
    judgment_id: int
    judge: str
    judge_kind: Literal["llm", "expert"]
    winner: str


def panel_verdict(winners: Iterable[str]) -> str | None:
    """The verdict most of the LLM panel gave; None when the panel gave none or its top verdicts tie."""
    counts = Counter(winners).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def disagreement(verdicts: Sequence[Verdict], when: AdjudicateWhen) -> str | None:
    """Why a comparison goes to adjudication ("experts disagree", "an expert and the panel disagree"), or None."""
    expert = {v.winner for v in verdicts if v.judge_kind == "expert"}
    if len(expert) > 1:
        return "experts disagree"
    if when == "experts_and_panel" and expert:
        panel = panel_verdict(v.winner for v in verdicts if v.judge_kind == "llm")
        if panel is not None and panel not in expert:
            return "an expert and the panel disagree"
    return None


def disagreements(verdicts: Iterable[Verdict], when: AdjudicateWhen) -> dict[str, str]:
    """Every comparison that goes to adjudication, with its reason, in comparison-id order."""
    by: dict[str, list[Verdict]] = {}
    for v in verdicts:
        by.setdefault(v.comparison_id, []).append(v)
    out: dict[str, str] = {}
    for cid in sorted(by):
        reason = disagreement(by[cid], when)
        if reason is not None:
            out[cid] = reason
    return out
