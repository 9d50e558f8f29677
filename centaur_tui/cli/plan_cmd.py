"""Provides `centaur plan`: simulate an expert study to choose how many experts and judgments to pay for.

The comparisons, output texts and LLM verdicts come from the session's database when it has
been run; otherwise from a small simulated stand-in run in a temporary folder. The experts
are simulated judges (the simulated provider's judge with `--expert-noise`); each replicate
hands out new comparisons with the real assignment code and draws new verdicts, then runs the
report's experts-vs-LLM statistics. What is printed is what an organiser needs before
recruiting: the interval widths to expect for expert-LLM agreement and for the rank
correlation of the expert and LLM panels.
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

from centaur_tui.catalog import load_session
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study

EMPTY_SCORES = {"columns": ["judgment_id", "candidate", "dims", "mean"], "rows": [], "packed": []}
"""The plan needs verdicts only: no rubric scores are read."""
WIDTH = 100


def _read(database: Path) -> tuple[dict[str, Any], dict[str, tuple[str, str]], list[dict[str, Any]]]:
    from centaur_tui.store import Store, comparison_texts

    with Store(database) as store:
        comps = store.comparisons()
        if not comps:
            return {}, {}, []
        rows = [r for r in store.judgment_rows() if r["judge_kind"] == "llm"]
        return comps, comparison_texts(store), rows


def load_plan_source(study: Study, needed: int, folder: Path) -> tuple[Study, dict[str, Any], dict[str, tuple[str, str]],
                                                                       list[dict[str, Any]], str]:
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
            return study, comps, texts, rows, (f"the session's database {study.database} ({len(comps):,} comparisons, "
                                               f"{len(rows):,} LLM judgments)")
    runs = runs_needed(study, needed)
    stand_in = simulated_stand_in(study, folder, runs)
    run_stand_in(stand_in)
    comps, texts, rows = _read(stand_in.database)
    origin = (f"a simulated stand-in run of the session ({runs} run(s), {len(comps):,} comparisons, {len(rows):,} LLM "
              "judgments) in a temporary folder, because the session has not been run")
    if not study.session.fully_simulated:
        origin += ("; its real models were replaced by simulated ones with the session file's simulation knobs "
                   "(defaults where unset), so the rank-correlation widths reflect those knobs, not the real models")
    return stand_in, comps, texts, rows, origin


def simulate_design(
    study: Study, comps: dict[str, Any], texts: dict[str, tuple[str, str]], llm_rows: list[dict[str, Any]], n: int,
    m: int, k: int, knobs: Any, reps: int, bootstrap: int, seed: int,
) -> tuple[list[dict[str, Any]], list[int], list[int]]:
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
    first_id = max((r["judgment_id"] for r in llm_rows), default=0) + 1
    by_comparison: dict[str, list[dict[str, Any]]] = {}
    for r in llm_rows:
        by_comparison.setdefault(r["comparison_id"], []).append(r)
    docs, judged, compared = [], [], []
    for rep in range(reps):
        rep_seed = seed * 100_003 + rep
        assignments = plan_expert_study(comps, simulated_experts(n), m, k, rep_seed)
        records = simulate_expert_judgments(study, comps, texts, assignments, knobs, rep_seed)
        chosen = sorted({a.comparison_id for _, a in assignments})
        # Only the chosen comparisons matter: every statistic of the plan lives on the reference set.
        rows = [r for c in chosen for r in by_comparison.get(c, [])] + judgment_rows(records, comps, first_id)
        frames = build_frames(rows, None, None, [comps[c] for c in chosen], design, judge_kinds=("llm", "expert"),
                              option_score_rows=EMPTY_SCORES)
        result = experts_vs_llm(frames, ExpertOptions(bootstrap=bootstrap, seed=rep_seed,
                                                      parts=("agreement", "majority", "rankings", "alt_test")))
        docs.append(result.doc)
        judged.append(len(records))
        compared.append(len(chosen))
    return summarise_plan(docs), judged, compared


def _say(text: str, **style: Any) -> None:
    click.secho(textwrap.fill(text, width=WIDTH, subsequent_indent="  "), **style)


def _width(r: dict[str, Any]) -> str:
    if math.isnan(r["width"]):
        return "-"
    return f"{r['width']:.3f} [{r['width_p10']:.3f}, {r['width_p90']:.3f}]"


@click.command()
@click.argument("session")
@click.option("--experts", "experts", type=click.IntRange(min=1), multiple=True, required=True,
              help="Number of experts N (repeat the option to compare designs).")
@click.option("--per-expert", "per_expert", type=click.IntRange(min=1), multiple=True, required=True,
              help="Judgments per expert M (repeatable).")
@click.option("--overlap", "overlap", type=click.IntRange(min=1), multiple=True, default=(2,), show_default=True,
              help="Experts per comparison K (repeatable); 1 = every expert judges comparisons of its own.")
@click.option("--expert-noise", type=click.FloatRange(0.0, 10.0), default=0.8, show_default=True,
              help="SD of the simulated experts' rubric-score noise in points (LLM judges: set in the session).")
@click.option("--reps", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Simulated replicates of the expert study.")
@click.option("--bootstrap", type=click.IntRange(20, 100_000), default=200, show_default=True,
              help="Bootstrap replicates per interval.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
def plan(session: str, experts: tuple[int, ...], per_expert: tuple[int, ...], overlap: tuple[int, ...],
         expert_noise: float, reps: int, bootstrap: int, seed: int) -> None:
    """Simulate an expert study and print the interval widths to expect, before recruiting."""
    from centaur_tui.cli.main import resolve_session
    from centaur_tui.domain.session import JudgeSimulation

    started = time.perf_counter()
    study = load_session(resolve_session(session))
    designs = [(n, m, k) for n in experts for m in per_expert for k in overlap]
    for n, _, k in designs:
        if k > n:
            raise CentaurError(f"--overlap {k} needs at least {k} experts (got --experts {n})", title="Plan")
    # The overlap strategy gives groups of K experts the same M comparisons: ceil(N / K) groups.
    needed = max(math.ceil(n / k) * m for n, m, k in designs)
    folder = Path(tempfile.mkdtemp(prefix="centaur-plan-"))
    try:
        source, comps, texts, llm_rows, origin = load_plan_source(study, needed, folder)
        knobs = JudgeSimulation(noise=expert_noise)
        _say("SIMULATED EXPERTS: every expert verdict below comes from the simulated provider's judge.", fg="yellow")
        _say(f"Plan for session {study.session.name}: comparisons and LLM verdicts from {origin}.")
        _say(f"Simulated experts: rubric-score noise SD {expert_noise:g}, no position bias; each of {reps} "
             "replicate(s) assigns new comparisons (as `centaur assign --strategy overlap`) and draws new "
             f"verdicts; 95% intervals from {bootstrap} bootstrap replicates resampling comparisons.")
        summary_rows = []
        for n, m, k in designs:
            summary, judged, compared = simulate_design(source, comps, texts, llm_rows, n, m, k, knobs, reps,
                                                        bootstrap, seed)
            summary_rows.append(((n, m, k), sum(judged) / reps, summary))
            click.echo("")
            _say(f"N = {n} expert(s) x M = {m} judgment(s), overlap K = {k}: {sum(judged) / reps:,.0f} expert "
                 f"judgments on {sum(compared) / reps:,.0f} comparisons (mean over replicates)", bold=True)
            if sum(judged) < n * m * reps:
                _say(f"  The session holds {len(comps):,} comparisons: fewer judgments than asked could be "
                     "assigned.", fg="yellow")
            click.echo(f"  {'statistic':<42} {'expected':>9}  {'interval width: mean [p10, p90]':<33} {'defined':>9}")
            for r in summary:
                value = "NaN" if math.isnan(r["value"]) else f"{r['value']:.3f}"
                click.echo(f"  {r['label']:<42} {value:>9}  {_width(r):<33} {r['defined']:>4}/{r['cases']}".rstrip())
        if len(designs) > 1:
            click.echo("")
            click.secho("Designs side by side (mean interval width; smaller is better)", bold=True)
            keys = ["expert_llm_agreement", "expert_expert_agreement", "spearman_pooled", "spearman_task"]
            click.echo(f"  {'N':>3} {'M':>5} {'K':>3} {'judgments':>10}  {'expert-LLM agr.':>15}  {'expert-expert':>13}  "
                       f"{'Spearman pooled':>15}  {'Spearman/task':>13}")
            for (n, m, k), judgments, summary in summary_rows:
                by = {r["key"]: r for r in summary}
                cells = ["-" if math.isnan(by[key]["width"]) else f"{by[key]['width']:.3f}" for key in keys]
                click.echo(f"  {n:>3} {m:>5} {k:>3} {judgments:>10,.0f}  {cells[0]:>15}  {cells[1]:>13}  {cells[2]:>15}  "
                           f"{cells[3]:>13}")
        click.echo("")
        _say("'defined' counts cases (replicates x groups) where the statistic had a value; a rank correlation "
             "needs 3 candidates judged by both panels in the group, the alt-test 3 experts with 30 comparisons "
             "each judged by 3 experts (so K >= 3).")
        click.echo(f"Planned in {time.perf_counter() - started:.1f}s.")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
