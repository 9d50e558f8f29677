"""Provides what the organiser's console reads: expert judgments with their times, queues, checks, notes, activity.

Rows come back as records (`ConsoleJudgment`, `ConsolePlace`, ...); the figures are computed
once, in `services.console`. Five reads, each one pass over its table (about 30 ms for 5,000
expert judgments, bench/console.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from centaur_tui.store.db import Store


class ConsoleJudgment(NamedTuple):
    """One expert's current judgment (latest revision, valid) of one place, with what the signals need."""

    expert: str
    comparison_id: str
    task: str
    mode: str
    option1: str
    option2: str
    winner: str | None
    option1_mean: float | None
    option2_mean: float | None
    lower_average_confirmed: bool | None
    rationale: str
    pasted_chars: int | None
    seconds: float | None
    active_seconds: float | None
    created_at: str
    output_a: str
    output_b: str


class ConsolePlace(NamedTuple):
    """One place of an expert's judging queue: its task and mode, state, and whether it is judged."""

    expert: str
    key: str
    task: str
    mode: str
    state: str
    done: bool


@dataclass(frozen=True)
class ConsoleChecks:
    """An expert's practice or gold places: made, judged, passed, and marked skipped or flagged."""

    expert: str
    kind: str
    made: int
    judged: int
    passed: int
    skipped: int
    flagged: int


def console_judgments(store: Store) -> list[ConsoleJudgment]:
    """Every expert's current judgments (the latest revision of each place; valid ones), oldest first."""
    table = store.read_table(
        "SELECT j.judge, j.comparison_id, c.task, c.mode, j.option1, j.option2, j.winner, j.option1_mean,"
        " j.option2_mean, j.lower_average_confirmed, coalesce(j.rationale, ''), j.pasted_chars, j.seconds,"
        " j.active_seconds, j.created_at, c.output_a, c.output_b"
        " FROM judgments j JOIN comparisons c ON c.id = j.comparison_id"
        " WHERE j.judge_kind = 'expert' AND j.valid = 1"
        " AND j.revision = (SELECT max(k.revision) FROM judgments k WHERE k.comparison_id = j.comparison_id"
        " AND k.judge = j.judge AND k.presentation = j.presentation AND k.judge_kind = 'expert')"
        " ORDER BY j.judge, j.id"
    )
    return [
        ConsoleJudgment(
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            None if r[9] is None else bool(r[9]),
            r[10],
            r[11],
            r[12],
            r[13],
            r[14],
            r[15],
            r[16],
        )
        for r in table.rows
    ]


def console_places(store: Store) -> list[ConsolePlace]:
    """Every place of every expert's judging queue, in queue order, with whether it is judged."""
    table = store.read_table(
        "SELECT a.expert, a.id, c.task, c.mode, a.state, EXISTS (SELECT 1 FROM judgments j"
        " WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
        " AND j.judge_kind = 'expert') FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
        " ORDER BY a.expert, a.position"
    )
    return [ConsolePlace(r[0], str(r[1]), r[2], r[3], r[4], bool(r[5])) for r in table.rows]


def console_checks(store: Store) -> list[ConsoleChecks]:
    """Per expert and kind (practice, gold): places made, judged, passed, skipped and flagged."""
    table = store.read_table(
        "SELECT expert, kind, count(*), count(judged_at), coalesce(sum(passed), 0),"
        " sum(judged_at IS NULL AND state = 'skipped'), sum(judged_at IS NULL AND state = 'flagged')"
        " FROM expert_checks GROUP BY expert, kind ORDER BY expert, kind"
    )
    return [ConsoleChecks(r[0], r[1], r[2], r[3], r[4], r[5] or 0, r[6] or 0) for r in table.rows]


def output_words(store: Store, output_ids: set[str]) -> dict[str, int]:
    """Whitespace-separated words of each of these outputs (what reading them takes)."""
    if not output_ids:
        return {}
    rows = store.read_table("SELECT id, text FROM outputs")
    return {r[0]: len(r[1].split()) for r in rows.rows if r[0] in output_ids}


def flag_notes(store: Store) -> list[tuple[str, str, str]]:
    """(expert, place key, note) of every flag note the seats kept (`expert_flag_notes`), oldest first."""
    table = store.read_table("SELECT expert, place, note FROM expert_flag_notes ORDER BY id")
    return [(str(r[0]), str(r[1]), str(r[2])) for r in table.rows]


def last_seen(store: Store) -> dict[str, str]:
    """Per expert, the latest time they stored anything while judging (a judgment, a draft, a check)."""
    table = store.read_table(
        "SELECT who, max(at) FROM ("
        " SELECT judge AS who, max(created_at) AS at FROM judgments WHERE judge_kind = 'expert' GROUP BY judge"
        " UNION ALL SELECT a.expert, max(d.updated_at) FROM expert_drafts d"
        " JOIN expert_assignments a ON a.id = d.assignment_id GROUP BY a.expert"
        " UNION ALL SELECT expert, max(max(coalesce(judged_at, ''), coalesce(draft_at, ''))) FROM expert_checks"
        " GROUP BY expert) WHERE at IS NOT NULL AND at != '' GROUP BY who"
    )
    return {r[0]: r[1] for r in table.rows}
