"""Provides the `centaur` command: the click group of `cli/app.py` with every subcommand added."""

from __future__ import annotations

import logging
import os
import sys

import click

from centaur_tui import __version__
from centaur_tui.cli.adjudicate_cmd import adjudicate
from centaur_tui.cli.app import cli
from centaur_tui.cli.exam_cmd import exam
from centaur_tui.cli.expert_cmd import assign, judge, packet
from centaur_tui.cli.import_cmd import import_, import_outputs
from centaur_tui.cli.plan_cmd import plan
from centaur_tui.cli.record_cmd import bundle, verify
from centaur_tui.cli.report_cmd import report
from centaur_tui.cli.search_cmd import search
from centaur_tui.cli.serve_cmd import expert, organiser, serve
from centaur_tui.cli.session_cmd import check, demo, export, migrate, run, tasks_cmd
from centaur_tui.cli.status_cmd import status
from centaur_tui.cli.tui_cmd import tui
from centaur_tui.cli.work_cmd import assign_work, judge_work, work_report
from centaur_tui.domain.errors import CentaurError
from centaur_tui.logs import configure_logging

__all__ = ["cli", "main"]

log = logging.getLogger(__name__)

for command in (
    tasks_cmd,
    check,
    run,
    migrate,
    export,
    demo,
    report,
    import_,
    import_outputs,
    assign,
    packet,
    judge,
    tui,
    plan,
    assign_work,
    judge_work,
    work_report,
    serve,
    expert,
    organiser,
    verify,
    bundle,
    adjudicate,
    search,
    status,
    exam,
):
    cli.add_command(command)


def main() -> None:
    """The `centaur` entry point: logging to its file first (never the screen), then the command."""
    try:
        path = configure_logging()
    except CentaurError as exc:  # a bad CENTAUR_LOG_* value: said like any other error, before any command
        click.secho(f"{exc.title}: {exc.message}", fg="red", err=True)
        sys.exit(exc.exit_code)
    log.info("centaur %s started (pid %d, log %s): %s", __version__, os.getpid(), path, " ".join(sys.argv[1:]))
    cli()
