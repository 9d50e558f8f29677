"""Provides the organiser's console: every figure of an expert study, computed once from stored times.

The terminal app's console screen and the console page of `centaur serve` render the `Console`
this builds, by attribute; neither computes a figure. What each figure means:

- judgments per hour: the expert's judgments with a recorded time, divided by the sum of those
  times (wall time on the judging screen) in hours: the pace while judging, breaks excluded;
- median active and wall time per judgment: over the expert's current judgments with that time;
- completion: judged places of the expert's judging queue, of all its places;
- gold pass rate: gold checks passed of gold checks judged; practice done: practice places judged
  of practice places made;
- lower-average winners confirmed: judgments whose winner has the lower rubric average, and of
  those the ones the expert confirmed when asked;
- skips and flags: open places (comparisons, practice and gold) marked so, with the notes the
  HTML seat kept for flags; last seen: the latest judgment, draft or check the expert stored;
- the burn-down: per task and mode, places judged and left over all experts' queues; the study's
  pace is its expert judgments per hour of calendar time between the first and the latest
  ((n - 1) / span), and the expected finish is now plus the places left at that pace;
- integrity signals (`domain.integrity`): counts for the organiser, never a rule that drops data.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from statistics import median
from typing import TYPE_CHECKING

from centaur_tui.domain import integrity
from centaur_tui.domain.seat import stored_lower_average

if TYPE_CHECKING:
    from centaur_tui.domain.study import Study
    from centaur_tui.report.document import IntegrityRow, IntegritySection
    from centaur_tui.store import Store
    from centaur_tui.store.console import ConsoleJudgment


@dataclass(frozen=True)
class FlagNote:
    """A note an expert gave when flagging a place (the place's key is the queue's, never a comparison id)."""

    place: str
    note: str


@dataclass(frozen=True)
class ExpertFigures:
    """One expert of the study, as the console shows them."""

    expert: str
    name: str
    judgments: int
    assigned: int
    done: int
    per_hour: float | None
    median_active_seconds: float | None
    median_seconds: float | None
    gold_judged: int
    gold_passed: int
    practice_made: int
    practice_done: int
    lower_average: int
    lower_average_confirmed: int
    skipped: int
    flagged: int
    notes: tuple[FlagNote, ...]
    last_seen: str | None
    integrity: IntegrityRow

    @property
    def completion(self) -> float | None:
        return self.done / self.assigned if self.assigned else None

    @property
    def gold_pass_rate(self) -> float | None:
        return self.gold_passed / self.gold_judged if self.gold_judged else None


@dataclass(frozen=True)
class BurnDownRow:
    """Places of every expert's queue for one task and mode: judged, and left to judge."""

    task: str
    mode: str
    done: int
    left: int


@dataclass(frozen=True)
class Console:
    """The organiser's console: per expert, per task and mode, and the study's pace and expected finish."""

    experts: list[ExpertFigures]
    burn_down: list[BurnDownRow]
    done: int
    left: int
    pace_per_hour: float | None
    """Expert judgments stored per calendar hour, first to latest; None: fewer than two, or no time between."""
    expected_finish: str | None
    """UTC, ISO 8601; None when nothing is left or the pace is unknown."""
    now: str
    reading_rate: int = integrity.READING_WORDS_PER_MINUTE
    notes: list[str] = field(default_factory=list)

    @property
    def assigned(self) -> int:
        return self.done + self.left


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def signals_of(expert: str, mine: list[ConsoleJudgment], words: dict[str, int]) -> IntegrityRow:
    """One expert's integrity signals from their current judgments and the outputs' word counts."""
    from centaur_tui.report.document import IntegrityRow  # pydantic: loaded when the console first asks

    recorded = [j for j in mine if j.pasted_chars is not None and j.rationale]
    shares = [integrity.pasted_share(j.pasted_chars, j.rationale) or 0.0 for j in recorded]
    chars = sum(len(j.rationale) for j in recorded)
    pasted_chars = sum(min(max(0, j.pasted_chars or 0), len(j.rationale)) for j in recorded)
    timed = [j for j in mine if j.seconds is not None]
    decided = [j for j in mine if j.winner is not None and j.winner in (j.option1, j.option2)]
    wins = sum(1 for j in decided if j.winner == j.option1)
    return IntegrityRow(
        expert=expert,
        judgments=len(mine),
        paste_recorded=len(recorded),
        pasted=sum(1 for s in shares if s >= integrity.PASTED_SHARE),
        pasted_share=pasted_chars / chars if chars else None,
        timed=len(timed),
        too_fast=sum(
            1 for j in timed if integrity.too_fast(j.seconds, words.get(j.output_a, 0), words.get(j.output_b, 0))
        ),
        repeated=integrity.repeated([(j.comparison_id, j.rationale) for j in mine]),
        decided=len(decided),
        option1_wins=wins,
        option1_share=wins / len(decided) if decided else None,
        order_p=integrity.binomial_two_sided(wins, len(decided)),
    )


def _lower(j: ConsoleJudgment) -> bool:
    return stored_lower_average(j.winner, j.option1, j.option2, j.option1_mean, j.option2_mean)


def build_console(study: Study, store: Store, now: datetime | None = None) -> Console:
    """Every figure of the organiser's console, from the stored judgments, queues, checks and notes.

    Args:
        study: The session (its experts' names).
        store: Its open store (read only).
        now: The moment the expected finish counts from (UTC; the current time when None).
    """
    from centaur_tui.store import ExpertStore
    from centaur_tui.store.console import (
        console_checks,
        console_judgments,
        console_places,
        flag_notes,
        last_seen,
        output_words,
    )

    moment = (now or datetime.now(UTC)).astimezone(UTC)
    judgments = console_judgments(store)
    places = console_places(store)
    checks = {(c.expert, c.kind): c for c in console_checks(store)}
    notes: dict[str, list[FlagNote]] = {}
    for who, place, text in flag_notes(store):
        notes.setdefault(who, []).append(FlagNote(place, text))
    seen = last_seen(store)
    words = output_words(store, {o for j in judgments for o in (j.output_a, j.output_b)})

    by_expert: dict[str, list[ConsoleJudgment]] = {}
    for j in judgments:
        by_expert.setdefault(j.expert, []).append(j)
    queue: dict[str, list[bool]] = {}
    states: dict[str, Counter[str]] = {}
    burn: dict[tuple[str, str], list[int]] = {}
    for p in places:
        queue.setdefault(p.expert, []).append(p.done)
        if not p.done:
            states.setdefault(p.expert, Counter())[p.state] += 1
        cell = burn.setdefault((p.task, p.mode), [0, 0])
        cell[0 if p.done else 1] += 1

    registered = ExpertStore(store).experts(study)  # the session file's experts, then those added in the app
    names = {e.id: e.name for e in registered}
    ids = [e.id for e in registered]
    ids += sorted({*by_expert, *queue, *(k[0] for k in checks), *notes} - set(ids))
    experts: list[ExpertFigures] = []
    for who in ids:
        mine = by_expert.get(who, [])
        gold = checks.get((who, "gold"))
        practice = checks.get((who, "practice"))
        if not mine and who not in queue and gold is None and practice is None and who not in notes:
            continue
        timed = [j.seconds for j in mine if j.seconds is not None]
        active = [j.active_seconds for j in mine if j.active_seconds is not None]
        marked = states.get(who, Counter())
        experts.append(
            ExpertFigures(
                expert=who,
                name=names.get(who, who),
                judgments=len(mine),
                assigned=len(queue.get(who, [])),
                done=sum(queue.get(who, [])),
                per_hour=len(timed) * 3600.0 / sum(timed) if timed and sum(timed) > 0 else None,
                median_active_seconds=float(median(active)) if active else None,
                median_seconds=float(median(timed)) if timed else None,
                gold_judged=gold.judged if gold else 0,
                gold_passed=gold.passed if gold else 0,
                practice_made=practice.made if practice else 0,
                practice_done=practice.judged if practice else 0,
                lower_average=sum(1 for j in mine if _lower(j)),
                lower_average_confirmed=sum(1 for j in mine if _lower(j) and j.lower_average_confirmed),
                skipped=marked["skipped"] + sum(c.skipped for c in (gold, practice) if c),
                flagged=marked["flagged"] + sum(c.flagged for c in (gold, practice) if c),
                notes=tuple(notes.get(who, ())),
                last_seen=seen.get(who),
                integrity=signals_of(who, mine, words),
            )
        )

    done = sum(c[0] for c in burn.values())
    left = sum(c[1] for c in burn.values())
    times = sorted(_parse_time(j.created_at) for j in judgments)
    pace: float | None = None
    if len(times) >= 2:
        span = (times[-1] - times[0]).total_seconds() / 3600.0
        pace = (len(times) - 1) / span if span > 0 else None
    finish = None
    if left and pace:
        finish = (moment + timedelta(hours=left / pace)).isoformat(timespec="seconds")
    console_notes: list[str] = []
    unassigned = sum(1 for e in experts if e.judgments > e.done)
    if unassigned:
        console_notes.append(
            f"{unassigned} expert(s) have judgments without a place in their queue (imported or packet work): "
            "counted in judgments and signals, not in completion."
        )
    return Console(
        experts=experts,
        burn_down=[BurnDownRow(t, m, c[0], c[1]) for (t, m), c in sorted(burn.items())],
        done=done,
        left=left,
        pace_per_hour=pace,
        expected_finish=finish,
        now=moment.isoformat(timespec="seconds"),
        notes=console_notes,
    )


def integrity_section(store: Store) -> IntegritySection | None:
    """The report's integrity signals, per expert with current judgments (None: no expert judged).

    The same figures as the console's (`signals_of`), typed for the report document.
    """
    from centaur_tui.report.document import IntegritySection
    from centaur_tui.store.console import console_judgments, output_words

    judgments = console_judgments(store)
    if not judgments:
        return None
    words = output_words(store, {o for j in judgments for o in (j.output_a, j.output_b)})
    by_expert: dict[str, list[ConsoleJudgment]] = {}
    for j in judgments:
        by_expert.setdefault(j.expert, []).append(j)
    rows = [signals_of(who, by_expert[who], words) for who in sorted(by_expert)]
    return IntegritySection(
        rows=rows,
        reading_words_per_minute=integrity.READING_WORDS_PER_MINUTE,
        pasted_share=integrity.PASTED_SHARE,
        order_alpha=integrity.ORDER_ALPHA,
    )
