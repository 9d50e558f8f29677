"""Provides the expert commands: `centaur assign`, `centaur packet export|import` and `centaur judge`."""

from __future__ import annotations

from pathlib import Path

import click

from centaur_tui.cli.app import require_terminal
from centaur_tui.cli.params import FiniteRange
from centaur_tui.domain.assignment import STRATEGIES
from centaur_tui.services.session import open_session, open_store


@click.command()
@click.argument("session")
@click.option("--expert", "expert_id", required=True, help="Expert id (from the session file or added in the app).")
@click.option("--n", "n", type=click.IntRange(1, 1_000_000), required=True, help="How many places to add to the queue.")
@click.option(
    "--strategy",
    type=click.Choice(STRATEGIES),
    default="stratified",
    show_default=True,
    help="stratified: spread over tasks, modes, pairs; overlap: each comparison to K experts; "
    "disagreement: where LLM judges split first; uniform-random: a simple random sample (what prediction-powered "
    "rankings need); active: drawn one by one with known probabilities, higher where the LLM judges leave the "
    "expert's verdict least predictable, 30% uniform (each probability stored; no --repeat-share).",
)
@click.option(
    "--overlap",
    "overlap",
    type=click.IntRange(2, 1000),
    default=2,
    show_default=True,
    help="K for --strategy overlap: experts per comparison.",
)
@click.option(
    "--repeat-share",
    type=FiniteRange(0.0, 1.0, max_open=True),
    default=0.0,
    show_default=True,
    help="Share of the places given to swapped repeats (test-retest).",
)
def assign(session: str, expert_id: str, n: int, strategy: str, overlap: int, repeat_share: float) -> None:
    """Add comparisons to an expert's judging queue (only tasks the expert may judge)."""
    from centaur_tui.services.assign import assign_comparisons

    study = open_session(session)
    with open_store(study) as store:
        result = assign_comparisons(study, store, expert_id, n, strategy, overlap=overlap, repeat_share=repeat_share)
    expert = result.expert
    click.echo(
        f"Assigned {result.added} place(s) to {expert.id} ({expert.name}) with strategy {strategy}: "
        f"{result.added - result.repeats} new comparison(s), {result.repeats} swapped repeat(s)."
    )
    probs = [p.probability for p in result.planned if p.probability is not None]
    if probs:
        click.echo(
            f"  draw probabilities: {min(probs):.3g} to {max(probs):.3g} (uniform would be "
            f"{1 / max(result.pool_size, 1):.3g} for the first draw), stored with each place."
        )
    if result.added < n:
        click.secho(f"Only {result.added} of {n} could be assigned: the eligible pool ran out.", fg="yellow")
    if result.set_aside_note:
        click.echo(result.set_aside_note + " ([judging] expert_max_masks).")
    if result.tasks:
        click.echo("  tasks: " + ", ".join(f"{t} {k}" for t, k in sorted(result.tasks.items())))
        click.echo("  modes: " + ", ".join(f"{m} {k}" for m, k in sorted(result.modes.items())))
    click.echo(f"Queue of {expert.id}: {result.assigned} place(s), {result.judged} judged, {result.waiting} waiting.")


@click.group()
def packet() -> None:
    """Judging packets: files for experts who cannot reach the machine holding the session."""


@packet.command("export")
@click.argument("session")
@click.option("--expert", "expert_id", required=True, help="Whose open assignments go into the packet.")
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path, dir_okay=False),
    required=True,
    help="Packet file to write (must not exist).",
)
@click.option(
    "--html",
    "as_html",
    is_flag=True,
    help="Write one self-contained HTML file instead: opened by double-click in any current browser, judged "
    "offline, its 'Save results' file imported with `centaur packet import`.",
)
def packet_export(session: str, expert_id: str, out: Path, as_html: bool) -> None:
    """Write a self-contained packet of an expert's open assignments, with no identities at all."""
    from centaur_tui.services.exchange import export_packet

    if as_html:
        _export_html(session, expert_id, out)
        return
    expert, result = export_packet(open_session(session), expert_id, out)
    click.echo(
        f"Wrote {result.path}: {result.items} comparison(s) for {expert.id}; "
        f"{result.maskings} identity phrase(s) masked and logged. Judge it with `centaur judge {result.path}`, "
        f"then merge it with `centaur packet import {session} {result.path}`."
    )


def _export_html(session: str, expert_id: str, out: Path) -> None:
    from centaur_tui.domain.errors import CentaurError
    from centaur_tui.serve.packet import render_packet
    from centaur_tui.services.html_packet import export_html_packet

    if out.exists():
        raise CentaurError(f"{out} exists already: give a new file name", title="Judging packet")
    packet = export_html_packet(open_session(session), expert_id)
    text = render_packet(packet)
    try:
        with out.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise CentaurError(
            f"{out}: cannot write the HTML packet ({exc.strerror or exc})", title="Judging packet"
        ) from None
    click.echo(
        f"Wrote {out}: {len(packet.places)} comparison(s) for {packet.expert.id}, one self-contained HTML file "
        f"({len(text) // 1024} KB); {packet.maskings} identity phrase(s) masked and logged. The expert opens it in a "
        f"browser (offline), clicks 'Save results' and sends that file; merge it with "
        f"`centaur packet import {session} RESULTS`."
    )


@packet.command("import")
@click.argument("session")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--expert", "expert_id", default=None, help="Refuse the packet unless it is this expert's.")
def packet_import(session: str, file: Path, expert_id: str | None) -> None:
    """Check a judged packet (or an HTML packet's results file), then merge it; a bad one is refused whole (exit 2)."""
    from centaur_tui.services.exchange import import_packet
    from centaur_tui.services.html_packet import import_html_results, is_html_results

    if is_html_results(file):
        result = import_html_results(open_session(session), file, expert_id)
    else:
        result = import_packet(open_session(session), file, expert_id)
    refused = f"{len(result.kept)} result(s) (below)" if result.kept else "none"
    click.echo(
        f"Imported {file} ({result.expert}'s packet {result.packet_id}): {result.added} new judgment(s), "
        f"{result.already_stored} already stored, {result.open_items} still open in the packet; "
        f"drafts: {result.drafts_added} stored as {result.expert}'s drafts (finish them in the app), "
        f"{result.drafts_already} already stored, {result.drafts_kept} kept from the session (newer there, or "
        f"judged); {result.states} place(s) newly skipped, flagged or pending; refused: {refused}."
    )
    for reason in result.kept:
        click.secho(f"  refused {reason}", fg="yellow")


@click.command()
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--theme",
    type=click.Choice(["default", "high-contrast"]),
    default=None,
    help="Colours: default, or high-contrast (white on black); default: CENTAUR_THEME, else default. f9 switches.",
)
def judge(file: Path, theme: str | None) -> None:
    """Judge a packet file in the app (on any machine); results are saved into the file."""
    from centaur_tui.services.judging import open_packet
    from centaur_tui.settings import settings

    chosen = theme or settings().theme
    source = open_packet(file)  # a file that is no packet is named first, terminal or not
    try:
        require_terminal("centaur judge")
    except BaseException:
        source.close()
        raise
    from centaur_tui.ui.app import create_app

    try:
        create_app(judging=source, theme=chosen).run()
    finally:
        source.close()
