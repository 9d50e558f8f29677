"""Provides the plan use case: simulate an expert study to choose how many experts and judgments to pay for.

The comparisons, output texts and LLM verdicts come from the session's database when it has
been run; otherwise from a small simulated stand-in run in a temporary folder. The experts
are simulated judges (the simulated provider's judge with an expert noise); each replicate
hands out new comparisons with the real assignment code and draws new verdicts, then runs the
report's experts-vs-LLM statistics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.records import ComparisonRecord, JudgmentRow
from centaur_tui.domain.session import JudgeSimulation
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.stats.planning import DesignPoint, PlanStatistic

EMPTY_SCORES = {"columns": ["judgment_id", "candidate", "dims", "mean"], "rows": [], "packed": []}
"""The plan needs verdicts only: no rubric scores are read."""


def _read(database: Path) -> tuple[dict[str, ComparisonRecord], dict[str, tuple[str, str]], list[JudgmentRow]]:
    from centaur_tui.store import Store, comparison_texts

    with Store(database, readonly=True) as store:
        comps = store.comparisons()
        if not comps:
            return {}, {}, []
        rows = [r for r in store.judgment_rows() if r.judge_kind == "llm"]
        return comps, comparison_texts(store), rows


def load_plan_source(
    study: Study, needed: int, folder: Path
) -> tuple[Study, dict[str, ComparisonRecord], dict[str, tuple[str, str]], list[JudgmentRow], str]:
    """Comparisons, texts and LLM judgment rows to plan on: the session's own, or a simulated stand-in run.

    Args:
        study: The session.
        needed: Comparisons the largest design asks for (ceil(N / K) x M), to size a stand-in run.
        folder: Temporary folder for a stand-in database.

    Returns:
        (study the rows belong to, comparisons, texts, LLM judgment rows, where they came from).
    """
    from centaur_tui.pipeline.expert_sim import run_stand_in, runs_needed, simulated_stand_in

    if study.database.exists():
        comps, texts, rows = _read(study.database)
        if comps:
            return (
                study,
                comps,
                texts,
                rows,
                (f"the session's database {study.database} ({len(comps):,} comparisons, {len(rows):,} LLM judgments)"),
            )
    runs = runs_needed(study, needed)
    stand_in = simulated_stand_in(study, folder, runs)
    run_stand_in(stand_in)
    comps, texts, rows = _read(stand_in.database)
    origin = (
        f"a simulated stand-in run of the session ({runs} run(s), {len(comps):,} comparisons, {len(rows):,} LLM "
        "judgments) in a temporary folder, because the session has not been run"
    )
    if not study.session.fully_simulated:
        origin += (
            "; its real models were replaced by simulated ones with the session file's simulation knobs "
            "(defaults where unset), so the rank-correlation widths reflect those knobs, not the real models"
        )
    return stand_in, comps, texts, rows, origin


def simulate_design(
    study: Study,
    comps: dict[str, ComparisonRecord],
    texts: dict[str, tuple[str, str]],
    llm_rows: list[JudgmentRow],
    n: int,
    m: int,
    k: int,
    knobs: JudgeSimulation,
    reps: int,
    bootstrap: int,
    seed: int,
) -> tuple[list[PlanStatistic], list[int], list[int]]:
    """Simulate one design (N experts x M judgments, overlap K) `reps` times and summarise the statistics.

    Args:
        study: The study the comparisons belong to (rubrics, ties, families).
        comps: Its comparisons; texts: their two output texts; llm_rows: its LLM judgment rows.
        n, m, k: Experts, judgments per expert, experts per comparison.
        knobs: The simulated experts' `JudgeSimulation`.
        reps: Replicates; bootstrap: bootstrap replicates per interval; seed: seed of everything.

    Returns:
        (`summarise_plan` rows, expert judgments per replicate, comparisons per replicate).
    """
    from centaur_tui.pipeline.expert_sim import (
        judgment_rows,
        plan_expert_study,
        simulate_expert_judgments,
        simulated_experts,
    )
    from centaur_tui.stats.experts import ExpertOptions, experts_vs_llm
    from centaur_tui.stats.frames import build_frames, design_from_session
    from centaur_tui.stats.planning import summarise_plan

    design = design_from_session(study.session, simulated=True)
    first_id = max((r.judgment_id for r in llm_rows), default=0) + 1
    by_comparison: dict[str, list[JudgmentRow]] = {}
    for r in llm_rows:
        by_comparison.setdefault(r.comparison_id, []).append(r)
    docs, judged, compared = [], [], []
    for rep in range(reps):
        rep_seed = seed * 100_003 + rep
        assignments = plan_expert_study(comps, simulated_experts(n), m, k, rep_seed)
        records = simulate_expert_judgments(study, comps, texts, assignments, knobs, rep_seed)
        chosen = sorted({a.comparison_id for _, a in assignments})
        # Only the chosen comparisons matter: every statistic of the plan lives on the reference set.
        rows = [r for c in chosen for r in by_comparison.get(c, [])] + judgment_rows(records, comps, first_id)
        frames = build_frames(
            rows,
            None,
            None,
            [comps[c] for c in chosen],
            design,
            judge_kinds=("llm", "expert"),
            option_score_rows=EMPTY_SCORES,
        )
        result = experts_vs_llm(
            frames,
            ExpertOptions(bootstrap=bootstrap, seed=rep_seed, parts=("agreement", "majority", "rankings", "alt_test")),
        )
        docs.append(result.section)
        judged.append(len(records))
        compared.append(len(chosen))
    return summarise_plan(docs), judged, compared


def _ppr_arrays(
    study: Study,
    comps: dict[str, ComparisonRecord],
    texts: dict[str, tuple[str, str]],
    llm_rows: list[JudgmentRow],
    knobs: JudgeSimulation,
    reps: int,
    seed: int,
) -> list[tuple[str, list[str], Any, Any, Any, Any, Any]]:
    """Per mode: (mode, candidates, a, b, yhat, y (reps x comparisons), run of each comparison)."""
    import random

    import numpy as np

    from centaur_tui.domain.assignment import PlannedAssignment
    from centaur_tui.pipeline.expert_sim import simulate_expert_judgments

    def points(winner: str | None, a: str, b: str) -> float:
        return 1.0 if winner == a else 0.0 if winner == b else 0.5 if winner == "tie" else float("nan")

    llm: dict[str, list[float]] = {}
    for r in llm_rows:
        c = comps.get(r.comparison_id)
        if c is not None and r.valid and r.winner is not None:
            llm.setdefault(c.id, []).append(points(r.winner, c.candidate_a, c.candidate_b))
    out = []
    for mode in sorted({c.mode for c in comps.values()}):
        mine = sorted((c for c in comps.values() if c.mode == mode), key=lambda c: c.id)
        names = sorted({x for c in mine for x in (c.candidate_a, c.candidate_b)})
        pos = {n: i for i, n in enumerate(names)}
        a = np.array([pos[c.candidate_a] for c in mine])
        b = np.array([pos[c.candidate_b] for c in mine])
        yhat = np.array([np.mean(llm[c.id]) if c.id in llm else np.nan for c in mine])
        y = np.full((reps, len(mine)), np.nan)
        for rep in range(reps):
            flip = random.Random(f"ppr-plan|{seed}|{rep}")
            places = [
                ("planned-expert", PlannedAssignment(c.id, 0, flip.random() < 0.5, "uniform-random")) for c in mine
            ]
            records = simulate_expert_judgments(study, comps, texts, places, knobs, seed * 100_003 + rep)
            by_id = {r.comparison_id: r.winner for r in records}
            y[rep] = [points(by_id.get(c.id), c.candidate_a, c.candidate_b) for c in mine]
        out.append((mode, names, a, b, yhat, y, np.array([c.run for c in mine])))
    return out


DEFAULT_SECONDS_PER_JUDGMENT = 300.0
"""Time per expert judgment assumed when the study has no stored expert judgment time (5 minutes: two
deliverables read, rubric scored, a rationale written; state your own with --expert-cost)."""


@dataclass(frozen=True)
class Costs:
    """What one expert judgment and one run of the pipeline cost, and where each number comes from."""

    expert: float
    expert_basis: str
    run: float | None
    run_basis: str
    judge_calls_per_comparison: float
    judge_price: float | None
    """Mean price of one LLM judge call (None: a judge model without a price)."""
    stored_runs: int


def plan_costs(
    study: Study,
    llm_rows: list[JudgmentRow],
    comps: dict[str, ComparisonRecord],
    *,
    expert_cost: float | None,
    hourly_rate: float | None,
    stored: bool,
) -> Costs:
    """The cost of an expert judgment (given, or an hourly rate x the measured time) and of a run.

    Args:
        study: The session (its estimate prices the LLM calls: `pipeline.estimate`).
        llm_rows, comps: The plan's LLM judgment rows and comparisons (judge calls per comparison).
        expert_cost: Money per expert judgment, or None to use `hourly_rate`.
        hourly_rate: Money per expert hour (with the median stored time per expert judgment,
            else `DEFAULT_SECONDS_PER_JUDGMENT`).
        stored: The comparisons are the session's own (its runs are paid for), not a stand-in.

    Raises:
        CentaurError: a negative or non-finite cost, or neither nor both of the two given.
    """
    import math
    import statistics

    from centaur_tui.domain.errors import CentaurError
    from centaur_tui.services.estimate import session_estimate

    for name, value in (("--expert-cost", expert_cost), ("--hourly-rate", hourly_rate)):
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise CentaurError(f"{name} must be a number >= 0 (got {value:g})", title="Plan")
    if (expert_cost is None) == (hourly_rate is None):
        raise CentaurError("give the cost of an expert judgment: --expert-cost or --hourly-rate (one)", title="Plan")
    if expert_cost is not None:
        expert, basis = expert_cost, f"{expert_cost:g} per judgment (--expert-cost)"
    else:
        assert hourly_rate is not None
        seconds = _expert_seconds(study)
        if seconds:
            median = statistics.median(seconds)
            basis = f"{hourly_rate:g}/h x median {median:.0f} s per judgment (n = {len(seconds):,} stored)"
        else:
            median = DEFAULT_SECONDS_PER_JUDGMENT
            basis = f"{hourly_rate:g}/h x {median:.0f} s per judgment (assumed: no expert judgment time stored)"
        expert = hourly_rate * median / 3600
    est = session_estimate(study)
    runs = study.session.runs
    total = est.cost_total
    judging = [r for r in est.rows if r.stage == "judging"]
    judge_cost = [r.cost_total for r in judging]
    calls = sum(r.planned for r in judging)
    judge_price = (
        float(sum(c for c in judge_cost if c is not None)) / calls
        if calls and all(c is not None for c in judge_cost)
        else None
    )
    if total is None:
        unpriced = sorted({r.model for r in est.rows if r.price is None or r.recorded_unpriced})
        run, run_basis = None, f"cost of a run unknown: no price for {', '.join(unpriced)} (counted as 0)"
    else:
        run = total / runs
        run_basis = (
            f"{run:.4g} per run (the session's estimate: {total:.4g} for {runs} run(s), generation and judging; "
            f"{calls:,} judge calls at {judge_price:.3g} each)"
            if judge_price is not None
            else f"{run:.4g} per run (the session's estimate, {runs} run(s))"
        )
    per_comparison = len(llm_rows) / len(comps) if comps else 0.0
    return Costs(expert, basis, run, run_basis, per_comparison, judge_price, runs if stored else 0)


def _expert_seconds(study: Study) -> list[float]:
    from centaur_tui.store import Store

    if not study.database.exists():
        return []
    with Store(study.database, readonly=True) as store:
        return [
            float(r.seconds)
            for r in store.judgment_rows()
            if r.judge_kind == "expert" and r.valid and r.seconds and r.seconds > 0
        ]


@dataclass(frozen=True, slots=True)
class ModeDesigns:
    """The designs `simulate_ppr_designs` tried on one mode's comparisons."""

    mode: str
    candidates: int
    grid: list[DesignPoint]


def simulate_ppr_designs(
    study: Study,
    comps: dict[str, ComparisonRecord],
    texts: dict[str, tuple[str, str]],
    llm_rows: list[JudgmentRow],
    knobs: JudgeSimulation,
    reps: int,
    sizes: list[int],
    run_counts: list[int],
    *,
    target: float,
    alpha: float,
    method: str,
    seed: int,
) -> list[ModeDesigns]:
    """Per mode: the rank-set size and power of every (runs, n expert comparisons) design (`ppr_design_grid`)."""
    from centaur_tui.stats.planning import ppr_design_grid

    out = []
    for mode, names, a, b, yhat, y, run in _ppr_arrays(study, comps, texts, llm_rows, knobs, reps, seed):
        grid = ppr_design_grid(
            a, b, len(names), yhat, y, run, run_counts, sizes, target=target, alpha=alpha, method=method, seed=seed
        )
        out.append(ModeDesigns(mode, len(names), grid))
    return out
