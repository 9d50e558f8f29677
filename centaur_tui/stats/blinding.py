"""Provides blinding measured (issue 26): how identifiable each candidate's writing is, and Bang's blinding index.

Identifiability. Names are masked, yet a deliverable's style can name its author. Per task and
mode, a linear classifier (scikit-learn: character 2-3-gram TF-IDF, newlines and marks included,
plus standardised layout counts; a linear support vector machine, one against the rest) is trained to name the candidate
behind a deliverable; stratified k-fold cross-validation (k = min(5, fewest deliverables of a
candidate), shuffled with the report's seed) gives every deliverable one held-out prediction.
Top-1 accuracy is the share of held-out predictions that name the right candidate, with a Wilson
interval over those n predictions, against chance 1/K. A threat to blindness when the interval's
lower bound exceeds chance by a margin the session sets. A task and mode where some candidate
has fewer than `min_per_candidate` deliverables is reported "too few", with its counts.

Guessing. After some judgments an expert may type who they think wrote option 1 (a model or a
company, in their own words; empty: don't know). domain.guessing matches the text against the
comparison's candidates with the masking's matcher and scores it at two levels: the candidate
(K candidates of the task and mode) and its family (F families). Bang et al. (2004) define, per
arm, BI = (2 c/(c + i) - 1) (c + i)/n = (c - i)/n for two arms (c correct, i incorrect, n guesses
with don't-know answers): 0 under random guessing, 1 when everyone is unblinded, -1 when every
guess is the opposite. With K candidates a random guess is right with probability 1/K; the
chance-corrected generalisation used here scores a guess 1 if right, -1/(K - 1) if wrong (a text
naming something else is wrong), 0 for don't know (and, at the candidate level, for a guess naming
only the right family), and BI is their mean: BI = (c - i/(K-1))/n, which is Bang's for K = 2 and
0 in expectation for random guessing. Its variance is the multinomial one, Var(s)/n (for K = 2
Bang's [p1(1-p1) + p2(1-p2) + 2 p1 p2]/n); the interval is BI ± z SE. A group is flagged when |BI|
exceeds the session's threshold. At the family level a guess about a comparison whose candidates
share one family is not scored (counted as such).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from centaur_tui.report.document import GuessRow, IdentifiabilityRow
from centaur_tui.stats.proportions import wilson_interval

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s", re.M)
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$", re.M)
_BULLET = re.compile(r"^\s*[-*+\u2022]\s", re.M)
_ORDERED = re.compile(r"^\s*\d+[.)]\s", re.M)
_BOLD = re.compile(r"\*\*|__")
_ITALIC = re.compile(r"(?<![*\w])[*_](?=\w)")


@dataclass(frozen=True)
class Deliverable:
    """One output's text with what the classifier must name: its candidate, in its task and mode."""

    task: str
    mode: str
    candidate: str
    text: str


@dataclass(frozen=True)
class Guess:
    """One expert's guess of who wrote option 1, scored at the candidate and family levels (domain.guessing)."""

    expert: str
    truth: str
    """The candidate that wrote option 1 (the arm)."""
    outcome: str
    """correct, incorrect, unmatched (named something else), family_only or dont_know."""
    candidates: int
    family_outcome: str = "one_family"
    """correct, incorrect, unmatched, dont_know or one_family (not scored)."""
    families: int = 1


def wilson(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion correct/n (n > 0) at a two-sided `confidence`."""
    return wilson_interval(correct / n, n, _z(confidence))


def _z(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def layout_features(text: str) -> list[float]:
    """Layout counts of a text: headings, bullets, numbered items, bold and italic marks, line lengths, blank lines."""
    lines = text.split("\n")
    lengths = [len(line) for line in lines if line.strip()] or [0]
    mean = sum(lengths) / len(lengths)
    sd = math.sqrt(sum((x - mean) ** 2 for x in lengths) / len(lengths))
    return [
        float(len(_HEADING.findall(text)) + len(_SETEXT.findall(text))),
        float(len(_BULLET.findall(text))),
        float(len(_ORDERED.findall(text))),
        float(len(_BOLD.findall(text))),
        float(len(_ITALIC.findall(text))),
        mean,
        sd,
        float(max(lengths)),
        float(sum(1 for line in lines if not line.strip())) / max(1, len(lines)),
        float(len(lines)),
    ]


def _classifier(seed: int) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline, make_union
    from sklearn.preprocessing import FunctionTransformer, StandardScaler
    from sklearn.svm import LinearSVC

    layout = make_pipeline(FunctionTransformer(_layout_matrix), StandardScaler())
    # analyzer="char" (not char_wb): newlines, marks and spacing are the layout signal. 2-3-grams,
    # 3,000 at most: on the demo's 30-deliverable cells 0.13 s of CPU per cell against 0.45 s for
    # 2-4-grams uncapped, and the same held-out accuracy (17/30 and 21/30 on two cells); a
    # multinomial logistic regression took 15 s per cell for 19/30.
    chars = TfidfVectorizer(analyzer="char", ngram_range=(2, 3), sublinear_tf=True, max_features=3000)
    return make_pipeline(make_union(chars, layout), LinearSVC(C=1.0, random_state=seed))


def _layout_matrix(texts: Sequence[str]) -> list[list[float]]:
    return [layout_features(t) for t in texts]


def held_out_predictions(texts: Sequence[str], labels: Sequence[str], folds: int, seed: int) -> list[str]:
    """One held-out prediction per text: stratified `folds`-fold cross-validation, shuffled with `seed`."""
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    return [str(p) for p in cross_val_predict(_classifier(seed), list(texts), list(labels), cv=splitter)]


def identifiability(
    deliverables: Sequence[Deliverable],
    presentation: str = "as written",
    *,
    min_per_candidate: int = 3,
    margin: float = 0.1,
    confidence: float = 0.95,
    seed: int = 0,
) -> list[IdentifiabilityRow]:
    """Per task and mode, the held-out top-1 accuracy of naming a deliverable's candidate (see the module docstring).

    Args:
        deliverables: Every output's text (all of them: a cell with too few is reported, not dropped).
        presentation: What the texts are ("as written" or "normalised"), copied to each row.
        min_per_candidate: Fewest deliverables of every candidate for a cell to be classified (>= 2).
        margin: A threat when the interval's lower bound exceeds chance 1/K by more than this.
        confidence: Of the Wilson interval.
        seed: Of the folds and the classifier.
    """
    cells: dict[tuple[str, str], list[Deliverable]] = {}
    for d in deliverables:
        cells.setdefault((d.task, d.mode), []).append(d)
    out = []
    for (task, mode), items in sorted(cells.items()):
        counts: dict[str, int] = {}
        for d in items:
            counts[d.candidate] = counts.get(d.candidate, 0) + 1
        k, n, fewest = len(counts), len(items), min(counts.values())
        base: dict[str, Any] = {
            "task": task,
            "mode": mode,
            "presentation": presentation,
            "candidates": k,
            "deliverables": n,
        }
        if k < 2:
            out.append(_empty(base, "one candidate", "a single candidate: nothing to tell apart"))
            continue
        if fewest < max(2, min_per_candidate):
            who = min(counts, key=lambda c: (counts[c], c))
            out.append(_empty(base, "too few", f"{who} has {fewest} deliverable(s), fewer than {min_per_candidate}"))
            continue
        folds = min(5, fewest)
        predicted = held_out_predictions([d.text for d in items], [d.candidate for d in items], folds, seed)
        correct = sum(p == d.candidate for p, d in zip(predicted, items, strict=True))
        low, high = wilson(correct, n, confidence)
        chance = 1 / k
        found = {"status": "ok", "folds": folds, "correct": correct, "accuracy": correct / n, "low": low, "high": high}
        found |= {"chance": chance, "threat": low > chance + margin, "reason": None}
        out.append(IdentifiabilityRow.model_validate(base | found))
    return out


def _empty(base: dict[str, Any], status: str, reason: str) -> IdentifiabilityRow:
    return IdentifiabilityRow.model_validate(
        {
            **base,
            "status": status,
            "folds": None,
            "correct": None,
            "accuracy": None,
            "low": None,
            "high": None,
            "chance": None,
            "threat": False,
            "reason": reason,
        }
    )


_RIGHT = "correct"
_WRONG = frozenset({"incorrect", "unmatched"})
_NEUTRAL = frozenset({"dont_know", "family_only"})


def _score(outcome: str, k: int) -> float:
    if outcome == _RIGHT:
        return 1.0
    if outcome in _WRONG:
        return -1.0 / (k - 1)
    if outcome in _NEUTRAL:
        return 0.0
    raise ValueError(f"unknown guess outcome {outcome!r}")


def blinding_index(scored: Sequence[tuple[str, int]], confidence: float = 0.95) -> tuple[float, float, float] | None:
    """Bang's blinding index of some (outcome, K) guesses, generalised to K choices, with its Wald interval.

    Returns:
        (BI, low, high), the interval clipped to BI's range [-1/(K-1), 1] (K: the fewest); None: no guess.
    """
    if not scored:
        return None
    scores = [_score(outcome, k) for outcome, k in scored]
    n = len(scores)
    bi = sum(scores) / n
    var = sum((s - bi) ** 2 for s in scores) / n / n
    half = _z(confidence) * math.sqrt(var)
    floor = -1.0 / (min(k for _, k in scored) - 1)
    return bi, max(floor, bi - half), min(1.0, bi + half)


def guess_rows(guesses: Sequence[Guess], threshold: float = 0.2, confidence: float = 0.95) -> list[GuessRow]:
    """Bang's blinding index per expert, then per arm, at the candidate then the family level; flagged beyond threshold.

    Raises:
        ValueError: a guess among fewer than two candidates, or an unknown outcome.
    """
    bad = [g for g in guesses if g.candidates < 2]
    if bad:
        raise ValueError(f"a guess among {bad[0].candidates} candidate(s): a blinding index needs at least two")
    out = []
    for level in ("candidate", "family"):
        for group, key in (("expert", lambda g: g.expert), ("candidate", lambda g: g.truth)):
            split: dict[str, list[Guess]] = {}
            for g in guesses:
                split.setdefault(key(g), []).append(g)
            for name, mine in sorted(split.items()):
                outcomes = (
                    [(g.outcome, g.candidates) for g in mine]
                    if level == "candidate"
                    else [(g.family_outcome, g.families) for g in mine if g.family_outcome != "one_family"]
                )
                found = blinding_index(outcomes, confidence)
                bi, low, high = found if found is not None else (None, None, None)
                told = [o for o, _ in outcomes]
                out.append(
                    GuessRow(
                        level=level,
                        group=group,
                        name=name,
                        guesses=len(mine),
                        scored=len(outcomes),
                        correct=told.count("correct"),
                        incorrect=sum(o in _WRONG for o in told),
                        unmatched=told.count("unmatched"),
                        family_only=told.count("family_only"),
                        dont_know=told.count("dont_know"),
                        index=bi,
                        low=low,
                        high=high,
                        flagged=bi is not None and abs(bi) > threshold,
                    )
                )
    return out
