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
from typing import Any

import click

from centaur_tui.domain.errors import CentaurError
from centaur_tui.services.session import open_session

WIDTH = 100


def _say(text: str, **style: Any) -> None:
    click.secho(textwrap.fill(text, width=WIDTH, subsequent_indent="  "), **style)


def _width(r: dict[str, Any]) -> str:
    if math.isnan(r["width"]):
        return "-"
    return f"{r['width']:.3f} [{r['width_p10']:.3f}, {r['width_p90']:.3f}]"


def _plan_ppr(
    study: Any,
    comps: Any,
    texts: Any,
    llm_rows: Any,
    knobs: Any,
    reps: int,
    sizes: list[int],
    target: float,
    alpha: float | None,
    seed: int,
) -> None:
    from centaur_tui.services.plan import simulate_ppr
    from centaur_tui.stats.planning import comparisons_for_target

    stats = study.session.statistics
    alpha = stats.ppr_alpha if alpha is None else alpha
    click.echo("")
    _say(f"Prediction-powered rankings: expert comparisons for a mean rank-set size <= {target:g}", bold=True)
    _say(
        f"  Method: in each of {reps} replicate(s) a simulated expert judges every comparison; for each n, a "
        f"uniformly random subset of n is the expert set (as `centaur assign --strategy uniform-random`), and "
        f"the report's estimator (PPI++, {stats.ppr_method} rank-sets, alpha = {alpha:g}) runs on it with the "
        "session's LLM verdicts on all comparisons."
    )
    for m in simulate_ppr(
        study, comps, texts, llm_rows, knobs, reps, sizes, alpha=alpha, method=stats.ppr_method, seed=seed
    ):
        need = comparisons_for_target(m["curve"], target)
        verdict = (
            f"about {need:,} expert comparisons reach it"
            if need is not None
            else f"not reached with {m['curve'][-1]['n']:,} (the most tried)"
        )
        click.echo(f"  {m['mode']}: {m['candidates']} candidates, {m['comparisons']:,} comparisons; {verdict}")
        click.echo(f"    {'n':>7}  {'mean rank-set size [p10, p90]':<30}")
        for r in m["curve"]:
            click.echo(f"    {r['n']:>7,}  {r['mean_size']:.2f} [{r['size_p10']:.2f}, {r['size_p90']:.2f}]")


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
    type=click.FloatRange(0.0, 10.0),
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
    type=click.FloatRange(1.0, None),
    default=None,
    help="Prediction-powered rankings: how many uniformly random expert comparisons bring the mean rank-set "
    "size down to this (1 = a certain ranking). Without --experts/--per-expert only this is planned.",
)
@click.option(
    "--ppr-sizes",
    type=click.IntRange(1, 1_000_000),
    multiple=True,
    help="Numbers of expert comparisons to try for --ppr-target (default: 25, 50, 100, 200, 400, 800, 1600).",
)
@click.option(
    "--ppr-alpha",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=None,
    help="Error level of the planned rank-sets (default: the session's [statistics] ppr_alpha, 0.1).",
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
    study = open_session(session)
    designs = [(n, m, k) for n in experts for m in per_expert for k in overlap]
    for n, _, k in designs:
        if k > n:
            raise CentaurError(f"--overlap {k} needs at least {k} experts (got --experts {n})", title="Plan")
    # The overlap strategy gives groups of K experts the same M comparisons: ceil(N / K) groups.
    sizes = sorted(set(ppr_sizes or (25, 50, 100, 200, 400, 800, 1600)))
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
                value = "NaN" if math.isnan(r["value"]) else f"{r['value']:.3f}"
                click.echo(f"  {r['label']:<42} {value:>9}  {_width(r):<33} {r['defined']:>4}/{r['cases']}".rstrip())
        if len(designs) > 1:
            click.echo("")
            click.secho("Designs side by side (mean interval width; smaller is better)", bold=True)
            keys = ["expert_llm_agreement", "expert_expert_agreement", "spearman_pooled", "spearman_task"]
            click.echo(
                f"  {'N':>3} {'M':>5} {'K':>3} {'judgments':>10}  {'expert-LLM agr.':>15}  {'expert-expert':>13}  "
                f"{'Spearman pooled':>15}  {'Spearman/task':>13}"
            )
            for (n, m, k), judgments, summary in summary_rows:
                by = {r["key"]: r for r in summary}
                cells = ["-" if math.isnan(by[key]["width"]) else f"{by[key]['width']:.3f}" for key in keys]
                click.echo(
                    f"  {n:>3} {m:>5} {k:>3} {judgments:>10,.0f}  {cells[0]:>15}  {cells[1]:>13}  {cells[2]:>15}  "
                    f"{cells[3]:>13}"
                )
        if ppr_target is not None:
            _plan_ppr(source, comps, texts, llm_rows, knobs, reps, sizes, ppr_target, ppr_alpha, seed)
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
