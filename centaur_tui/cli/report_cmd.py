"""Provides `centaur report`: every CentaurBench table and figure from a session's judgments.

A thin front end over the report use case (`services.report.session_report`, also used by
the app's report process) and the document's renderers (`centaur_tui.report`). The
statistics (pandas, scipy, krippendorff, matplotlib) are imported inside the command, so
`centaur --help` and the other commands start without them.
"""

from __future__ import annotations

import time
from pathlib import Path

import click

from centaur_tui.services.session import open_session

RANK_METHODS = ("mean_win_rate", "rank_per_judge", "pooled")


@click.command()
@click.argument("session")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON.")
@click.option("--markdown", "md_file", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown report.")
@click.option("--figures", "fig_dir", type=click.Path(file_okay=False, path_type=Path), help="Draw PNG figures here.")
@click.option(
    "--rank-method",
    type=click.Choice(RANK_METHODS),
    default="mean_win_rate",
    show_default=True,
    help="Within-run rank: mean win rate over judges, per-judge ranks averaged, or pooled win rate.",
)
@click.option(
    "--judges",
    type=click.Choice(["llm", "expert", "all"]),
    default="llm",
    show_default=True,
    help="Which judges' judgments the statistics use.",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(0, 100_000),
    default=200,
    show_default=True,
    help="Bradley-Terry bootstrap replicates (0: no intervals).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--no-exact-p", is_flag=True, help="Skip the exact permutation p-values of the cross-mode correlations.")
@click.option(
    "--min-gold-pass",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Leave out of every statistic the experts whose gold-check pass rate is below this "
    "(default: the session's judging.expert_min_gold_pass; the report says who and why).",
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
    min_gold_pass: float | None,
    quiet: bool,
) -> None:
    """Print every statistic of a session: rankings, best by task, cross-mode, reliability, validity."""
    from centaur_tui.report import to_json, to_markdown, to_text
    from centaur_tui.services.report import session_report

    study = open_session(session)
    started = time.perf_counter()
    kinds = ("llm", "expert") if judges == "all" else (judges,)
    rep = session_report(
        study,
        min_gold_pass=min_gold_pass,
        rank_method=rank_method,
        judge_kinds=kinds,
        bootstrap=bootstrap,
        seed=seed,
        permutation=not no_exact_p,
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
