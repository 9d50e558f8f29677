"""Provides the summary of simulated expert studies: expected values and interval widths over replicates.

`centaur plan` simulates an expert study R times (new comparisons drawn for the experts and
new simulated verdicts each time), runs the experts-vs-LLM statistics on each replicate, and
hands the replicates' sections (`ExpertResult.section`) to `summarise_plan`. A statistic computed
per group (a rank correlation per task and mode, an agreement per LLM judge) contributes one
case per group and replicate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import TypeGuard

import numpy as np

from centaur_tui.report.document import ExpertsSection
from centaur_tui.stats.experts import ALL_TASKS

Case = tuple[float | None, float | None, float | None]
"""(value, interval low, interval high); None or NaN where undefined."""
Extract = Callable[[ExpertsSection], list[Case]]


def _block(name: str) -> Extract:
    def cases(section: ExpertsSection) -> list[Case]:
        blocks = section.agreement.blocks if section.agreement is not None else []
        return [(r.agreement, r.ci_low, r.ci_high) for r in blocks if r.block == name]

    return cases


def _alpha(group: str) -> Extract:
    def cases(section: ExpertsSection) -> list[Case]:
        alphas = section.agreement.alpha if section.agreement is not None else []
        return [(r.alpha, r.ci_low, r.ci_high) for r in alphas if r.group == group]

    return cases


def _panel(section: ExpertsSection) -> list[Case]:
    pm = section.panel_majority
    return [(pm.agreement, pm.ci_low, pm.ci_high)] if pm is not None else []


def _loo_difference(section: ExpertsSection) -> list[Case]:
    rows = section.loo_majority.rows if section.loo_majority is not None else []
    return [(r.difference, r.diff_ci_low, r.diff_ci_high) for r in rows if r.kind == "llm"]


def _ranking(kind: str, pooled: bool) -> Extract:
    def cases(section: ExpertsSection) -> list[Case]:
        rows = section.rankings.rows if section.rankings is not None else []
        return [
            (r.spearman, r.spearman_ci_low, r.spearman_ci_high)
            if kind == "spearman"
            else (r.kendall, r.kendall_ci_low, r.kendall_ci_high)
            for r in rows
            if (r.task == ALL_TASKS) == pooled
        ]

    return cases


def _alt_winning_rate(section: ExpertsSection) -> list[Case]:
    rows = section.alt_test.rows if section.alt_test is not None else []
    return [(r.winning_rate, None, None) for r in rows if r.metric == "accuracy"]


PLAN_STATISTICS: tuple[tuple[str, str, Extract], ...] = (
    ("expert_llm_agreement", "expert-LLM agreement (with ties)", _block("expert-LLM")),
    ("expert_expert_agreement", "expert-expert agreement (with ties)", _block("expert-expert")),
    ("alpha_experts", "Krippendorff's alpha, experts", _alpha("experts")),
    ("alpha_pooled", "Krippendorff's alpha, pooled", _alpha("pooled")),
    ("panel_majority", "LLM-panel vs expert-panel majority", _panel),
    ("loo_difference", "LLM judge minus experts vs LOO majority", _loo_difference),
    ("spearman_task", "Spearman, per task and mode", _ranking("spearman", pooled=False)),
    ("kendall_task", "Kendall tau-b, per task and mode", _ranking("kendall", pooled=False)),
    ("spearman_pooled", "Spearman, tasks pooled per mode", _ranking("spearman", pooled=True)),
    ("kendall_pooled", "Kendall tau-b, tasks pooled per mode", _ranking("kendall", pooled=True)),
    ("alt_winning_rate", "alt-test winning rate per LLM judge", _alt_winning_rate),
)
"""(key, label, extractor) of every statistic `centaur plan` reports."""


def _finite(x: object) -> TypeGuard[float]:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


@dataclass(frozen=True, slots=True)
class PlanStatistic:
    """One statistic of a simulated expert study, over its replicates (`summarise_plan`)."""

    key: str
    label: str
    replicates: int
    cases: int
    """Replicates x groups (a per-task statistic has one case per task and replicate)."""
    defined: int
    """Cases with a value."""
    value: float
    """Mean of the defined values (NaN: none)."""
    with_interval: int
    """Cases with an interval."""
    width: float
    """Mean interval width (NaN: no case has an interval)."""
    width_p10: float
    width_p90: float
    """10th and 90th percentiles of the widths (NaN: no case has an interval)."""


def summarise_plan(docs: Sequence[ExpertsSection]) -> list[PlanStatistic]:
    """Expected value and interval width of each statistic over simulated replicates.

    Args:
        docs: The experts-vs-LLM sections of the replicates (`ExpertResult.section`).

    Returns:
        One `PlanStatistic` per statistic of `PLAN_STATISTICS`, in its order.
    """
    out = []
    for key, label, extract in PLAN_STATISTICS:
        cases = [c for doc in docs for c in extract(doc)]
        values = np.array([c[0] for c in cases if _finite(c[0])], dtype=float)
        widths = np.array([c[2] - c[1] for c in cases if _finite(c[1]) and _finite(c[2])], dtype=float)
        out.append(
            PlanStatistic(
                key=key,
                label=label,
                replicates=len(docs),
                cases=len(cases),
                defined=len(values),
                value=float(values.mean()) if len(values) else math.nan,
                with_interval=len(widths),
                width=float(widths.mean()) if len(widths) else math.nan,
                width_p10=float(np.quantile(widths, 0.1)) if len(widths) else math.nan,
                width_p90=float(np.quantile(widths, 0.9)) if len(widths) else math.nan,
            )
        )
    return out


# -- prediction-powered rankings: expert comparisons for a target rank-set size ---------------


@dataclass(frozen=True, slots=True)
class SizePoint:
    """The prediction-powered rank-set size with n random expert comparisons, over replicates (`ppr_size_curve`)."""

    n: int
    mean_size: float
    size_p10: float
    size_p90: float
    replicates: int


def ppr_size_curve(
    a: np.ndarray,
    b: np.ndarray,
    k: int,
    yhat: np.ndarray,
    y: np.ndarray,
    sizes: Sequence[int],
    *,
    alpha: float = 0.1,
    method: str = "chatzi",
    seed: int = 0,
) -> list[SizePoint]:
    """Mean prediction-powered rank-set size for each number n of uniformly random expert comparisons.

    Args:
        a, b: (U,) candidate indices of the comparisons; k: candidates.
        yhat: (U,) the LLM panel's points for candidate_a on every comparison (NaN: none).
        y: (R, U) simulated expert points for candidate_a on every comparison, one row per replicate.
        sizes: The n to try (larger than the usable comparisons are cut to them).
        alpha, method: As in the report.
        seed: Seed of the random subsets (one per replicate and n).

    Returns:
        One `SizePoint` per n, n ascending.
    """
    from centaur_tui.stats import ppr

    rng = np.random.default_rng(seed)
    y = np.atleast_2d(np.asarray(y, dtype=float))
    reps, units = y.shape
    usable = np.flatnonzero(np.isfinite(yhat))
    out = []
    for n in sorted({min(int(s), len(usable)) for s in sizes if s > 0}):
        lab = np.zeros((reps, units), dtype=bool)
        for r in range(reps):
            lab[r, rng.choice(usable, n, replace=False)] = True
        est = ppr.ppr_estimate(a, b, k, np.broadcast_to(yhat, y.shape), y, lab, min_labeled=ppr.MIN_LABELED)
        low, high = ppr.rank_sets(est.theta, est.sigma, alpha, method)  # type: ignore[arg-type]
        size = ppr.set_sizes(low, high)
        out.append(
            SizePoint(
                n=n,
                mean_size=float(size.mean()),
                size_p10=float(np.percentile(size, 10)),
                size_p90=float(np.percentile(size, 90)),
                replicates=reps,
            )
        )
    return out


def comparisons_for_target(curve: Sequence[SizePoint], target: float) -> int | None:
    """The fewest n of the curve whose mean rank-set size is at most `target` (None: not reached)."""
    return next((r.n for r in curve if r.mean_size <= target), None)


# -- cost-aware sizing: expert comparisons and runs (LLM-judged comparisons) for a target ------


def emulated_runs(run: np.ndarray, runs: int, reps: int) -> tuple[np.ndarray, np.ndarray]:
    """Units of a design with `runs` runs, built from the stored runs' units.

    Up to the stored runs, the first `runs` of them as they are. Beyond, the stored runs again in
    turn (runs are independent replicates of the pipeline; in turn keeps them balanced); a unit used for
    the c-th time takes its expert verdict from replicate (rep + c) mod reps, a new simulated
    draw, while its LLM verdicts repeat (so beyond the stored runs the sizes lean optimistic).

    Args:
        run: (U,) run of each unit.
        runs: Runs of the design (>= 1).
        reps: Replicates of the expert draws (copies beyond `reps` would reuse a draw: refused).

    Returns:
        (unit indices, copy number of each).
    """
    stored = sorted(set(run.tolist()))
    chosen = [stored[i % len(stored)] for i in range(runs)]
    seen: dict[int, int] = {}
    units, copies = [], []
    for r in chosen:
        c = seen.get(r, 0)
        seen[r] = c + 1
        if c >= reps:
            raise ValueError(f"{runs} runs from {len(stored)} stored need more than {reps} replicates")
        idx = np.flatnonzero(run == r)
        units.append(idx)
        copies.append(np.full(len(idx), c))
    return np.concatenate(units), np.concatenate(copies)


@dataclass(frozen=True, slots=True)
class DesignPoint:
    """One design (runs of the pipeline, n expert comparisons) of `ppr_design_grid`, over its replicates."""

    runs: int
    comparisons: int
    """Comparisons with LLM verdicts in the design's runs."""
    n: int
    mean_size: float
    size_p10: float
    size_p90: float
    power: float
    """Share of the replicates whose mean rank-set size is <= the target."""
    replicates: int


@dataclass(frozen=True, slots=True)
class PricedDesign(DesignPoint):
    """A `DesignPoint` with its price (`cheapest_design`)."""

    expert_cost: float
    llm_cost: float
    cost: float


def ppr_design_grid(
    a: np.ndarray,
    b: np.ndarray,
    k: int,
    yhat: np.ndarray,
    y: np.ndarray,
    run: np.ndarray,
    run_counts: Sequence[int],
    sizes: Sequence[int],
    *,
    target: float,
    alpha: float = 0.1,
    method: str = "chatzi",
    seed: int = 0,
) -> list[DesignPoint]:
    """Mean rank-set size and power for each design (runs, n expert comparisons).

    Args:
        a, b, k, yhat, y: As in `ppr_size_curve` (y: (R, U), one simulated expert verdict per replicate).
        run: (U,) run of each comparison; designs with more runs than stored are emulated (`emulated_runs`).
        run_counts: Runs to try; sizes: numbers of expert comparisons to try (cut to the design's comparisons).
        target: Mean rank-set size to reach.

    Returns:
        One `DesignPoint` per design, by runs then n.
    """
    from centaur_tui.stats import ppr

    y = np.atleast_2d(np.asarray(y, dtype=float))
    reps = y.shape[0]
    out = []
    for runs in sorted(set(run_counts)):
        units, copies = emulated_runs(run, runs, reps)
        rows = (np.arange(reps)[:, None] + copies[None, :]) % reps
        y_d = y[rows, units[None, :]]
        yhat_d, a_d, b_d = yhat[units], a[units], b[units]
        usable = np.flatnonzero(np.isfinite(yhat_d))
        rng = np.random.default_rng(seed * 7919 + runs)
        for n in sorted({min(int(s), len(usable)) for s in sizes if s > 0}):
            lab = np.zeros((reps, len(units)), dtype=bool)
            for r in range(reps):
                lab[r, rng.choice(usable, n, replace=False)] = True
            est = ppr.ppr_estimate(
                a_d, b_d, k, np.broadcast_to(yhat_d, y_d.shape), y_d, lab, min_labeled=ppr.MIN_LABELED
            )
            low, high = ppr.rank_sets(est.theta, est.sigma, alpha, method)  # type: ignore[arg-type]
            size = ppr.set_sizes(low, high)
            out.append(
                DesignPoint(
                    runs=runs,
                    comparisons=len(usable),
                    n=n,
                    mean_size=float(size.mean()),
                    size_p10=float(np.percentile(size, 10)),
                    size_p90=float(np.percentile(size, 90)),
                    power=float(np.mean(size <= target)),
                    replicates=reps,
                )
            )
    return out


def cheapest_design(
    grid: Sequence[DesignPoint],
    *,
    expert_cost: float,
    run_cost: float | None,
    stored_runs: int,
    power: float,
) -> tuple[PricedDesign | None, list[PricedDesign]]:
    """Price every design and pick the least costly one whose power reaches `power`.

    Args:
        grid: `ppr_design_grid` rows.
        expert_cost: Money per expert judgment (>= 0).
        run_cost: Money per run of the pipeline (generation and judging; None: unknown, counted as 0 and said).
        stored_runs: Runs already paid for (they cost nothing more).
        power: Required probability of reaching the target.

    Returns:
        (the cheapest design reaching `power`, or None; every design priced).
    """
    priced = []
    for row in grid:
        llm = max(0, row.runs - stored_runs) * (run_cost or 0.0)
        expert = row.n * expert_cost
        point = {f.name: getattr(row, f.name) for f in fields(DesignPoint)}
        priced.append(PricedDesign(**point, expert_cost=expert, llm_cost=llm, cost=expert + llm))
    ok = [r for r in priced if r.power >= power]
    best = min(ok, key=lambda r: (r.cost, r.n, r.runs)) if ok else None
    return best, priced
