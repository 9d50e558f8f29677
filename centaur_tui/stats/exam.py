"""Provides the admission exam's statistics: position-consistent accuracy per judge and flaw kind, Wilson intervals.

Pure Python: the exam has at most a few thousand verdicts, and the report's app process can
build the section without loading pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from centaur_tui.domain.exam import FLAW_KINDS, ExamPair
from centaur_tui.report.document import ExamAdmissionRow, ExamJudgeRow, ExamKindRow, ExamSection
from centaur_tui.stats.proportions import wilson

PAIR_OUTCOMES = ("answered", "invalid", "failed", "not_asked")
"""What a (pair, judge) ended as, in the order the report names them."""


def pair_outcome(verdicts: Mapping[int, tuple[str, str | None]]) -> tuple[str, bool]:
    """(outcome, correct) of one judge on one pair from its verdicts by presentation: (status, picked).

    Both orders answered with the intact copy picked is correct; a failed order makes the pair
    failed (asked again next run), else an invalid one invalid; a missing order not asked.
    """
    statuses = [verdicts[p][0] if p in verdicts else "not_asked" for p in (1, 2)]
    for outcome in ("failed", "invalid", "not_asked"):
        if outcome in statuses:
            return outcome, False
    return "answered", all(verdicts[p][1] == "intact" for p in (1, 2))


def _row(judge: str, kind: str, outcomes: list[tuple[str, bool]], decided: int, first: int) -> ExamJudgeRow:
    counts = {o: sum(1 for out, _ in outcomes if out == o) for o in PAIR_OUTCOMES}
    examined = counts["answered"] + counts["invalid"]
    correct = sum(1 for out, ok in outcomes if out == "answered" and ok)
    low, high = wilson(correct, examined)
    return ExamJudgeRow(
        judge=judge,
        kind=kind,
        pairs=len(outcomes),
        answered=counts["answered"],
        invalid=counts["invalid"],
        failed=counts["failed"],
        not_asked=counts["not_asked"],
        examined=examined,
        correct=correct,
        accuracy=correct / examined if examined else None,
        ci_low=low,
        ci_high=high,
        decided=decided,
        first_picks=first,
    )


def exam_section(
    seed: str,
    pairs: list[ExamPair],
    verdicts: Iterable[tuple[str, str, int, str, str | None]],
    judges: list[str],
    min_accuracy: float | None,
    enforce: bool,
    judgments_of: Mapping[str, int] | None = None,
) -> ExamSection:
    """The exam's section of the report.

    Args:
        seed: The exam's seed.
        pairs: The stored pairs of that seed (planted and not applicable).
        verdicts: (pair id, judge, presentation, status, picked) of every stored verdict.
        judges: The session's LLM judges (each is examined on every planted pair).
        min_accuracy: `judging.admit_min_accuracy` (None: no minimum).
        enforce: `judging.admit_enforce`: judges below the minimum are left out of the panel.
        judgments_of: Tournament judgments per judge (to say how many a left-out judge loses).
    """
    planted = [p for p in pairs if p.applicable]
    by: dict[tuple[str, str], dict[int, tuple[str, str | None]]] = {}
    for pair_id, judge, presentation, status, picked in verdicts:
        by.setdefault((pair_id, judge), {})[presentation] = (status, picked)
    rows: list[ExamJudgeRow] = []
    admission: list[ExamAdmissionRow] = []
    left_out: list[str] = []
    for judge in judges:
        for kind in ("all", *FLAW_KINDS):
            chosen = [p for p in planted if kind in ("all", p.kind)]
            outcomes = [pair_outcome(by.get((p.id, judge), {})) for p in chosen]
            answers = [v for p in chosen for v in by.get((p.id, judge), {}).items() if v[1][0] == "answered"]
            decided = [(pres, picked) for pres, (_, picked) in answers if picked != "tie"]
            # The option shown first is the intact one in presentation 1, the flawed one in 2.
            first = sum(1 for pres, picked in decided if (picked == "intact") == (pres == 1))
            if chosen or kind == "all":
                rows.append(_row(judge, kind, outcomes, len(decided), first))
        overall = next(r for r in rows if r.judge == judge and r.kind == "all")
        if min_accuracy is None or not pairs:  # no exam taken: nobody is admitted or left out yet
            continue
        if overall.accuracy is None:
            admitted, reason = False, f"no pair examined ({overall.failed} failed, {overall.not_asked} not asked)"
        elif overall.accuracy < min_accuracy:
            admitted = False
            reason = f"accuracy {overall.accuracy:.3f} below {min_accuracy:g} (n={overall.examined})"
        else:
            admitted, reason = True, f"accuracy {overall.accuracy:.3f} at least {min_accuracy:g} (n={overall.examined})"
        out = not admitted and enforce
        if out:
            left_out.append(judge)
        admission.append(
            ExamAdmissionRow(
                judge=judge,
                accuracy=overall.accuracy,
                examined=overall.examined,
                admitted=admitted,
                left_out=out,
                reason=reason,
            )
        )
    kinds: list[ExamKindRow] = []
    for task in sorted({p.task for p in pairs}):
        for kind in FLAW_KINDS:
            slots = [p for p in pairs if p.task == task and p.kind == kind]
            missing = [p for p in slots if not p.applicable]
            kinds.append(
                ExamKindRow(
                    task=task,
                    kind=kind,
                    slots=len(slots),
                    planted=len(slots) - len(missing),
                    not_applicable=len(missing),
                    reason=missing[0].description if missing else None,
                )
            )
    n_na = len(pairs) - len(planted)
    lost = sum((judgments_of or {}).get(j, 0) for j in left_out)
    note = (
        f"{len(planted)} planted pair(s) of {len(pairs)} slot(s) ({n_na} not applicable), each asked of "
        f"{len(judges)} judge(s) in both orders: {len(planted) * len(judges) * 2} question(s). Accuracy counts a pair "
        "right only when the intact copy won in both orders; its n (examined) is answered + invalid pairs; failed and "
        "not-asked pairs are left out of it and counted."
    )
    if min_accuracy is not None and not pairs:
        note = (
            f"judging.admit_min_accuracy is {min_accuracy:g}, but the exam has not been taken (centaur exam SESSION): "
            "no judge is admitted or left out yet."
        )
    elif min_accuracy is not None:
        below = [a.judge for a in admission if not a.admitted]
        if enforce:
            note += f" Judges below {min_accuracy:g}: {', '.join(below) or 'none'}; left out of every statistic"
            note += f" ({lost} tournament judgment(s) of theirs)." if below else "."
        else:
            names = ", ".join(below) or "none"
            note += f" Judges below {min_accuracy:g}: {names} (reported only: admit_enforce is off)."
    return ExamSection(
        seed=seed,
        pairs=len(pairs),
        planted=len(planted),
        not_applicable=n_na,
        questions=len(planted) * len(judges) * 2,
        rows=rows,
        kinds=kinds,
        min_accuracy=min_accuracy,
        enforce=enforce,
        admission=admission,
        left_out=left_out,
        left_out_judgments=lost,
        note=note,
    )
