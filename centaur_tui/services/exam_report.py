"""Provides the report's admission exam and served-model sections, and the judgments they refuse (issue 26).

Apart from `services/exam.py` (the exam's run) so that the report use case reads them without
importing the session use cases (which import the report's): no import circle among services.
`left_out_judgments` says which tournament judgments the report refuses: those of judges the
exam left out of the panel (`judging.admit_enforce`) and those a model of another family
answered (leave-family-out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from centaur_tui.domain.served import ServedCall, classify_served
from centaur_tui.domain.study import Study

if TYPE_CHECKING:
    from centaur_tui.report.document import ExamSection, ServedSection
    from centaur_tui.store import Store


def exam_section(study: Study, store: Store) -> ExamSection | None:
    """The admission exam's section: the session seed's pairs (else the latest seed's).

    None when no exam is stored and the session sets no `admit_min_accuracy`; with one, a section
    saying that the exam has not been taken and no judge is left out.
    """
    from centaur_tui.stats.exam import exam_section as build
    from centaur_tui.store import exam_pairs, exam_seeds, exam_verdicts

    seeds = exam_seeds(store)
    j = study.session.judging
    if not seeds:  # said when the session asks for an admission minimum, so that it is never silently unchecked
        names = [x.name for x in study.session.judges]
        if j.admit_min_accuracy is None:
            return None
        return build("", [], [], names, j.admit_min_accuracy, j.admit_enforce)
    seed = str(study.session.seed) if str(study.session.seed) in seeds else seeds[-1]
    pairs = exam_pairs(store, seed)
    ids = {p.id for p in pairs}
    verdicts = [
        (v.pair_id, v.judge, v.presentation, v.status, v.picked) for v in exam_verdicts(store) if v.pair_id in ids
    ]
    judgments = {
        r["judge"]: int(r["n"])
        for r in store.read("SELECT judge, count(*) AS n FROM judgments WHERE judge_kind = 'llm' GROUP BY judge")
    }
    return build(
        seed, pairs, verdicts, [x.name for x in study.session.judges], j.admit_min_accuracy, j.admit_enforce, judgments
    )


def served_calls(study: Study, store: Store) -> list[ServedCall]:
    """Every LLM judgment's latest call with the model that served it, classified against the scheduled entry."""
    rows = store.read(
        "SELECT j.id, j.judge, c.model, c.served_model FROM judgments j JOIN calls c ON c.key = j.call_key"
        " WHERE j.judge_kind = 'llm' ORDER BY j.id"
    )
    return [classify_served(study.session, int(r["id"]), r["judge"], r["model"], r["served_model"]) for r in rows]


def served_section(study: Study, store: Store) -> ServedSection | None:
    """Who served each judge's judgments, and how many were refused for leave-family-out (None without any)."""
    from centaur_tui.report.document import ServedRow, ServedSection

    found = served_calls(study, store)
    if not found:
        return None
    rows = []
    for judge in study.session.judges:
        mine = [c for c in found if c.judge == judge.name]
        served = sorted({c.served for c in mine if c.served and c.kind != "same"})
        rows.append(
            ServedRow(
                judge=judge.name,
                scheduled=judge.model,
                family=judge.family,
                judgments=len(mine),
                not_recorded=sum(1 for c in mine if c.kind == "not_recorded"),
                other_model=sum(1 for c in mine if c.kind in ("alias", "same_family", "other_family")),
                other_family=sum(1 for c in mine if c.kind == "other_family"),
                served=served,
            )
        )
    refused = sum(r.other_family for r in rows)
    other = sum(r.other_model for r in rows)
    note = (
        f"{len(found)} LLM judgment(s) with a stored call: {other} answered by a model other than the one scheduled "
        f"(a provider-side fallback or alias), {refused} of them by another family (or a model no session entry "
        "names), refused for leave-family-out: status served_other_family, left out of every statistic."
    )
    return ServedSection(rows=rows, refused=refused, note=note)


def left_out_judgments(study: Study, store: Store, exam: ExamSection | None) -> dict[int, str]:
    """Judgment id -> status of the tournament judgments the report refuses (exam left-out judges, other families)."""
    out: dict[int, str] = {}
    if exam is not None and exam.left_out:
        marks = ",".join("?" * len(exam.left_out))
        for r in store.read(
            f"SELECT id FROM judgments WHERE judge_kind = 'llm' AND judge IN ({marks})", tuple(exam.left_out)
        ):
            out[int(r["id"])] = "not_admitted"
    for c in served_calls(study, store):
        if c.kind == "other_family":
            out.setdefault(c.judgment_id, "served_other_family")
    return out
