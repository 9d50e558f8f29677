"""Provides `centaur import` (judgments: the export format, or a winner-only file) and `centaur import-outputs`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from centaur_tui.services.session import open_session


def _echo_ignored(ignored: Mapping[str, int]) -> None:
    """Say which columns the file held that its format does not document: they were not read."""
    if ignored:
        listed = ", ".join(f"{name} ({n:,} record(s))" for name, n in sorted(ignored.items())[:10])
        more = f" and {len(ignored) - 10} more" if len(ignored) > 10 else ""
        click.echo(f"Ignored {len(ignored)} column(s) not in the format: {listed}{more}.")


def _ids(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """`--add-experts ann,bob --add-experts cy` as ('ann', 'bob', 'cy')."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


@click.command("import")
@click.argument("session")
@click.argument("directory", metavar="PATH", type=click.Path(path_type=Path))
@click.option(
    "--add-experts",
    "add_experts",
    multiple=True,
    callback=_ids,
    metavar="ID[,ID...]",
    help="Register these expert ids with the import (every other expert must be registered already).",
)
@click.option(
    "--external",
    is_flag=True,
    help="The files were not signed by this session (another tool's, or another session's export): import them "
    "as external data, saying so (every other check still applies).",
)
@click.option(
    "--task-template",
    default="mtbench_{question_id}_t{turn}",
    show_default=True,
    help="Task id of a row in MT-Bench's layout (under --generic-task: its question id), from question_id and turn.",
)
@click.option(
    "--generic-task",
    "generic_task",
    default=None,
    metavar="NAME",
    help="Put every question of the file under this generic task of the session (generic_tasks), each "
    "comparison with its own prompt; default: the session's only generic task when it lists no task file.",
)
@click.option(
    "--new-judges-are-experts",
    is_flag=True,
    help="Register every judge of the file that the session does not know as an expert, with the id the file gives.",
)
@click.option(
    "--duplicates",
    type=click.Choice(["refuse", "keep-first", "keep-last"]),
    default="refuse",
    show_default=True,
    help="A judge's second verdict on a comparison in the same order (the other order is a second judgment).",
)
def import_(
    session: str,
    directory: Path,
    add_experts: tuple[str, ...],
    external: bool,
    task_template: str,
    generic_task: str | None,
    new_judges_are_experts: bool,
    duplicates: str,
) -> None:
    """Validate and store judgments from PATH in a session's database.

    PATH is a folder in the export format (judgments.csv, scores.csv, session.json; scores.csv
    may be left out for winner-only judgments), or a winner-only judgment file (.csv or .jsonl:
    task or question_id, model_a, model_b, winner, judge; MT-Bench's public human judgments as
    they are, see docs/import.md). A winner-only file builds the comparisons it refers to and
    stores the conversations it gives as outputs of imported candidates.

    The comparisons must already be in the session (run it first, or import into a copy of
    its database), and the files must be signed by this session's database (session.json, which
    `centaur export` writes: an HMAC over the files with the session's secret) unless
    --external. Every judge must be one of the session's LLM judges, eligible for the
    comparison (leave-family-out), or a registered expert. Importing the same files twice
    stores nothing new; on any problem nothing is written and the command exits with status 2.
    """
    if directory.exists() and not directory.is_dir():  # a file (a FIFO or device is refused by the reader)
        _import_winner_file(
            session, directory, add_experts, task_template, generic_task, new_judges_are_experts, duplicates
        )
        return
    if generic_task is not None or new_judges_are_experts or duplicates != "refuse":
        raise click.UsageError("--generic-task, --new-judges-are-experts and --duplicates apply to a winner-only file")
    from centaur_tui.services.exchange import import_csv

    result = import_csv(open_session(session), directory, add_experts=add_experts, external=external)
    if result.simulated:
        click.secho("Note: this session's own judgments are SIMULATED DATA.", fg="yellow")
    summary = result.summary
    click.echo(
        f"{directory}: {summary.judgments:,} judgments read; {summary.inserted:,} stored "
        f"({summary.scores:,} scores), {summary.unchanged:,} already stored identically; 0 refused."
    )
    _echo_judges(summary.by_judge)
    if summary.experts_added:
        click.echo(f"Registered expert(s): {', '.join(summary.experts_added)}")
    if summary.winner_only:
        click.echo(
            f"{summary.winner_only:,} winner-only judgment(s) (no rubric scores): left out of rubric statistics."
        )
    _echo_ignored(summary.ignored)
    if not summary.bound:
        click.secho(
            f"external data: not signed by this session ({summary.unsigned or 'no session.json'}); imported "
            "under --external, judges and rows checked as for any import.",
            fg="yellow",
        )


def _echo_judges(by_judge: Sequence[Any]) -> None:
    """One line per judge, the first 20 of them: a crowd of thousands is counted, not listed."""
    for t in by_judge[:20]:
        click.echo(f"  {t.judge} ({t.kind}): {t.inserted:,} stored, {t.unchanged:,} already stored")
    if len(by_judge) > 20:
        rest = by_judge[20:]
        click.echo(
            f"  and {len(rest):,} more judge(s): {sum(t.inserted for t in rest):,} stored, "
            f"{sum(t.unchanged for t in rest):,} already stored"
        )


def _import_winner_file(
    session: str,
    file: Path,
    add_experts: tuple[str, ...],
    task_template: str,
    generic_task: str | None,
    new_judges_are_experts: bool,
    duplicates: str,
) -> None:
    from centaur_tui.services.exchange import import_winner_file

    result = import_winner_file(
        open_session(session),
        file,
        add_experts=add_experts,
        task_template=task_template,
        generic_task=generic_task,
        duplicates=duplicates,
        new_judges_are_experts=new_judges_are_experts,
    )
    if result.simulated:
        click.secho("Note: this session's own judgments are SIMULATED DATA.", fg="yellow")
    s = result.summary
    j = s.judgments
    assert j is not None
    click.echo(
        f"{file}: {j.judgments:,} winner-only judgment(s) read; {j.inserted:,} stored, {j.unchanged:,} already "
        f"stored identically; 0 refused."
    )
    _echo_judges(j.by_judge)
    click.echo(
        f"Outputs from the file's conversations: {s.inserted:,} stored, {s.unchanged:,} already stored; "
        f"comparisons: {s.comparisons:,} new of {s.comparisons_total:,}."
    )
    if result.second_order:
        click.echo(
            f"{result.second_order:,} judgment(s) of a comparison the judge also judged in the other order: "
            "stored as its second order (presentation 1)."
        )
    if result.duplicates:
        kept = "first" if duplicates == "keep-first" else "last"
        click.echo(
            f"Duplicates: {result.duplicates:,} repeated verdict(s) of a judge on a comparison in the same order "
            f"left out (--duplicates {duplicates}: the {kept} one kept)."
        )
    if j.experts_added:
        shown = ", ".join(j.experts_added[:20]) + (
            f" and {len(j.experts_added) - 20:,} more" if len(j.experts_added) > 20 else ""
        )
        click.echo(f"Registered {len(j.experts_added):,} expert(s): {shown}")
    click.echo(
        f"{j.winner_only:,} winner-only judgment(s) stored now: in pairwise statistics, left out of rubric ones."
    )
    _echo_ignored(s.ignored)


@click.command("import-outputs")
@click.argument("session")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
def import_outputs(session: str, file: Path) -> None:
    """Store outputs made elsewhere (FILE: .csv or .jsonl) for the session's imported candidates.

    Columns: task, candidate, text; optionally mode (automation), run (1), worker and
    assistance_text. Builds the round-robin comparisons of every tournament the outputs join,
    which LLM judges (`centaur run`) and experts (`centaur assign`) then judge like any other.
    The whole file is checked first: on any problem nothing is written and the command exits 2.
    Importing the same file again stores nothing new; another text for a stored output is refused.
    """
    from centaur_tui.services.exchange import import_outputs as store_outputs

    result = store_outputs(open_session(session), file)
    s = result.summary
    click.echo(
        f"{file}: {s.outputs:,} output(s) read; {s.inserted:,} stored ({s.assistance:,} assistance text(s)), "
        f"{s.unchanged:,} already stored identically; 0 refused."
    )
    click.echo(f"Comparisons: {s.comparisons:,} new, {s.comparisons_total:,} in the tournaments of these outputs.")
    _echo_ignored(s.ignored)
