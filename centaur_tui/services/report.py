"""Provides the report use case: a session's full report document (inputs, frames, statistics, human-worker arm).

`centaur report`, `centaur work-report` and the app's report process all build a session's
report with `session_report`, so the three cannot drift. The statistics (pandas, scipy) are
imported inside the functions: the app imports this module's callers without loading them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.stats.report import Report
    from centaur_tui.store import Store


def require_database(study: Study) -> None:
    """Raise unless the session has been run.

    Raises:
        CentaurError: the session's database does not exist yet.
    """
    if not study.database.exists():
        raise CentaurError(f"{study.database} does not exist yet: run the session first", title="Nothing to report")


def load_report_inputs(
    study: Study, pool: ThreadPoolExecutor | None = None, store: Store | None = None
) -> tuple[dict[str, str], dict[str, Any]]:
    """Read a session database: its meta and the rows the statistics need.

    Scores come aggregated per (judgment, option) (`option_score_rows`): a tenth of the
    rows of `Store.score_rows()`, with the same information for every statistic. With a
    `pool`, that aggregate (the slowest read; SQLite runs it without the GIL) is read in a
    worker thread and returned as a Future, which `build_frames` resolves only when it
    needs the scores.

    Args:
        study: The session.
        pool: Where the score aggregate is read meanwhile (None: read now).
        store: An open store of the session (None: the database is opened and closed here).

    Raises:
        CentaurError: the session has not been run (no database yet).
    """
    from centaur_tui.store import report_inputs

    general = [d.id for d in study.universal.general_dimensions]
    if store is not None:
        return report_inputs(store, general, pool)
    from centaur_tui.store import Store

    require_database(study)
    with Store(study.database, readonly=True) as opened:
        return report_inputs(opened, general, pool)


def statistics_defaults(study: Study) -> dict[str, Any]:
    """The report options a session fixes in its `[statistics]` table (flags given to `centaur report` win)."""
    stats = study.session.statistics
    return {
        "alt_epsilon": stats.alt_epsilon,
        "alt_min_experts_per_item": stats.alt_min_experts_per_item,
        "ppr_alpha": stats.ppr_alpha,
        "ppr_method": stats.ppr_method,
    }


def report_from_rows(study: Study, meta: dict[str, str], rows: dict[str, Any], **options: Any) -> Report:
    """The report of a session from its database rows (`load_report_inputs`), without the human-worker arm.

    Args:
        study: The session.
        meta: The database's meta (its `simulated` flag wins over the session file's).
        rows: The rows `build_frames` takes.
        **options: `stats.report.ReportOptions` fields; the alt-test and prediction-powered
            options not given come from the session's `[statistics]`, the rest keep their defaults.
    """
    from centaur_tui.stats.frames import build_frames, design_from_session
    from centaur_tui.stats.report import ReportOptions, build_report

    simulated = meta["simulated"] == "true" if "simulated" in meta else study.session.simulated
    design = design_from_session(
        study.session,
        simulated=simulated,
        general_dimensions=[d.id for d in study.universal.general_dimensions],
        rubric={t: study.rubric(t).ids for t in study.tasks},
    )
    opts = ReportOptions(**{**statistics_defaults(study), **options})
    frames = build_frames(design=design, judge_kinds=opts.judge_kinds, **rows)
    return build_report(frames, opts)


def with_human_workers(study: Study, store: Store, report: Report, always: bool = False) -> Report:
    """The report with the human-worker arm's section (which assistant helps people most, productivity).

    Args:
        study: The session.
        store: Its open store (the submitted deliverables' productivity rows).
        report: The report to add the section to.
        always: Add it even when the session declares no `[human_workers]` (`centaur work-report`).
    """
    if study.session.human_workers is None and not always:
        return report
    from dataclasses import replace

    from centaur_tui.stats.human_arm import human_arm_doc
    from centaur_tui.store import WorkStore

    section = human_arm_doc(report.doc, WorkStore(store).productivity_rows())
    return replace(report, document=report.document.with_human_workers(section))


def session_report(
    study: Study, store: Store | None = None, *, human_workers: bool | None = None, **options: Any
) -> Report:
    """A session's full report: every statistic, and the human-worker arm for sessions that declare `[human_workers]`.

    Blocking: it reads the database and runs every statistic (about 1.1 s at the paper's scale).

    Args:
        study: The session.
        store: An open store of the session (the report process keeps one open); None: the
            database is opened and closed here.
        human_workers: Add the human-worker section: None, when the session declares
            `[human_workers]`; True, always; False, never.
        **options: `stats.report.ReportOptions` fields (`centaur report`'s options); by
            default the CLI's defaults, which the results screen shows.

    Raises:
        CentaurError: the session has not been run (no database yet).
    """
    if store is None:
        from centaur_tui.store import Store

        require_database(study)
        with Store(study.database, readonly=True) as opened:
            return _session_report(study, opened, human_workers, options)
    return _session_report(study, store, human_workers, options)


def outcomes_section(study: Study, store: Store) -> dict[str, Any]:
    """The outcome of every planned item (per stage, judge and mode) as the report's `outcomes` section."""
    from dataclasses import asdict

    from centaur_tui.domain.outcomes import OutcomeCounts, session_outcomes
    from centaur_tui.store import batch_counts, final_errors, stored_facts

    outcomes = session_outcomes(study.session, stored_facts(store))

    def row(c: OutcomeCounts) -> dict[str, int]:
        # Read from the store alone, an item the budget kept from being sent is "failed" (not sent
        # yet): `budget` is only ever counted by the run that stopped, so it is not a report field.
        counts = asdict(c)
        counts.pop("budget")
        return {**counts, "missing": c.missing}

    section: dict[str, Any] = {
        "complete": outcomes.complete,
        "stages": {k: row(c) for k, c in outcomes.stages.items()},
        "judges": {k: row(c) for k, c in outcomes.judges.items()},
        "modes": {k: row(c) for k, c in outcomes.modes.items()},
        "failed_calls": len(final_errors(store)),
    }
    batched, in_flight = batch_counts(store)
    if batched or in_flight:  # only sessions that used batch mode carry the two counts
        section.update(batched_judgments=batched, batches_in_flight=in_flight)
    return section


def _session_report(study: Study, store: Store, human_workers: bool | None, options: dict[str, Any]) -> Report:
    from dataclasses import replace

    with ThreadPoolExecutor(1, thread_name_prefix="report-read") as pool:
        meta, rows = load_report_inputs(study, pool, store)
        # Built after the reads started: on a cold start the score aggregate (SQLite, no GIL)
        # runs while pandas and scipy load (about 1.1 s).
        report = report_from_rows(study, meta, rows, **options)
    report = replace(report, document=report.document.with_outcomes(outcomes_section(study, store)))
    if human_workers is False:
        return report
    return with_human_workers(study, store, report, always=bool(human_workers))
