"""Provides the adjudication use cases: the queue of disagreements, the blind view, recording and reopening.

An adjudicator (an expert marked `adjudicator = true` in the session, or the organiser) sees a
comparison exactly as the judging seat shows it (cleaned, masked by the session's blinding, in
a seeded presented order), plus the verdicts given on it, numbered in a seeded order with no
judge's name, id, family or kind: what a verdict says (winner, scores, rationale, masked) is
shown, never who said it. The final verdict is stored apart from judgments
(store/adjudication.py); no statistic reads it unless it asks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from centaur_tui.domain.adjudication import disagreements
from centaur_tui.domain.blinding import JudgingItem, Winner, clean_text, presented_flip
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import digest

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.store import Store
    from centaur_tui.store.adjudication import Adjudication

ORGANISER = "organiser"
"""Who adjudicates when no expert is named (`centaur adjudicate` without `--as`)."""


class AdjudicationError(CentaurError):
    """An adjudication request that cannot be served (not an adjudicator, not in the queue, bad verdict)."""

    title = "Adjudication"


@dataclass(frozen=True)
class QueueEntry:
    """One comparison waiting for adjudication: its opaque key (the comparison id), why, and the task's title."""

    key: str
    reason: str
    task_title: str


@dataclass(frozen=True)
class ShownVerdict:
    """One verdict as the adjudicator sees it: no author, winner and scores in the adjudicator's order."""

    label: str
    winner: str
    """"option 1", "option 2" or "tie", in the order the adjudicator sees the options."""
    scores: tuple[tuple[str, int | None, int | None], ...]
    """(dimension id, option 1's score, option 2's score), in rubric order."""
    rationale: str
    other_order: bool
    """The verdict's judge saw the two options the other way round (its rationale's "option 1" is option 2 here)."""


@dataclass(frozen=True)
class AdjudicationItem:
    """Everything the adjudicator is shown for one comparison, and nothing that names a candidate or judge."""

    key: str
    reason: str
    shown: JudgingItem
    verdicts: tuple[ShownVerdict, ...]


def adjudicator(study: Study, expert_id: str | None) -> str:
    """Who adjudicates: the organiser (no id), or an expert the session marks `adjudicator = true`.

    Raises:
        AdjudicationError: the id is not an expert of the session, or not marked as adjudicator.
    """
    if expert_id is None:
        return ORGANISER
    for e in study.session.experts:
        if e.id == expert_id:
            if not e.adjudicator:
                raise AdjudicationError(
                    f"{study.session_file}: experts[{e.id!r}] is not an adjudicator (set adjudicator = true)"
                )
            return e.id
    raise AdjudicationError(f"{study.session_file}: no expert {expert_id!r} in [[experts]]")


def queue(study: Study, store: Store, who: str = ORGANISER) -> list[QueueEntry]:
    """The comparisons waiting for adjudication, in comparison-id order (each one once).

    A comparison leaves the queue when it is adjudicated, and comes back only when that
    adjudication is reopened. An expert adjudicator is not given a comparison they judged.
    """
    from centaur_tui.store.adjudication import active_adjudications, verdicts

    found = verdicts(store)
    judged_by_who = {v.comparison_id for v in found if v.judge == who}
    waiting = disagreements(found, study.session.judging.adjudicate)
    done = active_adjudications(store)
    comps = store.comparisons()
    titles = {t.id: t.title for t in study.tasks.values()}
    return [
        QueueEntry(cid, reason, titles.get(comps[cid].task, comps[cid].task))
        for cid, reason in waiting.items()
        if cid not in done and cid not in judged_by_who and cid in comps
    ]


def _entry(study: Study, store: Store, key: str, who: str) -> QueueEntry:
    for entry in queue(study, store, who):
        if entry.key == key:
            return entry
    raise AdjudicationError(f"{key!r} is not in the adjudication queue (see centaur adjudicate SESSION --list)")


def _flipped(study: Study, who: str, key: str) -> bool:
    return presented_flip(study.session.seed, f"adjudicator:{who}", key)


def _unnamer(study: Study) -> Callable[[str], str]:
    """Masks the experts' ids and names as whole words (a rationale may sign itself; the blinding covers models)."""
    terms = sorted({t for e in study.session.experts for t in (e.id, e.name)}, key=len, reverse=True)
    if not terms:
        return lambda text: text
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(t) for t in terms) + r")(?!\w)", re.IGNORECASE)
    return lambda text: pattern.sub("[masked]", text)


def item(study: Study, store: Store, key: str, who: str = ORGANISER) -> AdjudicationItem:
    """One queued comparison as the adjudicator sees it (blind, masked) with its verdicts, authors left out.

    Raises:
        AdjudicationError: the key is not in the queue.
    """
    from centaur_tui.store import comparisons_audit, session_blinding

    entry = _entry(study, store, key, who)
    audit = comparisons_audit(store, [key]).comparisons[0]
    comp = audit.comparison
    flip = _flipped(study, who, key)
    first, second = (comp.candidate_b, comp.candidate_a) if flip else (comp.candidate_a, comp.candidate_b)
    blinding = session_blinding(study)
    one = blinding.mask(clean_text(audit.outputs[first].text))[0]
    two = blinding.mask(clean_text(audit.outputs[second].text))[0]
    task = study.task(comp.task)
    rubric = study.rubric(task.id)
    shown = JudgingItem(
        key=key,
        task_title=task.title,
        task_prompt=blinding.mask(clean_text(comp.prompt or task.prompt))[0],
        deliverable=task.deliverable,
        rubric=rubric,
        option_1=one,
        option_2=two,
        allow_ties=study.session.judging.allow_ties,
        min_rationale=study.session.judging.expert_min_rationale,
        cut_off=(audit.outputs[first].cut_off, audit.outputs[second].cut_off),
    )
    unname = _unnamer(study)
    names = {first: "option 1", second: "option 2", "tie": "tie"}
    current = [j.record for j in audit.judgments if j.record.valid and not j.superseded and j.record.winner]
    # A seeded order of the verdicts, not the judgments' row order (which would put the LLM panel,
    # judged first, before the experts).
    current.sort(key=lambda r: digest("adjudication-verdict", key, r.id))
    verdicts = []
    for n, r in enumerate(current, start=1):
        by = {(s.candidate, s.dimension): s.score for s in r.scores}
        scores = tuple((d, by.get((first, d)), by.get((second, d))) for d in rubric.ids)
        verdicts.append(
            ShownVerdict(
                label=f"verdict {n}",
                winner=names.get(str(r.winner), "tie"),
                scores=scores,
                rationale=unname(blinding.mask(clean_text(r.rationale or ""))[0]),
                other_order=r.option1 != first,
            )
        )
    return AdjudicationItem(key, entry.reason, shown, tuple(verdicts))


def record(study: Study, store: Store, key: str, winner: Winner, rationale: str, who: str = ORGANISER) -> int:
    """Store the adjudicator's final verdict on a queued comparison (apart from judgments); returns its id.

    Raises:
        AdjudicationError: the key is not queued, a tie where the session allows none, or a rationale too short.
    """
    from centaur_tui.store.adjudication import record_adjudication

    entry = _entry(study, store, key, who)
    judging = study.session.judging
    if winner not in ("option_1", "option_2", "tie") or (winner == "tie" and not judging.allow_ties):
        allowed = "option_1, option_2" + (", tie" if judging.allow_ties else "")
        raise AdjudicationError(f"winner {winner!r} is not one of {allowed}")
    text = rationale.strip()
    if len(text) < judging.expert_min_rationale:
        raise AdjudicationError(
            f"the rationale needs at least {judging.expert_min_rationale} characters (it has {len(text)})"
        )
    comp = store.comparisons()[key]
    flip = _flipped(study, who, key)
    first, second = (comp.candidate_b, comp.candidate_a) if flip else (comp.candidate_a, comp.candidate_b)
    stored = {"option_1": first, "option_2": second, "tie": "tie"}[winner]
    return record_adjudication(store, key, who, 2 if flip else 1, stored, text, entry.reason)


def reopen(store: Store, adjudication_id: int, who: str = ORGANISER, note: str = "") -> str:
    """Reopen an adjudication by hand: it stays stored, and its comparison returns to the queue."""
    from centaur_tui.store.adjudication import reopen_adjudication

    return reopen_adjudication(store, adjudication_id, who, note)


def stored(store: Store) -> list[Adjudication]:
    """Every stored adjudication, reopened ones included (the organiser's list; it names candidates)."""
    from centaur_tui.store.adjudication import adjudications

    return adjudications(store)
