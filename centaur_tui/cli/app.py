"""Provides the `centaur` click group and the helpers every subcommand shares (errors, banner, opening the app).

Subcommand modules import this module and `centaur_tui.services`, never `cli/main.py`, which
only assembles them: there is no import circle inside `cli/`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import click

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.untrusted import clean_untrusted
from centaur_tui.services.session import SIMULATED_BANNER, resolve_session, sessions_dir

log = logging.getLogger(__name__)


class CentaurGroup(click.Group):
    """Prints CentaurErrors as one clear line and exits with their status, instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CentaurError as exc:
            # Messages may quote a provider or a file: no escape sequence reaches the terminal, no key the screen.
            message = clean_untrusted(exc.message, limit=20_000)
            log.warning("%s: %s: %s", ctx.info_name, exc.title, message)
            click.secho(f"{exc.title}: {message}", fg="red", err=True)
            sys.exit(exc.exit_code)


def say_simulated() -> None:
    """The banner every command prints before showing simulated data."""
    click.secho(SIMULATED_BANNER, fg="yellow")


def open_app(
    session: str | None = None,
    expert: str | None = None,
    run: bool = False,
    theme: str | None = None,
    expert_only: bool = False,
) -> None:
    """Run the app until the user quits; textual is imported only here.

    Args:
        theme: "default" or "high-contrast"; None: `CENTAUR_THEME` (default: "default").
        expert_only: the app of one expert (`centaur serve`): their queues only.
    """
    from centaur_tui.settings import settings
    from centaur_tui.ui.app import create_app

    path = resolve_session(session) if session else None
    if path is not None and not path.exists():
        raise CentaurError(f"{path}: no such session file", title="Unknown session")
    chosen = theme or settings().theme
    create_app(
        sessions_dir=sessions_dir(), session=path, expert=expert, run=run, theme=chosen, expert_only=expert_only
    ).run()


@click.group(cls=CentaurGroup, invoke_without_command=True)
@click.pass_context
def cli(ctx: click.Context) -> None:
    """centaur-tui: run CentaurBench sessions and let experts judge them blind."""
    if ctx.invoked_subcommand is None:
        if sys.stdin.isatty() and sys.stdout.isatty():
            open_app()
        else:
            click.echo(ctx.get_help())
