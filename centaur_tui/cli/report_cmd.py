"""Provides `centaur report`: every CentaurBench table and figure from a session's judgments.

The statistics (pandas, scipy, krippendorff, matplotlib) are imported inside the command,
so `centaur --help` and the other commands start without them.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click

from centaur_tui.catalog import load_session
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study

RANK_METHODS = ("mean_win_rate", "rank_per_judge", "pooled")


def load_report_inputs(study: Study, pool: ThreadPoolExecutor | None = None) -> tuple[dict[str, str], dict[str, Any]]:
    """Read a session database: its meta and the rows the statistics need.

    Scores come aggregated per (judgment, option) (`option_score_rows`): a tenth of the
    rows of `Store.score_rows()`, with the same information for every statistic. With a
    `pool`, that aggregate (the slowest read; SQLite runs it without the GIL) is read in a
    worker thread and returned as a Future, which `build_frames` resolves only when it
    needs the scores.

    Raises:
        CentaurError: the session has not been run (no database yet).
    """
    from centaur_tui.store import Store, report_inputs

    if not study.database.exists():
        raise CentaurError(f"{study.database} does not exist yet: run the session first", title="Nothing to report")
    general = [d.id for d in study.universal.general_dimensions]
    # The same reads as the app's results screen (one function, so the two cannot drift).
    with Store(study.database) as store:
        return report_inputs(store, general, pool)


def build_session_report(study: Study, meta: dict[str, str], rows: dict[str, Any], **options: Any) -> Any:
    """Build the report (`centaur_tui.stats.report.Report`) of a session from its database rows."""
    from centaur_tui.stats.frames import build_frames, design_from_session
    from centaur_tui.stats.report import ReportOptions, build_report

    simulated = meta["simulated"] == "true" if "simulated" in meta else study.session.simulated
    design = design_from_session(
        study.session,
        simulated=simulated,
        general_dimensions=[d.id for d in study.universal.general_dimensions],
        rubric={t: study.rubric(t).ids for t in study.tasks},
    )
    opts = ReportOptions(**options)  # type: ignore[arg-type]
    frames = build_frames(design=design, judge_kinds=opts.judge_kinds, **rows)
    return build_report(frames, opts)


def _human_workers_section(study: Study, doc: dict[str, Any]) -> str:
    """Add the human-worker arm (which assistant helps people most) to the report document.

    Only for sessions that declare `[human_workers]`; returns its text rendering, or "".
    """
    if study.session.human_workers is None or not study.database.exists():
        return ""
    from centaur_tui.pipeline.reporting import human_workers_section
    from centaur_tui.stats.human_arm import human_arm_text
    from centaur_tui.store import Store

    with Store(study.database) as store:
        section = human_workers_section(study, store, doc)
    assert section is not None
    doc["human_workers"] = section
    return human_arm_text(section)


@click.command()
@click.argument("session")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON.")
@click.option("--markdown", "md_file", type=click.Path(dir_okay=False, path_type=Path), help="Write a Markdown report.")
@click.option("--figures", "fig_dir", type=click.Path(file_okay=False, path_type=Path), help="Draw PNG figures here.")
@click.option("--rank-method", type=click.Choice(RANK_METHODS), default="mean_win_rate", show_default=True,
              help="Within-run rank: mean win rate over judges, per-judge ranks averaged, or pooled win rate.")
@click.option("--judges", type=click.Choice(["llm", "expert", "all"]), default="llm", show_default=True,
              help="Which judges' judgments the statistics use.")
@click.option("--bootstrap", type=click.IntRange(0, 100_000), default=200, show_default=True,
              help="Bradley-Terry bootstrap replicates (0: no intervals).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
@click.option("--no-exact-p", is_flag=True, help="Skip the exact permutation p-values of the cross-mode correlations.")
@click.option("--quiet", is_flag=True, help="Print nothing but the files written.")
def report(
    session: str, json_file: Path | None, md_file: Path | None, fig_dir: Path | None, rank_method: str, judges: str,
    bootstrap: int, seed: int, no_exact_p: bool, quiet: bool,
) -> None:
    """Print every statistic of a session: rankings, best by task, cross-mode, reliability, validity."""
    from centaur_tui.services.session import resolve_session

    study = load_session(resolve_session(session))
    started = time.perf_counter()
    kinds = ("llm", "expert") if judges == "all" else (judges,)
    with ThreadPoolExecutor(1, thread_name_prefix="report-read") as pool:
        meta, rows = load_report_inputs(study, pool)
        rep = build_session_report(study, meta, rows, rank_method=rank_method, judge_kinds=kinds,
                                   bootstrap=bootstrap, seed=seed, permutation=not no_exact_p)
    from centaur_tui.stats.render import to_markdown, to_text

    doc = rep.doc
    human_text = _human_workers_section(study, doc)
    if quiet:
        if doc["simulated"]:
            click.secho(doc["banner"], fg="yellow", err=True)
    else:
        click.echo(to_text(doc), nl=False)
        if human_text:
            click.echo("\n" + human_text, nl=False)
    written: list[Path] = []
    if json_file is not None:
        json_file.parent.mkdir(parents=True, exist_ok=True)
        json_file.write_text(json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(json_file)
    if md_file is not None:
        md_file.parent.mkdir(parents=True, exist_ok=True)
        markdown = to_markdown(doc)
        if human_text:
            markdown += "\n## Human workers (issue 5 arm)\n\n```\n" + human_text.rstrip() + "\n```\n"
        md_file.write_text(markdown, encoding="utf-8")
        written.append(md_file)
    if fig_dir is not None:
        from centaur_tui.stats.figures import draw_all

        written += draw_all(rep, fig_dir)
    for path in written:
        click.echo(f"wrote {path}")
    if not quiet:
        click.echo(f"Report built in {time.perf_counter() - started:.2f}s.")
