"""Provides the report use case: a session's full report document (inputs, frames, statistics, human-worker arm).

`centaur report`, `centaur work-report` and the app's report process all build a session's
report with `session_report`, so the three cannot drift. The statistics (pandas, scipy) are
imported inside the functions: the app imports this module's callers without loading them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.report_options import ReportOptions
from centaur_tui.domain.session import PLAIN
from centaur_tui.domain.study import Study
from centaur_tui.report.document import (
    AgreementMatrixSection,
    BlindingSection,
    FlagNoteRow,
    IntegritySection,
    OutcomeRow,
    OutcomesSection,
    RecordSection,
    SeatRow,
    SeatSection,
    SpendRow,
)

if TYPE_CHECKING:
    from centaur_tui.report.document import ExamSection, ServedSection
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
    from centaur_tui.services.identity import check_identity

    with Store(study.database, readonly=True) as opened:
        check_identity(study, opened)
        return report_inputs(opened, general, pool)


def report_options(study: Study, **changes: Any) -> ReportOptions:
    """The options of a session's report: the defaults, what its `[statistics]` fixes, then `changes` (flags given).

    Raises:
        TypeError: a name in `changes` is not a `ReportOptions` field.
    """
    return ReportOptions.for_session(study.session.statistics, **changes)


def report_from_rows(study: Study, meta: dict[str, str], rows: dict[str, Any], **options: Any) -> Report:
    """The report of a session from its database rows (`load_report_inputs`), without the human-worker arm.

    Args:
        study: The session.
        meta: The database's meta (its `simulated` flag wins over the session file's).
        rows: The rows `build_frames` takes.
        **options: `ReportOptions` fields; the alt-test and prediction-powered options not
            given come from the session's `[statistics]`, the rest keep their defaults.
    """
    from centaur_tui.stats.frames import build_frames, design_from_session
    from centaur_tui.stats.report import build_report

    simulated = meta["simulated"] == "true" if "simulated" in meta else study.session.simulated
    design = design_from_session(
        study.session,
        simulated=simulated,
        general_dimensions=[d.id for d in study.universal.general_dimensions],
        rubric={t: study.rubric(t).ids for t in study.tasks},
    )
    opts = report_options(study, **options)
    frames = build_frames(design=design, judge_kinds=opts.judge_kinds, **rows)
    report = build_report(frames, opts)
    session = study.session
    if session.dialogue_candidates and opts.section in (None, "rankings"):
        from dataclasses import replace

        from centaur_tui.stats.dialogue import dialogue_section

        pairs = {a: c for a, c in zip(session.assistants, session.dialogue_candidates, strict=True)}
        section = dialogue_section(frames, pairs, session.augmentation.turns, PLAIN)
        report = replace(report, document=report.document.with_dialogue(section))
    return report


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

    from centaur_tui.stats.human_arm import human_arm_section
    from centaur_tui.store import WorkStore

    section = human_arm_section(report.document, WorkStore(store).productivity_rows())
    return replace(report, document=report.document.with_human_workers(section))


def session_report(
    study: Study,
    store: Store | None = None,
    *,
    human_workers: bool | None = None,
    min_gold_pass: float | None = None,
    adjudicated_reference: bool = False,
    **options: Any,
) -> Report:
    """A session's full report: every statistic, and the human-worker arm for sessions that declare `[human_workers]`.

    Blocking: it reads the database and runs every statistic (about 1.1 s at the paper's scale).

    Args:
        study: The session.
        store: An open store of the session (the report process keeps one open); None: the
            database is opened and closed here.
        human_workers: Add the human-worker section: None, when the session declares
            `[human_workers]`; True, always; False, never.
        min_gold_pass: Leave out the experts whose gold-check pass rate is below this (None:
            the session's `judging.expert_min_gold_pass`); the seat section says who and why.
        adjudicated_reference: Use the adjudicated verdicts as reference labels in the agreement
            matrix (stated there); no other statistic reads them.
        **options: `ReportOptions` fields (`centaur report`'s options); by default the
            defaults (`REPORT_DEFAULTS`, with the session's `[statistics]`), which the CLI and
            the results screen share.

    Raises:
        CentaurError: the session has not been run (no database yet).
    """
    if store is None:
        from centaur_tui.store import Store

        require_database(study)
        from centaur_tui.services.identity import check_identity

        with Store(study.database, readonly=True) as opened:
            check_identity(study, opened)
            return _session_report(study, opened, human_workers, options, min_gold_pass, adjudicated_reference)
    return _session_report(study, store, human_workers, options, min_gold_pass, adjudicated_reference)


def outcomes_section(study: Study, store: Store) -> OutcomesSection:
    """The outcome of every planned item (per stage, judge and mode) as the report's `outcomes` section."""
    from centaur_tui.domain.outcomes import OutcomeCounts, session_outcomes
    from centaur_tui.store import (
        answered_calls,
        batch_counts,
        final_errors,
        session_spend,
        stored_facts,
        unanswered_spend,
    )

    outcomes = session_outcomes(study.session, stored_facts(store))

    def row(c: OutcomeCounts) -> OutcomeRow:
        # Read from the store alone, an item the budget kept from being sent is "failed" (not sent
        # yet): `budget` is only ever counted by the run that stopped, so it is not a report field.
        return OutcomeRow(
            planned=c.planned,
            answered=c.answered,
            invalid=c.invalid,
            failed=c.failed,
            blocked=c.blocked,
            missing=c.missing,
            not_sent=c.not_sent,
            excluded=c.excluded,
            cut_off=c.cut_off,
        )

    answered_usd, unpriced = session_spend(store)
    unanswered = unanswered_spend(store)
    spend = SpendRow(
        answered_usd=answered_usd,
        answered_calls=answered_calls(store),
        unpriced_calls=unpriced,
        unanswered=unanswered.requests,
        unanswered_usd=unanswered.usd,
        unanswered_unknown=unanswered.unknown,
        unanswered_causes=dict(sorted(unanswered.by_cause.items())),
    )
    batched, in_flight = batch_counts(store)
    used_batches = bool(batched or in_flight)  # only sessions that used batch mode carry the two counts
    return OutcomesSection(
        complete=outcomes.complete,
        stages={k: row(c) for k, c in outcomes.stages.items()},
        judges={k: row(c) for k, c in outcomes.judges.items()},
        modes={k: row(c) for k, c in outcomes.modes.items()},
        failed_calls=len(final_errors(store)),
        batched_judgments=batched if used_batches else None,
        batches_in_flight=in_flight if used_batches else None,
        tasks={k: row(c) for k, c in outcomes.tasks.items()},
        candidates={k: row(c) for k, c in outcomes.candidates.items()},
        on_truncated=study.session.generation.on_truncated,
        spend=spend,
    )


def seat_section(study: Study, store: Store, min_gold_pass: float | None = None) -> SeatSection:
    """Experts at work: per expert judgments, lower-average winners, median times, practice and gold checks.

    Args:
        study: The session (its experts, and `judging.expert_min_gold_pass`).
        store: Its open store.
        min_gold_pass: Leave out of every statistic the experts whose gold-check pass rate is
            below this; None: the session's `judging.expert_min_gold_pass` (None there too:
            nobody is left out). An expert with no gold check judged is kept, and the note says so.
    """
    from statistics import median

    from centaur_tui.domain.seat import stored_lower_average
    from centaur_tui.store import CheckCount, check_rows, flag_note_rows
    from centaur_tui.store.console import ConsoleJudgment, console_judgments

    threshold = study.session.judging.expert_min_gold_pass if min_gold_pass is None else min_gold_pass
    judged: dict[str, list[ConsoleJudgment]] = {}
    for j in console_judgments(store):
        judged.setdefault(j.expert, []).append(j)
    checks: dict[tuple[str, str], CheckCount] = {(c.expert, c.kind): c for c in check_rows(store)}
    flag_notes = [
        FlagNoteRow(expert=n.expert, task=n.task, note=n.note, noted_at=n.noted_at) for n in flag_note_rows(store)
    ]
    noted: dict[str, int] = {}
    for n in flag_notes:
        noted[n.expert] = noted.get(n.expert, 0) + 1
    names = [e.id for e in study.session.experts]
    names += sorted({*judged, *(k[0] for k in checks), *noted} - set(names))
    rows: list[SeatRow] = []
    unknown: list[str] = []

    def lower(j: ConsoleJudgment) -> bool:
        return stored_lower_average(j.winner, j.option1, j.option2, j.option1_mean, j.option2_mean)

    none = CheckCount("", "", 0, 0, 0)
    for name in names:
        mine = judged.get(name, [])
        gold = checks.get((name, "gold"), none)
        practice = checks.get((name, "practice"), none)
        if not mine and gold is none and practice is none and not noted.get(name):
            continue
        seconds = [j.seconds for j in mine if j.seconds is not None]
        active = [j.active_seconds for j in mine if j.active_seconds is not None]
        gold_judged, gold_passed = gold.judged, gold.passed
        rate = gold_passed / gold_judged if gold_judged else None
        out = threshold is not None and rate is not None and rate < threshold
        if threshold is not None and rate is None:
            unknown.append(name)
        rows.append(
            SeatRow(
                expert=name,
                judgments=len(mine),
                lower_average=sum(lower(j) for j in mine),
                lower_average_confirmed=sum(lower(j) and j.lower_average_confirmed is True for j in mine),
                median_seconds=float(median(seconds)) if seconds else None,
                median_active_seconds=float(median(active)) if active else None,
                active_measured=len(active),
                practice_made=practice.made,
                practice_judged=practice.judged,
                gold_made=gold.made,
                gold_judged=gold_judged,
                gold_passed=gold_passed,
                gold_pass_rate=rate,
                left_out=out,
                flag_notes=noted.get(name, 0),
            )
        )
    left = [r for r in rows if r.left_out]
    notes: list[str] = []
    if left:
        who = ", ".join(f"{r.expert} {r.gold_pass_rate:.2f} ({r.gold_passed} of {r.gold_judged})" for r in left)
        notes.append(
            f"{len(left)} expert(s) left out of every statistic, with their {sum(r.judgments for r in left):,} "
            f"judgment(s): gold-check pass rate below {threshold:.2f}: {who}."
        )
    if unknown:
        notes.append(f"Kept without a gold-check pass rate (no gold check judged): {', '.join(unknown)}.")
    return SeatSection(
        rows=rows,
        min_gold_pass=threshold,
        left_out=[r.expert for r in left],
        left_out_judgments=sum(r.judgments for r in left),
        note=" ".join(notes) or None,
        flag_notes=flag_notes,
    )


def record_section(store: Store) -> RecordSection:
    """The chain head of the database the report reads (store/chain.py).

    Read before the report's own reads: a run writing meanwhile can only add rows after this
    head, never change the ones it covers. The head is in `meta`, which the report cache's
    `fingerprint` covers, so a kept document follows a new head.
    """
    from centaur_tui.store import chain_head

    value, length = chain_head(store)
    return RecordSection(head=value, length=length)


def _exam_parts(study: Study, store: Store) -> tuple[ExamSection | None, ServedSection | None, dict[int, str]]:
    """The admission exam's and the served models' sections, and the judgments they refuse (issue 26)."""
    from centaur_tui.services.exam_report import exam_section, left_out_judgments, served_section

    exam = exam_section(study, store)
    return exam, served_section(study, store), left_out_judgments(study, store, exam)


def without_judges(rows: dict[str, Any], judges: set[str]) -> dict[str, Any]:
    """The report inputs without these experts' judgments (left out for a low gold-check pass rate)."""
    if not judges:
        return rows
    from centaur_tui.domain.records import RowTable

    table = rows["judgment_rows"]
    judge, kind = table.columns.index("judge"), table.columns.index("judge_kind")
    kept = [r for r in table.rows if not (r[kind] == "expert" and r[judge] in judges)]
    return {**rows, "judgment_rows": RowTable(table.columns, kept)}


def integrity_section(store: Store) -> IntegritySection | None:
    """The integrity signals of expert judging (`services.console`): counted, never used to leave data out."""
    from centaur_tui.services.console import integrity_section as section

    return section(store)


def agreement_section(
    store: Store, adjudicated_reference: bool = False, left_out: set[str] | None = None
) -> AgreementMatrixSection | None:
    """The agreement matrix of a session (None without expert judgments).

    Args:
        store: The session database.
        adjudicated_reference: Add the adjudications in force as the judge "adjudicated" (the
            section says so); by default no statistic reads an adjudication.
        left_out: Experts the report leaves out (gold-check pass rate), left out here too.
    """
    from centaur_tui.domain.agreement import labels
    from centaur_tui.stats.agreement_matrix import agreement_matrix
    from centaur_tui.store.adjudication import adjudicated_verdicts, scored_verdicts

    found = [v for v in scored_verdicts(store) if not (v.judge_kind == "expert" and v.judge in (left_out or set()))]
    reference = "judgments"
    if adjudicated_reference:
        found += adjudicated_verdicts(store)
        reference = "judgments and adjudicated verdicts (the judge 'adjudicated')"
    return agreement_matrix(labels(found), reference)


def blinding_section(study: Study, store: Store, seed: int = 0, confidence: float = 0.95) -> BlindingSection | None:
    """Blinding measured (issue 26): identifiability as written and normalised, and the experts' guesses.

    The classifier reads what an expert would read: each model-written deliverable cleaned and
    masked with the session's blinding (as written), then normalised first (normalised).
    Deliverables written by experts (the human-worker arm) and empty ones are counted as excluded.
    """
    from centaur_tui.domain.blinding import clean_text
    from centaur_tui.domain.presentation import normalise
    from centaur_tui.stats.blinding import Deliverable, guess_rows, identifiability
    from centaur_tui.store import session_blinding

    options = study.session.blinding
    blinding = session_blinding(study)
    written: list[Deliverable] = []
    normalised: list[Deliverable] = []
    excluded: dict[str, int] = {}
    for o in store.outputs().values():
        if o.worker_kind != "model":
            excluded["written by an expert"] = excluded.get("written by an expert", 0) + 1
            continue
        if not o.text.strip():
            excluded["empty"] = excluded.get("empty", 0) + 1
            continue
        cleaned = clean_text(o.text)
        written.append(Deliverable(o.task, o.mode, o.candidate, blinding.mask(cleaned)[0]))
        normalised.append(Deliverable(o.task, o.mode, o.candidate, blinding.mask(normalise(cleaned))[0]))
    if not written and not excluded:
        return None
    rows = [
        row
        for texts, presentation in ((written, "as written"), (normalised, "normalised"))
        for row in identifiability(
            texts,
            presentation,
            min_per_candidate=options.min_per_candidate,
            margin=options.identifiability_margin,
            confidence=confidence,
            seed=seed,
        )
    ]
    guesses = guess_rows(_stored_guesses(store), options.index_threshold, confidence)
    note = None
    if not guesses:
        share = options.guess_share
        note = "No expert guess stored" + ("" if share else " ([blinding] guess_share is 0: experts are never asked)")
    return BlindingSection(
        identifiability=rows,
        guesses=guesses,
        margin=options.identifiability_margin,
        threshold=options.index_threshold,
        confidence=confidence,
        min_per_candidate=options.min_per_candidate,
        seed=seed,
        excluded=excluded,
        note=note,
    )


def _stored_guesses(store: Store) -> list[Any]:
    """The experts' guesses as the statistic takes them (table `expert_guesses`, migration 27)."""
    from centaur_tui.stats.blinding import Guess
    from centaur_tui.store.guesses import guess_records

    return [
        Guess(g.expert, g.truth, g.outcome, g.candidates, g.family_outcome, g.families) for g in guess_records(store)
    ]


def _session_report(
    study: Study,
    store: Store,
    human_workers: bool | None,
    options: dict[str, Any],
    min_gold_pass: float | None = None,
    adjudicated_reference: bool = False,
) -> Report:
    from dataclasses import replace

    record = record_section(store)
    seat = seat_section(study, store, min_gold_pass)
    with ThreadPoolExecutor(1, thread_name_prefix="report-read") as pool:
        meta, rows = load_report_inputs(study, pool, store)
        rows = without_judges(rows, set(seat.left_out))
        exam, served, imposed = _exam_parts(study, store)
        if imposed:
            rows = {**rows, "judgment_status": imposed}
        # Built after the reads started: on a cold start the score aggregate (SQLite, no GIL)
        # runs while pandas and scipy load (about 1.1 s).
        report = report_from_rows(study, meta, rows, **options)
    document = report.document.with_outcomes(outcomes_section(study, store))
    report = replace(report, document=document.with_seat(seat) if seat.rows else document)
    report = replace(report, document=report.document.with_record(record))
    report = replace(report, document=report.document.with_exam(exam).with_served(served))
    signals = integrity_section(store)
    if signals is not None:
        report = replace(report, document=report.document.with_integrity(signals))
    matrix = agreement_section(store, adjudicated_reference, set(seat.left_out))
    report = replace(report, document=report.document.with_agreement_matrix(matrix))
    blinded = blinding_section(study, store, seed=report.document.options.seed)
    report = replace(report, document=report.document.with_blinding(blinded))
    if human_workers is False:
        return report
    return with_human_workers(study, store, report, always=bool(human_workers))
