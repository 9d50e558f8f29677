"""Provides `centaur exam`: the LLM judges' admission exam on planted-flaw pairs, and its result."""

from __future__ import annotations

import sys

import click

from centaur_tui.services.session import open_session


@click.command()
@click.argument("session")
@click.option(
    "--per-kind",
    type=click.IntRange(1, 100),
    default=None,
    help="Planted pairs per task and flaw kind (default: the session's judging.exam_per_kind).",
)
@click.option(
    "--seed", type=click.IntRange(0, 2**31 - 1), default=None, help="The exam's seed (default: the session's)."
)
def exam(session: str, per_kind: int | None, seed: int | None) -> None:
    """Ask every LLM judge planted-flaw pairs in both orders and report position-consistent accuracy.

    Each pair is a stored deliverable against a copy with one seeded flaw (a wrong number, a dropped
    requirement, a contradicted constraint). Calls are stored like every other call: a second run
    sends nothing. Exits 3 when calls failed for good (run again to retry them).
    """
    from centaur_tui.report.render import exam_parts_sections, sections_text
    from centaur_tui.services.exam import run_exam
    from centaur_tui.services.exam_report import exam_section, served_section
    from centaur_tui.services.session import open_store

    study = open_session(session)
    outcome = run_exam(study, per_kind, seed)
    c = outcome.counts
    click.echo(
        f"exam of {study.session.name} (seed {outcome.seed}): {outcome.planted} planted pair(s) of {outcome.pairs} "
        f"slot(s), {outcome.questions} question(s): {c['answered']} answered, {c['invalid']} invalid, "
        f"{c['failed']} failed, {c['cached']} stored before, {c['not_sent']} not sent (budget)"
    )
    with open_store(study, readonly=True) as store:
        section, served = exam_section(study, store), served_section(study, store)
    click.echo(sections_text(exam_parts_sections(section, served, study.session.simulated)), nl=False)
    if c["failed"]:
        sys.exit(3)
