"""Provides the `centaur` command: the click group of `cli/app.py` with every subcommand added."""

from __future__ import annotations

from centaur_tui.cli.app import cli
from centaur_tui.cli.expert_cmd import assign, judge, packet
from centaur_tui.cli.import_cmd import import_
from centaur_tui.cli.plan_cmd import plan
from centaur_tui.cli.report_cmd import report
from centaur_tui.cli.session_cmd import check, demo, export, run, tasks_cmd
from centaur_tui.cli.tui_cmd import tui
from centaur_tui.cli.work_cmd import assign_work, judge_work, work_report

__all__ = ["cli", "main"]

for command in (tasks_cmd, check, run, export, demo, report, import_, assign, packet, judge, tui, plan, assign_work,
                judge_work, work_report):
    cli.add_command(command)


def main() -> None:
    cli()
