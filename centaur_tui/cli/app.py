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
from centaur_tui.services.session import SIMULATED_BANNER, find_session, sessions_dir

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


def require_terminal(command: str) -> None:
    """Refuse to open the app unless standard input and output are a terminal.

    Without one the app wrote escape codes into a pipe and then spun for minutes after its
    reader had gone (`centaur tui demo | head`, issue 21).

    Raises:
        CentaurError: Exit status 2, naming the stream that is not a terminal and what to run instead.
    """
    streams = (("standard input", sys.stdin), ("standard output", sys.stdout))
    missing = [name for name, stream in streams if stream is None or not stream.isatty()]
    if missing:
        raise CentaurError(
            f"`{command}` draws the app on a terminal, and its {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not one (a pipe or a file): nothing was opened. "
            "Run it in a terminal; without one, `centaur run SESSION` runs a session, `centaur report SESSION` "
            "prints its results and `centaur demo` runs, exports and reports the demo.",
            title="Not a terminal",
        )


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

    path = find_session(session) if session else None
    require_terminal("centaur tui")
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
