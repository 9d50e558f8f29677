"""Provides the human-worker commands: `centaur assign-work`, `centaur judge-work` and `centaur work-report`."""

from __future__ import annotations

from pathlib import Path

import click

from centaur_tui.cli.app import say_simulated
from centaur_tui.services.session import open_session, open_store


@click.command("assign-work")
@click.argument("session")
def assign_work(session: str) -> None:
    """Assign the session's human-worker arm: each expert each task once, conditions balanced."""
    from centaur_tui.services.work import assign_work as assign

    study = open_session(session)
    with open_store(study) as store:
        result = assign(study, store)
    arm = study.session.human_workers
    assert arm is not None  # assign_work refuses a session without the arm
    click.echo(
        f"Assigned {result.added} new deliverable(s) ({len(result.design) - result.added} already stored): "
        f"{len(arm.experts)} expert(s) x {len(arm.tasks)} task(s), {len(arm.conditions)} condition(s)."
    )
    for expert in arm.experts:
        counts = result.conditions_of(expert)
        click.echo(f"  {expert}: " + ", ".join(f"{a.task} ({a.condition})" for a in result.of(expert)))
        click.echo("    conditions: " + ", ".join(f"{c} {counts[c]}" for c in arm.conditions))
    spread = result.spread
    click.echo(
        f"Balance (largest difference in condition counts): per task {spread['task']}, per expert {spread['expert']}, "
        f"overall {spread['overall']}."
    )


@click.command("judge-work")
@click.argument("session")
def judge_work(session: str) -> None:
    """Judge the submitted expert deliverables with the LLM judges (round robin per task, leave-family-out)."""
    from centaur_tui.services.session import require_keys
    from centaur_tui.services.work import judge_work as judge

    study = open_session(session)
    require_keys(study)
    if study.session.simulated:
        say_simulated()
    with open_store(study) as store:
        outcome = judge(study, store)
    click.echo(
        f"{outcome.comparisons} comparison(s) of expert deliverables; {outcome.judgments_done} of "
        f"{outcome.judgments_planned} judgment(s) stored."
    )
    if outcome.without_judge:
        click.secho(f"{outcome.without_judge} comparison(s) have no eligible judge (leave-family-out).", fg="yellow")


@click.command("work-report")
@click.argument("session")
@click.option(
    "--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Also write the section as JSON."
)
def work_report(session: str, json_file: Path | None) -> None:
    """Print which assistant helps human workers most (next to the worker model) and productivity per condition."""
    import json

    from centaur_tui.report import human_workers_text
    from centaur_tui.services.report import session_report

    study = open_session(session)
    rep = session_report(study, human_workers=True, bootstrap=0, permutation=False)
    section = rep.document.human_workers
    if rep.document.simulated:
        say_simulated()
    click.echo(human_workers_text(rep.document), nl=False)
    from centaur_tui.services.live_assistant import live_assistant_summary, live_assistant_text

    with open_store(study, readonly=True) as store:
        live = live_assistant_summary(study, store)  # empty unless [augmentation] turns > 1 (issue 28)
    if live:
        click.echo(live_assistant_text(live, study.session.augmentation.turns - 1), nl=False)
    if json_file is not None:
        data = section.to_dict() if section is not None else None
        if live and data is not None:
            data["live_assistant"] = [r.to_dict() for r in live]
        json_file.write_text(json.dumps(data, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        click.echo(f"wrote {json_file}")
