"""Provides the human-worker commands: `centaur assign-work` and `centaur judge-work`."""

from __future__ import annotations

from collections import Counter

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
