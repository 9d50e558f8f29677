"""Provides `centaur tui [SESSION]` and the bare `centaur` on a terminal: the Textual app."""

from __future__ import annotations

from pathlib import Path

import click

from centaur_tui.cli.main import resolve_session
from centaur_tui.settings import settings


def sessions_dir() -> Path:
    return settings().sessions


def open_app(session: str | None = None, expert: str | None = None, run: bool = False) -> None:
    """Run the app until the user quits; textual is imported only here."""
    from centaur_tui.ui.app import create_app

    path = resolve_session(session) if session else None
    if path is not None and not path.exists():
        from centaur_tui.domain.errors import CentaurError

        raise CentaurError(f"{path}: no such session file", title="Unknown session")
    create_app(sessions_dir=sessions_dir(), session=path, expert=expert, run=run).run()


@click.command()
@click.argument("session", required=False)
@click.option("--expert", default=None, help="Open this expert's judging queue at once (needs SESSION).")
@click.option("--run", "run", is_flag=True, help="Start the session's pipeline on opening when calls are left.")
def tui(session: str | None, expert: str | None, run: bool) -> None:
    """Open the app: the sessions in sessions/, or one session's overview."""
    if expert and not session:
        raise click.UsageError("--expert needs a SESSION")
    open_app(session, expert=expert, run=run)
