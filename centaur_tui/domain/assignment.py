"""Provides the assignment of comparisons to experts: stratified, overlap, disagreement-first, swapped repeats.

Strategies (all seeded, all limited to the tasks the expert may judge, none gives an expert a
comparison twice except as a swapped repeat):

- `stratified`: spread over tasks and modes first, then over candidate pairs; comparisons no
  other expert holds come first, so several experts together cover more of the session.
- `overlap`: each comparison to K experts, for expert-expert agreement: comparisons other
  experts already hold (fewer than K of them) come first, then new ones, stratified.
- `disagreement`: comparisons where the LLM judges split come first (largest minority share
  first), then the rest, stratified.
- `uniform-random`: a simple random sample (seeded, without replacement) of the comparisons
  the expert may judge and does not hold yet: every such comparison is equally likely,
  whatever the LLM judges said about it. The subset prediction-powered rankings need
  (`stats/ppr.py`); the report uses only expert judgments drawn this way for them.

A share of every batch can be `swapped repeats`: a comparison the expert already has (judged
ones first) comes back later in the queue with the options swapped, for test-retest
reliability. It is stored as presentation 1 of that (comparison, expert).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from centaur_tui.domain.blinding import presented_flip
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import ExpertSpec

STRATEGIES = ("stratified", "overlap", "disagreement", "uniform-random")
RANDOM_STRATEGY = "uniform-random"
"""The strategy whose draws are a uniformly random subset (prediction-powered rankings need one)."""


class AssignmentError(CentaurError):
    """An assignment request that cannot be met as asked."""

    title = "Cannot assign"


@dataclass(frozen=True)
class PoolComparison:
    """A stored comparison that can be assigned, with the valid LLM verdicts on it."""

    id: str
    run: int
    task: str
    mode: str
    candidate_a: str
    candidate_b: str
    llm_winners: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    """Experts who wrote either output (human-worker arm): they never judge this comparison."""

    @property
    def split(self) -> float:
        """Share of LLM verdicts that differ from the most common one (0 = unanimous or < 2 verdicts)."""
        if len(self.llm_winners) < 2:
            return 0.0
        top = Counter(self.llm_winners).most_common(1)[0][1]
        return 1.0 - top / len(self.llm_winners)


@dataclass(frozen=True)
class ExistingAssignment:
    """An assignment already stored (for any expert)."""

    expert: str
    comparison_id: str
    presentation: int
    flipped: bool
    judged: bool
    position: int


@dataclass(frozen=True)
class PlannedAssignment:
    """One new place in an expert's queue, in queue order."""

    comparison_id: str
    presentation: int
    flipped: bool
    strategy: str
    repeat: bool = False


def may_judge(expert: ExpertSpec, task: str) -> bool:
    return not expert.tasks or task in expert.tasks


def _greedy(
    items: list[PoolComparison], n: int, lead: Callable[[PoolComparison], tuple[float, ...]], tiebreak: dict[str, str]
) -> list[PoolComparison]:
    """Pick n items one by one, each time the one whose strata are least represented so far."""
    by_task_mode: Counter[tuple[str, str]] = Counter()
    by_pair: Counter[tuple[str, str, str]] = Counter()
    by_task: Counter[str] = Counter()
    remaining = {c.id: c for c in items}
    leads = {c.id: lead(c) for c in items}
    picked: list[PoolComparison] = []
    while remaining and len(picked) < n:
        best = min(
            remaining.values(),
            key=lambda c: (
                leads[c.id],
                by_task_mode[(c.task, c.mode)],
                by_pair[(c.mode, c.candidate_a, c.candidate_b)],
                by_task[c.task],
                tiebreak[c.id],
            ),
        )
        del remaining[best.id]
        picked.append(best)
        by_task_mode[(best.task, best.mode)] += 1
        by_pair[(best.mode, best.candidate_a, best.candidate_b)] += 1
        by_task[best.task] += 1
    return picked


def plan_assignments(
    pool: Sequence[PoolComparison],
    expert: ExpertSpec,
    existing: Sequence[ExistingAssignment],
    n: int,
    strategy: str,
    seed: int,
    overlap: int = 2,
    repeat_share: float = 0.0,
) -> list[PlannedAssignment]:
    """Choose up to n new queue places for an expert.

    Args:
        pool: Every stored comparison (only those of tasks the expert may judge are used).
        expert: Who gets the work.
        existing: Assignments already stored, for every expert.
        n: How many places to add; fewer are returned when the pool runs out.
        strategy: One of STRATEGIES.
        seed: The session seed; the same inputs always give the same plan.
        overlap: K for the `overlap` strategy: how many experts each comparison goes to.
        repeat_share: Share of the n places given to swapped repeats, in [0, 1).

    Raises:
        AssignmentError: an unknown strategy or an out-of-range parameter.
    """
    if strategy not in STRATEGIES:
        raise AssignmentError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if n < 1:
        raise AssignmentError(f"n must be at least 1, got {n}")
    if not 0.0 <= repeat_share < 1.0:
        raise AssignmentError(f"repeat share must be in [0, 1), got {repeat_share}")
    if strategy == "overlap" and overlap < 2:
        raise AssignmentError(f"overlap K must be at least 2 (K experts per comparison), got {overlap}")

    mine = [a for a in existing if a.expert == expert.id]
    held = {a.comparison_id for a in mine}
    others: Counter[str] = Counter(a.comparison_id for a in existing if a.expert != expert.id and a.presentation == 0)
    eligible = [c for c in pool if may_judge(expert, c.task) and c.id not in held and expert.id not in c.authors]
    if strategy == "overlap":
        eligible = [c for c in eligible if others[c.id] < overlap]
    tiebreak = {c.id: digest("assign", seed, expert.id, c.id) for c in pool}

    def lead(c: PoolComparison) -> tuple[float, ...]:
        if strategy == "overlap":
            return (0.0 if others[c.id] else 1.0, -float(others[c.id]))
        if strategy == "disagreement":
            return (-round(c.split, 6), float(others[c.id]))
        return (float(others[c.id]),)

    n_repeats = round(n * repeat_share)
    # Sorted by id first, so the draw depends on the seed and the pool, not on the pool's order.
    uniform = random.Random(int(digest("uniform", seed, expert.id, len(mine))[:12], 16))

    def pick(items: list[PoolComparison], count: int) -> list[PoolComparison]:
        if strategy == RANDOM_STRATEGY:
            items = sorted(items, key=lambda c: c.id)
            return uniform.sample(items, min(max(count, 0), len(items)))
        return _greedy(items, count, lead, tiebreak)

    fresh = pick(eligible, n - n_repeats)

    # Repeat candidates: this expert's earlier places (judged ones first), then this batch.
    repeated = {a.comparison_id for a in mine if a.presentation == 1}
    flips = {a.comparison_id: a.flipped for a in mine if a.presentation == 0}
    prior = sorted(
        (a for a in mine if a.presentation == 0 and a.comparison_id not in repeated),
        key=lambda a: (not a.judged, a.position),
    )
    rng = random.Random(int(digest("repeats", seed, expert.id, len(mine))[:12], 16))
    # A repeat comes back at least a quarter of the batch after its first showing, at a
    # seeded place, so the expert cannot tell repeats by where they sit; repeats of this
    # batch are therefore drawn from its early part.
    gap = max(2, (n - n_repeats) // 4)
    batch_ids = [c.id for c in fresh[: max(1, len(fresh) - gap)]] if fresh else []
    rng.shuffle(batch_ids)
    repeat_ids = [a.comparison_id for a in prior] + batch_ids
    repeat_ids = repeat_ids[:n_repeats]
    if len(repeat_ids) < n_repeats:
        # Not enough to repeat yet: fill the batch with new comparisons instead.
        more = pick([c for c in eligible if c not in fresh], n_repeats - len(repeat_ids))
        fresh.extend(more)

    queue = [PlannedAssignment(c.id, 0, presented_flip(seed, expert.id, c.id), strategy) for c in fresh]
    flips.update({q.comparison_id: q.flipped for q in queue})
    for cid in repeat_ids:
        ids = [q.comparison_id for q in queue]
        first = ids.index(cid) if cid in ids else -1
        low = min(first + gap + 1, len(queue)) if first >= 0 else min(gap, len(queue))
        queue.insert(rng.randint(low, len(queue)), PlannedAssignment(cid, 1, not flips[cid], strategy, repeat=True))
    return queue
