"""Provides `centaur status`: per mode (all tasks) and per task, for each pair: has the study answered?

A thin front end over `services.status.study_status` (the stopping rule of `stats.stopping`).
"""

from __future__ import annotations

import click

from centaur_tui.cli.params import FINITE
from centaur_tui.services.session import open_session


@click.command()
@click.argument("session")
@click.option(
    "--margin",
    type=FINITE,
    default=None,
    help="Equivalence margin on the win-rate difference, in (0, 1) (default: the session's "
    "[study] equivalence_margin, 0.1).",
)
@click.option(
    "--alpha",
    type=FINITE,
    default=None,
    help="Error level of the confidence sequences per pair, in (0, 1) (default: [study] stop_alpha, 0.05).",
)
def status(session: str, margin: float | None, alpha: float | None) -> None:
    """Say per pair of candidates: separated, equivalent within the margin, or how many more expert comparisons."""
    from centaur_tui.services.status import describe, study_status, summary

    study = open_session(session)
    result = study_status(study, alpha=alpha, margin=margin)
    click.secho(f"Stopping status of session {study.session.name}", bold=True)
    click.echo(
        f"Anytime-valid confidence sequences (normal mixture, Howard et al. 2021) on the expert win-rate difference "
        f"P(first wins) - P(second wins) per pair, alpha = {result.alpha:g} per pair over every look; equivalence "
        f"margin +-{result.margin:g}. n = expert comparisons of the pair (experts on one comparison averaged)."
    )
    left = ", ".join(f"{k} {v:,}" for k, v in result.left_out.items()) or "none"
    click.echo(f"Expert judgments used: {result.judgments:,}; left out: {left}.")
    if not result.judgments:
        click.echo("No expert comparison yet: nothing to decide (assign comparisons with `centaur assign`).")
        return
    click.echo(summary(result))
    last = None
    for row in [*result.pooled, *result.rows]:
        if (row.task, row.mode) != last:
            last = (row.task, row.mode)
            click.echo("")
            click.secho(f"{row.task} / {row.mode}", bold=True)
        s = row.status
        interval = "" if s.n == 0 else f"  diff {s.difference:+.2f} [{s.low:+.2f}, {s.high:+.2f}]"
        click.echo(f"  {row.first} vs {row.second}:{interval}  {describe(row, result.margin)}")
