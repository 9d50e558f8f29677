"""Provides synthetic judgments for a session design, in the store's row format (benchmarks and tests).

Not the simulated provider: no texts, no calls. Every comparison of the design (domain
`all_comparisons`) is judged by each eligible judge in its presented order(s); each option
gets integer rubric scores around a planted quality (1 + 9 x skill) with Gaussian noise,
the winner is the option with the higher average (tie below a margin), and a share of
judgments is invalid. The planted skills are returned, so tests can check recovery.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from centaur_tui.domain.plan import all_comparisons, eligible_judges, output_id, presented_orders
from centaur_tui.domain.session import Session


@dataclass
class SyntheticRows:
    """Rows shaped like `Store.judgment_rows()`, `score_rows()`, `output_rows()` and comparisons."""

    judgment_rows: list[dict[str, Any]]
    score_rows: list[dict[str, Any]]
    output_rows: list[dict[str, Any]]
    comparisons: list[dict[str, Any]]
    skills: dict[tuple[str, str, str], float] = field(default_factory=dict)


def synthetic_rows(
    session: Session,
    rubric: Mapping[str, Sequence[tuple[str, str]]],
    *,
    seed: int = 0,
    noise: float = 1.0,
    invalid_rate: float = 0.02,
    tie_margin: float = 0.15,
    skills: Mapping[tuple[str, str, str], float] | None = None,
) -> SyntheticRows:
    """Judge every comparison of a session design synthetically.

    Args:
        session: The design (runs, tasks, candidates, judges, families).
        rubric: Per task, its dimensions as (id, kind) pairs.
        seed: Seed of everything random.
        noise: SD of each rubric score in points.
        invalid_rate: Share of judgments stored as invalid.
        tie_margin: Average gap below which a judgment is a tie.
        skills: Planted skill in [0, 1] per (candidate, task, mode); drawn uniformly from
            [0.2, 0.9] when not given.

    Returns:
        The rows and the planted skills.
    """
    rng = np.random.default_rng(seed)
    comps = all_comparisons(session)
    planted: dict[tuple[str, str, str], float] = dict(skills or {})
    for c in comps:
        for cand in c.candidates:
            planted.setdefault((cand, c.task, c.mode), float(rng.uniform(0.2, 0.9)))
    worker = session.worker.name if session.worker is not None else ""
    outputs: dict[tuple[int, str, str, str], str] = {}
    for c in comps:
        for cand in c.candidates:
            key = (c.run, c.task, c.mode, cand)
            if key not in outputs:
                outputs[key] = output_id(c.run, c.task, c.mode, cand, cand if c.mode == "automation" else worker)
    output_rows = [
        {
            "run": k[0],
            "task": k[1],
            "mode": k[2],
            "candidate": k[3],
            "worker": k[3] if k[2] == "automation" else worker,
            "text": "",
            "assistance_text": None,
            "output_id": oid,
        }
        for k, oid in sorted(outputs.items())
    ]
    comparison_rows = [
        {
            "id": c.id,
            "run": c.run,
            "task": c.task,
            "mode": c.mode,
            "candidate_a": c.candidate_a,
            "candidate_b": c.candidate_b,
            "output_a": outputs[(c.run, c.task, c.mode, c.candidate_a)],
            "output_b": outputs[(c.run, c.task, c.mode, c.candidate_b)],
        }
        for c in comps
    ]
    slots = [
        (c, judge, presentation, order)
        for c in comps
        for judge in eligible_judges(session, c)
        for presentation, order in presented_orders(session, c, judge.name)
    ]
    n = len(slots)
    invalid = rng.random(n) < invalid_rate
    judgment_rows: list[dict[str, Any]] = []
    score_rows: list[dict[str, Any]] = []
    for i, (c, judge, presentation, (first, second)) in enumerate(slots, start=1):
        row = {
            "run": c.run,
            "task": c.task,
            "mode": c.mode,
            "comparison_id": c.id,
            "judge": judge.name,
            "judge_kind": "llm",
            "judge_family": judge.family,
            "option1": first,
            "option2": second,
            "winner": None,
            "option1_mean": None,
            "option2_mean": None,
            "valid": 0,
            "invalid_reason": None,
            "rationale": None,
            "judgment_id": i,
            "presentation": presentation,
            "revision": 0,
            "attempts": 1,
            "seconds": None,
        }
        if invalid[i - 1]:
            row["invalid_reason"] = "invalid after 3 attempt(s): reply holds no JSON object"
            row["attempts"] = 3
            judgment_rows.append(row)
            continue
        dims = rubric[c.task]
        averages = []
        for cand in (first, second):
            base = 1.0 + 9.0 * planted[(cand, c.task, c.mode)]
            scores = np.clip(np.rint(base + rng.normal(0.0, noise, len(dims))), 1, 10).astype(int)
            averages.append(float(scores.mean()))
            score_rows += [
                {
                    "comparison_id": c.id,
                    "judge": judge.name,
                    "candidate": cand,
                    "dimension": d,
                    "dimension_kind": kind,
                    "score": int(s),
                    "judgment_id": i,
                }
                for (d, kind), s in zip(dims, scores, strict=True)
            ]
        gap = averages[0] - averages[1]
        winner = "tie" if abs(gap) < tie_margin else (first if gap > 0 else second)
        row.update(
            valid=1,
            winner=winner,
            option1_mean=round(averages[0], 2),
            option2_mean=round(averages[1], 2),
            rationale="Synthetic judgment.",
        )
        judgment_rows.append(row)
    return SyntheticRows(judgment_rows, score_rows, output_rows, comparison_rows, planted)
