"""Provides what the agreement matrix compares: one label per judge, comparison and dimension, and disagreements.

Pure functions (no I/O), shared by the statistics (stats/agreement_matrix.py) and the drill-down
(services/audit.py), so a cell's count of disagreements and the comparisons listed under it
come from the same labels. A judge's label on a comparison comes from its latest valid
judgment there, presented order 1 when it judged both orders. For the winner the label is
"a" (candidate_a won), "b" or "tie"; for a rubric dimension it is which candidate that judge
scored higher on it ("a", "b", or "tie" for equal scores), when it scored both.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

WINNER = "winner"
"""The dimension name of the overall verdict in the matrix."""


@dataclass(frozen=True)
class ScoredVerdict:
    """One valid judgment as the matrix reads it: who, where, which order, the winner and the rubric scores."""

    judgment_id: int
    comparison_id: str
    judge: str
    judge_kind: str
    presentation: int
    revision: int
    candidate_a: str
    candidate_b: str
    winner: str
    scores: tuple[tuple[str, str, int], ...]
    """(candidate, dimension, score)."""


@dataclass(frozen=True)
class Label:
    """One judge's label on one comparison for one dimension (or the winner)."""

    comparison_id: str
    judge: str
    judge_kind: str
    dimension: str
    value: str
    judgment_id: int


def _side(winner: str, v: ScoredVerdict) -> str:
    return "a" if winner == v.candidate_a else "b" if winner == v.candidate_b else "tie"


def labels(verdicts: Iterable[ScoredVerdict]) -> list[Label]:
    """Every label: one per (judge, comparison) for the winner and each dimension both candidates were scored on."""
    chosen: dict[tuple[str, str], ScoredVerdict] = {}
    for v in verdicts:
        key = (v.comparison_id, v.judge)
        held = chosen.get(key)
        if held is None or (v.presentation, -v.revision) < (held.presentation, -held.revision):
            chosen[key] = v
    out: list[Label] = []
    for (cid, judge), v in sorted(chosen.items()):
        out.append(Label(cid, judge, v.judge_kind, WINNER, _side(v.winner, v), v.judgment_id))
        by = {(c, d): s for c, d, s in v.scores}
        for d in sorted({d for _, d, _ in v.scores}):
            a, b = by.get((v.candidate_a, d)), by.get((v.candidate_b, d))
            if a is not None and b is not None:
                out.append(Label(cid, judge, v.judge_kind, d, "a" if a > b else "b" if b > a else "tie", v.judgment_id))
    return out


def disagreements(found: Iterable[Label], judge_a: str, judge_b: str, dimension: str) -> list[tuple[Label, Label]]:
    """The comparisons two judges both labelled on a dimension and labelled differently, in comparison-id order."""
    mine: dict[str, Label] = {}
    theirs: dict[str, Label] = {}
    for x in found:
        if x.dimension != dimension:
            continue
        if x.judge == judge_a:
            mine[x.comparison_id] = x
        elif x.judge == judge_b:
            theirs[x.comparison_id] = x
    return [(mine[c], theirs[c]) for c in sorted(set(mine) & set(theirs)) if mine[c].value != theirs[c].value]
