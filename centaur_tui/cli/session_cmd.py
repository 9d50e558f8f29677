"""Provides the session commands: `centaur tasks`, `check`, `run`, `export` and `demo`."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from centaur_tui.catalog import load_tasks
from centaur_tui.cli.app import open_app, say_simulated
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import STAGES, summarize
from centaur_tui.domain.study import Study
from centaur_tui.services.session import missing_keys, open_session
from centaur_tui.services.session import tasks_dir as default_tasks_dir

if TYPE_CHECKING:
    from centaur_tui.services.session import Store

# -- tasks -----------------------------------------------------------------------------------


@click.group("tasks", invoke_without_command=True)
@click.option(
    "--dir", "tasks_dir", type=click.Path(path_type=Path), default=None, help="Tasks folder (default: ./tasks)."
)
@click.pass_context
def tasks_cmd(ctx: click.Context, tasks_dir: Path | None) -> None:
    """List the tasks; `centaur tasks show ID` prints one with its rubric."""
    ctx.obj = tasks_dir or default_tasks_dir()
    if ctx.invoked_subcommand is None:
        tasks, universal = load_tasks(ctx.obj)
        click.echo(f"{len(tasks)} tasks in {ctx.obj} (+ {len(universal.general_dimensions)} general dimensions)")
        width = max((len(t) for t in tasks), default=2)
        for task in tasks.values():
            click.echo(
                f"  {task.id:<{width}}  {task.title} | {task.source} | {task.type} | {task.deliverable} "
                f"| {len(task.dimensions)} dimensions, {len(task.requirements)} requirements"
            )


@tasks_cmd.command("show")
@click.argument("task_id")
@click.pass_obj
def tasks_show(tasks_dir: Path, task_id: str) -> None:
    """Print one task: prompt, requirements and rubric."""
    tasks, universal = load_tasks(tasks_dir)
    if task_id not in tasks:
        raise CentaurError(f"unknown task {task_id!r} (known: {', '.join(tasks)})", title="Unknown task")
    t = tasks[task_id]
    click.secho(f"{t.title}  [{t.id}]", bold=True)
    click.echo(f"Source: {t.source}   Type: {t.type}   Deliverable: {t.deliverable}\n")
    click.secho("Prompt", bold=True)
    click.echo(t.prompt.strip() + "\n")
    click.secho("Requirements", bold=True)
    for r in t.requirements:
        click.echo(f"  - {r.label} [{r.dimension}, difficulty {r.difficulty:.2f}]: {r.text}")
    click.echo()
    for heading, dims in (("Task-specific rubric", t.dimensions), ("General rubric", universal.general_dimensions)):
        click.secho(heading, bold=True)
        for d in dims:
            click.echo(f"  {d.id} - {d.name}: {d.description}")
            click.echo(f"      low (1-3): {d.low}")
            click.echo(f"      high (8-10): {d.high}")
        click.echo()


# -- check -----------------------------------------------------------------------------------


def _plan_text(study: Study) -> list[str]:
    s = study.session
    plan = summarize(s)
    lines = [
        f"Session {s.name}: {plan.runs} run(s) x {plan.tasks} task(s); "
        f"{len(s.automation_candidates)} automation candidates, {len(s.augmentation_candidates)} augmentation "
        f"candidates (incl. plain), worker {s.worker.name if s.worker else 'none'}, {len(s.judges)} judges, "
        f"orders={s.judging.orders}"
        + (
            f"; {len(s.candidates)} imported candidate(s): {', '.join(sorted(s.imported_names))}"
            if s.candidates
            else ""
        ),
        "Calls per stage (without re-asks of invalid judge replies):",
    ]
    for stage in STAGES:
        lines.append(f"  {stage:<11} {plan.calls[stage]:>8,}")
    lines.append(
        f"  {'total':<11} {plan.total_calls:>8,}  (at most {plan.max_judging_calls:,} judging calls with re-asks)"
    )
    lines.append(
        f"Comparisons: {plan.total_comparisons:,} "
        + "("
        + ", ".join(f"{m} {n:,}" for m, n in plan.comparisons.items())
        + ")"
    )
    lines.append(f"Judgments: {plan.total_judgments:,}; judge pairs (for agreement): {plan.judge_pairs:,}")
    lines.append("Judgments per judge:")
    for judge in s.judges:
        lines.append(f"  {judge.name:<24} {judge.family:<12} {plan.judgments_per_judge[judge.name]:>8,}")
    lines.append("Comparisons by number of eligible judges:")
    for k, n in plan.comparisons_by_eligible.items():
        lines.append(f"  {k} judge(s): {n:>8,}")
    lines.extend(f"Note: {n}" for n in plan.notes)
    return lines


@click.command()
@click.argument("session")
def check(session: str) -> None:
    """Validate a session file and print its plan; sends no call, writes nothing."""
    study = open_session(session)
    if study.session.simulated:
        say_simulated()
    for line in _plan_text(study):
        click.echo(line)
    from centaur_tui.services.estimate import estimate_text, session_estimate

    for line in estimate_text(session_estimate(study)):
        click.echo(line)
    for name, model, var in missing_keys(study):
        click.secho(f"Warning: {name} ({model}) needs {var}, which is not set; `centaur run` will refuse.", fg="yellow")
    from centaur_tui.services.batch import batch_plan_lines

    for line in batch_plan_lines(study):
        click.echo(line)
    click.echo(f"Database: {study.database}")
    from centaur_tui.services.identity import identity_problems

    problems = identity_problems(study)
    if problems:
        # The file is valid on its own but not with its database: every other command refuses it.
        raise CentaurError(
            f"{study.session.name}: the session file does not match its database:\n"
            + "\n".join(f"- {p}" for p in problems),
            title="Session file and database disagree",
        )
    click.secho("Session is valid.", fg="green")


# -- run -------------------------------------------------------------------------------------


def _batches_text(progress: Any) -> str:
    batches = list(getattr(progress, "batches", {}).values())
    if not batches:
        return ""
    open_ = [b for b in batches if b.state != "collected"]
    states = sorted({b.status or b.state for b in open_})
    done = sum(b.completed for b in open_)
    total = sum(b.requests for b in open_)
    return f" | batches {len(batches) - len(open_)}/{len(batches)} collected" + (
        f" ({', '.join(states)}: {done:,}/{total:,} requests done)" if open_ else ""
    )


class LinePrinter:
    """Prints progress per stage: rewritten in place on a terminal, every few seconds otherwise."""

    def __init__(self, stream: Any = None, interval: float = 2.0) -> None:
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.interval = 0.0 if self.tty else interval
        self._last = 0.0
        self._last_text = ""

    def line(self, progress: Any) -> str:
        parts = []
        for name, st in progress.stages.items():
            if not st.planned:
                continue
            part = f"{name} {st.done:,}/{st.planned:,}"
            if st.left and st.left != st.planned - st.done:
                part += f" ({st.left:,} left)"
            if st.failed:
                part += f" {st.failed} failed"
            if st.invalid:
                part += f" {st.invalid} invalid"
            if getattr(st, "budget", 0):
                part += f" {st.budget} not sent (budget)"
            parts.append(part)
        known = all(s.cost_known for s in progress.stages.values())
        cost = f"${progress.cost:,.2f}" + ("" if known else " + unknown")
        return (
            f"[{progress.elapsed:5.1f}s] "
            + " | ".join(parts)
            + f" | {progress.tokens / 1e6:.1f}M tokens | {cost} | {progress.retries} retries"
            + (f" ({progress.timeouts} timeouts)" if getattr(progress, "timeouts", 0) else "")
            + f" | {progress.in_flight} in flight"
            + _batches_text(progress)
            + (f" | {progress.waiting}" if getattr(progress, "waiting", None) else "")
        )

    def update(self, progress: Any) -> None:
        now = time.monotonic()
        if not progress.finished and now - self._last < self.interval:
            return
        self._last = now
        text = self.line(progress)
        if text[text.index("]") :] == self._last_text[self._last_text.find("]") :] and not self.tty:
            return  # nothing moved since the last line
        self._last_text = text
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + ("\n" if progress.finished else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    # Treat `kill` like Ctrl-C: stored work is committed per call, so stopping is safe.
    raise KeyboardInterrupt


def run_in_terminal(study: Study, quiet: bool = False) -> Any:
    """Run a study with a line printer; Ctrl-C (or SIGTERM) stops cleanly, keeping every answer."""
    from centaur_tui.services.run import (
        PipelineRun,
        batches_left_line,
        billed_twice_line,
        billed_twice_pending_line,
        budget_lines,
        cut_off_lines,
        outcome_lines,
        spend_lines,
    )
    from centaur_tui.services.session import open_store

    if study.session.simulated:
        say_simulated()
    # The run checks the keys (once, before it opens the database: a missing key writes nothing),
    # then opens the store through this opener; the counts below read the same store.
    stores: list[Store] = []

    def opened() -> Store:
        stores.append(open_store(study, must_exist=False))
        return stores[-1]

    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        try:
            outcome = PipelineRun(study, opened, None if quiet else LinePrinter()).run()
        except KeyboardInterrupt:
            if stores:
                counts = stores[0].counts()
                click.secho(
                    f"\nStopped. {counts.calls:,} answered calls and {counts.judgments:,} judgments are stored"
                    f" in {study.database}; run the same command again to resume.",
                    fg="yellow",
                    err=True,
                )
                left = batches_left_line(stores[0])
                if left:
                    click.secho(left, fg="yellow", err=True)
                billed = billed_twice_pending_line(stores[0])
                if billed:
                    click.secho(billed, fg="yellow", err=True)
            sys.exit(130)
        assert outcome is not None and stores  # only `stop()` from another thread ends a run without one
        counts = stores[0].counts()
    finally:
        signal.signal(signal.SIGTERM, previous)
        for store in stores:
            store.close()
    p = outcome.progress
    click.echo(
        f"{'Done' if outcome.complete else 'Not finished' if outcome.batches_pending else 'Finished, incomplete,'}"
        f" in {p.elapsed:.1f}s: "
        f"{sum(s.sent for s in p.stages.values()):,} calls sent, "
        f"{sum(s.cached for s in p.stages.values()):,} items already stored. Store: {counts.outputs:,} outputs, "
        f"{counts.comparisons:,} comparisons, {counts.judgments:,} judgments "
        f"({counts.invalid_judgments:,} invalid), {counts.call_errors:,} failed attempts logged"
        + (f" ({counts.timeouts:,} timed out)." if counts.timeouts else ".")
    )
    resent = billed_twice_line(outcome)
    if resent:
        click.secho(resent, fg="yellow")
    for line in outcome_lines(outcome):
        click.secho(line, fg="yellow")
    for line in cut_off_lines(outcome, study.session.generation.on_truncated):
        click.secho(line, fg="yellow")
    for line in budget_lines(study, outcome):
        click.secho(line, fg="yellow")
    for line in spend_lines(outcome):
        click.secho(line, fg="yellow")
    return outcome


@click.command()
@click.argument("session")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def run(session: str, quiet: bool) -> None:
    """Run (or resume) a session: generation, assistance, worker and judging calls.

    Exits 0 when every planned item is stored, 3 when calls failed for good (run again to retry
    them), 4 when batches are left in flight at the provider ([batch] wait = false; run again to
    collect them), 5 when the run stopped at the session's max_cost_usd (raise it and run again).
    """
    study = open_session(session)
    outcome = run_in_terminal(study, quiet=quiet)
    from centaur_tui.services.run import exit_status

    status = exit_status(outcome)
    if status:
        sys.exit(status)


@click.command()
@click.argument("session")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), required=True, help="Folder for the CSV files.")
def export(session: str, out_dir: Path) -> None:
    """Write judgments.csv, scores.csv and outputs.csv of a session."""
    from centaur_tui.services.exchange import export_csv

    result = export_csv(open_session(session), out_dir)
    if result.simulated:
        say_simulated()
    for name, n in result.written.items():
        click.echo(f"{out_dir / name}: {n:,} rows")
    if result.manifest is not None:
        click.echo(f"{result.manifest}: the session these files belong to (`centaur import` checks it)")


@click.command()
@click.option("--session", "session", default="sessions/demo.toml", show_default=True)
@click.option("--no-app", is_flag=True, help="Run, export and report in the terminal even when one is attached.")
@click.pass_context
def demo(ctx: click.Context, session: str, no_app: bool) -> None:
    """The demo session end to end, offline and simulated.

    On a terminal it opens the app on the session, running the pipeline first when calls are
    left. Without one (or with --no-app) it runs the session, exports it to out/NAME and
    prints the report.
    """
    study = open_session(session)
    if not no_app and sys.stdin.isatty() and sys.stdout.isatty():
        open_app(str(study.session_file), run=True)
        return
    outcome = run_in_terminal(study)
    from centaur_tui.services.exchange import export_csv

    for name, n in export_csv(study, Path("out") / study.session.name).written.items():
        click.echo(f"exported {Path('out') / study.session.name / name}: {n:,} rows")
    from centaur_tui.cli.report_cmd import report as report_command

    ctx.invoke(report_command, session=str(study.session_file))
    from centaur_tui.services.run import exit_status

    if exit_status(outcome):
        sys.exit(exit_status(outcome))


def _rename_pair(value: str) -> tuple[str, str]:
    old, sep, new = value.partition("=")
    if not sep or not old.strip() or not new.strip():
        raise click.BadParameter(f"{value!r} is not OLD=NEW", param_hint="--rename")
    return old.strip(), new.strip()


@click.command()
@click.argument("session")
@click.option(
    "--rename",
    "renames",
    multiple=True,
    metavar="OLD=NEW",
    help="An entry (candidate, worker or LLM judge) renamed in the session file: its stored items move to NEW.",
)
@click.option(
    "--retire",
    "retires",
    multiple=True,
    metavar="NAME",
    help="An entry removed from the session file: its stored items stay, left out of every statistic (counted).",
)
def migrate(session: str, renames: tuple[str, ...], retires: tuple[str, ...]) -> None:
    """Make a session's database agree with its edited session file: renamed and retired entries.

    A session file whose candidates, worker or judges no longer match the names its database
    stores is refused by every command until this records what happened. A changed seed or
    another session's file cannot be migrated: they need a database of their own.
    """
    from centaur_tui.services.identity import migrate_identity

    if not renames and not retires:
        raise click.UsageError("say what changed: --rename OLD=NEW and/or --retire NAME")
    pairs = [_rename_pair(r) for r in renames]
    study = open_session(session)
    result = migrate_identity(study, pairs, list(retires))
    for action, kind, old, new, rows in result.changes:
        if action == "rename":
            click.echo(f"renamed {kind} {old!r} to {new!r}: {rows:,} stored rows now carry the new name")
        else:
            click.echo(
                f"retired {kind} {old!r}: its {rows:,} stored item(s) stay in {study.database}, left out of every "
                "statistic (the report counts them under `excluded`)"
            )
    if result.remaining:
        click.secho("Still different (every command refuses the session until these are resolved):", fg="yellow")
        for line in result.remaining:
            click.secho(f"- {line}", fg="yellow")
        sys.exit(2)
    click.echo(f"{study.session_file} and {study.database} agree.")
