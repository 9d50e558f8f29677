"""Provides `centaur plan`: print the simulated expert study of `services/plan.py` for the designs asked for.

What is printed is what an organiser needs before recruiting: the interval widths to expect
for expert-LLM agreement and for the rank correlation of the expert and LLM panels.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from centaur_tui.cli.params import FINITE, FiniteRange
from centaur_tui.domain.errors import CentaurError
from centaur_tui.services.session import open_session

if TYPE_CHECKING:
    from centaur_tui.domain.records import ComparisonRecord, JudgmentRow
    from centaur_tui.domain.session import JudgeSimulation
    from centaur_tui.domain.study import Study
    from centaur_tui.services.plan import Costs
    from centaur_tui.stats.planning import DesignPoint, PlanStatistic

WIDTH = 100


def _say(text: str, **style: Any) -> None:
    click.secho(textwrap.fill(text, width=WIDTH, subsequent_indent="  "), **style)


def _width(r: PlanStatistic) -> str:
    if math.isnan(r.width):
        return "-"
    return f"{r.width:.3f} [{r.width_p10:.3f}, {r.width_p90:.3f}]"


def power_interval(row: DesignPoint) -> tuple[float, float]:
    """Wilson's 95% interval of a design's power (a share of `row.replicates` simulated studies)."""
    from centaur_tui.stats.proportions import wilson_interval

    return wilson_interval(row.power, row.replicates)


def power_text(row: DesignPoint) -> str:
    """A design's power with its 95% interval and its n of replicates."""
    low, high = power_interval(row)
    return f"{row.power:.2f} [{low:.2f}, {high:.2f}] (n={row.replicates})"


def _plan_ppr(
    study: Study,
    comps: dict[str, ComparisonRecord],
    texts: dict[str, tuple[str, str]],
    llm_rows: list[JudgmentRow],
    knobs: JudgeSimulation,
    reps: int,
    sizes: list[int],
    target: float,
    alpha: float | None,
    seed: int,
    costs: Costs | None,
    run_factors: list[int],
    power: float,
) -> None:
    from centaur_tui.services.plan import simulate_ppr_designs
    from centaur_tui.stats.planning import cheapest_design

    stats = study.session.statistics
    alpha = stats.ppr_alpha if alpha is None else alpha
    base = max(1, len({c.run for c in comps.values()}))
    wanted = sorted({base * f for f in run_factors})
    # An emulated run takes its expert verdicts from another replicate: at most `reps` copies of a stored run.
    run_counts = [r for r in wanted if r <= base * reps] or [base]
    dropped = [r for r in wanted if r not in run_counts]
    click.echo("")
    _say(f"Prediction-powered rankings: the cheapest design reaching a mean rank-set size <= {target:g}", bold=True)
    _say(
        f"  Method: in each of {reps} replicate(s) a simulated expert judges every comparison; for each design "
        f"(runs of the pipeline, n expert comparisons) a uniformly random subset of n is the expert set (as "
        f"`centaur assign --strategy uniform-random`), and the report's estimator (PPI++, {stats.ppr_method} "
        f"rank-sets, alpha = {alpha:g}) runs on it with the LLM verdicts on every comparison of those runs. "
        f"Power = share of the {reps} replicates whose mean rank-set size is <= {target:g}. Runs beyond the "
        f"{base} stored are emulated by drawing stored runs again with new simulated expert verdicts (their LLM "
        "verdicts repeat, so those sizes lean optimistic)."
    )
    if dropped:
        _say(
            f"  Left out: {', '.join(map(str, dropped))} runs (more than {reps} copies of a stored run; raise --reps).",
            fg="yellow",
        )
    _say(f"  Expert judgment: {costs.expert_basis}." if costs is not None else "  Expert judgment: no price given.")
    if costs is not None:
        _say(f"  LLM: {costs.run_basis}; {costs.judge_calls_per_comparison:.2f} judge calls per comparison.")
        if costs.stored_runs:
            _say(f"  The {costs.stored_runs} stored run(s) are paid for: only further runs are counted.")
    for m in simulate_ppr_designs(
        study, comps, texts, llm_rows, knobs, reps, sizes, run_counts,
        target=target, alpha=alpha, method=stats.ppr_method, seed=seed,
    ):  # fmt: skip
        best, priced = cheapest_design(
            m.grid,
            expert_cost=costs.expert if costs is not None else 0.0,
            run_cost=costs.run if costs is not None else None,
            stored_runs=costs.stored_runs if costs is not None else base,
            power=power,
        )
        per_call = costs.judge_calls_per_comparison if costs is not None else 0.0
        click.echo("")
        click.secho(f"  {m.mode}: {m.candidates} candidates", bold=True)
        click.echo(
            f"    {'runs':>5} {'comparisons':>11} {'judge calls':>11} {'n experts':>9}  "
            f"{'mean size [p10, p90]':<22} {'power [95% CI]':<24} {'cost':>12}"
        )
        for r in priced:
            cost = f"{r.cost:,.2f}" if costs is not None else "-"
            click.echo(
                f"    {r.runs:>5} {r.comparisons:>11,} {r.comparisons * per_call:>11,.0f} {r.n:>9,}  "
                f"{r.mean_size:>5.2f} [{r.size_p10:.2f}, {r.size_p90:.2f}]{'':<6} "
                f"{power_text(r):<24} {cost:>12}"
            )
        if best is not None:
            money = (
                f" for {best.cost:,.2f} ({best.expert_cost:,.2f} experts, {best.llm_cost:,.2f} LLM runs)"
                if costs is not None
                else " (fewest expert comparisons; give --expert-cost or --hourly-rate to weigh them against runs)"
            )
            _say(
                f"    Recommended: {best.runs} run(s) ({best.comparisons:,} LLM-judged comparisons, about "
                f"{best.comparisons * per_call:,.0f} judge calls) and {best.n:,} uniformly random expert "
                f"comparisons{money}: mean rank-set size {best.mean_size:.2f}, power {power_text(best)}.",
                fg="green",
            )
            if power_interval(best)[0] < power:
                _say(
                    f"    {best.replicates} replicates leave the power uncertain: its 95% interval reaches below "
                    f"{power:g}. A larger --reps narrows it (a share of n simulated studies: about +-1/sqrt(n)).",
                    fg="yellow",
                )
        else:
            near = min(priced, key=lambda r: (r.mean_size, r.cost))
            _say(
                f"    Not reached with power >= {power:g} by any design tried (up to {max(run_counts)} runs and "
                f"{max(r.n for r in priced):,} expert comparisons). Nearest: {near.runs} run(s), "
                f"{near.n:,} expert comparisons, mean size {near.mean_size:.2f}, power {power_text(near)}. "
                "Try a larger --ppr-runs factor, more --ppr-sizes, a larger "
                "target or alpha.",
                fg="yellow",
            )


@click.command()
@click.argument("session")
@click.option(
    "--experts",
    "experts",
    type=click.IntRange(1, 10_000),
    multiple=True,
    help="Number of experts N (repeat the option to compare designs).",
)
@click.option(
    "--per-expert",
    "per_expert",
    type=click.IntRange(1, 100_000),
    multiple=True,
    help="Judgments per expert M (repeatable).",
)
@click.option(
    "--overlap",
    "overlap",
    type=click.IntRange(1, 1000),
    multiple=True,
    default=(2,),
    show_default=True,
    help="Experts per comparison K (repeatable); 1 = every expert judges comparisons of its own.",
)
@click.option(
    "--expert-noise",
    type=FiniteRange(0.0, 10.0),
    default=0.8,
    show_default=True,
    help="SD of the simulated experts' rubric-score noise in points (LLM judges: set in the session).",
)
@click.option(
    "--reps",
    type=click.IntRange(1, 1000),
    default=10,
    show_default=True,
    help="Simulated replicates of the expert study.",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(20, 100_000),
    default=200,
    show_default=True,
    help="Bootstrap replicates per interval.",
)
@click.option(
    "--ppr-target",
    type=FiniteRange(1.0, None),
    default=None,
    help="Prediction-powered rankings: how many uniformly random expert comparisons bring the mean rank-set "
    "size down to this (1 = a certain ranking). Without --experts/--per-expert only this is planned.",
)
@click.option(
    "--ppr-sizes",
    type=click.IntRange(1, 1_000_000),
    multiple=True,
    help="Numbers of expert comparisons to try for --ppr-target (default: 25, 50, ..., 6400, doubling).",
)
@click.option(
    "--ppr-alpha",
    type=FiniteRange(0.0, 1.0, min_open=True, max_open=True),
    default=None,
    help="Error level of the planned rank-sets (default: the session's [statistics] ppr_alpha, 0.1).",
)
@click.option(
    "--expert-cost",
    type=FINITE,
    default=None,
    help="Money per expert judgment, for --ppr-target's cost search (or --hourly-rate).",
)
@click.option(
    "--hourly-rate",
    type=FINITE,
    default=None,
    help="Money per expert hour: x the median stored time per expert judgment (else 300 s, assumed).",
)
@click.option(
    "--ppr-runs",
    type=click.IntRange(1, 64),
    multiple=True,
    help="Multiples of the stored runs to try for --ppr-target (default: 1, 2, 4, 8).",
)
@click.option(
    "--ppr-power",
    type=FINITE,
    default=0.8,
    show_default=True,
    help="Probability of reaching --ppr-target that a recommended design must have, in (0, 1].",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
def plan(
    session: str,
    experts: tuple[int, ...],
    per_expert: tuple[int, ...],
    overlap: tuple[int, ...],
    expert_noise: float,
    reps: int,
    bootstrap: int,
    ppr_target: float | None,
    ppr_sizes: tuple[int, ...],
    ppr_alpha: float | None,
    expert_cost: float | None,
    hourly_rate: float | None,
    ppr_runs: tuple[int, ...],
    ppr_power: float,
    seed: int,
) -> None:
    """Simulate an expert study and print the interval widths to expect, before recruiting."""
    from centaur_tui.domain.session import JudgeSimulation
    from centaur_tui.services.plan import load_plan_source, simulate_design

    started = time.perf_counter()
    if ppr_target is None and (not experts or not per_expert):
        raise click.UsageError("Missing option '--experts' and '--per-expert' (or give --ppr-target).")
    if bool(experts) != bool(per_expert):
        raise click.UsageError("--experts and --per-expert go together.")
    if not (math.isfinite(ppr_power) and 0 < ppr_power <= 1):
        raise CentaurError(f"--ppr-power must be in (0, 1] (got {ppr_power:g})", title="Plan")
    for name, amount in (("--expert-cost", expert_cost), ("--hourly-rate", hourly_rate)):
        if amount is not None and not (math.isfinite(amount) and amount >= 0):
            raise CentaurError(f"{name} must be a number >= 0 (got {amount:g})", title="Plan")
    if expert_cost is not None and hourly_rate is not None:
        raise CentaurError("give --expert-cost or --hourly-rate, not both", title="Plan")
    if (expert_cost is not None or hourly_rate is not None) and ppr_target is None:
        raise CentaurError(
            "--expert-cost and --hourly-rate price the --ppr-target search: give --ppr-target", title="Plan"
        )
    study = open_session(session)
    designs = [(n, m, k) for n in experts for m in per_expert for k in overlap]
    for n, _, k in designs:
        if k > n:
            raise CentaurError(f"--overlap {k} needs at least {k} experts (got --experts {n})", title="Plan")
    # The overlap strategy gives groups of K experts the same M comparisons: ceil(N / K) groups.
    sizes = sorted(set(ppr_sizes or (25, 50, 100, 200, 400, 800, 1600, 3200, 6400)))
    needed = max([math.ceil(n / k) * m for n, m, k in designs] + ([max(sizes)] if ppr_target is not None else []))
    folder = Path(tempfile.mkdtemp(prefix="centaur-plan-"))
    try:
        source, comps, texts, llm_rows, origin = load_plan_source(study, needed, folder)
        knobs = JudgeSimulation(noise=expert_noise)
        _say("SIMULATED EXPERTS: every expert verdict below comes from the simulated provider's judge.", fg="yellow")
        _say(f"Plan for session {study.session.name}: comparisons and LLM verdicts from {origin}.")
        _say(
            f"Simulated experts: rubric-score noise SD {expert_noise:g}, no position bias; each of {reps} "
            "replicate(s) assigns new comparisons (as `centaur assign --strategy overlap`) and draws new "
            f"verdicts; 95% intervals from {bootstrap} bootstrap replicates resampling comparisons."
        )
        summary_rows = []
        for n, m, k in designs:
            summary, judged, compared = simulate_design(
                source, comps, texts, llm_rows, n, m, k, knobs, reps, bootstrap, seed
            )
            summary_rows.append(((n, m, k), sum(judged) / reps, summary))
            click.echo("")
            _say(
                f"N = {n} expert(s) x M = {m} judgment(s), overlap K = {k}: {sum(judged) / reps:,.0f} expert "
                f"judgments on {sum(compared) / reps:,.0f} comparisons (mean over replicates)",
                bold=True,
            )
            if sum(judged) < n * m * reps:
                _say(
                    f"  The session holds {len(comps):,} comparisons: fewer judgments than asked could be assigned.",
                    fg="yellow",
                )
            click.echo(f"  {'statistic':<42} {'expected':>9}  {'interval width: mean [p10, p90]':<33} {'defined':>9}")
            for r in summary:
                value = "NaN" if math.isnan(r.value) else f"{r.value:.3f}"
                click.echo(f"  {r.label:<42} {value:>9}  {_width(r):<33} {r.defined:>4}/{r.cases}".rstrip())
        if len(designs) > 1:
            click.echo("")
            click.secho("Designs side by side (mean interval width; smaller is better)", bold=True)
            keys = ["expert_llm_agreement", "expert_expert_agreement", "spearman_pooled", "spearman_task"]
            click.echo(
                f"  {'N':>3} {'M':>5} {'K':>3} {'judgments':>10}  {'expert-LLM agr.':>15}  {'expert-expert':>13}  "
                f"{'Spearman pooled':>15}  {'Spearman/task':>13}"
            )
            for (n, m, k), judgments, summary in summary_rows:
                by = {r.key: r for r in summary}
                cells = ["-" if math.isnan(by[key].width) else f"{by[key].width:.3f}" for key in keys]
                click.echo(
                    f"  {n:>3} {m:>5} {k:>3} {judgments:>10,.0f}  {cells[0]:>15}  {cells[1]:>13}  {cells[2]:>15}  "
                    f"{cells[3]:>13}"
                )
        if ppr_target is not None:
            costs = None
            if expert_cost is not None or hourly_rate is not None:
                from centaur_tui.services.plan import plan_costs

                costs = plan_costs(
                    study, llm_rows, comps, expert_cost=expert_cost, hourly_rate=hourly_rate, stored=source is study
                )
            factors = sorted(set(ppr_runs or (1, 2, 4, 8)))
            _plan_ppr(
                source,
                comps,
                texts,
                llm_rows,
                knobs,
                reps,
                sizes,
                ppr_target,
                ppr_alpha,
                seed,
                costs,
                factors,
                ppr_power,
            )
        if not designs:
            click.echo(f"Planned in {time.perf_counter() - started:.1f}s.")
            return
        click.echo("")
        _say(
            "'defined' counts cases (replicates x groups) where the statistic had a value; a rank correlation "
            "needs 3 candidates judged by both panels in the group, the alt-test 3 experts with 30 comparisons "
            "each judged by 3 experts (so K >= 3)."
        )
        click.echo(f"Planned in {time.perf_counter() - started:.1f}s.")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
