"""Provides the human-worker commands: `centaur assign-work`, `centaur judge-work` and `centaur work-report`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from centaur_tui.catalog import load_session
from centaur_tui.cli.expert_cmd import _open_existing
from centaur_tui.cli.main import SIMULATED_BANNER, resolve_session


@click.command("assign-work")
@click.argument("session")
def assign_work(session: str) -> None:
    """Assign the session's human-worker arm: each expert each task once, conditions balanced."""
    from centaur_tui.domain.work_design import balance
    from centaur_tui.store.work import WorkStore

    study = load_session(resolve_session(session))
    with _open_existing(study) as store:
        added, design = WorkStore(store).assign(study)
    arm = study.session.human_workers
    assert arm is not None
    spread = balance(design, arm.conditions)
    click.echo(
        f"Assigned {added} new deliverable(s) ({len(design) - added} already stored): {len(arm.experts)} expert(s) x "
        f"{len(arm.tasks)} task(s), {len(arm.conditions)} condition(s)."
    )
    for expert in arm.experts:
        mine = [a for a in design if a.expert == expert]
        counts = Counter(a.condition for a in mine)
        click.echo(f"  {expert}: " + ", ".join(f"{a.task} ({a.condition})" for a in mine))
        click.echo(f"    conditions: " + ", ".join(f"{c} {counts[c]}" for c in arm.conditions))
    click.echo(
        f"Balance (largest difference in condition counts): per task {spread['task']}, per expert {spread['expert']}, "
        f"overall {spread['overall']}."
    )


@click.command("judge-work")
@click.argument("session")
def judge_work(session: str) -> None:
    """Judge the submitted expert deliverables with the LLM judges (round robin per task, leave-family-out)."""
    from centaur_tui.cli.main import _require_keys
    from centaur_tui.pipeline.human_arm import judge_human_arm

    study = load_session(resolve_session(session))
    _require_keys(study)
    if study.session.simulated:
        click.secho(SIMULATED_BANNER, fg="yellow")
    with _open_existing(study) as store:
        outcome = judge_human_arm(study, store)
    click.echo(
        f"{outcome.comparisons} comparison(s) of expert deliverables; {outcome.judgments_done} of "
        f"{outcome.judgments_planned} judgment(s) stored."
    )
    if outcome.without_judge:
        click.secho(f"{outcome.without_judge} comparison(s) have no eligible judge (leave-family-out).", fg="yellow")


@click.command("work-report")
@click.argument("session")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Also write the section as JSON.")
def work_report(session: str, json_file: Path | None) -> None:
    """Print which assistant helps human workers most (next to the worker model) and productivity per condition."""
    import json

    from centaur_tui.report import human_workers_text
    from centaur_tui.services.report import session_report

    study = load_session(resolve_session(session))
    rep = session_report(study, human_workers=True, bootstrap=0, permutation=False)
    section = rep.doc["human_workers"]
    if rep.document.simulated:
        click.secho(SIMULATED_BANNER, fg="yellow")
    click.echo(human_workers_text(rep.document), nl=False)
    if json_file is not None:
        json_file.write_text(json.dumps(section, indent=2, allow_nan=False) + "\n", encoding="utf-8")
        click.echo(f"wrote {json_file}")
