"""Provides an expert's practice comparisons and gold checks: made, placed in the queue, judged, kept apart.

Both are pairs of one deliverable and its degraded copy (`domain.gold.degrade`), made from
outputs of the tasks the expert judges, seeded by the session's seed and the expert, so the
same session makes the same checks. Practice comparisons come first in the queue and are
followed by their reference verdict; gold checks are mixed among the comparisons at
`judging.expert_gold_rate` and look like any other place (same screen, same masking, an
opaque key). Their verdicts are stored in `expert_checks`, never in `judgments`, so no
statistic, agreement or ranking reads them; the report shows each expert's pass rate.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, NamedTuple

from centaur_tui.domain.blinding import Draft, clean_text
from centaur_tui.domain.gold import degrade
from centaur_tui.domain.plan import digest
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store

TOKEN_PREFIX = "c"
"""Check keys are opaque tokens ("c" and 19 hex digits); assignment keys are numbers. Neither is shown."""

CANDIDATES_TRIED = 12
"""Outputs tried per check before giving up on one (each may be too short to degrade)."""


def wanted_gold(rate: float, assignments: int) -> int:
    """Gold checks for a queue of `assignments` comparisons at `rate` (rounded half up; 0 for an empty queue)."""
    return int(rate * assignments + 0.5) if assignments else 0


@dataclass(frozen=True)
class CheckRow:
    """One practice or gold place: the deliverable, its degraded copy, where the intact one is shown, the verdict."""

    token: str
    kind: str
    task: str
    original: str
    """The intact deliverable as stored (not yet cleaned or masked)."""
    degraded: str
    degradation: str
    """What the copy leaves out, in words (for the practice reference verdict)."""
    intact_option: int
    """1 or 2: the option showing the intact deliverable."""
    judged: bool
    winner: str | None
    passed: bool | None


@dataclass(frozen=True)
class CheckPlace:
    """One practice or gold place of a queue, as the queue merges it."""

    token: str
    kind: str
    ordinal: int
    after_position: int
    state: str
    done: bool
    task: str


class ExpertChecks:
    """An expert's practice and gold places in the session database.

    Args:
        store: The session database.
        study: The session (seed, rates, tasks, rubrics).
        expert: Whose places.
    """

    def __init__(self, store: Store, study: Study, expert: ExpertSpec) -> None:
        self.store = store
        self.study = study
        self.expert = expert

    # -- making them ---------------------------------------------------------------------

    def ensure(self) -> int:
        """Make the practice and gold places the session asks for and the queue lacks; returns how many were made.

        Idempotent: the count of each kind only grows with the queue (gold follows the number
        of assigned comparisons), and an existing place is never changed.
        """
        rules = self.study.session.judging
        assignments = self.store.read(
            "SELECT a.position, c.task, c.output_a, c.output_b FROM expert_assignments a"
            " JOIN comparisons c ON c.id = a.comparison_id WHERE a.expert = ? ORDER BY a.position",
            (self.expert.id,),
        )
        if not assignments:
            return 0  # practice is for a queue that has comparisons to come
        have = {
            r["kind"]: r["n"]
            for r in self.store.read(
                "SELECT kind, count(*) AS n FROM expert_checks WHERE expert = ? GROUP BY kind", (self.expert.id,)
            )
        }
        wanted = {"practice": rules.expert_practice, "gold": wanted_gold(rules.expert_gold_rate, len(assignments))}
        if all(have.get(kind, 0) >= n for kind, n in wanted.items()):
            return 0
        tasks = sorted({a["task"] for a in assignments})
        shown = {a["output_a"] for a in assignments} | {a["output_b"] for a in assignments}
        outputs = self.store.read(
            f"SELECT id, task, text FROM outputs WHERE task IN ({', '.join('?' * len(tasks))}) ORDER BY id",
            tuple(tasks),
        )
        # Outputs the expert will not judge anyway come first: a degraded copy of a deliverable
        # seen again later in a real comparison could colour that judgment.
        unseen = [o for o in outputs if o["id"] not in shown]
        pool = unseen or outputs
        positions = [a["position"] for a in assignments]
        rows: list[tuple[Any, ...]] = []
        for kind, n in wanted.items():
            for ordinal in range(have.get(kind, 0), n):
                seed = digest("expert-check", self.study.session.seed, self.expert.id, kind, ordinal)
                rng = random.Random(seed)
                made = None
                for candidate in rng.sample(pool, min(len(pool), CANDIDATES_TRIED)):
                    copy = degrade(clean_text(candidate["text"]), seed)
                    if copy is not None:
                        made = (candidate, copy)
                        break
                if made is None:
                    continue  # every output tried is too short; the report counts the places made
                candidate, copy = made
                after = 0 if kind == "practice" else rng.choice(positions)
                rows.append(
                    (
                        TOKEN_PREFIX + seed[:19],
                        self.expert.id,
                        kind,
                        ordinal,
                        after,
                        candidate["task"],
                        candidate["id"],
                        copy.text,
                        copy.description,
                        rng.choice((1, 2)),
                        utc_now(),
                    )
                )
        with self.store.write() as c:
            c.executemany(
                "INSERT OR IGNORE INTO expert_checks (token, expert, kind, ordinal, after_position, task, output_id,"
                " degraded, degradation, intact_option, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        return len(rows)

    # -- the queue -----------------------------------------------------------------------

    def places(self) -> list[CheckPlace]:
        """The expert's practice and gold places (practice first)."""
        rows = self.store.read(
            "SELECT token, kind, ordinal, after_position, state, judged_at IS NOT NULL AS done, task"
            " FROM expert_checks WHERE expert = ? ORDER BY kind DESC, ordinal",
            (self.expert.id,),
        )
        return [
            CheckPlace(r["token"], r["kind"], r["ordinal"], r["after_position"], r["state"], bool(r["done"]), r["task"])
            for r in rows
        ]

    @staticmethod
    def owns(key: str) -> bool:
        """Whether a queue key is a check's token (assignment keys are numbers)."""
        return key.startswith(TOKEN_PREFIX)

    def row(self, key: str) -> CheckRow | None:
        """One of the expert's practice or gold places; None when `key` is none of theirs."""
        rows = self.store.read(
            "SELECT c.token, c.kind, c.task, c.output_id, o.text AS original, c.degraded, c.degradation,"
            " c.intact_option, c.winner, c.passed, c.judged_at IS NOT NULL AS judged FROM expert_checks c"
            " JOIN outputs o ON o.id = c.output_id WHERE c.token = ? AND c.expert = ?",
            (key, self.expert.id),
        )
        if not rows:
            return None
        r = rows[0]
        return CheckRow(
            r["token"],
            r["kind"],
            r["task"],
            r["original"],
            r["degraded"],
            r["degradation"],
            r["intact_option"],
            bool(r["judged"]),
            r["winner"],
            None if r["passed"] is None else bool(r["passed"]),
        )

    def draft(self, key: str) -> Draft | None:
        """The saved draft of an open check; None when there is none (or it is judged, or not the expert's)."""
        rows = self.store.read(
            "SELECT scores, winner, rationale, seconds, active_seconds FROM expert_checks WHERE token = ?"
            " AND expert = ? AND draft_at IS NOT NULL AND judged_at IS NULL",
            (key, self.expert.id),
        )
        if not rows:
            return None
        r = rows[0]
        return Draft(
            Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"], r["active_seconds"]
        )

    def draft_version(self, key: str) -> int:
        """The version of an open check's saved draft; 0 when it has none (or is judged, or not the expert's)."""
        value = self.store.read_value(
            "SELECT version FROM expert_checks WHERE token = ? AND expert = ? AND draft_at IS NOT NULL"
            " AND judged_at IS NULL",
            (key, self.expert.id),
        )
        return 0 if value is None else int(value)

    def save_draft(self, key: str, draft: Draft, version: int, base: int | None = None) -> bool:
        """Save partial work on a check; False when the key is not one of this expert's open checks.

        False too for a version no higher than the stored one, and (`base` given) when the saved
        draft's version is not `base` (0: none saved yet).
        """
        stale = ""
        params: tuple[object, ...] = ()
        if base is not None:
            stale = " AND (CASE WHEN draft_at IS NULL THEN 0 ELSE version END) = ?"
            params = (base,)
        with self.store.write() as c:
            cur = c.execute(
                "UPDATE expert_checks SET scores = ?, winner = ?, rationale = ?, seconds = ?, active_seconds = ?,"
                " version = ?, draft_at = ? WHERE token = ? AND expert = ? AND judged_at IS NULL AND version < ?"
                + stale,
                (
                    draft.to_json(),
                    draft.winner,
                    draft.rationale,
                    draft.seconds,
                    draft.active_seconds or 0.0,
                    version,
                    utc_now(),
                    key,
                    self.expert.id,
                    version,
                    *params,
                ),
            )
        return cur.rowcount > 0

    def store_verdict(self, key: str, draft: Draft, passed: bool) -> bool:
        """Store the verdict on a check (apart from judgments) with whether it passed; False when judged already."""
        with self.store.write() as c:
            cur = c.execute(
                "UPDATE expert_checks SET scores = ?, winner = ?, rationale = ?, seconds = ?, active_seconds = ?,"
                " judged_at = ?, passed = ? WHERE token = ? AND expert = ? AND judged_at IS NULL",
                (
                    draft.to_json(),
                    draft.winner,
                    draft.rationale.strip(),
                    round(draft.seconds, 1),
                    round(draft.active_seconds or 0.0, 1),
                    utc_now(),
                    int(passed),
                    key,
                    self.expert.id,
                ),
            )
        return cur.rowcount > 0

    def set_state(self, key: str, state: str) -> bool:
        with self.store.write() as c:
            cur = c.execute(
                "UPDATE expert_checks SET state = ? WHERE token = ? AND expert = ?", (state, key, self.expert.id)
            )
        return cur.rowcount > 0


class CheckCount(NamedTuple):
    """One expert's checks of one kind (gold or practice): places made, judged and passed."""

    expert: str
    kind: str
    made: int
    judged: int
    passed: int


def check_rows(store: Store) -> list[CheckCount]:
    """Per expert and kind: places made, judged and passed (the report's and the overview's gold pass rates)."""
    table = store.read_table(
        "SELECT expert, kind, count(*), count(judged_at), coalesce(sum(passed), 0)"
        " FROM expert_checks GROUP BY expert, kind ORDER BY expert, kind"
    )
    return [CheckCount(r[0], r[1], int(r[2]), int(r[3]), int(r[4])) for r in table.rows]
