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
- `active`: comparisons drawn one at a time, without replacement, each with a known
  probability stored with its place: higher where the LLM panel's verdicts leave the expert's
  verdict least predictable (the panel splits, flips between orders, calls ties), with a
  uniform floor, steered towards pairs of candidates whose rank-sets still overlap
  (`overlap_steering`, `active_weights`; docs/statistics.md, "Active allocation";
  `stats/active.py` estimates from such draws). Without any expert verdict yet it is uniform.

A share of every batch can be `swapped repeats`: a comparison the expert already has (judged
ones first) comes back later in the queue with the options swapped, for test-retest
reliability. It is stored as presentation 1 of that (comparison, expert).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from centaur_tui.domain.blinding import presented_flip
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import ExpertSpec

STRATEGIES = ("stratified", "overlap", "disagreement", "uniform-random", "active")
RANDOM_STRATEGY = "uniform-random"
"""The strategy whose draws are a uniformly random subset (prediction-powered rankings need one)."""
ACTIVE_STRATEGY = "active"
"""The strategy whose draws have known, unequal probabilities (stored with each place)."""
ACTIVE_FLOOR = 0.15
"""Share of the pool's draw weight spread uniformly: every comparison keeps a chance of at least this share."""
ACTIVE_BIN_EDGES = (0.2, 0.4, 0.6, 0.8)
"""Bins of the panel's uncertainty in which the residual model averages the expert verdicts so far."""
ACTIVE_PRIOR = 3.0
"""Pseudo-verdicts of squared residual 0.25 (the largest a verdict can have) per bin: no data, uniform."""
ACTIVE_OVERLAP_Z = 3.5
"""Scale of the overlap score exp(-z^2 / (2 Z^2)) of two candidates z standard errors apart (about the
critical value of 8 candidates' simultaneous rank-sets): pairs that overlap weigh about 1, separated ones 0."""
ACTIVE_STEER = 0.5
"""Exponent of the overlap steering (0: none; 0.5: the variance-minimising square root)."""


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
    probability: float | None = None
    """Active draws: the probability this draw picked this comparison, given the draws before it."""


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


def eligible_count(pool: Sequence[PoolComparison], expert: ExpertSpec, existing: Sequence[ExistingAssignment]) -> int:
    """Comparisons of the pool the expert may judge, did not write, and does not hold (held: in `existing`)."""
    held = {a.comparison_id for a in existing if a.expert == expert.id}
    return sum(may_judge(expert, c.task) and c.id not in held and expert.id not in c.authors for c in pool)


def panel_points(c: PoolComparison) -> float | None:
    """The LLM panel's points for candidate_a on a comparison (a win 1, a tie 0.5); None without a verdict."""
    known = [w for w in c.llm_winners if w in (c.candidate_a, c.candidate_b, "tie")]
    if not known:
        return None
    return sum(1.0 if w == c.candidate_a else 0.5 if w == "tie" else 0.0 for w in known) / len(known)


def uncertainty(points: float | None) -> float | None:
    """1 - |2 Yhat - 1|: 0 when the panel is unanimous, 1 when it splits evenly; None without a verdict."""
    return None if points is None else 1.0 - abs(2.0 * points - 1.0)


def _bin(s: float) -> int:
    return sum(s >= e for e in ACTIVE_BIN_EDGES)


def residual_model(pool: Sequence[PoolComparison], verdicts: Mapping[str, Sequence[str]]) -> tuple[float, ...]:
    """Mean squared residual (expert points - panel points)^2 per uncertainty bin, from the expert verdicts so far.

    Args:
        pool: Comparisons with their LLM verdicts.
        verdicts: Expert winners (candidate names or 'tie') per comparison id, any expert.

    Each bin is shrunk towards 0.25 by `ACTIVE_PRIOR` pseudo-verdicts: with no verdicts the
    model is flat and the design uniform. Only LLM and expert verdicts already stored enter,
    so every draw's probability is fixed before the draw.
    """
    sums = [ACTIVE_PRIOR * 0.25] * (len(ACTIVE_BIN_EDGES) + 1)
    counts = [ACTIVE_PRIOR] * (len(ACTIVE_BIN_EDGES) + 1)
    for c in pool:
        yhat = panel_points(c)
        given = [w for w in verdicts.get(c.id, ()) if w in (c.candidate_a, c.candidate_b, "tie")]
        if yhat is None or not given:
            continue
        j = _bin(1.0 - abs(2.0 * yhat - 1.0))
        for w in given:
            y = 1.0 if w == c.candidate_a else 0.5 if w == "tie" else 0.0
            sums[j] += (y - yhat) ** 2
            counts[j] += 1
    return tuple(t / n for t, n in zip(sums, counts, strict=True))


def overlap_steering(
    pool: Sequence[PoolComparison], verdicts: Mapping[str, Sequence[str]], steer: float = ACTIVE_STEER
) -> dict[str, float]:
    """How much each comparison bears on the pairs of candidates whose rank-sets still overlap (id -> factor).

    Per mode, candidate m's expert win probability is estimated from what is stored before the
    draw: theta_m = the mean of the panel's points for m over its comparisons + the sum of the
    expert residuals (expert - panel points) on them / (verdicts + `ACTIVE_PRIOR`), with variance
    (sum of squared residuals + `ACTIVE_PRIOR` x 0.25) / (verdicts + `ACTIVE_PRIOR`)^2. Two
    candidates z = |theta_a - theta_b| / sqrt(var_a + var_b) apart overlap by
    c = exp(-z^2 / (2 `ACTIVE_OVERLAP_Z`^2)). A comparison of a and b enters theta_a - theta_b
    twice and theta_a - theta_c, theta_b - theta_c once, so its factor is
    (4 c_ab + sum over the other candidates of c_ac + c_bc) ^ `steer`. No expert verdict: every
    candidate overlaps every other one alike (the factors differ only by how many candidates a
    mode has).
    """
    if steer < 0.0:
        raise AssignmentError(f"overlap steering must be at least 0, got {steer}")
    by_mode: dict[str, list[PoolComparison]] = {}
    for c in pool:
        by_mode.setdefault(c.mode, []).append(c)
    out: dict[str, float] = {}
    for comps in by_mode.values():
        base: dict[str, list[float]] = {}
        res: dict[str, list[float]] = {}
        for c in comps:
            yhat = panel_points(c)
            yh = 0.5 if yhat is None else yhat
            base.setdefault(c.candidate_a, []).append(yh)
            base.setdefault(c.candidate_b, []).append(1.0 - yh)
            for w in verdicts.get(c.id, ()):
                if w not in (c.candidate_a, c.candidate_b, "tie"):
                    continue
                r = (1.0 if w == c.candidate_a else 0.5 if w == "tie" else 0.0) - yh
                res.setdefault(c.candidate_a, []).append(r)
                res.setdefault(c.candidate_b, []).append(-r)
        theta, var = {}, {}
        for m, pts in base.items():
            rs = res.get(m, [])
            theta[m] = sum(pts) / len(pts) + sum(rs) / (len(rs) + ACTIVE_PRIOR)
            var[m] = (sum(r * r for r in rs) + ACTIVE_PRIOR * 0.25) / (len(rs) + ACTIVE_PRIOR) ** 2
        names = sorted(theta)
        over = {
            (i, j): math.exp(-0.5 * ((theta[i] - theta[j]) ** 2 / (var[i] + var[j])) / ACTIVE_OVERLAP_Z**2)
            for i in names
            for j in names
            if i != j
        }
        row = {i: sum(over[i, j] for j in names if j != i) for i in names}
        for c in comps:
            ab = over.get((c.candidate_a, c.candidate_b), 0.0)
            total = 2.0 * ab + row.get(c.candidate_a, 0.0) + row.get(c.candidate_b, 0.0)
            out[c.id] = max(total, 1e-12) ** steer
    return out


def active_weights(
    pool: Sequence[PoolComparison],
    model: Sequence[float] | None = None,
    floor: float = ACTIVE_FLOOR,
    steering: Mapping[str, float] | None = None,
) -> list[float]:
    """Draw weight of every comparison: gamma + sqrt(model[bin of its uncertainty]) x its steering factor.

    `steering` (`overlap_steering`; None or a missing id: 1) raises comparisons whose candidates'
    rank-sets overlap. gamma = floor / (1 - floor) x the pool's mean of the steered square
    roots, so a share `floor` of the weight is uniform; a comparison without any LLM verdict
    gets the mean square root (uncertainty unknown: the weight of an average comparison). No
    model: every weight 1 (uniform).

    Raises:
        AssignmentError: a floor outside (0, 1] or a model of the wrong length or sign.
    """
    if not 0.0 < floor <= 1.0:
        raise AssignmentError(f"active floor must be in (0, 1], got {floor}")
    if model is None or floor >= 1.0:
        return [1.0] * len(pool)
    if len(model) != len(ACTIVE_BIN_EDGES) + 1 or any(not v > 0.0 for v in model):
        raise AssignmentError(f"residual model needs {len(ACTIVE_BIN_EDGES) + 1} positive values, got {model!r}")
    sds: list[float | None] = []
    for c in pool:
        s = uncertainty(panel_points(c))
        sds.append(None if s is None else model[_bin(s)] ** 0.5)
    known = [v for v in sds if v is not None]
    mean = sum(known) / len(known) if known else 1.0
    steer = [1.0 if steering is None else float(steering.get(c.id, 1.0)) for c in pool]
    if any(not (g > 0.0 and math.isfinite(g)) for g in steer):
        raise AssignmentError("every overlap steering factor must be positive and finite")
    varying = [(mean if v is None else v) * g for v, g in zip(sds, steer, strict=True)]
    gamma = floor / (1.0 - floor) * (sum(varying) / len(varying) if varying else 1.0)
    return [gamma + v for v in varying]


def active_draws(
    pool: Sequence[PoolComparison], weights: Sequence[float], n: int, rng: random.Random
) -> list[tuple[PoolComparison, float]]:
    """Up to n comparisons drawn one at a time without replacement, each with its probability given the earlier draws.

    Raises:
        AssignmentError: a weight that is not positive (a comparison with no chance cannot be weighted).
    """
    if len(weights) != len(pool):
        raise AssignmentError("one draw weight per comparison is needed")
    if any(not w > 0.0 for w in weights):
        raise AssignmentError("every comparison needs a positive draw weight (zero probability cannot be weighted)")
    left = sorted(zip(pool, weights, strict=True), key=lambda cw: cw[0].id)
    drawn: list[tuple[PoolComparison, float]] = []
    while left and len(drawn) < n:
        total = sum(w for _, w in left)
        point = rng.random() * total
        pick = len(left) - 1
        for i, (_, w) in enumerate(left):
            point -= w
            if point < 0.0:
                pick = i
                break
        c, w = left.pop(pick)
        drawn.append((c, w / total))
    return drawn


def plan_assignments(
    pool: Sequence[PoolComparison],
    expert: ExpertSpec,
    existing: Sequence[ExistingAssignment],
    n: int,
    strategy: str,
    seed: int,
    overlap: int = 2,
    repeat_share: float = 0.0,
    verdicts: Mapping[str, Sequence[str]] | None = None,
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
        verdicts: For `active`: the expert verdicts stored so far (winners per comparison id),
            which fit the residual model; None or empty: uniform draws.

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
    if strategy == ACTIVE_STRATEGY and repeat_share > 0.0:
        raise AssignmentError(
            "--strategy active takes no swapped repeats (--repeat-share): each active place is one draw whose "
            "probability the estimate weights by; assign repeats in a separate batch with another strategy"
        )

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

    if strategy == ACTIVE_STRATEGY:
        model = residual_model(pool, verdicts) if verdicts else None
        rng_active = random.Random(int(digest("active", seed, expert.id, len(mine))[:12], 16))
        steering = overlap_steering(pool, verdicts) if verdicts else None
        drawn = active_draws(eligible, active_weights(eligible, model, steering=steering), n, rng_active)
        return [
            PlannedAssignment(c.id, 0, presented_flip(seed, expert.id, c.id), strategy, probability=p) for c, p in drawn
        ]

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
