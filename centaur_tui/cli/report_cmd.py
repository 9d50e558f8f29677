"""Provides `centaur report`: every CentaurBench table and figure from a session's judgments.

A thin front end over the report use case (`services.report.session_report`, also used by
the app's report process) and the document's renderers (`centaur_tui.report`). The
statistics (pandas, scipy, krippendorff, matplotlib) are imported inside the command, so
`centaur --help` and the other commands start without them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from centaur_tui.cli.params import FiniteRange
from centaur_tui.domain.report_options import PPR_MIN_LABELED_FLOOR, RANK_METHODS, REPORT_DEFAULTS, REPORT_SECTIONS
from centaur_tui.services.session import open_session

D = REPORT_DEFAULTS
"""Every flag's default (`domain.report_options`: the services and the app take the same)."""


def _min_labeled_guard(ctx: click.Context, param: click.Parameter, value: int) -> int:
    """Refuse a `--ppr-min-labeled` below the measured floor (exit status 2, nothing computed)."""
    if value < PPR_MIN_LABELED_FLOOR:
        raise click.BadParameter(
            f"{value} is below {PPR_MIN_LABELED_FLOOR}: with fewer expert comparisons per candidate the rank-sets' "
            f"normal approximation fails (at 1, they covered the experts' ranking in 35-55% of simulated studies "
            f"where 90% was asked; docs/statistics.md). Use {PPR_MIN_LABELED_FLOOR} or more.",
            ctx=ctx,
            param=param,
        )
    return value


@click.command()
@click.argument("session")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON.")
@click.option("--markdown", "md_file", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown report.")
@click.option("--figures", "fig_dir", type=click.Path(file_okay=False, path_type=Path), help="Draw PNG figures here.")
@click.option(
    "--rank-method",
    type=click.Choice(RANK_METHODS),
    default=D.rank_method,
    show_default=True,
    help="Within-run rank: mean win rate over judges, per-judge ranks averaged, or pooled win rate.",
)
@click.option(
    "--judges",
    type=click.Choice(["llm", "expert", "all"]),
    default=D.judge_kinds[0] if len(D.judge_kinds) == 1 else "all",
    show_default=True,
    help="Which judges' judgments the statistics use.",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(0, 100_000),
    default=D.bootstrap,
    show_default=True,
    help="Bradley-Terry bootstrap replicates (0: no intervals).",
)
@click.option("--seed", type=int, default=D.seed, show_default=True, help="Seed of the bootstrap.")
@click.option("--no-exact-p", is_flag=True, help="Skip the exact permutation p-values of the cross-mode correlations.")
@click.option(
    "--alt-epsilon",
    type=FiniteRange(0.0, 1.0),
    default=D.alt_epsilon,
    show_default=True,
    help="Alternative annotator test: the advantage an expert may keep (0.2 experts, 0.15 skilled, 0.1 crowd); "
    "default: the session's [statistics] alt_epsilon.",
)
@click.option(
    "--alt-min-experts",
    type=click.IntRange(2, 1000),
    default=D.alt_min_experts_per_item,
    show_default=True,
    help="Alternative annotator test: fewest experts on a comparison (the authors allow 2); default: the "
    "session's [statistics] alt_min_experts_per_item.",
)
@click.option(
    "--ppr-alpha",
    type=FiniteRange(0.0, 1.0, min_open=True, max_open=True),
    default=D.ppr_alpha,
    show_default=True,
    help="Prediction-powered rank-sets cover the experts' ranking with probability >= 1 - alpha; default: the "
    "session's [statistics] ppr_alpha.",
)
@click.option(
    "--ppr-method",
    type=click.Choice(["maxt", "chatzi", "bonferroni"]),
    default=D.ppr_method,
    show_default=True,
    help="Simultaneous intervals of the rank-sets: step-down max-t over the pairwise differences, the paper's "
    "chi-square ellipsoid, or Bonferroni over pairs; default: the session's [statistics] ppr_method.",
)
@click.option(
    "--ppr-estimator",
    type=click.Choice(["panel", "mean"]),
    default=D.ppr_estimator,
    show_default=True,
    help="panel: every LLM judge is a prediction, one variance-minimising lambda pooled over candidates; mean: "
    "the panel's mean points, a lambda per candidate (the estimator before 0.x).",
)
@click.option(
    "--ppr-ties",
    type=click.Choice(["half", "drop"]),
    default=D.ppr_ties,
    show_default=True,
    help="A tie counts 0.5 for each side (half), or is dropped: the share of wins among decisive verdicts "
    "(drop; panel estimator only).",
)
@click.option(
    "--ppr-lambda",
    "ppr_lam",
    type=click.Choice(["tuned", "one", "zero"]),
    default=D.ppr_lam,
    show_default=True,
    help="Weight of the LLM comparisons: tuned (PPI++), one (PPI), zero (experts only).",
)
@click.option(
    "--ppr-any-subset",
    is_flag=True,
    help="Use every expert judgment for the prediction-powered rankings, not only uniform-random draws (flagged).",
)
@click.option(
    "--ppr-min-labeled",
    type=click.IntRange(1, 1_000_000),
    default=D.ppr_min_labeled,
    show_default=True,
    callback=_min_labeled_guard,
    help="Fewest expert comparisons of a candidate for the prediction-powered ranking to order it "
    f"(at least {PPR_MIN_LABELED_FLOOR}: fewer lets the rank-sets miss the experts' ranking far more often than "
    "alpha; see docs/statistics.md).",
)
@click.option(
    "--min-gold-pass",
    type=FiniteRange(0.0, 1.0),
    default=None,
    help="Leave out of every statistic the experts whose gold-check pass rate is below this "
    "(default: the session's judging.expert_min_gold_pass; the report says who and why).",
)
@click.option(
    "--section",
    type=click.Choice(REPORT_SECTIONS),
    default=None,
    help="Compute and print this section alone (after the header): " + ", ".join(REPORT_SECTIONS) + ".",
)
@click.option(
    "--adjudicated-reference",
    is_flag=True,
    help="Add the adjudicated verdicts (centaur adjudicate) to the agreement matrix as the reference labels of "
    "the judge 'adjudicated' (the report says so); no other statistic reads them.",
)
@click.option("--quiet", is_flag=True, help="Print nothing but the files written.")
def report(
    session: str,
    json_file: Path | None,
    md_file: Path | None,
    fig_dir: Path | None,
    rank_method: str,
    judges: str,
    bootstrap: int,
    seed: int,
    no_exact_p: bool,
    alt_epsilon: float,
    alt_min_experts: int,
    ppr_alpha: float,
    ppr_method: str,
    ppr_lam: str,
    ppr_any_subset: bool,
    ppr_min_labeled: int,
    ppr_estimator: str,
    ppr_ties: str,
    min_gold_pass: float | None,
    section: str | None,
    adjudicated_reference: bool,
    quiet: bool,
) -> None:
    """Print every statistic of a session: rankings, best by task, cross-mode, reliability, validity."""
    from centaur_tui.report import to_json, to_markdown, to_text
    from centaur_tui.services.report import session_report

    if section is not None and fig_dir is not None:
        raise click.UsageError("--figures draws every section's figures: leave out --section, or --figures")
    if ppr_ties == "drop" and ppr_estimator != "panel":
        raise click.UsageError("--ppr-ties drop needs --ppr-estimator panel (the mean estimator counts a tie 0.5)")
    study = open_session(session)
    started = time.perf_counter()
    kinds = ("llm", "expert") if judges == "all" else (judges,)
    ctx = click.get_current_context()
    # Flags given on the command line win; the others come from the session's [statistics].
    flags = (
        ("alt_epsilon", "alt_epsilon", alt_epsilon),
        ("alt_min_experts_per_item", "alt_min_experts", alt_min_experts),
        ("ppr_alpha", "ppr_alpha", ppr_alpha),
        ("ppr_method", "ppr_method", ppr_method),
    )
    given: dict[str, Any] = {
        option: value
        for option, param, value in flags
        if ctx.get_parameter_source(param) == click.core.ParameterSource.COMMANDLINE
    }
    rep = session_report(
        study,
        min_gold_pass=min_gold_pass,
        adjudicated_reference=adjudicated_reference,
        rank_method=rank_method,
        judge_kinds=kinds,
        bootstrap=bootstrap,
        seed=seed,
        permutation=not no_exact_p,
        ppr_lam=ppr_lam,
        ppr_any_subset=ppr_any_subset,
        ppr_min_labeled=ppr_min_labeled,
        ppr_estimator=ppr_estimator,
        ppr_ties=ppr_ties,
        human_workers=False if section is not None else None,
        section=section,
        **given,
    )
    document = rep.document
    if quiet:
        if document.simulated:
            click.secho(document.banner, fg="yellow", err=True)
    else:
        click.echo(to_text(document), nl=False)
    written: list[Path] = []
    if json_file is not None:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(to_json(document), encoding="utf-8")
        written.append(json_file)
    if md_file is not None:
        md_file.parent.mkdir(parents=True, exist_ok=True)
        md_file.write_text(to_markdown(document), encoding="utf-8")
        written.append(md_file)
    if fig_dir is not None:
        from centaur_tui.stats.figures import draw_all

        written += draw_all(rep, fig_dir)
    for path in written:
        click.echo(f"wrote {path}")
    if not quiet:
        click.echo(f"Report built in {time.perf_counter() - started:.2f}s.")
