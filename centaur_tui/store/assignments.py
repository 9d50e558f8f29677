"""Provides the experts of a session and their judging queues: who judges, the assignment pool, queues, workload.

Expert judgments go into the same `judgments` and `scores` tables as LLM judgments
(judge_kind 'expert', judge = expert id, judge_family NULL, presentation 0 or 1 for a swapped
repeat, seconds = time spent), so export, import and report treat both alike. An assignment
is done when its judgment exists: there is no "done" state to disagree with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from centaur_tui.domain.assignment import ExistingAssignment, PlannedAssignment, PoolComparison
from centaur_tui.domain.blinding import Blinding
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import summarize
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store
from centaur_tui.store.masking import Masking, masking_log


@dataclass(frozen=True)
class SessionState:
    """What the home screen shows for one session."""

    calls_done: int
    calls_left: int
    llm_judgments: int
    expert_judgments: int
    expert_waiting: int
    simulated: bool
    llm_invalid: int = 0
    """LLM judgments stored invalid (after their re-asks), of `llm_judgments`."""


class ExpertStore:
    """The experts and judging queues of one session database (tables `app_experts`, `expert_assignments`).

    Args:
        store: The session database; its BEGIN IMMEDIATE writes are reused (one writer
            connection per process, NOTES.md).
    """

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- experts ----------------------------------------------------------------------------

    def experts(self, study: Study) -> list[ExpertSpec]:
        """Experts of the session file, then those added in the app."""
        listed = list(study.session.experts)
        known = {e.id for e in listed}
        for r in self.store.read("SELECT id, name, tasks FROM app_experts ORDER BY created_at, id"):
            if r["id"] not in known:
                listed.append(ExpertSpec(id=r["id"], name=r["name"], tasks=tuple(json.loads(r["tasks"]))))
        return listed

    def expert(self, study: Study, expert_id: str) -> ExpertSpec:
        for e in self.experts(study):
            if e.id == expert_id:
                return e
        known = ", ".join(e.id for e in self.experts(study)) or "none yet"
        raise CentaurError(f"no expert {expert_id!r} in this session (known: {known})", title="Unknown expert")

    def add_expert(self, study: Study, expert: ExpertSpec) -> None:
        """Add an expert to the session database (the session file is left untouched)."""
        unknown = [t for t in expert.tasks if t not in study.session.tasks]
        if unknown:
            raise CentaurError(f"tasks not in this session: {', '.join(unknown)}", title="Cannot add expert")
        if any(e.id == expert.id for e in self.experts(study)):
            raise CentaurError(f"expert {expert.id!r} already exists", title="Cannot add expert")
        clash = study.session.name_clash(expert.id)
        if clash is not None:
            raise CentaurError(f"expert id {expert.id!r} is {clash}; choose another id", title="Cannot add expert")
        with self.store.write() as c:
            c.execute(
                "INSERT INTO app_experts (id, name, tasks, created_at) VALUES (?, ?, ?, ?)",
                (expert.id, expert.name, json.dumps(list(expert.tasks)), utc_now()),
            )

    def last_activity(self, expert_id: str) -> tuple[str | None, str | None]:
        """When the expert last saved judging work and writing work (drafts, judgments): ISO times or None.

        Where the expert was when a browser connection dropped: the newer of the two.
        """
        judging = self.store.read_value(
            "SELECT max(t) FROM (SELECT max(d.updated_at) AS t FROM expert_drafts d JOIN expert_assignments a"
            " ON a.id = d.assignment_id WHERE a.expert = ?1 UNION ALL SELECT max(created_at) FROM judgments"
            " WHERE judge = ?1 AND judge_kind = 'expert')",
            (expert_id,),
        )
        writing = self.store.read_value(
            "SELECT max(d.updated_at) FROM work_drafts d JOIN work_assignments a ON a.id = d.assignment_id"
            " WHERE a.expert = ?",
            (expert_id,),
        )
        return judging, writing

    # -- assignment -------------------------------------------------------------------------

    def judged_unassigned(self, expert_id: str) -> set[str]:
        """Comparisons an expert judged without a place in their queue (judgments imported from elsewhere)."""
        rows = self.store.read(
            "SELECT DISTINCT j.comparison_id FROM judgments j WHERE j.judge = ? AND j.judge_kind = 'expert'"
            " AND NOT EXISTS (SELECT 1 FROM expert_assignments a WHERE a.expert = j.judge"
            " AND a.comparison_id = j.comparison_id)",
            (expert_id,),
        )
        return {r["comparison_id"] for r in rows}

    def pool(self) -> list[PoolComparison]:
        """Every stored comparison with the latest valid LLM verdict of each judge slot."""
        rows = self.store.read(
            "SELECT c.id, c.run, c.task, c.mode, c.candidate_a, c.candidate_b,"
            " group_concat(j.winner, char(31)) AS winners,"
            " (SELECT group_concat(o.worker, char(31)) FROM outputs o WHERE o.id IN (c.output_a, c.output_b)"
            "  AND o.worker_kind = 'expert') AS authors"
            " FROM comparisons c LEFT JOIN judgments j ON j.comparison_id = c.id AND j.judge_kind = 'llm'"
            " AND j.valid = 1 AND j.winner IS NOT NULL AND j.revision = ("
            "   SELECT max(k.revision) FROM judgments k WHERE k.comparison_id = j.comparison_id"
            "   AND k.judge = j.judge AND k.presentation = j.presentation)"
            " GROUP BY c.id ORDER BY c.id"
        )
        return [
            PoolComparison(
                r["id"],
                r["run"],
                r["task"],
                r["mode"],
                r["candidate_a"],
                r["candidate_b"],
                tuple(r["winners"].split("\x1f")) if r["winners"] else (),
                tuple(r["authors"].split("\x1f")) if r["authors"] else (),
            )
            for r in rows
        ]

    def masked_counts(self, blinding: Blinding) -> dict[str, int]:
        """Identity phrases masked in the two outputs of every comparison (what an expert would be shown).

        Each output is masked once, however many comparisons hold it (an output is in
        candidates - 1 comparisons of its tournament).
        """
        per_output: dict[str, int] = {}
        for r in self.store.read("SELECT id, text FROM outputs"):
            per_output[r["id"]] = sum(m.occurrences for m in blinding.mask(r["text"])[1])
        return {
            r["id"]: per_output.get(r["output_a"], 0) + per_output.get(r["output_b"], 0)
            for r in self.store.read("SELECT id, output_a, output_b FROM comparisons")
        }

    def existing(self) -> list[ExistingAssignment]:
        rows = self.store.read(
            "SELECT a.expert, a.comparison_id, a.presentation, a.flipped, a.position,"
            " EXISTS (SELECT 1 FROM judgments j WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert"
            "  AND j.presentation = a.presentation AND j.judge_kind = 'expert') AS judged"
            " FROM expert_assignments a ORDER BY a.expert, a.position"
        )
        return [
            ExistingAssignment(
                r["expert"], r["comparison_id"], r["presentation"], bool(r["flipped"]), bool(r["judged"]), r["position"]
            )
            for r in rows
        ]

    def add_assignments(self, expert: str, planned: list[PlannedAssignment]) -> int:
        """Append planned places to an expert's queue; returns how many were new."""
        with self.store.write() as c:
            start = c.execute(
                "SELECT coalesce(max(position), 0) FROM expert_assignments WHERE expert = ?", (expert,)
            ).fetchone()[0]
            added = 0
            for i, p in enumerate(planned, start=1):
                cur = c.execute(
                    "INSERT OR IGNORE INTO expert_assignments (expert, comparison_id, presentation, position, strategy,"
                    " flipped, repeat, state, created_at, probability) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
                    (
                        expert,
                        p.comparison_id,
                        p.presentation,
                        start + i,
                        p.strategy,
                        int(p.flipped),
                        int(p.repeat),
                        utc_now(),
                        p.probability,
                    ),
                )
                added += cur.rowcount
        return added

    def expert_winners(self) -> dict[str, tuple[str, ...]]:
        """The latest valid expert verdicts (winner names or 'tie') per comparison id, every expert and order."""
        rows = self.store.read(
            "SELECT j.comparison_id, j.winner FROM judgments j WHERE j.judge_kind = 'expert' AND j.valid = 1"
            " AND j.winner IS NOT NULL AND j.revision = (SELECT max(k.revision) FROM judgments k"
            " WHERE k.comparison_id = j.comparison_id AND k.judge = j.judge AND k.presentation = j.presentation)"
            " ORDER BY j.comparison_id, j.judge, j.presentation"
        )
        found: dict[str, list[str]] = {}
        for r in rows:
            found.setdefault(r["comparison_id"], []).append(r["winner"])
        return {k: tuple(v) for k, v in found.items()}

    def active_probabilities(self, expert: str) -> list[tuple[str, float]]:
        """(comparison id, draw probability) of an expert's active places, in draw order."""
        rows = self.store.read(
            "SELECT comparison_id, probability FROM expert_assignments WHERE expert = ? AND strategy = 'active'"
            " AND probability IS NOT NULL ORDER BY position",
            (expert,),
        )
        return [(r["comparison_id"], float(r["probability"])) for r in rows]

    def last_strategy(self, expert: str) -> str | None:
        """The strategy of the expert's latest place (None: an empty queue)."""
        value = self.store.read_value(
            "SELECT strategy FROM expert_assignments WHERE expert = ? ORDER BY position DESC LIMIT 1", (expert,)
        )
        return None if value is None else str(value)

    def workload(self) -> dict[str, tuple[int, int]]:
        """(assigned, judged) per expert id."""
        rows = self.store.read(
            "SELECT a.expert, count(*) AS assigned, sum(EXISTS (SELECT 1 FROM judgments j"
            " WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
            " AND j.judge_kind = 'expert')) AS judged FROM expert_assignments a GROUP BY a.expert"
        )
        return {r["expert"]: (r["assigned"], r["judged"] or 0) for r in rows}

    def maskings(self) -> list[Masking]:
        """The masking log, oldest first (for audits; never shown to experts)."""
        return masking_log(self.store)

    def state(self, study: Study) -> SessionState:
        """Calls done and left, judgments by kind, expert work waiting."""
        # Only the counts the home screen shows: Store.counts() also sums tokens and cost over
        # every call, 48 ms of the 60 ms this took on the demo database.
        plan = summarize(study.session)
        by_stage = {
            r["stage"]: r["n"] for r in self.store.read("SELECT stage, count(*) AS n FROM calls GROUP BY stage")
        }
        kinds = self.store.read(  # corrections are one judgment, not two
            "SELECT judge_kind, count(*) AS n, coalesce(sum(1 - valid), 0) AS invalid FROM judgments"
            " WHERE revision = 0 GROUP BY judge_kind"
        )
        by_kind = {r["judge_kind"]: r["n"] for r in kinds}
        llm_invalid = next((r["invalid"] for r in kinds if r["judge_kind"] == "llm"), 0)
        left = sum(max(0, plan.calls[s] - by_stage.get(s, 0)) for s in ("automation", "assistance", "worker"))
        left += max(0, plan.total_judgments - by_kind.get("llm", 0))
        waiting = sum(a - j for a, j in self.workload().values())
        simulated = self.store.meta().get("simulated", "true" if study.session.simulated else "false") == "true"
        return SessionState(
            sum(by_stage.values()),
            left,
            by_kind.get("llm", 0),
            by_kind.get("expert", 0),
            waiting,
            simulated,
            llm_invalid,
        )
