"""Provides the renderings of a report document: text, Markdown, JSON, and the sections the results screen shows.

Every rendering is built from the same list of sections (title, notes, table), so the
terminal report, the Markdown report and the app's results screen always hold the same
numbers. Text tables wider than the page are split into column blocks that repeat the first
column (or the first `key_columns`). Every public function takes a `ReportDocument` (a JSON-ready dict, as
`ReportDocument.to_dict` gives, is validated into one first); the section builders read it by
attribute, so the type checker checks them against `report.document`.

To add a section: write one small builder `_name_section(doc, part) -> Section` (or a list of
them) reading the part's model, and call it from `sections` (and from the results screen, if it
shows it there); an optional part is `None` when absent, so the builder starts with
`if part is None: return []`.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from centaur_tui.report.document import (
    AltTest,
    BestByTaskRow,
    Criterion,
    DialogueSection,
    ExamSection,
    ExpertAgreement,
    ExpertBias,
    ExpertCounts,
    ExpertOptionsDoc,
    HeadlineTable,
    HumanSpearman,
    HumanWorkersSection,
    IntegritySection,
    LooMajorityTable,
    ModeReport,
    OutcomesSection,
    PanelMajority,
    PanelRankings,
    PPRMode,
    PPRSection,
    Profiles,
    RecordSection,
    ReportDocument,
    SeatSection,
    ServedSection,
    SpendRow,
    Validity,
)

Doc: TypeAlias = "ReportDocument | dict[str, Any]"

WIDTH = 118
"""Widest text line; reports stay readable at 100-120 columns."""

STATUS_WORDS = {
    "invalid": "invalid",
    "superseded": "superseded revisions",
    "other_kind": "other judge kind",
    "ineligible": "ineligible judge",
    "unknown_comparison": "unknown comparison",
    "retired": "retired entry",
    "malformed": "malformed",
    "missing": "missing (planned, nothing stored: failed for good or blocked)",
}
RANK_METHOD_WORDS = {
    "mean_win_rate": "win rates averaged over eligible judges, then ranked (average ranks for ties)",
    "rank_per_judge": "each judge ranks by win rate, ranks averaged over judges (paper's literal wording)",
    "pooled": "one win rate pooled over all judges, then ranked (average ranks for ties)",
}
KIND_WORDS = {"expert": "expert", "llm": "LLM"}

Number: TypeAlias = "float | int | bool | None"
"""A number as the document holds it: None where a statistic is undefined."""


@dataclass
class Section:
    """One block of the report: a heading, notes, and an optional table (cells as the text report prints them).

    Attributes:
        title: The heading ("[SIMULATED DATA]" appended on simulated sessions).
        notes: Paragraphs under the heading: method, denominators, NaN reasons.
        headers: Column headers; a multi-line header is an id split at "_" (`header_text` joins it).
        rows: The table's cells, formatted.
        level: Heading level (1: the report's title, 2: a section, 3: a sub-section).
        align: One character per column, "l" or "r"; empty: first left, the rest right.
        key_columns: How many leading columns name a row (judge, then flaw kind, say): a text
            table wider than the page repeats them in every column block, so no block's row
            loses what it is about.
    """

    title: str
    notes: list[str] = field(default_factory=list)
    headers: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    level: int = 2
    align: str = ""
    key_columns: int = 1

    @property
    def alignment(self) -> str:
        """One "l" or "r" per column (the default filled in)."""
        return self.align or ("l" + "r" * (len(self.headers) - 1))


@dataclass(frozen=True)
class ModeSections:
    """The three sections of one mode, and the mode's denominators on their own.

    Attributes:
        mode: The mode's name.
        rank_of_ranks: Rank of ranks by task, with the overall rank (Figures 7 and 8).
        mean_rank: Mean rank ± SE by task (Figures 10 and 11).
        overall: The overall ordering with Bradley-Terry strengths.
        denominators: "n = ... judgments used; excluded: ...; candidate-runs without a usable
            judgment: ...; N run(s)." (the first sentence of the two matrices' notes).
    """

    mode: str
    rank_of_ranks: Section
    mean_rank: Section
    overall: Section
    denominators: str


class _HasReason(Protocol):
    @property
    def reason(self) -> str | None: ...


def header_text(header: str) -> str:
    """A header on one line: multi-line headers were ids split at "_", joined back the same way."""
    return header.replace("\n", "_" if " " not in header else " ")


def as_document(doc: Doc) -> ReportDocument:
    """The typed document (a JSON-ready dict is validated into one; raises pydantic's ValidationError)."""
    return doc if isinstance(doc, ReportDocument) else ReportDocument.from_dict(doc)


def _missing(v: object) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def num(v: Number, digits: int = 2) -> str:
    """A number for a table; "NaN" for a missing value."""
    if v is None or _missing(v):
        return "NaN"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    return f"{v:.{digits}f}"


def pct(v: float | None, digits: int = 1) -> str:
    return "NaN" if v is None or _missing(v) else f"{100 * v:.{digits}f}%"


def pval(v: float | None) -> str:
    if v is None or _missing(v):
        return "NaN"
    return "<0.001" if v < 0.001 else f"{v:.3f}"


def _rank(v: float | None) -> str:
    """A rank as an integer; "NaN" when undefined."""
    return "NaN" if v is None or _missing(v) else str(int(v))


def excluded_text(excluded: dict[str, int] | None, extra: Sequence[tuple[str, int]] = ()) -> str:
    """'excluded: 12 invalid, 3 ineligible judge' or 'excluded: none'."""
    parts = [f"{n:,} {STATUS_WORDS.get(k, k)}" for k, n in (excluded or {}).items() if n]
    parts += [f"{n:,} {label}" for label, n in extra if n]
    return "excluded: " + (", ".join(parts) if parts else "none")


def _reasons(rows: Iterable[_HasReason]) -> list[str]:
    counts = Counter(r.reason for r in rows if r.reason)
    return [f"NaN where {reason} ({n} cell{'s' if n > 1 else ''})" for reason, n in counts.items()]


def _title(doc: ReportDocument, text: str) -> str:
    return f"{text} [SIMULATED DATA]" if doc.simulated else text


def _ci(v: float | None, low: float | None, high: float | None, digits: int = 2, percent: bool = False) -> str:
    """'0.78 [0.72, 0.84]' (or in percent); the interval is left out when it is undefined."""
    if v is None or _missing(v):
        return "NaN"

    def f(x: float) -> str:
        return f"{100 * x:.1f}" if percent else f"{x:.{digits}f}"

    text = f(v) + ("%" if percent else "")
    return text if low is None or high is None or _missing(low) or _missing(high) else f"{text} [{f(low)}, {f(high)}]"


def _share_n(share: float | None, n: int) -> str:
    return f"{pct(share)} ({num(n)})" if not _missing(share) else f"NaN ({num(n)})"


def _note(reason: str | None) -> str:
    """A table's note cell: the reason a number is undefined, or nothing."""
    return reason or ""


# -- the whole report -------------------------------------------------------------------------


def sections(document: Doc) -> list[Section]:
    """The report as sections, in print order (the human-worker arm, printed after them, is `human_worker_sections`)."""
    doc = as_document(document)
    out = [_head_section(doc)]

    def want(name: str) -> bool:
        """Whether a section is printed: every one, or the one the document was computed for (`section`)."""
        return doc.section is None or doc.section == name

    if want("outcomes") and _llm_calls_planned(doc.outcomes) and doc.outcomes is not None:
        out.append(_outcomes_section(doc, doc.outcomes))
        cut = _cut_off_section(doc, doc.outcomes)
        if cut is not None:
            out.append(cut)
    elif doc.section == "outcomes":
        out.append(
            Section(_title(doc, "Planned items and their outcomes"), notes=["No LLM call is planned in this session."])
        )
    for m in doc.modes if want("rankings") else []:
        parts = _mode_sections(doc, m)
        out += [parts.rank_of_ranks, parts.mean_rank, parts.overall]
    if want("rankings") and doc.dialogue is not None:
        out.append(_dialogue_section(doc, doc.dialogue))
    if want("best"):
        out.append(_best_section(doc))
    if want("cross-mode"):
        out.append(_cross_section(doc))
    if want("reliability"):
        out.append(_reliability_section(doc))
    if want("validity"):
        out += _validity_sections(doc)
    if want("experts"):
        out += _expert_sections(doc)
    if want("ppr"):
        out += _ppr_sections(doc)
        out += _active_sections(doc)
    if want("calibration"):
        out += calibration_sections(doc)
    if want("seat") and doc.seat is not None:
        out.append(_seat_section(doc, doc.seat))
    elif doc.section == "seat":
        out.append(Section(_title(doc, "Experts at work"), notes=["No expert has judged in this session."]))
    if doc.integrity is not None and want("seat"):
        out.append(_integrity_section(doc, doc.integrity))
    if want("experts"):
        out += agreement_matrix_sections(doc)
    if want("workers"):
        out += worker_panel_sections(doc)
    if want("professional"):
        out += professional_sections(doc)
    if want("validity"):
        out += exam_sections(doc)
    if doc.section is None:
        out += blinding_sections(doc)
    if doc.record is not None:
        out.append(_record_section(doc, doc.record))
    return out


def worker_panel_sections(document: Doc) -> list[Section]:
    """A worker panel (issue 28) as sections: rank matrix per worker, gains over plain, stability; [] without one."""
    doc = as_document(document)
    w = doc.workers
    if w is None:
        return []
    candidates = list(dict.fromkeys(r.candidate for r in w.ranks))
    cell = {(r.worker, r.candidate): r for r in w.ranks}
    matrix = Section(
        _title(doc, "Worker panel: the assistants' rank per worker"),
        notes=[
            f"Mean within-run rank (1 = best) over {w.runs} run(s) and the tasks in each worker's own augmentation "
            "tournament, overall rank in brackets; * = the worker's best assistant. n = ranked (run, task) cells; "
            "cells without a usable judgment are counted as missing, never ranked last.",
            "Best assistant per worker: "
            + "; ".join(f"{k}: {v or 'none (none ranked, or a tie at the top)'}" for k, v in w.best.items())
            + ".",
        ],
        headers=["candidate", *w.workers],
        rows=[
            [
                c,
                *(
                    "-"
                    if (x := cell.get((wk, c))) is None
                    else f"{_fmt(x.mean_rank, '.2f')} ({_fmt(x.overall_rank, 'd')}){'*' if x.best else ''} "
                    f"n={x.cells}" + (f" missing {x.missing_cells}" if x.missing_cells else "")
                    for wk in w.workers
                ),
            ]
            for c in candidates
        ],
    )
    gains = Section(
        _title(doc, "Worker panel: each assistant's gain over the worker's own plain baseline"),
        notes=[
            "Win rate vs plain: wins plus half the ties against that worker's plain deliverable, head to head, with a "
            "95% Wilson interval whose n is the comparisons (each comparison counted once, not per judge). Rank gain: "
            "plain's mean rank minus the assistant's (positive = the assistant helps this worker)."
        ],
        headers=["worker", "assistant", "win rate vs plain [95% CI]", "judgments", "comparisons", "rank gain"],
        rows=[
            [
                g.worker,
                g.assistant,
                _ci(g.win_rate_vs_plain, g.ci_low, g.ci_high),
                f"{g.judgments:,}",
                f"{g.comparisons:,}",
                _fmt(g.rank_gain, "+.2f"),
            ]
            for g in w.gains
        ],
    )
    stability = Section(
        _title(doc, "Worker panel: stability of the assistants' ranking across workers"),
        notes=[
            "Spearman and Kendall tau-b between two workers' mean ranks of the assistants both rank (plain left out), "
            f"95% percentile intervals from {w.bootstrap} resamples of the runs (replicates used in the last column)."
        ],
        headers=["worker A", "worker B", "assistants", "Spearman [95% CI]", "Kendall [95% CI]", "replicates"],
        rows=[
            [
                st.worker_a,
                st.worker_b,
                str(st.assistants),
                _ci(st.spearman, st.spearman_low, st.spearman_high),
                _ci(st.kendall, st.kendall_low, st.kendall_high),
                str(st.replicates) + (f" ({st.reason})" if st.reason else ""),
            ]
            for st in w.stability
        ],
    )
    return [matrix, gains, stability]


def professional_sections(document: Doc) -> list[Section]:
    """The human professional as the bar (issue 28) as one section; [] when the session declares none."""
    doc = as_document(document)
    p = doc.professional
    if p is None:
        return []
    notes = [
        "Share of judgments each candidate won or tied against the human professional's deliverable ("
        + ", ".join(p.professionals)
        + "), per task and mode, with a 95% Wilson interval whose n is the comparisons (judges of one comparison "
        "are not independent: counting each comparison once is conservative)."
    ]
    if p.note is not None:
        notes.append(f"No rate: {p.note}.")
    return [
        Section(
            _title(doc, "The human professional as the bar: wins plus ties against the professional's deliverable"),
            notes=notes,
            headers=["mode", "task", "candidate", "against", "wins+ties [95% CI]", "of judgments", "comparisons"],
            rows=[
                [
                    r.mode,
                    r.task,
                    r.candidate,
                    r.professional,
                    _ci(r.rate, r.ci_low, r.ci_high, percent=True),
                    f"{r.wins_or_ties:,} of {r.judgments:,}",
                    f"{r.comparisons:,}",
                ]
                for r in p.rows
            ],
        )
    ]


def _dialogue_section(doc: ReportDocument, d: DialogueSection) -> Section:
    """Each assistant's rank at 1 turn and at N turns ([augmentation] turns > 1, issue 28)."""
    s = Section(_title(doc, f"Augmentation: ranks at 1 turn and at {d.turns} turns (dialogue)"))
    s.notes.append(
        f"Each assistant has a 1-turn candidate (its assistance text) and a {d.turns}-turn one (the same text, then "
        f"{d.turns - 1} question(s) from the worker and its answers), judged in one tournament with {d.plain}. "
        f"Rank at 1 turn: among the 1-turn candidates and {d.plain} ({d.n_1:,} judgments); at {d.turns} turns: among "
        f"the {d.turns}-turn candidates and {d.plain} ({d.n_n:,} judgments). Win rates pool runs, tasks and judges, "
        f"ties count half; average ranks, 1 = best. Head to head: the {d.turns}-turn candidate's win rate against "
        f"its own 1-turn candidate ({d.n_head_to_head:,} judgments). Augmentation judgments "
        + excluded_text(d.excluded)
        + "."
    )
    s.headers = ["assistant", "rank_1", "win_rate_1", "games_1", f"rank_{d.turns}", f"win_rate_{d.turns}"]
    s.headers += [f"games_{d.turns}", "head_to_head", "games"]
    for r in d.rows:
        s.rows.append(
            [
                r.assistant,
                num(r.rank_1, 1),
                num(r.win_rate_1),
                str(r.games_1),
                num(r.rank_n, 1),
                num(r.win_rate_n),
                str(r.games_n),
                num(r.head_to_head),
                str(r.head_to_head_games),
            ]
        )
    s.notes += _reasons(r for r in d.rows if r.reason)
    return s


def blinding_sections(document: Doc) -> list[Section]:
    """Issue 26: blinding measured: identifiability (as written and normalised), then the experts' guesses."""
    doc = as_document(document)
    part = doc.blinding
    if part is None:
        return []
    ident = Section(_title(doc, "Blinding: can a classifier name the candidate behind a deliverable?"))
    ident.notes.append(
        "Per task and mode, a linear classifier on character 2-3-grams and layout counts names each deliverable's "
        "candidate from held-out folds (stratified k-fold, seed "
        f"{part.seed}); accuracy with its {part.confidence:.0%} Wilson interval against chance 1/K. THREAT: the "
        f"interval's lower bound exceeds chance by more than {part.margin:g} ([blinding] identifiability_margin). "
        "'as written': the masked text an expert sees; 'normalised': the same words in the one normalised layout "
        f"([blinding] normalise_presentation). 'too few': some candidate has fewer than {part.min_per_candidate} "
        f"deliverables there (kept, not classified). {excluded_text(part.excluded)}."
    )
    ident.headers = ["task", "mode", "presentation", "K", "n", "folds", "correct", "accuracy", "chance", "threat"]
    for r in part.identifiability:
        ident.rows.append(
            [
                r.task,
                r.mode,
                r.presentation,
                num(r.candidates),
                num(r.deliverables),
                num(r.folds) if r.folds is not None else "-",
                num(r.correct) if r.correct is not None else "-",
                _ci(r.accuracy, r.low, r.high) if r.accuracy is not None else (r.reason or r.status),
                f"{r.chance:.2f}" if r.chance is not None else "-",
                "THREAT" if r.threat else ("" if r.status == "ok" else r.status),
            ]
        )
    threats = {
        p: sum(r.threat for r in part.identifiability if r.presentation == p) for p in ("as written", "normalised")
    }
    classified = {p: sum(r.status == "ok" for r in part.identifiability if r.presentation == p) for p in threats}
    ident.notes.append(
        f"Threats to blindness: {threats['as written']} of {classified['as written']} classified cells as written, "
        f"{threats['normalised']} of {classified['normalised']} normalised."
    )
    guess = Section(_title(doc, "Blinding: the experts' guesses of who wrote option 1 (Bang's blinding index)"))
    guess.notes.append(
        "The expert types who they think wrote option 1 (no list is shown); the text is matched against the "
        "session's candidate names, model strings and families in any spelling, as masking matches them. "
        "BI = (correct - incorrect/(K-1)) / n, don't-know answers in n (Bang et al. 2004, generalised to K "
        f"choices: 0 is guessing at random, 1 every guess right); {part.confidence:.0%} Wald interval; flagged "
        f"beyond +-{part.threshold:g} ([blinding] index_threshold). Level 'candidate': K candidates, a guess "
        "naming only the right family scores 0 ('family only'); level 'family': K families, a comparison whose "
        "candidates share one family not scored (guesses - n). 'else': named something else (in incorrect). "
        "Per expert, then per arm (the candidate that wrote option 1). The guesses never change a judgment."
    )
    if part.note:
        guess.notes.append(part.note + ".")
    guess.headers = ["level", "by", "name", "guesses", "n", "correct", "incorrect", "else", "family only"]
    guess.headers += ["don't know", "BI", "flag"]
    for g in part.guesses:
        guess.rows.append(
            [
                g.level,
                g.group,
                g.name,
                num(g.guesses),
                num(g.scored),
                num(g.correct),
                num(g.incorrect),
                num(g.unmatched),
                num(g.family_only),
                num(g.dont_know),
                _ci(g.index, g.low, g.high) if g.index is not None else "-",
                "FLAG" if g.flagged else "",
            ]
        )
    return [ident, guess]


def _record_section(doc: ReportDocument, record: RecordSection) -> Section:
    s = Section(_title(doc, "Tamper-evident record"))
    s.notes.append(
        f"Chain head {record.head} over {record.length:,} row(s) (judgments, submitted deliverables, masking "
        "logs): these numbers come from that state of the database; `centaur verify` recomputes the chain."
    )
    return s


def _llm_calls_planned(outcomes: OutcomesSection | None) -> bool:
    """Whether the session plans any LLM call (a study of people only plans none: nothing to miss or run again)."""
    return outcomes is not None and any(r.planned for r in outcomes.stages.values())


def _head_section(doc: ReportDocument) -> Section:
    counts, opts, outcomes = doc.counts, doc.options, doc.outcomes
    by_status = counts.by_status
    head = Section(_title(doc, f"CentaurBench report: session {doc.session or '(unnamed)'}"), level=1)
    if doc.simulated and doc.banner is not None:
        head.notes.append(doc.banner)
    judging = outcomes.stages.get("judging") if outcomes is not None else None
    missing = judging.missing if judging is not None else 0
    head.notes += [
        f"{counts.runs} run(s), {len(counts.tasks)} task(s), modes: {', '.join(counts.modes) or 'none'}; "
        f"{counts.comparisons:,} comparisons, {counts.judgments:,} judgments stored, "
        f"{by_status.get('ok', 0):,} used; "
        + excluded_text({k: v for k, v in by_status.items() if k != "ok"}, [(STATUS_WORDS["missing"], missing)]),
        f"Judges used ({', '.join(opts.judge_kinds)}): {', '.join(counts.judges) or 'none'}",
        f"Within-run rank: {RANK_METHOD_WORDS.get(opts.rank_method, opts.rank_method)}. 1 = best.",
    ]
    if counts.winner_only_all_kinds:
        head.notes.append(
            f"Winner-only judgments (a winner, no rubric scores): {counts.winner_only:,} of the judgments used "
            f"here ({counts.winner_only_all_kinds:,} of both judge kinds) count in every pairwise statistic; "
            + _winner_only_text(counts.winner_only)
            + " (choice-rubric consistency, rubric vs win rate, general profiles, standardised ranking, leniency)."
        )
    if outcomes is not None and not _llm_calls_planned(outcomes):
        # A study of people only (no model, no LLM judge): no call is planned, so there is
        # nothing to miss or to run again; the judgments are what was imported or judged.
        head.notes.append("No LLM call is planned in this session: every judgment is imported or an expert's.")
    elif judging is not None:
        head.notes.append(
            f"Planned judgments: {judging.planned:,}; {judging.missing:,} missing "
            f"({_missing_parts(judging.failed, judging.not_sent, judging.blocked)})."
            + (f" {judging.excluded:,} excluded (an output cut off at max_tokens)." if judging.excluded else "")
        )
    return head


def _seconds(v: float | None) -> str:
    if v is None or _missing(v):
        return "-"
    minutes, secs = divmod(round(v), 60)
    return f"{minutes}:{secs:02d}"


def agreement_matrix_sections(document: Doc) -> list[Section]:
    """The agreement matrix, one row per (pair of judges, dimension); [] when the document has none."""
    doc = as_document(document)
    m = doc.agreement_matrix
    if m is None:
        return []
    s = Section(_title(doc, "Agreement matrix"))
    s.notes.append(
        "Every expert against every LLM judge and every other expert: n, the comparisons both judged "
        "(latest valid judgment, presented order 1 when both orders were judged); agree, how many of them "
        "they labelled alike; Cohen's kappa over a / b / tie (for a rubric dimension: which candidate was "
        f"scored higher on it), left out below {m.kappa_min_n} shared comparisons. Reference labels: {m.reference}."
    )
    s.headers = ["dimension", "judge A", "judge B", "n", "agree", "agreement", "kappa"]
    s.align = "lllrrrr"
    for c in m.cells:
        kappa = "-" if c.kappa is None else f"{c.kappa:.2f}"
        s.rows.append([c.dimension, c.judge_a, c.judge_b, num(c.n), num(c.agree), f"{c.agreement:.2f}", kappa])
    return [s]


def _seat_section(doc: ReportDocument, seat: SeatSection) -> Section:
    s = Section(_title(doc, "Experts at work"))
    s.notes.append(
        "Per expert: current judgments; lower avg: winners with the lower rubric average of the two options "
        "(confirmed: of those, confirmed when the judging screen asked); median time per judgment, wall and "
        "active (idle periods left out; n: judgments with active time measured); practice and gold checks "
        "(a deliverable against a degraded copy of itself: the intact one should win), judged and passed. "
        "Practice and gold verdicts are stored apart and never counted in any statistic."
    )
    threshold = seat.min_gold_pass
    if threshold is None:
        s.notes.append("No gold-check threshold: every expert's judgments are used.")
    elif not seat.left_out:
        s.notes.append(f"Gold-check threshold {threshold:.2f}: no expert left out.")
    if seat.note:
        s.notes.append(seat.note)
    s.headers = [
        "expert",
        "judgments",
        "lower avg",
        "confirmed",
        "median wall",
        "median active",
        "n active",
        "practice",
        "gold passed",
        "gold pass rate",
        "used",
        "flag notes",
    ]
    for r in seat.rows:
        s.rows.append(
            [
                r.expert,
                num(r.judgments),
                num(r.lower_average),
                num(r.lower_average_confirmed),
                _seconds(r.median_seconds),
                _seconds(r.median_active_seconds),
                num(r.active_measured),
                f"{r.practice_judged}/{r.practice_made}",
                f"{r.gold_passed}/{r.gold_judged}" + (f" of {r.gold_made}" if r.gold_made else ""),
                num(r.gold_pass_rate) if r.gold_pass_rate is not None else "-",
                "left out" if r.left_out else "yes",
                num(r.flag_notes),
            ]
        )
    for n in seat.flag_notes:
        # An expert's own words: quoted with repr, so a newline or a quote cannot pass for report text.
        s.notes.append(f"Flag note of {n.expert} on task {n.task or '(place gone)'}: {n.note!r}.")
    return s


def _integrity_section(doc: ReportDocument, part: IntegritySection) -> Section:
    s = Section(_title(doc, "Integrity signals of expert judging"))
    s.notes.append(
        f"Counted for the organiser, never used to leave a judgment out (--min-gold-pass is the one way to leave "
        f"an expert out). pasted: rationales with at least {part.pasted_share:.0%} of their characters pasted, of "
        f"those whose seat recorded pastes; too fast: stored in less time than both deliverables need at "
        f"{part.reading_words_per_minute:,} words a minute, of judgments with a time; repeated: a rationale that "
        f"stands, identical, on another comparison; option 1: wins of option 1 among decided judgments, with an "
        f"exact two-sided binomial test against 1/2 (p below {part.order_alpha} marked *)."
    )
    s.headers = ["expert", "judgments", "pasted", "pasted chars", "too fast", "repeated", "option 1", "p"]
    for r in part.rows:
        marked = r.order_p is not None and r.order_p < part.order_alpha
        s.rows.append(
            [
                r.expert,
                num(r.judgments),
                f"{r.pasted}/{r.paste_recorded}",
                f"{r.pasted_share:.0%}" if r.pasted_share is not None else "-",
                f"{r.too_fast}/{r.timed}",
                num(r.repeated),
                f"{r.option1_wins}/{r.decided}",
                (f"{r.order_p:.3g}" + (" *" if marked else "")) if r.order_p is not None else "-",
            ]
        )
    return s


def exam_sections(document: Doc) -> list[Section]:
    """The judges' admission exam and the served models of judge calls (issue 26); [] without them."""
    doc = as_document(document)
    return exam_parts_sections(doc.exam, doc.served, doc.simulated)


def exam_parts_sections(exam: ExamSection | None, served: ServedSection | None, simulated: bool) -> list[Section]:
    """The sections of `exam_sections` from the two parts themselves (`centaur exam` prints them without a report)."""
    out = []
    if exam is not None:
        out += _exam_sections(simulated, exam)
    if served is not None:
        out.append(_served_section(simulated, served))
    return out


def sections_text(parts: Sequence[Section], width: int = WIDTH) -> str:
    """Sections as plain text, as `to_text` prints them."""
    lines: list[str] = []
    for s in parts:
        if lines:
            lines.append("")
        bar = "=" if s.level == 1 else "-"
        lines.append(s.title)
        lines.append(bar * min(len(s.title), width))
        for note in s.notes:
            lines += _wrap(note, width)
        if s.headers:
            lines.append("")
            lines += _text_table(s, width)
    return "\n".join(lines) + "\n"


def _sim(simulated: bool, text: str) -> str:
    return f"{text} [SIMULATED DATA]" if simulated else text


def _exam_sections(simulated: bool, part: ExamSection) -> list[Section]:
    s = Section(_sim(simulated, f"Admission exam of the LLM judges (seed {part.seed})"), key_columns=2)
    s.align = "ll" + "r" * 8
    s.notes.append(part.note)
    s.headers = [
        "judge",
        "flaw",
        "pairs",
        "answered",
        "invalid",
        "failed",
        "not asked",
        "accuracy [95% CI]",
        "n",
        "first picks",
    ]
    for r in part.rows:
        s.rows.append(
            [
                r.judge,
                r.kind,
                num(r.pairs),
                num(r.answered),
                num(r.invalid),
                num(r.failed),
                num(r.not_asked),
                _ci(r.accuracy, r.ci_low, r.ci_high),
                f"{r.correct}/{r.examined}",
                f"{r.first_picks}/{r.decided}",
            ]
        )
    plan = Section(_sim(simulated, "Admission exam: planted pairs per task and flaw kind"), level=3)
    plan.notes.append(
        f"{part.planted} pair(s) planted of {part.pairs} slot(s); {part.not_applicable} slot(s) not applicable "
        "(no deliverable of the task had anything to plant that flaw in), counted here, never asked."
    )
    plan.headers = ["task", "flaw", "slots", "planted", "not applicable", "why"]
    for k in part.kinds:
        plan.rows.append([k.task, k.kind, num(k.slots), num(k.planted), num(k.not_applicable), _note(k.reason)])
    out = [s, plan]
    if part.admission:
        adm = Section(_sim(simulated, f"Admission: minimum accuracy {part.min_accuracy:g}"), level=3)
        adm.notes.append(
            f"Left out of every statistic: {', '.join(part.left_out)} ({part.left_out_judgments} tournament "
            "judgment(s), status not_admitted)."
            if part.left_out
            else ("No judge left out." if part.enforce else "Reported only (judging.admit_enforce is off).")
        )
        adm.headers = ["judge", "accuracy", "n", "admitted", "left out", "why"]
        for a in part.admission:
            adm.rows.append(
                [
                    a.judge,
                    num(a.accuracy, 3),
                    num(a.examined),
                    "yes" if a.admitted else "no",
                    "yes" if a.left_out else "no",
                    a.reason,
                ]
            )
        out.append(adm)
    return out


def _served_section(simulated: bool, part: ServedSection) -> Section:
    s = Section(_sim(simulated, "Models that served the judge calls"))
    s.notes.append(part.note)
    s.headers = ["judge", "scheduled", "judgments", "not recorded", "other model", "other family", "served by"]
    for r in part.rows:
        s.rows.append(
            [
                r.judge,
                r.scheduled,
                num(r.judgments),
                num(r.not_recorded),
                num(r.other_model),
                num(r.other_family),
                ", ".join(r.served) or "-",
            ]
        )
    return s


def _task_header(name: str, width: int = 12) -> str:
    """An id as a header of short lines: words (split at "_") packed into lines of at most `width` characters."""
    if len(name) <= width:
        return name
    lines: list[str] = []
    for word in name.split("_"):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += "_" + word
        else:
            lines.append(word)
    return "\n".join(lines)


def mode_sections(document: Doc) -> list[ModeSections]:
    """Per mode, in the document's order: its rank of ranks, mean rank ± SE and overall ordering sections."""
    doc = as_document(document)
    return [_mode_sections(doc, m) for m in doc.modes]


def best_by_task_section(document: Doc) -> Section:
    """Best candidate by task and mode (Appendix D)."""
    return _best_section(as_document(document))


def cross_mode_section(document: Doc) -> Section:
    """Spearman correlation of mean ranks between automation and augmentation (Table 1)."""
    return _cross_section(as_document(document))


def reliability_section(document: Doc) -> Section:
    """Inter-judge reliability (Appendix F)."""
    return _reliability_section(as_document(document))


def validity_sections(document: Doc) -> list[Section]:
    """Choice-rubric consistency, rubric vs win rate, criterion validity, profiles, standardised rank, position bias."""
    return _validity_sections(as_document(document))


def expert_sections(document: Doc) -> list[Section]:
    """Experts vs LLM judges: one section saying why when no expert judged, else every comparison of the panels."""
    return _expert_sections(as_document(document))


def ppr_sections(document: Doc) -> list[Section]:
    """Prediction-powered rankings beside the LLM-only and expert-only rankings (one section per mode)."""
    return _ppr_sections(as_document(document))


def active_sections(document: Doc) -> list[Section]:
    """Rank-sets from active draws (issue 25); [] when no expert comparison was drawn actively."""
    return _active_sections(as_document(document))


def dialogue_sections(document: Doc) -> list[Section]:
    """Each assistant's ranks at 1 turn and at N turns (issue 28); [] for a session without dialogues."""
    doc = as_document(document)
    return [] if doc.dialogue is None else [_dialogue_section(doc, doc.dialogue)]


# -- prediction-powered rankings --------------------------------------------------------------


def _rank_set(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low}-{high}"


def _ppr_sections(doc: ReportDocument) -> list[Section]:
    p = doc.ppr
    if p is None:
        return []
    head = Section(
        _title(
            doc, "Prediction-powered rankings (Chatzi et al., 2024): LLM judges corrected by a random expert subset"
        ),
        level=2,
    )
    if p.note:
        head.notes.append(p.note)
    if not p.modes:
        return [head]
    head.notes.append(_ppr_method_note(p))
    return [head, *(_ppr_mode_section(doc, m) for m in p.modes)]


def calibration_sections(document: Doc) -> list[Section]:
    """Judge calibration from expert labels (issue 26): corrected win rates, rubric calibration, tiers."""
    doc = as_document(document)
    c = doc.calibration
    if c is None:
        return []
    head = Section(_title(doc, "Judge calibration from expert labels: naive and corrected"), level=2)
    if c.note:
        head.notes.append(c.note)
    if not c.present:
        return [head]
    level = f"{c.confidence:.0%}" if c.confidence is not None else "?"
    head.notes.append(
        "Per LLM judge and candidate, the judge's own win rate (naive: wins + 0.5 ties over the comparisons "
        "it judged) beside the experts' win rate estimated from the judge's verdicts corrected by its confusion "
        "against the experts on the comparisons both judged (Rogan-Gladen, generalised to win/tie/lose; "
        f"se = sensitivity, sp = specificity from the candidate's side). {level} intervals: a stratified "
        f"bootstrap ({c.bootstrap or 0:,} replicates) over the labelled and the judge-only comparisons, so the "
        "calibration's uncertainty is in them. It assumes the labelled comparisons are a random subset of the "
        f"judge's. Left uncorrected, with the reason: {c.too_few_labels or 0:,} row(s) with fewer than "
        f"{c.min_labels} labels, {c.not_correctable or 0:,} not correctable (se + sp - 1 at most "
        f"{num(c.min_youden)})."
    )
    out = [head]
    rows = c.rows or []
    pooled = [r for r in rows if r.task is None]
    if pooled:
        s = Section(_title(doc, "Corrected win rates per judge (every task of a mode)"), level=3)
        s.headers = ["judge", "mode", "candidate", "naive", "corrected", "experts only", "se", "sp", "n labels",
                     "n judged", "note"]  # fmt: skip
        for r in pooled:
            s.rows.append(
                [
                    r.judge,
                    r.mode,
                    r.candidate,
                    _ci(r.naive, r.naive_ci_low, r.naive_ci_high, 3),
                    _ci(r.corrected, r.ci_low, r.ci_high, 3),
                    num(r.expert_only, 3),
                    num(r.sensitivity),
                    num(r.specificity),
                    num(r.labels),
                    num(r.judged),
                    _note(r.reason),
                ]
            )
        s.align = "lllrrrrrrrl"
        out.append(s)
    by_task = [r for r in rows if r.task is not None]
    if by_task:
        s = Section(_title(doc, "Corrected win rates per judge, task and mode"), level=3)
        s.headers = ["judge", "task", "mode", "candidate", "naive", "corrected", "n labels", "n judged", "note"]
        for r in by_task:
            s.rows.append(
                [
                    r.judge,
                    r.task or "",
                    r.mode,
                    r.candidate,
                    num(r.naive, 3),
                    _ci(r.corrected, r.ci_low, r.ci_high, 3),
                    num(r.labels),
                    num(r.judged),
                    _note(r.reason),
                ]
            )
        s.align = "llllrrrrl"
        out.append(s)
    if c.rubric:
        s = Section(_title(doc, "Rubric averages calibrated to the experts' (isotonic regression)"), level=3)
        s.notes.append(
            "Per judge and mode, the experts' rubric average regressed isotonically on the judge's over the "
            "(comparison, candidate) pairs both scored (n labels); the calibrated value is the mean of the fitted "
            "map over every average the judge gave the candidate (n judged); bootstrap intervals."
        )
        s.headers = ["judge", "mode", "candidate", "naive", "calibrated", "n labels", "n judged", "note"]
        for rr in c.rubric:
            s.rows.append(
                [
                    rr.judge,
                    rr.mode,
                    rr.candidate,
                    num(rr.naive),
                    _ci(rr.calibrated, rr.ci_low, rr.ci_high),
                    num(rr.labels),
                    num(rr.judged),
                    _note(rr.reason),
                ]
            )
        s.align = "lllrrrrl"
        out.append(s)
    t = Section(_title(doc, "Judge tiers against people (Cohen's kappa with experts)"), level=3)
    if not c.tiers:
        t.notes.append("No LLM judge shares enough comparisons with an expert for a kappa.")
        out.append(t)
        return out
    t.notes.append(
        "Each LLM judge's kappa with the experts (mean over experts, weighted by shared comparisons n) placed "
        f"among the expert-expert kappas: z = (kappa - people's mean) / their spread; |z| <= {num(c.tier_z)} is "
        "within the range of people."
    )
    t.headers = ["judge", "kappa", "n", "experts", "people kappa", "spread", "pairs", "people n", "z", "tier", "note"]
    for tr in c.tiers:
        t.rows.append(
            [
                tr.judge,
                num(tr.kappa),
                num(tr.n),
                num(tr.experts),
                num(tr.people_kappa),
                num(tr.people_sd),
                num(tr.people_pairs),
                num(tr.people_n),
                num(tr.z),
                tr.tier or "",
                _note(tr.reason or (tr.spread_from if tr.people_pairs < 2 else None)),
            ]
        )
    t.align = "lrrrrrrrrll"
    out.append(t)
    return out


def _active_sections(doc: ReportDocument) -> list[Section]:
    """Rank-sets from active draws (`stats.active.active_rankings`), one table per mode."""
    a = doc.active
    if a is None:
        return []
    head = Section(_title(doc, "Rankings from active draws: experts' comparisons weighted by their draw probability"))
    head.notes.append(a.note)
    head.notes.append(
        f"{a.draws:,} active draw(s) of {a.experts:,} expert(s) used; {a.draws_not_used:,} not used (after an "
        f"expert's first unjudged place, or an expert with fewer than 2). alpha {a.alpha}, {a.method}."
    )
    out = [head]
    for m in a.modes:
        s = Section(_title(doc, f"Rankings from active draws: {m.mode}"), level=3)
        size = m.mean_set_size
        s.notes.append(
            f"{m.draws:,} active draws, {m.comparisons:,} comparisons of this mode. Mean rank-set size: weighted "
            f"with the LLM panel {num(size['active'])}, experts only (weighted) {num(size['experts_only'])}."
        )
        if m.reason:
            s.notes.append(f"Note: {m.reason}.")
        s.headers = ["candidate", "win prob.", "SE", "ranks", "lambda", "n draws", "experts only", "ranks"]
        for r in m.rows:
            s.rows.append(
                [
                    r.candidate,
                    num(r.theta, 3),
                    num(r.se, 3),
                    _rank_set(r.low, r.high),
                    num(r.lam),
                    num(r.draws),
                    num(r.expert_theta, 3),
                    _rank_set(r.expert_low, r.expert_high),
                ]
            )
        out.append(s)
    return out


def _ppr_method_note(p: PPRSection) -> str:
    o = p.options
    excluded = p.excluded_not_random or {}
    estimator = (
        "every LLM judge's verdict a prediction, one variance-minimising lambda per judge pooled over candidates"
        if o.estimator == "panel"
        else "the LLM panel's mean verdict the prediction, a lambda per candidate"
    )
    target = (
        "share of wins among decisive verdicts (ties dropped)" if o.ties == "drop" else "points share: wins + 0.5 ties"
    )
    return (
        f"Each candidate's expert win probability ({target}) estimated from the LLM judges' "
        f"verdicts on every comparison, corrected by the experts' verdicts on the comparisons they judged "
        f"(prediction-powered inference, estimator {o.estimator}: {estimator}; lambda = {o.lam}; several experts "
        f"on one comparison are one label; candidates with fewer than {o.min_labeled} expert comparisons are "
        f"not ordered). Rank-sets cover the ranking the experts would give, "
        f"all candidates at once, with probability >= {1 - o.alpha:.0%} ({o.method} simultaneous intervals); "
        f"this needs the expert comparisons to be a uniformly random subset (`centaur assign --strategy "
        f"uniform-random`). Expert verdicts used: {p.expert_verdicts_used or 0:,} of {p.expert_verdicts or 0:,}"
        + (
            "; left out, not drawn at random: " + ", ".join(f"{k} {v:,}" for k, v in excluded.items())
            if excluded
            else ""
        )
        + ". LLM only: the judges' own ranking, whose rank-sets reflect their sampling noise, not their bias."
    )


def _ppr_mode_section(doc: ReportDocument, m: PPRMode) -> Section:
    s = Section(_title(doc, f"Prediction-powered ranking: {m.mode}"), level=3)
    size = m.mean_set_size
    s.notes.append(
        f"{m.comparisons:,} comparisons with LLM verdicts, {m.labeled:,} also judged by experts"
        + (f"; {m.no_llm_verdict:,} expert-judged without an LLM verdict left out" if m.no_llm_verdict else "")
        + f". Mean rank-set size: prediction-powered {num(size['ppr'])}, experts only {num(size['expert'])}, "
        f"LLM only {num(size['llm'])}."
    )
    if m.reason:
        s.notes.append(f"Note: {m.reason}.")
    s.headers = [
        "candidate",
        "PPR win prob.",
        "SE",
        "PPR ranks",
        "lambda",
        "n experts",
        "experts only",
        "ranks",
        "LLM only",
        "ranks",
    ]
    for r in m.rows:
        s.rows.append(
            [
                r.candidate,
                num(r.ppr_theta, 3),
                num(r.ppr_se, 3),
                _rank_set(r.ppr_low, r.ppr_high),
                num(r.lam),
                num(r.labeled),
                num(r.expert_theta, 3),
                _rank_set(r.expert_low, r.expert_high),
                num(r.llm_theta, 3),
                _rank_set(r.llm_low, r.llm_high),
            ]
        )
    s.align = "lrrrrrrrrr"
    return s


def scatter_points(document: Doc) -> list[tuple[str, float, float]]:
    """(model, automation overall mean rank, augmentation overall mean rank) for models in both modes (Figure 9)."""
    doc = as_document(document)
    by_mode = {m.mode: {r.candidate: r.mean_rank for r in m.overall} for m in doc.modes}
    auto, aug = by_mode.get("automation", {}), by_mode.get("augmentation", {})
    points: list[tuple[str, float, float]] = []
    for name, x in auto.items():
        y = aug.get(name)
        if x is not None and y is not None:
            points.append((name, x, y))
    return points


# -- rankings -----------------------------------------------------------------------------------


def _mode_sections(doc: ReportDocument, m: ModeReport) -> ModeSections:
    mode = m.mode.capitalize()
    tasks, names = m.tasks, m.candidates
    cell = {(r.task, r.candidate): r for r in m.matrix}
    overall = {r.candidate: r for r in m.overall}
    counts = (
        f"n = {m.n:,} judgments used; {excluded_text(m.excluded)}; candidate-runs without a usable judgment: "
        f"{m.missing_cells:,} of {m.cells:,}; {m.runs} run(s)."
    )
    number = {"automation": (7, 10), "augmentation": (8, 11)}.get(m.mode)
    rr = Section(_title(doc, f"{mode}: rank of ranks by task" + (f" (Figure {number[0]})" if number else "")))
    rr.notes.append(
        counts + " Each task's mean ranks over runs, ranked with the min method (exact ties share a "
        "rank, the next is skipped: 1, 1, 3); 1 = best."
    )
    rr.headers = ["candidate", *[_task_header(t) for t in tasks], "overall"]
    for name in names:
        row = [name]
        for t in tasks:
            c = cell.get((t, name))
            row.append(_rank(c.rank_of_ranks if c is not None else None))
        o = overall.get(name)
        row.append(_rank(o.overall_rank if o is not None else None))
        rr.rows.append(row)

    matrix = Section(_title(doc, f"{mode}: mean rank ± SE by task" + (f" (Figure {number[1]})" if number else "")))
    matrix.notes.append(counts + " Mean of the within-run ranks over runs ± SE = SD over runs / sqrt(runs).")
    matrix.headers = ["candidate", *[_task_header(t) for t in tasks]]
    for name in names:
        row = [name]
        for t in tasks:
            c = cell.get((t, name))
            mean = c.mean_rank if c is not None else None
            row.append("NaN" if c is None or mean is None or _missing(mean) else f"{mean:.2f}±{num(c.se)}")
        matrix.rows.append(row)
    matrix.notes += _reasons(m.matrix)
    return ModeSections(m.mode, rr, matrix, _overall_section(doc, m, mode), counts)


def _overall_section(doc: ReportDocument, m: ModeReport, mode: str) -> Section:
    ov = Section(_title(doc, f"{mode}: overall ordering"))
    bt = {r.candidate: r for r in m.bradley_terry}
    ov.notes.append(
        "Overall mean rank = mean of the per-task mean ranks, ranked with the min method; SE = SD over runs of each "
        "run's task-averaged rank / sqrt(runs). Bradley-Terry theta = log strength (mean 0) pooled over tasks and "
        f"runs, ties = half wins; {int(doc.options.confidence * 100)}% interval from {doc.options.bootstrap} "
        "bootstrap replicates resampling whole tournaments (run x task)."
    )
    ov.headers = ["rank", "candidate", "mean rank", "SE", "tasks", "runs", "BT theta", "BT interval", "BT games"]
    for r in m.overall:
        b = bt.get(r.candidate)
        low, high = (b.ci_low, b.ci_high) if b is not None else (None, None)
        theta = b.theta if b is not None else None
        ov.rows.append(
            [
                _rank(r.overall_rank),
                r.candidate,
                num(r.mean_rank),
                num(r.se),
                str(r.tasks),
                str(r.runs),
                "NaN" if theta is None or _missing(theta) else f"{theta:+.2f}",
                "NaN" if low is None or high is None or _missing(low) else f"[{low:+.2f}, {high:+.2f}]",
                num(b.games if b is not None else 0),
            ]
        )
    ov.align = "rlrrrrrrr"
    ov.notes += _reasons(m.overall) + _reasons(m.bradley_terry)
    return ov


def _best_section(doc: ReportDocument) -> Section:
    s = Section(_title(doc, "Best candidate by task and mode (Appendix D)"))
    s.notes.append("Lowest mean rank over runs; exact ties are joined with ' / '. Best assisted leaves out plain.")
    modes = [m.mode for m in doc.modes]
    by_task: dict[str, dict[str, BestByTaskRow]] = {}
    for r in doc.best_by_task:
        by_task.setdefault(r.task, {})[r.mode] = r
    s.headers = ["task", *[f"{m} (mean rank)" for m in modes]]
    if "augmentation" in modes:
        s.headers.append("best assisted (mean rank)")
    for task, by_mode in by_task.items():
        row = [task]
        for m in modes:
            b = by_mode.get(m)
            row.append("NaN" if b is None or not b.best else f"{b.best} ({num(b.best_mean_rank)})")
        if "augmentation" in modes:
            b = by_mode.get("augmentation")
            row.append(
                "NaN" if b is None or not b.best_assisted else f"{b.best_assisted} ({num(b.best_assisted_mean_rank)})"
            )
        s.rows.append(row)
    s.align = "l" * len(s.headers)
    return s


def _cross_section(doc: ReportDocument) -> Section:
    s = Section(_title(doc, "Automation vs augmentation: Spearman correlation of mean ranks (Table 1)"))
    cm = doc.cross_mode
    s.notes.append(
        "Over the assistant models in both modes (plain and automation-only models left out"
        + (f": {', '.join(cm.only_automation)}" if cm.only_automation else "")
        + "); p = scipy's two-sided p-value; exact p = permutation p-value over all pairings. Descriptive: n is small."
    )
    s.headers = ["task", "n", "rho", "p", "exact p", "note"]
    for r in cm.rows:
        s.rows.append(
            [
                r.task,
                str(r.n),
                num(r.rho),
                pval(r.p),
                pval(r.p_permutation) + (" (MC)" if r.permutation_method == "monte carlo" else ""),
                _note(r.reason),
            ]
        )
    return s


def _reliability_section(doc: ReportDocument) -> Section:
    s = Section(_title(doc, "Inter-judge reliability (Appendix F)"))
    s.notes.append(
        "Unit = comparison; one rating per (comparison, judge) in canonical order (candidates sorted by name: "
        "0 = first wins, 1 = second wins, 2 = tie); only comparisons with at least two valid ratings. Raw agreement = "
        "agreeing judge pairs / all judge pairs. Alpha = Krippendorff's nominal alpha (judges x units, missing = NaN)."
    )
    s.headers = [
        "scope",
        "units",
        "excl. units",
        "ratings",
        "pairs",
        "agreement",
        "alpha",
        "excluded judgments",
        "note",
    ]
    for r in doc.reliability.rows:
        label = "overall" if r.scope == "overall" else (r.mode if r.scope == "mode" else f"{r.task} / {r.mode}")
        excl = excluded_text(r.excluded, [("repeats", r.repeats_dropped)]).removeprefix("excluded: ")
        s.rows.append(
            [
                label or "",
                num(r.units),
                num(r.excluded_units),
                num(r.ratings),
                num(r.pairs),
                pct(r.raw_agreement),
                num(r.alpha, 3),
                excl,
                _note(r.reason),
            ]
        )
    s.align = "lrrrrrrll"
    return s


def _outcomes_section(doc: ReportDocument, outcomes: OutcomesSection) -> Section:
    s = Section(_title(doc, "Planned items and their outcomes"))
    s.notes.append(
        "Every item the session plans, per stage, per judge and (for judgments) per task. failed: nothing stored "
        "although its inputs are, and its call failed for good; not sent: nothing stored and no call of it failed "
        "(a stopped run never sent it); blocked: an input is missing (a worker output whose assistance text "
        "failed, a judgment of a comparison whose output is missing); excluded: a judgment not asked because an "
        "output was cut off at max_tokens and the session excludes such deliverables."
    )
    if outcomes.complete:
        s.notes.append("Complete: every planned item is stored.")
    else:
        stages = list(outcomes.stages.values())
        missing = sum(r.missing for r in stages)
        parts = _missing_parts(
            sum(r.failed for r in stages), sum(r.not_sent for r in stages), sum(r.blocked for r in stages)
        )
        s.notes.append(
            f"Incomplete: {missing:,} planned item(s) missing ({parts}); {outcomes.failed_calls:,} call(s) "
            "failed for good (call_errors). Run the session again to send or retry them."
        )
    if outcomes.spend is not None:
        s.notes.append(_spend_note(outcomes.spend))
    batched, in_flight = outcomes.batched_judgments or 0, outcomes.batches_in_flight or 0
    if batched or in_flight:
        s.notes.append(
            f"{batched:,} LLM judgment(s) came from provider batches (batch mode; the "
            "`batch` column of judgments.csv)."
            + (
                f" {in_flight:,} batch(es) are still in flight: their calls count as failed until "
                "`centaur run` collects them."
                if in_flight
                else ""
            )
        )
    s.headers = ["stage, judge or task", "planned", "answered", "invalid", "failed", "not sent", "blocked"]
    s.headers += ["excluded", "missing"]
    rows = [(k, r) for k, r in outcomes.stages.items() if r.planned]
    rows += [(f"judge {k}", r) for k, r in outcomes.judges.items()]
    rows += [(f"task {k}", r) for k, r in outcomes.tasks.items() if r.planned]
    for label, r in rows:
        counts = (r.planned, r.answered, r.invalid, r.failed, r.not_sent, r.blocked, r.excluded, r.missing)
        s.rows.append([label, *(num(x) for x in counts)])
    return s


# Issue 22: texts cut off at max_tokens, and what the session did with them. Kept apart from the
# outcome table above (its own section, read from `outcomes` only).
_ON_TRUNCATED_WORDS = {
    "reask": "asked again with max_tokens doubled up to max_tokens_cap; a text still cut off is judged marked",
    "judge_marked": "kept and judged marked (judges and experts are told it was cut off)",
    "exclude": "kept out of every comparison (its judgments are counted as excluded)",
}


_CAUSE_WORDS = {
    "timeout": "timed out",
    "broken": "broken reply",
    "stopped": "out when a run was stopped",
    "killed": "out when a run was killed",
}


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def _spend_note(spend: SpendRow) -> str:
    """Answered spend, and apart the spend billed without an answer with its count and causes."""
    unpriced = f" ({spend.unpriced_calls:,} without a price, not counted)" if spend.unpriced_calls else ""
    text = f"Spend: {_usd(spend.answered_usd)} for {spend.answered_calls:,} answered call(s){unpriced}. "
    if not spend.unanswered:
        return text + "Billed without an answer: none."
    causes = ", ".join(f"{n:,} {_CAUSE_WORDS.get(cause, cause)}" for cause, n in spend.unanswered_causes.items() if n)
    estimated = spend.unanswered - spend.unanswered_unknown
    estimate = (
        f"estimated at {_usd(spend.unanswered_usd)} (each at its worst case), counted toward max_cost_usd"
        if estimated
        else "not estimated (sent without a budget)"
    )
    if estimated and spend.unanswered_unknown:
        estimate += f"; {spend.unanswered_unknown:,} sent without a budget are not estimated"
    return text + (
        f"Billed without an answer, apart: {spend.unanswered:,} request(s) ({causes}), {estimate}; "
        f"{_usd(spend.answered_usd + spend.unanswered_usd)} in all."
    )


def _missing_parts(failed: int, not_sent: int, blocked: int) -> str:
    """ "3 failed for good, 7 not sent (run stopped), 0 blocked": what a count of missing items holds."""
    return f"{failed:,} failed for good, {not_sent:,} not sent (run stopped), {blocked:,} blocked"


def _cut_off_section(doc: ReportDocument, outcomes: OutcomesSection) -> Section | None:
    """Texts cut off at max_tokens per stage and per candidate, and the judgments they touched; None when none."""
    stages = {k: r for k, r in outcomes.stages.items() if r.cut_off or r.excluded}
    if not stages:
        return None
    s = Section(_title(doc, "Texts cut off at max_tokens"))
    policy = outcomes.on_truncated
    s.notes.append(
        "A text the provider cut off at its token limit (finish reason `length` or a provider's variant) is never "
        "judged as if complete. This session: "
        + (_ON_TRUNCATED_WORDS.get(policy, policy) if policy else "policy not recorded")
        + ". judging, cut off: stored judgments of a comparison holding a cut-off output."
    )
    s.headers = ["stage or candidate", "planned", "stored", "cut off", "judgments excluded"]
    for k, r in stages.items():
        s.rows.append([k, num(r.planned), num(r.answered + r.invalid), num(r.cut_off), num(r.excluded)])
    for k, r in outcomes.candidates.items():
        if r.cut_off or r.excluded:
            s.rows.append([f"candidate {k}", num(r.planned), num(r.answered), num(r.cut_off), num(r.excluded)])
    s.align = "lrrrr"
    return s


# -- validity -----------------------------------------------------------------------------------


def _winner_only_text(n: int) -> str:
    """'N winner-only judgments left out of rubric statistics'."""
    return f"{n:,} winner-only judgments left out of rubric statistics"


def _validity_sections(doc: ReportDocument) -> list[Section]:
    v = doc.validity
    left_out = _winner_only_text(doc.counts.winner_only) + "." if doc.counts.winner_only else None
    return [
        _choice_rubric_section(doc, v, left_out),
        _rubric_vs_win_rate_section(doc, v, left_out),
        *_criterion_sections(doc, v.criterion),
        _profiles_section(doc, v.profiles, "augmentation", left_out),
        _standardised_section(doc, v, left_out),
        _position_bias_section(doc, v),
    ]


def _choice_rubric_section(doc: ReportDocument, v: Validity, left_out: str | None) -> Section:
    cr = Section(_title(doc, "Choice-rubric consistency"))
    cr.notes.append(
        "Share of decisive judgments (winner not tie, unequal averages) whose winner has the higher unweighted mean "
        "of all its rubric scores (recomputed). Ties, equal averages and incompletely scored judgments are counted "
        f"and left out. Stated averages further than {v.choice_rubric.tolerance} from the recomputed ones: "
        f"{v.choice_rubric.stated_mismatches:,}."
    )
    if left_out:
        cr.notes.append(left_out + " They are counted under missing scores.")
    cr.headers = ["judge", "n", "agree", "share", "ties", "equal avg", "missing scores", "stated off", "excluded"]
    for r in v.choice_rubric.rows:
        cr.rows.append(
            [
                r.judge,
                num(r.n),
                num(r.agree),
                pct(r.share),
                num(r.ties),
                num(r.equal_averages),
                num(r.missing_scores),
                f"{r.stated_mismatch:,}/{r.stated_checked:,}",
                excluded_text(r.excluded).removeprefix("excluded: "),
            ]
        )
    cr.align = "lrrrrrrrl"
    return cr


def _rubric_vs_win_rate_section(doc: ReportDocument, v: Validity, left_out: str | None) -> Section:
    rw = v.rubric_vs_win_rate
    rs = Section(_title(doc, "Rubric score vs win rate (Figure 13A)"))
    rs.notes.append(
        f"Pearson r = {num(rw.r)} over n = {rw.n:,} cells (run x task x mode x judge x candidate; "
        f"{rw.missing:,} cells without a complete rubric score left out). Descriptive: cells are not independent."
        + (f" NaN: {rw.reason}." if rw.reason else "")
    )
    if left_out:
        rs.notes.append(left_out)
    return rs


def _criterion_sections(doc: ReportDocument, crit: Criterion) -> list[Section]:
    cv = Section(_title(doc, "Criterion validity: release order within families (automation, Figure 15)"))
    if not crit.pairs:
        cv.notes.append("No family has two or more models with a release_order in the session file: nothing to check.")
    else:
        cv.notes.append(
            "Share of a judge's direct choices between two models of a family that favour the later "
            "release (ties counted, not in favour); mean within-family rank (SD) over task-runs, 1 = best."
        )
        cv.headers = ["judge", "family", "n", "later", "earlier", "ties", "share later"]
        for r in crit.pairs:
            cv.rows.append([r.judge, r.family, num(r.n), num(r.later), num(r.earlier), num(r.ties), pct(r.share_later)])
        cv.align = "llrrrrr"
    if not crit.ranks:
        return [cv]
    ranks = Section(_title(doc, "Criterion validity: mean within-family rank by judge (Figure 15)"), level=3)
    ranks.notes.append(
        "From each judge's direct choices between models of the family, per task-run (average ranks "
        "for ties); mean and SD over task-runs; models from oldest to newest."
    )
    ranks.headers = ["judge", "family", "model", "release", "mean rank", "SD", "task-runs"]
    for k in sorted(crit.ranks, key=lambda x: (x.family, x.judge, x.release_order)):
        ranks.rows.append(
            [k.judge, k.family, k.candidate, str(k.release_order), num(k.mean_rank), num(k.sd), num(k.task_runs)]
        )
    ranks.align = "lllrrrr"
    return [cv, ranks]


def _profiles_section(doc: ReportDocument, prof: Profiles, mode: str, left_out: str | None) -> Section:
    dims = prof.dimensions
    rows = prof.augmentation if mode == "augmentation" else prof.automation
    gp = Section(_title(doc, f"General-rubric profiles ({mode}, Figure 12)"))
    gp.notes.append(
        "Mean score per general dimension pooled over tasks, runs and judges; in parentheses the "
        "judge-balanced mean (mean of per-judge means). n = scores per candidate. From "
        f"{prof.judgments.get(mode, 0):,} usable judgments; " + excluded_text(prof.excluded.get(mode)) + "."
    )
    by = {(r.candidate, r.dimension): r for r in rows}
    section = doc.mode(mode)
    names = section.candidates if section is not None else []
    gp.headers = ["candidate", *[_task_header(d) for d in dims], "n"]
    for name in names:
        cells = [by.get((name, d)) for d in dims]
        if not any(cells):
            continue
        gp.rows.append(
            [
                name,
                *[("NaN" if c is None else f"{c.mean:.2f} ({c.judge_balanced:.2f})") for c in cells],
                num(sum(c.n for c in cells if c)),
            ]
        )
    if left_out:
        gp.notes.append(left_out)
    if not gp.rows:
        gp.notes.append("No usable general-dimension scores in this mode.")
    return gp


def _standardised_section(doc: ReportDocument, v: Validity, left_out: str | None) -> Section:
    st = Section(_title(doc, "Standardised rubric ranking vs pairwise ranking (robustness, Section 3.3)"))
    st.notes.append(
        "Each option's rubric average z-scored within (judge, task, mode), averaged per (run, task, mode, "
        "candidate), ranked per run, averaged over runs; Spearman rho with the pairwise mean ranks."
    )
    st.notes.append(
        "n = candidates; zero-spread = option scores in a (judge, task, mode) group without spread; "
        "missing scores = usable judgments without a full set of rubric scores (left out)."
    )
    if left_out:
        st.notes.append(left_out)
    st.headers = ["task", "mode", "n", "rho", "p", "zero-spread", "missing scores", "note"]
    for r in v.standardised.rows:
        st.rows.append(
            [
                r.task,
                r.mode,
                str(r.n),
                num(r.rho),
                pval(r.p),
                num(r.zero_spread),
                num(r.missing_scores),
                _note(r.reason),
            ]
        )
    st.align = "llrrrrrl"
    return st


def _position_bias_section(doc: ReportDocument, v: Validity) -> Section:
    pb = Section(_title(doc, "Position bias"))
    pb.notes.append(
        "Share of decisive choices that went to the option shown first; exact two-sided binomial test "
        "against 0.5. Flip rate: share of pairs judged in both orders whose verdicts differ."
    )
    pb.headers = ["judge", "n", "first", "share first", "p", "ties", "both orders", "flip rate", "excluded"]
    for r in v.position_bias.rows:
        pb.rows.append(
            [
                r.judge,
                num(r.n),
                num(r.first),
                pct(r.share_first),
                pval(r.p),
                num(r.ties),
                num(r.both_orders),
                pct(r.flip_rate) if r.both_orders else "-",
                excluded_text(r.excluded).removeprefix("excluded: "),
            ]
        )
    pb.align = "lrrrrrrrl"
    return pb


# -- experts vs LLM judges ----------------------------------------------------------------------


def _expert_sections(doc: ReportDocument) -> list[Section]:
    ex = doc.experts
    head = Section(_title(doc, "Experts vs LLM judges"))
    if not ex.present or ex.counts is None:
        head.notes.append(ex.note or "No expert judgments in this session.")
        return [head]
    head.notes += _expert_head_notes(ex.counts, ex.options)
    if ex.note:
        head.notes.append(ex.note)
    return [
        head,
        *_agreement_sections(doc, ex.agreement),
        *_majority_sections(doc, ex.loo_majority, ex.panel_majority, ex.options),
        *_ranking_sections(doc, ex.rankings),
        *_bias_sections(doc, ex.bias),
        *_alt_test_sections(doc, ex.alt_test, ex.options),
        *_headline_sections(doc, ex.headline),
    ]


def _expert_head_notes(c: ExpertCounts, opts: ExpertOptionsDoc) -> list[str]:
    level = round(100 * opts.confidence)
    return [
        f"n = {c.expert_judgments:,} expert judgments stored, {c.expert_usable:,} usable "
        f"({excluded_text(c.expert_excluded)}), by {len(c.experts)} expert(s): {', '.join(c.experts)}; "
        f"LLM judges: {', '.join(c.llm_judges) or 'none'}.",
        f"Reference set: {c.reference_comparisons:,} comparisons judged by at least one expert and one LLM judge "
        f"({c.reference_expert_verdicts:,} expert and {c.reference_llm_verdicts:,} LLM verdicts, one per "
        f"comparison and judge); {c.expert_only_comparisons:,} comparison(s) judged only by experts are left out "
        f"of it; {c.expert_repeats:,} swapped repeat(s) only enter the repeat consistency. Intervals: {level}% "
        f"percentile bootstrap, {opts.bootstrap} replicates resampling reference comparisons (paired across "
        "statistics). Verdicts in canonical order (candidates sorted by name): A wins, B wins, tie.",
    ]


def _agreement_sections(doc: ReportDocument, ag: ExpertAgreement | None) -> list[Section]:
    if ag is None:
        return []
    bl = Section(_title(doc, "Experts vs LLM judges: agreement blocks"), level=3)
    bl.notes.append(
        "Share of judge pairs (within or across the groups) giving the same verdict on a comparison, "
        "pooled over comparisons; with ties (chance 1/3) and among pairs of decisive verdicts "
        "(chance 1/2). n = judge pairs x comparisons."
    )
    bl.headers = [
        "block",
        "comparisons",
        "pairs",
        "agreement",
        "chance",
        "decisive pairs",
        "decisive agreement",
        "chance",
        "note",
    ]
    for b in ag.blocks:
        bl.rows.append(
            [
                b.block,
                num(b.units),
                num(b.pairs),
                _ci(b.agreement, b.ci_low, b.ci_high, percent=True),
                pct(b.chance),
                num(b.decisive_pairs),
                _ci(b.decisive_agreement, b.decisive_ci_low, b.decisive_ci_high, percent=True),
                pct(b.decisive_chance),
                _note(b.reason),
            ]
        )
    bl.align = "lrrrrrrrl"
    al = Section(_title(doc, "Experts vs LLM judges: Krippendorff's alpha (nominal)"), level=3)
    al.notes.append(
        "Within the experts, within the LLM judges and pooled, on the reference set; comparisons with "
        "fewer than two verdicts of the group are left out (excl.)."
    )
    al.headers = ["group", "judges", "comparisons", "excl.", "ratings", "alpha", "note"]
    for a in ag.alpha:
        al.rows.append(
            [
                a.group,
                num(a.judges),
                num(a.units),
                num(a.excluded_units),
                num(a.ratings),
                _ci(a.alpha, a.ci_low, a.ci_high, 3),
                _note(a.reason),
            ]
        )
    al.align = "lrrrrrl"
    kp = Section(_title(doc, "Experts vs LLM judges: Cohen's kappa per judge pair"), level=3)
    kp.notes.append(
        "Three categories (A wins, B wins, tie) over the reference comparisons both judges judged (n); "
        "pairs sharing no comparison are not listed."
    )
    kp.headers = ["judge 1", "judge 2", "block", "n", "agreement", "kappa", "note"]
    for k in ag.kappa:
        kp.rows.append(
            [
                k.judge_1,
                k.judge_2,
                k.block,
                num(k.n),
                pct(k.agreement),
                _ci(k.kappa, k.ci_low, k.ci_high),
                _note(k.reason),
            ]
        )
    kp.align = "lllrrrl"
    if not kp.rows:
        kp.notes.append("No pair of judges shares a reference comparison.")
    return [bl, al, kp]


def _majority_sections(
    doc: ReportDocument, loo: LooMajorityTable | None, pm: PanelMajority | None, opts: ExpertOptionsDoc
) -> list[Section]:
    if loo is None:
        return []
    lo = Section(_title(doc, "Experts vs LLM judges: each judge against the leave-one-out expert majority"), level=3)
    lo.notes.append(
        "Reference verdict of item (expert e, comparison u) = the verdict most of the other experts gave on u "
        f"(at least {opts.loo_min_others}; a shared top is no majority and is left out, 'no majority'). An "
        "expert is scored on its own items; an LLM judge on the same items wherever it judged u, beside the "
        "experts' agreement on exactly those items and the difference (LLM minus experts). n = items."
    )
    lo.headers = ["judge", "kind", "n", "agreement", "experts, same items", "difference", "no majority", "note"]
    for r in loo.rows:
        lo.rows.append(
            [
                r.judge,
                KIND_WORDS.get(r.kind, r.kind),
                num(r.n),
                _ci(r.agreement, r.ci_low, r.ci_high, percent=True),
                "" if _missing(r.expert_agreement) else pct(r.expert_agreement),
                "" if _missing(r.difference) else _ci(r.difference, r.diff_ci_low, r.diff_ci_high, 3),
                num(r.no_majority),
                _note(r.reason),
            ]
        )
    lo.align = "llrrrrrl"
    return [lo] if pm is None else [lo, _panel_majority_section(doc, pm)]


def _panel_majority_section(doc: ReportDocument, pm: PanelMajority) -> Section:
    mj = Section(_title(doc, "Experts vs LLM judges: LLM-panel majority vs expert-panel majority"), level=3)
    mj.notes.append(
        f"Per reference comparison, each panel's majority verdict (a shared top is none). n = {pm.n:,} "
        "comparisons with both majorities: agreement "
        f"{_ci(pm.agreement, pm.ci_low, pm.ci_high, percent=True)}"
        f" (chance 33.3%); both decisive, n = {pm.decisive_n:,}: "
        f"{_ci(pm.decisive_agreement, pm.decisive_ci_low, pm.decisive_ci_high, percent=True)} (chance "
        f"50.0%); Cohen's kappa {_ci(pm.kappa, pm.kappa_ci_low, pm.kappa_ci_high)}. Left out: "
        f"{pm.no_expert_majority:,} without an expert majority, "
        f"{pm.no_llm_majority:,} without an LLM majority." + (f" NaN: {pm.reason}." if pm.reason else "")
    )
    mj.headers = [r"experts \ LLM judges", "A wins", "B wins", "tie"]
    for label, row in zip(("A wins", "B wins", "tie"), pm.confusion, strict=True):
        mj.rows.append([label, *[num(x) for x in row]])
    return mj


def _ranking_sections(doc: ReportDocument, rankings: PanelRankings | None) -> list[Section]:
    if rankings is None:
        return []
    rk = Section(_title(doc, "Experts vs LLM judges: expert-panel vs LLM-panel ranking"), level=3)
    rk.notes.append(
        "Both panels ranked by Bradley-Terry strengths on the same reference comparisons of each task and mode "
        "(and pooled over tasks); every verdict is one game, ties half a win. Bradley-Terry copes with incomplete "
        "expert designs and orders a complete balanced design like its win rates. n = candidates ranked by both. "
        "Intervals: paired cluster bootstrap (a resampled comparison brings all its verdicts)."
    )
    rk.headers = [
        "mode",
        "task",
        "comparisons",
        "n",
        "Spearman",
        "Kendall tau-b",
        "expert top",
        "LLM top",
        "match",
        "note",
    ]
    for r in rankings.rows:
        rk.rows.append(
            [
                r.mode,
                r.task,
                num(r.comparisons),
                num(r.n),
                _ci(r.spearman, r.spearman_ci_low, r.spearman_ci_high),
                _ci(r.kendall, r.kendall_ci_low, r.kendall_ci_high),
                r.expert_top or "NaN",
                r.llm_top or "NaN",
                "" if r.top_match is None else num(r.top_match),
                _note(r.reason),
            ]
        )
    rk.align = "llrrrrlllll"
    gp = Section(_title(doc, "Experts vs LLM judges: win rate by panel, all tasks pooled"), level=3)
    gp.notes.append(
        "Win rate = (wins + 0.5 ties) / games on the reference comparisons; gap = experts minus LLM "
        "judges with its paired interval; ranks from Bradley-Terry (1 = best). Per task: in the JSON."
    )
    gp.headers = [
        "mode",
        "candidate",
        "expert rank",
        "LLM rank",
        "expert win rate",
        "LLM win rate",
        "gap",
        "games (expert/LLM)",
    ]
    for c in rankings.candidates:
        if c.task != "(all tasks)":
            continue
        gp.rows.append(
            [
                c.mode,
                c.candidate,
                _rank(c.expert_rank),
                _rank(c.llm_rank),
                pct(c.expert_win_rate),
                pct(c.llm_win_rate),
                _ci(c.gap, c.gap_ci_low, c.gap_ci_high, 3),
                f"{num(c.expert_games)}/{num(c.llm_games)}",
            ]
        )
    gp.align = "llrrrrrr"
    return [rk, gp]


def _star(p: float | None) -> str:
    """'*' beside a share whose binomial test has p < 0.05."""
    return "*" if p is not None and not _missing(p) and p < 0.05 else ""


def _bias_sections(doc: ReportDocument, b: ExpertBias | None) -> list[Section]:
    if b is None:
        return []
    bs = Section(_title(doc, "Experts vs LLM judges: biases per judge"), level=3)
    bs.notes.append(
        "Over each judge's usable judgments (both presented orders). first = share of decisive choices for the "
        "option shown first; longer = share of decisive choices between outputs of unequal length won by the "
        "longer one (characters); both with n and an exact binomial test against 0.5 (* p < 0.05). consistency "
        "= winner has the higher rubric average. leniency = mean rubric-average difference against the other "
        "LLM judges on the same comparison and candidate, with its interval, and Bland-Altman limits of "
        "agreement (LoA, mean +/- 1.96 SD). repeats = same verdict when a comparison came back with the options "
        "swapped."
    )
    if doc.counts.winner_only_all_kinds:
        bs.notes.append(
            _winner_only_text(doc.counts.winner_only_all_kinds)
            + " (consistency, leniency); position, length and repeats count them."
        )
    length = {r.judge: r for r in b.length.rows}
    consistency = {r.judge: r for r in b.consistency.rows}
    leniency = {r.judge: r for r in b.leniency.rows}
    repeats = {r.judge: r for r in b.repeats.rows}
    bs.headers = ["judge", "kind", "first (n)", "longer (n)", "consist. (n)", "leniency", "LoA", "repeats (n)"]
    for r in b.position.rows:
        le, co, ln, rp = (
            length.get(r.judge),
            consistency.get(r.judge),
            leniency.get(r.judge),
            repeats.get(r.judge),
        )
        loa = (
            ""
            if ln is None or ln.loa_low is None or _missing(ln.loa_low)
            else f"[{ln.loa_low:+.2f}, {ln.loa_high:+.2f}]"
        )
        bs.rows.append(
            [
                r.judge,
                KIND_WORDS.get(r.kind, r.kind),
                _share_n(r.share_first, r.n) + _star(r.p),
                _share_n(le.share_longer if le else None, le.n if le else 0) + _star(le.p if le else None),
                _share_n(co.share, co.n) if co else "",
                "" if ln is None else _ci(ln.mean_difference, ln.ci_low, ln.ci_high),
                loa,
                "" if rp is None else _share_n(rp.agreement, rp.n),
            ]
        )
    bs.align = "llrrrrrr"
    noted: list[_HasReason] = [*b.length.rows, *b.leniency.rows, *b.repeats.rows]
    reasons = sorted({r.reason for r in noted if r.reason})
    bs.notes += [f"NaN where {x}." for x in reasons]
    return [bs]


def _alt_test_sections(doc: ReportDocument, alt: AltTest | None, opts: ExpertOptionsDoc) -> list[Section]:
    if alt is None:
        return []
    at = Section(
        _title(doc, "Experts vs LLM judges: alternative annotator test (Calderon, Reichart and Dror, 2025)"),
        level=3,
    )
    at.notes.append(
        "Could this LLM judge replace an expert? Per expert (left out in turn): on the reference comparisons the "
        f"LLM judge and at least {opts.alt_min_experts_per_item} experts judged, whose verdict matches more of "
        "the other experts'; one-sided paired t-test that the expert's advantage is below epsilon = "
        f"{opts.epsilon} (the cost-benefit margin for expert annotators), Benjamini-Yekutieli over the experts "
        f"at q = {opts.fdr_q}. Winning rate = share of experts the LLM judge beats; it passes at >= 0.5. "
        f"Experts with fewer than {opts.alt_min_items} such comparisons are not tested. Advantage probability "
        "= mean share of items where the LLM judge is at least as good as the expert."
    )
    at.notes.append(
        "Two alignments: accuracy on the verdicts (3 categories: either candidate wins, tie) and negative RMSE "
        "on the rubric scores (both candidates' recomputed averages); "
        f"{alt.unscored_verdicts:,} verdict(s) without rubric scores left out of the latter."
    )
    at.headers = [
        "judge",
        "alignment",
        "comparisons",
        "experts tested",
        "winning rate",
        "advantage prob.",
        "passes",
        "note",
    ]
    for r in alt.rows:
        at.rows.append(
            [
                r.judge,
                r.metric,
                num(r.items),
                num(r.experts_tested),
                pct(r.winning_rate),
                num(r.advantage_probability),
                "" if r.passed is None else num(r.passed),
                _note(r.reason),
            ]
        )
    at.align = "llrrrrrl"
    detail = Section(_title(doc, "Alternative annotator test: per left-out expert"), level=3)
    detail.notes.append(
        "rho_f: share of the expert's items where the LLM judge aligns with the other experts at least as well "
        "as the expert; rho_h: the reverse; p: one-sided t-test of rho_h - rho_f < epsilon; win: H0 rejected "
        "after Benjamini-Yekutieli."
    )
    detail.headers = ["judge", "alignment", "expert", "n", "rho_f", "rho_h", "p", "win", "note"]
    for e in alt.experts:
        detail.rows.append(
            [
                e.judge,
                e.metric,
                e.expert,
                num(e.n),
                num(e.rho_f),
                num(e.rho_h),
                pval(e.p),
                "" if not e.tested else ("yes" if e.rejected else "no"),
                _note(e.reason),
            ]
        )
    detail.align = "lllrrrrll"
    return [at, detail]


def _headline_sections(doc: ReportDocument, headline: HeadlineTable | None) -> list[Section]:
    if headline is None:
        return []
    hl = Section(_title(doc, "Experts vs LLM judges: the headline findings with the expert panel"), level=3)
    hl.notes.append(
        "Each panel's Bradley-Terry strengths over all its verdicts in the mode (theta, interval resampling "
        "tournaments); plain beats assisted = plain's points share in its direct comparisons with assisted "
        "candidates (> 50% = yes; interval resampling those comparisons). n = verdicts. holds = the experts "
        "reach the LLM judges' conclusion."
    )
    hl.headers = ["finding", "experts", "expert value", "n", "LLM judges", "LLM value", "n", "holds", "note"]
    for r in headline.rows:
        share = r.finding == "plain beats assisted"
        hl.rows.append(
            [
                r.finding,
                r.experts or "NaN",
                _ci(r.experts_value, r.experts_ci_low, r.experts_ci_high, percent=share),
                num(r.experts_n),
                r.llm or "NaN",
                _ci(r.llm_value, r.llm_ci_low, r.llm_ci_high, percent=share),
                num(r.llm_n),
                "" if r.holds is None else num(r.holds),
                _note(r.reason),
            ]
        )
    hl.align = "llrrlrrll"
    return [hl]


# -- text -------------------------------------------------------------------------------------


def _wrap(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    words, lines, line = text.split(), [], indent
    for w in words:
        if len(line) + len(w) + (1 if line.strip() else 0) > width and line.strip():
            lines.append(line)
            line = indent + w
        else:
            line = (line + " " + w) if line.strip() else indent + w
    if line.strip():
        lines.append(line)
    return lines


def _text_table(s: Section, width: int = WIDTH) -> list[str]:
    if not s.headers:
        return []
    n = len(s.headers)
    align = s.align or ("l" + "r" * (n - 1))
    head = [h.split("\n") for h in s.headers]
    depth = max(len(h) for h in head)
    head = [[""] * (depth - len(h)) + h for h in head]  # bottom-aligned header lines
    widths = [
        max(max(len(x) for x in head[i]), *(len(r[i]) for r in s.rows)) if s.rows else max(len(x) for x in head[i])
        for i in range(n)
    ]
    # Split into column blocks that fit, each repeating the key columns (the first, unless the
    # section names more).
    keys = list(range(max(1, min(s.key_columns, n - 1))))
    key_width = sum(widths[i] for i in keys) + 2 * (len(keys) - 1)
    blocks: list[list[int]] = []
    current: list[int] = []
    used = key_width
    for i in range(len(keys), n):
        if current and used + 2 + widths[i] > width:
            blocks.append(current)
            current, used = [], key_width
        current.append(i)
        used += 2 + widths[i]
    blocks.append(current)
    lines: list[str] = []
    for b, cols in enumerate(blocks):
        idx = [*keys, *cols]

        def fmt(cells: list[str], idx: list[int] = idx) -> str:  # this block's columns, bound now
            return "  ".join(
                cells[i].ljust(widths[i]) if align[i] == "l" else cells[i].rjust(widths[i]) for i in idx
            ).rstrip()

        if b:
            lines.append("")
        lines += [fmt([h[k] for h in head]) for k in range(depth)]
        lines.append("  ".join("-" * widths[i] for i in idx))
        lines += [fmt(r) for r in s.rows]
    return lines


def to_text(document: Doc, width: int = WIDTH) -> str:
    """The report as plain text for a terminal (at most `width` columns, except overlong cells).

    What `centaur report` prints: every section, the SIMULATED banner again at the end, then
    the human-worker arm when the document has it.
    """
    doc = as_document(document)
    lines: list[str] = []
    for s in sections(doc):
        if lines:
            lines.append("")
        bar = "=" if s.level == 1 else "-"
        lines.append(s.title)
        lines.append(bar * min(len(s.title), width))
        for note in s.notes:
            lines += _wrap(note, width)
        if s.headers:
            lines.append("")
            lines += _text_table(s, width)
    if doc.simulated and doc.banner is not None:
        lines += ["", doc.banner]
    text = "\n".join(lines) + "\n"
    if doc.human_workers is not None:
        text += "\n" + human_workers_text(doc)
    return text


# -- markdown ---------------------------------------------------------------------------------


def _md_cell(text: str) -> str:
    return header_text(text.replace("|", "\\|"))


def to_markdown(document: Doc) -> str:
    """The report as Markdown (GitHub tables), ready to paste; the human-worker arm as a text block at the end."""
    doc = as_document(document)
    lines: list[str] = []
    for s in sections(doc):
        lines.append("#" * s.level + " " + s.title)
        lines.append("")
        for note in s.notes:
            is_banner = doc.simulated and note == doc.banner
            lines.append(f"> **{note}**" if is_banner else note)
            lines.append("")
        if s.headers:
            align = s.align or ("l" + "r" * (len(s.headers) - 1))
            lines.append("| " + " | ".join(_md_cell(h) for h in s.headers) + " |")
            lines.append("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
            lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in s.rows]
            lines.append("")
    if doc.simulated:
        lines.append(f"> **{doc.banner}**")
        lines.append("")
    markdown = "\n".join(lines)
    if doc.human_workers is not None:
        markdown += "\n## Human workers (issue 5 arm)\n\n```\n" + human_workers_text(doc).rstrip() + "\n```\n"
    return markdown


def to_json(document: Doc) -> str:
    """The report as `centaur report --json` writes it: indented, no NaN (null instead), UTF-8 kept, a final newline."""
    if isinstance(document, ReportDocument):
        return document.to_json(indent=2) + "\n"
    return json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


# -- the human-worker arm ---------------------------------------------------------------------


def _spearman_text(s: HumanSpearman) -> str:
    if s.rho is not None and not _missing(s.rho):
        return f"Spearman rank correlation (human vs worker model): rho = {s.rho:.3f}, p = {s.p:.3f}, n = {s.n}"
    return f"Spearman rank correlation: not computed ({s.reason})"


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None or _missing(v) else format(v, spec)


def _value(v: float | None) -> float:
    """A mean or median for the productivity tables (NaN when undefined, as pandas gave it)."""
    return math.nan if v is None else v


def human_workers_text(document: Doc) -> str:
    """The document's human-worker arm (`stats.human_arm.human_arm_section`) as plain text; "" when it has none."""
    section = as_document(document).human_workers
    if section is None:
        return ""
    lines = ["Which assistant helps human workers most (human-worker arm) vs the worker model"]
    lines.append(f"  {'condition':<22} {'human rank':>10} {'mean':>6}   {'model rank':>10} {'mean':>6}")
    for r in section.assistants.rows:
        lines.append(
            f"  {r.condition:<22} {_fmt(r.human_rank, '>10.0f')} {_fmt(r.human_mean_rank, '>6.2f')}   "
            f"{_fmt(r.model_rank, '>10.0f')} {_fmt(r.model_mean_rank, '>6.2f')}"
        )
    lines.append("  " + _spearman_text(section.assistants.spearman))
    lines.append("")
    lines.append(f"Productivity per condition ({section.deliverables} submitted deliverable(s); means, medians)")
    lines.append(f"  {'condition':<22} {'n':>3} {'minutes':>14} {'edits':>14} {'pastes':>12} {'words':>14}")
    for p in section.productivity:
        lines.append(
            f"  {p.condition:<22} {p.n:>3} {_value(p.mean_seconds) / 60:>7.1f}/{_value(p.median_seconds) / 60:<6.1f}"
            f" {_value(p.mean_edits):>7.1f}/{_value(p.median_edits):<6.0f}"
            f" {_value(p.mean_pastes):>5.1f}/{_value(p.median_pastes):<6.0f}"
            f" {_value(p.mean_words):>7.1f}/{_value(p.median_words):<6.0f}"
        )
    return "\n".join(lines) + "\n"


def human_worker_sections(document: Doc) -> list[Section]:
    """The document's human-worker arm as sections (the results screen's "Human workers" tab); [] when it has none.

    The same numbers as `human_workers_text`.
    """
    section = as_document(document).human_workers
    if section is None:
        return []
    return [_assistants_section(section), _productivity_section(section)]


def _assistants_section(section: HumanWorkersSection) -> Section:
    return Section(
        "Which assistant helps human workers most (human-worker arm) vs the worker model",
        notes=[
            "Overall rank and mean rank of each condition (1 = best) in the human-worker tournaments "
            "(experts wrote the deliverables) and in the worker model's augmentation mode.",
            _spearman_text(section.assistants.spearman) + ".",
        ],
        headers=["condition", "human rank", "human mean rank", "model rank", "model mean rank"],
        rows=[
            [
                r.condition,
                _fmt(r.human_rank, ".0f"),
                _fmt(r.human_mean_rank, ".2f"),
                _fmt(r.model_rank, ".0f"),
                _fmt(r.model_mean_rank, ".2f"),
            ]
            for r in section.assistants.rows
        ],
    )


def _productivity_section(section: HumanWorkersSection) -> Section:
    rows = []
    for p in section.productivity:
        pairs = [
            (_value(p.mean_seconds) / 60, _value(p.median_seconds) / 60),
            (_value(p.mean_edits), _value(p.median_edits)),
            (_value(p.mean_pastes), _value(p.median_pastes)),
            (_value(p.mean_words), _value(p.median_words)),
            (_value(p.mean_characters), _value(p.median_characters)),
        ]
        rows.append([p.condition, num(p.n), *[f"{mean:.1f} / {median:.1f}" for mean, median in pairs]])
    return Section(
        f"Productivity per condition ({section.deliverables} submitted deliverable(s))",
        notes=["Mean / median per submitted deliverable; time on task in minutes."],
        headers=["condition", "n", "minutes", "edits", "pastes", "words", "characters"],
        rows=rows,
    )
