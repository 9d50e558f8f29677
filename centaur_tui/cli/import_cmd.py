"""Provides `centaur import`: judgments in the export format (judgments.csv + scores.csv) into a session."""

from __future__ import annotations

from pathlib import Path

import click

from centaur_tui.catalog import load_session
from centaur_tui.domain.errors import CentaurError


@click.command("import")
@click.argument("session")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def import_(session: str, directory: Path) -> None:
    """Validate and store judgments from DIRECTORY (judgments.csv, scores.csv) in a session's database.

    The comparisons must already be in the session (run it first, or import into a copy of
    its database). Importing the same files twice stores nothing new; a judgment that differs
    from the stored one with the same key is a conflict and nothing is written.
    """
    from centaur_tui.cli.main import resolve_session
    from centaur_tui.store import Store, import_export

    study = load_session(resolve_session(session))
    if not study.database.exists():
        raise CentaurError(
            f"{study.database} does not exist yet: run the session first, so its comparisons are stored",
            title="Nothing to import into",
        )
    rubrics = {t: study.rubric(t) for t in study.tasks}
    with Store(study.database) as store:
        simulated = store.meta().get("simulated") == "true"
        summary = import_export(store, directory, rubrics)
    if simulated:
        click.secho("Note: this session's own judgments are SIMULATED DATA.", fg="yellow")
    click.echo(
        f"{directory}: {summary.judgments:,} judgments read; {summary.inserted:,} stored "
        f"({summary.scores:,} scores), {summary.unchanged:,} already stored identically."
    )
