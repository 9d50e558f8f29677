"""Provides `centaur search`: the organiser's full-text search of rationales, deliverables and assistance texts."""

from __future__ import annotations

import click

from centaur_tui.services.session import open_session, open_store


@click.command()
@click.argument("session")
@click.argument("query")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True, help="The most hits shown.")
def search(session: str, query: str, limit: int) -> None:
    """Search the session's rationales, deliverables and assistance texts (organiser only; names models)."""
    from centaur_tui.services.search import search_study

    study = open_session(session)
    with open_store(study, title="Nothing to search", readonly=True) as store:
        found = search_study(store, query, limit)
    click.echo(f"{len(found)} hit(s) for {query!r}")
    for f in found:
        where = ", ".join(f.comparisons[:5]) + (f" and {len(f.comparisons) - 5} more" if len(f.comparisons) > 5 else "")
        click.echo(f"  {f.hit.kind} {f.hit.ref} ({f.hit.task}): {f.hit.snippet}")
        click.echo(f"    comparisons: {where or 'none'}")
