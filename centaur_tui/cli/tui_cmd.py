"""Provides `centaur tui [SESSION]`: the Textual app on the sessions, or on one session."""

from __future__ import annotations

import click

from centaur_tui.cli.app import open_app


@click.command()
@click.argument("session", required=False)
@click.option("--expert", default=None, help="Open this expert's judging queue at once (needs SESSION).")
@click.option("--run", "run", is_flag=True, help="Start the session's pipeline on opening when calls are left.")
@click.option(
    "--theme",
    type=click.Choice(["default", "high-contrast"]),
    default=None,
    help="Colours: default, or high-contrast (white on black); default: CENTAUR_THEME, else default. f9 switches.",
)
@click.option(
    "--expert-only",
    is_flag=True,
    help="With --expert: only that expert's queues (judging, writing), no pipeline or results (the terminal "
    "twin of the web pages `centaur serve` gives each expert).",
)
def tui(session: str | None, expert: str | None, run: bool, theme: str | None, expert_only: bool) -> None:
    """Open the app: the sessions in sessions/, or one session's overview."""
    if expert and not session:
        raise click.UsageError("--expert needs a SESSION")
    if expert_only and not expert:
        raise click.UsageError("--expert-only needs --expert")
    if expert_only and run:
        raise click.UsageError("--expert-only runs no pipeline: leave out --run")
    open_app(session, expert=expert, run=run, theme=theme, expert_only=expert_only)
