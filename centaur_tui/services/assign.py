"""Provides the assignment use case: comparisons added to an expert's judging queue.

One function for `centaur assign` and the app's assign dialog (and a browser server): the
pool, the expert's task restrictions and the strategies are the store's and
`domain/assignment.py`'s; this is where they are put together.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.domain.assignment import ACTIVE_STRATEGY, PlannedAssignment, eligible_count, plan_assignments
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.store import Store


@dataclass(frozen=True)
class AssignResult:
    """What an assignment added, and the expert's queue afterwards."""

    expert: ExpertSpec
    strategy: str
    requested: int
    added: int
    planned: list[PlannedAssignment]
    tasks: Counter[str]
    """Places added per task."""
    modes: Counter[str]
    """Places added per mode."""
    assigned: int
    """Places in the expert's queue now."""
    judged: int
    """Of which judged."""
    set_aside: int = 0
    """Comparisons left out of the pool: masking their outputs replaced more than `max_masks` phrases."""
    max_masks: int | None = None
    """`[judging] expert_max_masks` (None: no limit, nothing set aside)."""
    pool_size: int = 0
    """Comparisons the expert could be given before this assignment (eligible and not held)."""

    @property
    def set_aside_note(self) -> str | None:
        """ "K comparisons set aside: identity masked more than N times", or None when none were."""
        if not self.set_aside:
            return None
        return f"{self.set_aside:,} comparison(s) set aside: identity masked more than {self.max_masks} time(s)"

    @property
    def repeats(self) -> int:
        """Swapped repeats among the places added (test-retest)."""
        return sum(p.repeat for p in self.planned)

    @property
    def waiting(self) -> int:
        return self.assigned - self.judged


def assign_comparisons(
    study: Study,
    store: Store,
    expert_id: str,
    n: int,
    strategy: str = "stratified",
    *,
    overlap: int = 2,
    repeat_share: float = 0.0,
) -> AssignResult:
    """Add up to `n` places to an expert's queue (only comparisons of tasks the expert may judge).

    Args:
        study: The session.
        store: Its database.
        expert_id: The expert (from the session file or added in the app).
        n: Places to add.
        strategy: One of `domain.assignment.STRATEGIES`; `active` stores each draw's probability
            and fits its residual model on the expert verdicts stored so far.
        overlap: K for the overlap strategy (experts per comparison).
        repeat_share: Share of the places given to swapped repeats.

    With `[judging] expert_max_masks = N`, comparisons whose two outputs needed more than N
    identity phrases masked are left out of the pool and counted (`AssignResult.set_aside`).

    Raises:
        CentaurError: unknown expert, or the session has no comparisons yet.
    """
    from centaur_tui.store import ExpertStore

    experts = ExpertStore(store)
    expert = experts.expert(study, expert_id)
    pool = experts.pool()
    if not pool:
        raise CentaurError("the session has no comparisons yet: run it first", title="No comparisons yet")
    # A comparison the expert judged elsewhere (imported) is not assigned again: it would count as
    # judged at once and take the place of one the expert has not seen.
    imported = experts.judged_unassigned(expert.id)
    pool = [c for c in pool if c.id not in imported]
    limit = study.session.judging.expert_max_masks
    set_aside = 0
    if limit is not None:
        from centaur_tui.store import session_blinding

        masked = experts.masked_counts(session_blinding(study))
        kept = [c for c in pool if masked.get(c.id, 0) <= limit]
        set_aside, pool = len(pool) - len(kept), kept
    existing = experts.existing()
    pool_size = eligible_count(pool, expert, existing)
    planned = plan_assignments(
        pool,
        expert,
        existing,
        n,
        strategy,
        study.session.seed,
        overlap=overlap,
        repeat_share=repeat_share,
        verdicts=experts.expert_winners() if strategy == ACTIVE_STRATEGY else None,
    )
    added = experts.add_assignments(expert.id, planned)
    assigned, judged = experts.workload().get(expert.id, (0, 0))
    by_id = {c.id: c for c in pool}
    return AssignResult(
        expert=expert,
        strategy=strategy,
        requested=n,
        added=added,
        planned=planned,
        tasks=Counter(by_id[p.comparison_id].task for p in planned),
        modes=Counter(by_id[p.comparison_id].mode for p in planned),
        assigned=assigned,
        judged=judged,
        set_aside=set_aside,
        max_masks=limit,
        pool_size=pool_size,
    )


def refills_actively(study: Study, store: Store, expert_id: str) -> bool:
    """Whether an expert who finishes their queue gets the next comparison by active allocation.

    Yes when the session says so (`[judging] expert_next = "active"`) or when the expert's
    latest place was drawn actively (`centaur assign --strategy active`).
    """
    from centaur_tui.store import ExpertStore

    if study.session.judging.expert_next == ACTIVE_STRATEGY:
        return True
    return ExpertStore(store).last_strategy(expert_id) == ACTIVE_STRATEGY


def draw_next(study: Study, store: Store, expert_id: str) -> AssignResult | None:
    """One more active place for an expert whose queue is finished; None when nothing is left to draw.

    The seats call it (`services.judging`) when the last open comparison is submitted.
    """
    result = assign_comparisons(study, store, expert_id, 1, ACTIVE_STRATEGY)
    return result if result.added else None
