"""Provides `centaur adjudicate`: the adjudicator's queue of disagreements, its blind view, verdicts and reopenings."""

from __future__ import annotations

import click

from centaur_tui.services.session import open_session, open_store


@click.command()
@click.argument("session")
@click.option("--list", "list_", is_flag=True, help="List the queue (opaque keys) and the stored adjudications.")
@click.option("--show", "show", metavar="KEY", help="Show one queued comparison blind, with its verdicts (no authors).")
@click.option("--record", "record_key", metavar="KEY", help="Record the final verdict on a queued comparison.")
@click.option("--winner", type=click.Choice(["option_1", "option_2", "tie"]), help="With --record: the winner.")
@click.option("--rationale", default="", help="With --record: why (the session's minimum length applies).")
@click.option("--reopen", "reopen_id", type=int, metavar="ID", help="Reopen a stored adjudication by hand.")
@click.option("--note", default="", help="With --reopen: why it is reopened.")
@click.option("--as", "as_expert", metavar="EXPERT", help="Adjudicate as this expert (adjudicator = true).")
def adjudicate(
    session: str,
    list_: bool,
    show: str | None,
    record_key: str | None,
    winner: str | None,
    rationale: str,
    reopen_id: int | None,
    note: str,
    as_expert: str | None,
) -> None:
    """Adjudicate the comparisons the judges disagreed on (judging.adjudicate says which disagreements count).

    The adjudicator sees a comparison as the judging seat shows it and the verdicts given on it
    without their authors; the final verdict is stored apart from judgments, once per comparison
    unless reopened with --reopen.
    """
    from centaur_tui.services import adjudication as adj

    chosen = [x for x in (list_, show, record_key, reopen_id is not None) if x]
    if len(chosen) != 1:
        raise click.UsageError("give exactly one of --list, --show KEY, --record KEY, --reopen ID")
    if record_key is not None and winner is None:
        raise click.UsageError("--record needs --winner")
    study = open_session(session)
    who = adj.adjudicator(study, as_expert)
    with open_store(study, title="Nothing to adjudicate") as store:
        if list_:
            entries = adj.queue(study, store, who)
            click.echo(f"{len(entries)} comparison(s) waiting for adjudication ({study.session.judging.adjudicate})")
            for e in entries:
                click.echo(f"  {e.key}  {e.task_title}: {e.reason}")
            done = adj.stored(store)
            if done and who == adj.ORGANISER:
                click.echo(f"{len(done)} adjudication(s) stored")
                for a in done:
                    state = "reopened" if a.reopened else "in force"
                    click.echo(f"  {a.id}  {a.comparison_id}  winner {a.winner}  by {a.adjudicator}  ({state})")
        elif show is not None:
            _show(adj.item(study, store, show, who))
        elif record_key is not None:
            new = adj.record(study, store, record_key, winner, rationale, who)  # type: ignore[arg-type]
            click.echo(f"adjudication {new} stored for {record_key}")
        else:
            assert reopen_id is not None
            comparison = adj.reopen(store, reopen_id, who, note)
            click.echo(f"adjudication {reopen_id} reopened: {comparison} is back in the queue")


def _show(item: object) -> None:
    from centaur_tui.services.adjudication import AdjudicationItem

    assert isinstance(item, AdjudicationItem)
    s = item.shown
    click.echo(f"{s.task_title} ({item.reason})\n")
    click.echo(s.task_prompt)
    click.echo(f"\n--- option 1{' (cut off)' if s.cut_off[0] else ''} ---\n{s.option_1}")
    click.echo(f"\n--- option 2{' (cut off)' if s.cut_off[1] else ''} ---\n{s.option_2}\n")
    for v in item.verdicts:
        note = " (its judge saw option 2 first)" if v.other_order else ""
        click.echo(f"{v.label}: {v.winner}{note}")
        for dim, one, two in v.scores:
            click.echo(
                f"  {dim}: option 1 {one if one is not None else '-'}, option 2 {two if two is not None else '-'}"
            )
        click.echo(f"  {v.rationale}")
