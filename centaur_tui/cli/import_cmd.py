"""Provides `centaur import`: judgments in the export format (judgments.csv + scores.csv) into a session."""

from __future__ import annotations

from pathlib import Path

import click

from centaur_tui.services.session import open_session


@click.command("import")
@click.argument("session")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def import_(session: str, directory: Path) -> None:
    """Validate and store judgments from DIRECTORY (judgments.csv, scores.csv) in a session's database.

    The comparisons must already be in the session (run it first, or import into a copy of
    its database). Importing the same files twice stores nothing new; a judgment that differs
    from the stored one with the same key is a conflict and nothing is written.
    """
    from centaur_tui.services.exchange import import_csv

    result = import_csv(open_session(session), directory)
    if result.simulated:
        click.secho("Note: this session's own judgments are SIMULATED DATA.", fg="yellow")
    summary = result.summary
    click.echo(
        f"{directory}: {summary.judgments:,} judgments read; {summary.inserted:,} stored "
        f"({summary.scores:,} scores), {summary.unchanged:,} already stored identically."
    )
