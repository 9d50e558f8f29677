"""Provides the design of the human-worker arm: which expert writes which task under which condition.

Each expert gets each task of the arm exactly once. Conditions (the arm's assistants, then
`plain`) follow a cyclic Latin square over a seeded shuffle of experts, tasks and conditions:
expert i on task j gets condition (i + j) mod k. Consecutive experts on one task therefore get
consecutive conditions, and one expert's consecutive tasks get consecutive conditions, so

- per task, the condition counts over experts differ by at most one;
- per expert, the condition counts over tasks differ by at most one;

and no condition goes to the same expert more often than any other beyond one: an
assistant's effect is not confounded with one expert's skill. The order in which an expert
meets their tasks is shuffled per expert from the session seed.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import HumanWorkerArm

ASSISTANCE_RUN = 1
"""Run whose assistance texts the human-worker arm uses (the pipeline's run 1)."""


@dataclass(frozen=True)
class WorkAssignment:
    """One deliverable an expert is to write: a task, a condition, and its place in the expert's queue."""

    expert: str
    task: str
    condition: str
    position: int


def _rng(seed: int, *parts: object) -> random.Random:
    return random.Random(int(digest("work-design", seed, *parts)[:12], 16))


def design_work(arm: HumanWorkerArm, seed: int) -> list[WorkAssignment]:
    """Assign every expert of the arm every task once, conditions balanced (see module docstring).

    Args:
        arm: The session's human-worker arm.
        seed: The session seed; the same arm and seed always give the same design.

    Returns:
        Assignments ordered by expert (as listed in the arm), then queue position (0-based).
    """
    experts, tasks, conditions = list(arm.experts), list(arm.tasks), list(arm.conditions)
    rng = _rng(seed, "square")
    rng.shuffle(experts)
    rng.shuffle(tasks)
    rng.shuffle(conditions)
    k = len(conditions)
    cells = {(e, t): conditions[(i + j) % k] for i, e in enumerate(experts) for j, t in enumerate(tasks)}
    out: list[WorkAssignment] = []
    for expert in arm.experts:
        order = list(arm.tasks)
        _rng(seed, "order", expert).shuffle(order)
        out.extend(WorkAssignment(expert, t, cells[(expert, t)], pos) for pos, t in enumerate(order))
    return out


def balance(assignments: list[WorkAssignment], conditions: tuple[str, ...]) -> dict[str, int]:
    """Largest spread (max - min) of condition counts per task, per expert and overall."""

    def spread(key: str) -> int:
        groups: dict[str, Counter[str]] = {}
        for a in assignments:
            groups.setdefault(getattr(a, key), Counter())[a.condition] += 1
        return max((max(c[x] for x in conditions) - min(c[x] for x in conditions) for c in groups.values()), default=0)

    total = Counter(a.condition for a in assignments)
    return {
        "task": spread("task"),
        "expert": spread("expert"),
        "overall": max(total[c] for c in conditions) - min(total[c] for c in conditions) if conditions else 0,
    }
