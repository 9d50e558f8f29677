"""Provides `centaur import`: judgments in the export format (judgments.csv + scores.csv) into a session."""

from __future__ import annotations

from pathlib import Path

import click

from centaur_tui.services.session import open_session


def _ids(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """`--add-experts ann,bob --add-experts cy` as ('ann', 'bob', 'cy')."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@click.command("import")
@click.argument("session")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--add-experts",
    "add_experts",
    multiple=True,
    callback=_ids,
    metavar="ID[,ID...]",
    help="Register these expert ids with the import (every other expert must be registered already).",
)
@click.option(
    "--external",
    is_flag=True,
    help="The files were made by another tool and have no session.json (every other check still applies).",
)
def import_(session: str, directory: Path, add_experts: tuple[str, ...], external: bool) -> None:
    """Validate and store judgments from DIRECTORY (judgments.csv, scores.csv, session.json) in a session's database.

    The comparisons must already be in the session (run it first, or import into a copy of
    its database), and the files must come from this session's database (session.json, which
    `centaur export` writes). Every judge must be one of the session's LLM judges, eligible for
    the comparison (leave-family-out), or a registered expert. Importing the same files twice
    stores nothing new; on any problem nothing is written and the command exits with status 2.
    """
    from centaur_tui.services.exchange import import_csv

    result = import_csv(open_session(session), directory, add_experts=add_experts, external=external)
    if result.simulated:
        click.secho("Note: this session's own judgments are SIMULATED DATA.", fg="yellow")
    summary = result.summary
    click.echo(
        f"{directory}: {summary.judgments:,} judgments read; {summary.inserted:,} stored "
        f"({summary.scores:,} scores), {summary.unchanged:,} already stored identically; 0 refused."
    )
    for t in summary.by_judge:
        click.echo(f"  {t.judge} ({t.kind}): {t.inserted:,} stored, {t.unchanged:,} already stored")
    if summary.experts_added:
        click.echo(f"Registered expert(s): {', '.join(summary.experts_added)}")
    if not summary.bound:
        click.echo("No session.json: imported as files made by another tool (--external); judges were checked.")
