"""Provides the expert commands: `centaur assign`, `centaur packet export|import` and `centaur judge`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click

from centaur_tui.catalog import load_session
from centaur_tui.cli.main import resolve_session
from centaur_tui.domain.assignment import STRATEGIES, plan_assignments
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.store import Store


def _open_existing(study: Study) -> Store:
    """The session's database; it must exist (the store is imported here to keep `centaur` quick)."""
    from centaur_tui.store import Store

    if not study.database.exists():
        raise CentaurError(
            f"{study.database} does not exist yet: run the session first (`centaur run {study.session_file}`)",
            title="No comparisons yet",
        )
    return Store(study.database)


@click.command()
@click.argument("session")
@click.option("--expert", "expert_id", required=True, help="Expert id (from the session file or added in the app).")
@click.option("--n", "n", type=click.IntRange(min=1), required=True, help="How many places to add to the queue.")
@click.option("--strategy", type=click.Choice(STRATEGIES), default="stratified", show_default=True,
              help="stratified: spread over tasks, modes, pairs; overlap: each comparison to K experts; "
                   "disagreement: where LLM judges split first.")
@click.option("--overlap", "overlap", type=click.IntRange(min=2), default=2, show_default=True,
              help="K for --strategy overlap: experts per comparison.")
@click.option("--repeat-share", type=click.FloatRange(0.0, 1.0, max_open=True), default=0.0, show_default=True,
              help="Share of the places given to swapped repeats (test-retest).")
def assign(session: str, expert_id: str, n: int, strategy: str, overlap: int, repeat_share: float) -> None:
    """Add comparisons to an expert's judging queue (only tasks the expert may judge)."""
    from centaur_tui.store import ExpertStore

    study = load_session(resolve_session(session))
    with _open_existing(study) as store:
        experts = ExpertStore(store)
        expert = experts.expert(study, expert_id)
        pool = experts.pool()
        if not pool:
            raise CentaurError("the session has no comparisons yet: run it first", title="No comparisons yet")
        planned = plan_assignments(
            pool, expert, experts.existing(), n, strategy, study.session.seed, overlap=overlap,
            repeat_share=repeat_share,
        )
        added = experts.add_assignments(expert.id, planned)
        assigned, judged = experts.workload().get(expert.id, (0, 0))
    by_id = {c.id: c for c in pool}
    repeats = sum(p.repeat for p in planned)
    click.echo(
        f"Assigned {added} place(s) to {expert.id} ({expert.name}) with strategy {strategy}: "
        f"{added - repeats} new comparison(s), {repeats} swapped repeat(s)."
    )
    if added < n:
        click.secho(f"Only {added} of {n} could be assigned: the eligible pool ran out.", fg="yellow")
    tasks = Counter(by_id[p.comparison_id].task for p in planned)
    modes = Counter(by_id[p.comparison_id].mode for p in planned)
    if tasks:
        click.echo("  tasks: " + ", ".join(f"{t} {k}" for t, k in sorted(tasks.items())))
        click.echo("  modes: " + ", ".join(f"{m} {k}" for m, k in sorted(modes.items())))
    click.echo(f"Queue of {expert.id}: {assigned} place(s), {judged} judged, {assigned - judged} waiting.")


@click.group()
def packet() -> None:
    """Judging packets: files for experts who cannot reach the machine holding the session."""


@packet.command("export")
@click.argument("session")
@click.option("--expert", "expert_id", required=True, help="Whose open assignments go into the packet.")
@click.option("--out", "out", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="Packet file to write (must not exist).")
def packet_export(session: str, expert_id: str, out: Path) -> None:
    """Write a self-contained packet of an expert's open assignments, with no identities at all."""
    from centaur_tui.store import ExpertStore, export_packet

    study = load_session(resolve_session(session))
    with _open_existing(study) as store:
        expert = ExpertStore(store).expert(study, expert_id)
        result = export_packet(store, study, expert, out)
    click.echo(
        f"Wrote {result.path}: {result.items} comparison(s) for {expert.id}; "
        f"{result.maskings} identity phrase(s) masked and logged. Judge it with `centaur judge {result.path}`, "
        f"then merge it with `centaur packet import {session} {result.path}`."
    )


@packet.command("import")
@click.argument("session")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
def packet_import(session: str, file: Path) -> None:
    """Merge a judged packet into the session; importing the same packet again adds nothing."""
    from centaur_tui.store import import_packet

    study = load_session(resolve_session(session))
    with _open_existing(study) as store:
        result = import_packet(store, study, file)
    click.echo(
        f"Imported {file}: {result.added} new judgment(s), {result.already_stored} already stored, "
        f"{result.open_items} still open in the packet."
    )
    for reason in result.rejected:
        click.secho(f"  rejected {reason}", fg="yellow")


@click.command()
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
def judge(file: Path) -> None:
    """Judge a packet file in the app (on any machine); results are saved into the file."""
    from centaur_tui.store import PacketJudging

    source = PacketJudging(file)
    from centaur_tui.ui.app import create_app

    try:
        create_app(judging=source).run()
    finally:
        source.close()
