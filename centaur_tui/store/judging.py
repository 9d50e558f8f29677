"""Provides an expert's judging: the JudgingSource the judging screen uses, and its session-database source.

`SessionJudging` reads an expert's queue from `expert_assignments`, shows each comparison's
two outputs masked (logging every masked phrase), saves drafts in `expert_drafts` as they are
entered (newest version wins), stores a complete draft as a judgment, and stores a correction
as the next revision (append-only). `PacketJudging` (`store.packets`) is the same source over a
packet file.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from centaur_tui.domain.blinding import Blinding, Draft, JudgingItem, QueueItem, clean_text, missing
from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import Rubric
from centaur_tui.store.checks import ExpertChecks
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store
from centaur_tui.store.masking import log_maskings, session_blinding

STATES = ("pending", "skipped", "flagged")
"""The states an expert can give an open place; "done" comes from its stored judgment."""


class JudgingError(CentaurError):
    """Expert work that cannot be stored as asked (incomplete, unknown, already judged)."""

    title = "Cannot submit"


class JudgingSource(Protocol):
    """Where the judging screen gets its queue and puts an expert's work.

    A source whose `can_revise` is true also has `submitted_before(key)`,
    `submitted_draft(key)` and `revise(key, draft)` (SessionJudging); the judging screen
    offers corrections only then.
    """

    expert_name: str
    simulated: bool

    def queue(self) -> list[QueueItem]:
        """The expert's places, in queue order, with their states."""

    def item(self, key: str) -> JudgingItem:
        """What to show for one place (masked, cleaned, in presented order)."""

    def draft(self, key: str) -> Draft | None:
        """Saved partial work for one place, if any."""

    def resume_key(self) -> str | None:
        """The open place worked on last (its draft saved most recently), to resume there."""

    def save_draft(self, key: str, draft: Draft, version: int) -> None:
        """Save partial work; a save with a lower version than the stored one is ignored."""

    def submit(self, key: str, draft: Draft) -> None:
        """Store a complete judgment; raises JudgingError if it is incomplete or already stored."""

    def set_state(self, key: str, state: str) -> None:
        """Mark a place pending, skipped or flagged."""

    def close(self) -> None:
        """Release what the source holds."""


def check_state(state: str) -> None:
    """Raise JudgingError unless `state` is one of STATES."""
    if state not in STATES:
        raise JudgingError(f"unknown state {state!r} (known: {', '.join(STATES)})")


def queue_state(state: str, done: bool) -> str:
    """The state a queue shows: "done" once judged, else the stored state."""
    return "done" if done else state


def expert_record(
    comparison_id: str, expert: str, presentation: int, first: str, second: str, rubric: Rubric, draft: Draft
) -> JudgmentRecord:
    """The judgments-table record of a complete expert draft (scores in presented order)."""
    scores: list[ScoreRecord] = []
    for d in rubric.all:
        s1, s2 = draft.score(d.id, 1), draft.score(d.id, 2)
        assert s1 is not None and s2 is not None
        scores.append(ScoreRecord(first, d.id, rubric.kind(d.id), s1))
        scores.append(ScoreRecord(second, d.id, rubric.kind(d.id), s2))
    n = len(rubric.all)
    winner = {"option_1": first, "option_2": second}.get(draft.winner or "", "tie")
    means = (sum(s.score for s in scores[0::2]) / n, sum(s.score for s in scores[1::2]) / n)
    return JudgmentRecord(
        comparison_id=comparison_id,
        judge=expert,
        judge_kind="expert",
        judge_family=None,
        presentation=presentation,
        option1=first,
        option2=second,
        winner=winner,
        option1_mean=means[0],
        option2_mean=means[1],
        valid=True,
        invalid_reason=None,
        rationale=draft.rationale.strip(),
        call_key=None,
        attempts=1,
        scores=tuple(scores),
        seconds=round(draft.seconds, 1),
        active_seconds=None if draft.active_seconds is None else round(min(draft.active_seconds, draft.seconds), 1),
        lower_average_confirmed=lower_average_confirmed(draft, means),
    )


def lower_average(winner: str | None, means: tuple[float, float]) -> bool:
    """Whether the chosen winner (option_1 / option_2) has the lower rubric average of the two."""
    if winner == "option_1":
        return means[0] < means[1]
    if winner == "option_2":
        return means[1] < means[0]
    return False


def lower_average_confirmed(draft: Draft, means: tuple[float, float]) -> bool | None:
    """The stored fact: True, a lower-average winner confirmed; False, not the lower; None, not confirmed."""
    if not lower_average(draft.winner, means):
        return False
    return True if draft.confirmed_lower else None


class SessionJudging:
    """An expert judging inside the session database (the app on the machine holding it).

    Args:
        store: The session database.
        study: The session, for tasks, rubrics and ties.
        expert: Who is judging.
        blinding: What to mask; the session's blinding by default.
    """

    def __init__(self, store: Store, study: Study, expert: ExpertSpec, blinding: Blinding | None = None) -> None:
        self.store = store
        self.study = study
        self.expert = expert
        self.expert_name = expert.name
        self.blinding = blinding or session_blinding(study)
        self.simulated = store.meta().get("simulated", "true" if study.session.simulated else "false") == "true"
        self.min_rationale = study.session.judging.expert_min_rationale
        self.idle_seconds = study.session.judging.expert_idle_s
        self.guidelines = self.blinding.mask(study.guidelines)[0] if study.guidelines else None
        """The session's expert guidelines (Markdown, identities masked): shown first and on a key."""
        self.checks = ExpertChecks(store, study, expert)
        self.masked = 0
        """Masks inserted by `item()` so far (the log keeps one row per phrase, not per occurrence)."""

    def _assignment(self, key: str) -> dict[str, Any]:
        rows = self.store.read(
            "SELECT a.id, a.comparison_id, a.presentation, a.flipped, c.task, c.candidate_a, c.candidate_b,"
            " c.output_a, c.output_b FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE a.id = ? AND a.expert = ?",
            (int(key), self.expert.id),
        )
        if not rows:
            raise JudgingError(f"no such place in {self.expert.name}'s queue")
        return rows[0]

    def prepare_checks(self) -> int:
        """Make the practice and gold places the session asks for (`ExpertChecks.ensure`); how many were made."""
        return self.checks.ensure()

    def queue(self) -> list[QueueItem]:
        """The queue: practice places first, then the comparisons with the gold checks among them.

        Positions are renumbered 1..N in that order, so nothing in a place tells a gold check
        from a comparison but its opaque key, which no screen shows.
        """
        placed: list[tuple[tuple[int, int, int, int], QueueItem]] = []
        for r in self._assignment_rows():
            item = QueueItem(
                str(r["id"]),
                0,
                queue_state(r["state"], bool(r["done"])),  # type: ignore[arg-type]
                self.study.task(r["task"]).title,
            )
            placed.append(((1, r["position"], 0, 0), item))
        for c in self.checks.places():
            practice = c.kind == "practice"
            item = QueueItem(
                c.token,
                0,
                queue_state(c.state, c.done),  # type: ignore[arg-type]
                self.study.task(c.task).title,
                practice=practice,
            )
            placed.append(((0, c.ordinal, 0, 0) if practice else (1, c.after_position, 1, c.ordinal), item))
        placed.sort(key=lambda p: p[0])
        return [replace(item, position=i) for i, (_, item) in enumerate(placed, start=1)]

    def reference(self, key: str) -> str | None:
        """The reference verdict of a judged practice place (Markdown); None for any other place."""
        return self.checks.reference(key) if self.checks.owns(key) else None

    def _assignment_rows(self) -> list[dict[str, Any]]:
        return self.store.read(
            "SELECT a.id, a.position, a.state, c.task, EXISTS (SELECT 1 FROM judgments j"
            " WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
            " AND j.judge_kind = 'expert') AS done"
            " FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE a.expert = ? ORDER BY a.position",
            (self.expert.id,),
        )

    def item(self, key: str) -> JudgingItem:
        if self.checks.owns(key):
            check = self.checks.item(key, self.blinding, self.min_rationale)
            if check is None:
                raise JudgingError(f"no such place in {self.expert.name}'s queue")
            return check
        a = self._assignment(key)
        task = self.study.task(a["task"])
        ids = (a["output_b"], a["output_a"]) if a["flipped"] else (a["output_a"], a["output_b"])
        rows = self.store.read("SELECT id, text, cut_off FROM outputs WHERE id IN (?, ?)", ids)
        texts = {r["id"]: r["text"] for r in rows}
        cut = {r["id"]: bool(r["cut_off"]) for r in rows}
        shown: list[str] = []
        log: list[tuple[Any, ...]] = []
        for option, output_id in enumerate(ids, start=1):
            text, masked = self.blinding.mask(clean_text(texts[output_id]))
            shown.append(text)
            log.extend((a["id"], option, output_id, m.term, m.occurrences) for m in masked)
            self.masked += sum(m.occurrences for m in masked)
        log_maskings(self.store, log)
        return JudgingItem(
            key=key,
            task_title=task.title,
            task_prompt=clean_text(task.prompt),
            deliverable=task.deliverable,
            rubric=self.study.rubric(task.id),
            option_1=shown[0],
            option_2=shown[1],
            allow_ties=self.study.session.judging.allow_ties,
            min_rationale=self.min_rationale,
            cut_off=(cut[ids[0]], cut[ids[1]]),
        )

    def draft(self, key: str) -> Draft | None:
        if self.checks.owns(key):
            return self.checks.draft(key)
        rows = self.store.read(
            "SELECT d.scores, d.winner, d.rationale, d.seconds, d.active_seconds FROM expert_drafts d"
            " JOIN expert_assignments a ON a.id = d.assignment_id WHERE d.assignment_id = ? AND a.expert = ?",
            (int(key), self.expert.id),
        )
        if not rows:
            return None
        r = rows[0]
        return Draft(
            Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"], r["active_seconds"]
        )

    def resume_key(self) -> str | None:
        rows = self.store.read(
            "SELECT d.assignment_id FROM expert_drafts d JOIN expert_assignments a ON a.id = d.assignment_id"
            " WHERE a.expert = ? AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.comparison_id = a.comparison_id"
            " AND j.judge = a.expert AND j.presentation = a.presentation AND j.judge_kind = 'expert')"
            " ORDER BY d.version DESC LIMIT 1",
            (self.expert.id,),
        )
        return str(rows[0]["assignment_id"]) if rows else None

    def save_draft(self, key: str, draft: Draft, version: int) -> None:
        if self.checks.owns(key):
            self.checks.save_draft(key, draft, version)
            return
        self._assignment(key)
        with self.store.write() as c:
            c.execute(
                "INSERT INTO expert_drafts (assignment_id, scores, winner, rationale, seconds, active_seconds,"
                " version, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (assignment_id) DO UPDATE SET"
                " scores = excluded.scores, winner = excluded.winner, rationale = excluded.rationale,"
                " seconds = excluded.seconds, active_seconds = excluded.active_seconds,"
                " version = excluded.version, updated_at = excluded.updated_at"
                " WHERE excluded.version > expert_drafts.version",
                (
                    int(key),
                    draft.to_json(),
                    draft.winner,
                    draft.rationale,
                    draft.seconds,
                    draft.active_seconds,
                    version,
                    utc_now(),
                ),
            )

    def _record(self, a: dict[str, Any], draft: Draft) -> JudgmentRecord:
        """The judgment record of a complete draft for this place (JudgingError when incomplete)."""
        rubric = self.study.rubric(a["task"])
        lacks = missing(draft, rubric, self.study.session.judging.allow_ties, self.min_rationale)
        if lacks:
            raise JudgingError("still missing: " + ", ".join(lacks))
        first, second = (a["candidate_b"], a["candidate_a"]) if a["flipped"] else (a["candidate_a"], a["candidate_b"])
        return expert_record(a["comparison_id"], self.expert.id, a["presentation"], first, second, rubric, draft)

    def submit(self, key: str, draft: Draft) -> None:
        if self.checks.owns(key):
            try:
                stored = self.checks.submit(key, draft, self.min_rationale)
            except ValueError as exc:
                raise JudgingError(str(exc)) from None
            if not stored:
                raise JudgingError("this comparison is already judged; the stored judgment is kept")
            return
        record = self._record(self._assignment(key), draft)
        if self.store.save_judgment(record) is None:
            raise JudgingError("this comparison is already judged; the stored judgment is kept")
        with self.store.write() as c:
            c.execute("DELETE FROM expert_drafts WHERE assignment_id = ?", (int(key),))

    def set_state(self, key: str, state: str) -> None:
        check_state(state)
        if self.checks.owns(key):
            if not self.checks.set_state(key, state):
                raise JudgingError(f"no such place in {self.expert.name}'s queue")
            return
        self._assignment(key)
        with self.store.write() as c:
            c.execute("UPDATE expert_assignments SET state = ? WHERE id = ?", (state, int(key)))

    # -- revising a submitted judgment -----------------------------------------------------

    can_revise = True
    """The judging screen offers "revise a submitted judgment" for this source."""

    def _latest(self, a: dict[str, Any]) -> dict[str, Any] | None:
        rows = self.store.read(
            "SELECT id, winner, rationale, seconds, active_seconds, revision, option1, option2 FROM judgments"
            " WHERE comparison_id = ? AND judge = ? AND presentation = ? AND judge_kind = 'expert'"
            " ORDER BY revision DESC LIMIT 1",
            (a["comparison_id"], self.expert.id, a["presentation"]),
        )
        return rows[0] if rows else None

    def submitted_before(self, key: str | None) -> QueueItem | None:
        """The expert's submitted place judged (latest revision stored) just before `key`'s, or the latest one.

        Stepping back from the latest submission: ctrl+z on the judging screen.
        """
        rows = self.store.read(
            "SELECT a.id, max(j.id) AS last FROM expert_assignments a JOIN judgments j"
            " ON j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
            " AND j.judge_kind = 'expert' WHERE a.expert = ? GROUP BY a.id ORDER BY last DESC",
            (self.expert.id,),
        )
        keys = [str(r["id"]) for r in rows]
        if not keys:
            return None
        following = keys.index(key) + 1 if key in keys else 0
        if following >= len(keys):
            return None
        return next((q for q in self.queue() if q.key == keys[following]), None)

    def submitted_draft(self, key: str) -> Draft:
        """The latest stored judgment of a submitted place, as a draft in presented order (to revise it)."""
        a = self._assignment(key)
        latest = self._latest(a)
        if latest is None:
            raise JudgingError("this comparison has no stored judgment to revise")
        scores: dict[str, list[int | None]] = {}
        position = {latest["option1"]: 0, latest["option2"]: 1}
        for s in self.store.read(
            "SELECT candidate, dimension, score FROM scores WHERE judgment_id = ?", (latest["id"],)
        ):
            scores.setdefault(s["dimension"], [None, None])[position[s["candidate"]]] = s["score"]
        winner = {latest["option1"]: "option_1", latest["option2"]: "option_2"}.get(latest["winner"], "tie")
        return Draft(
            scores,
            winner,  # type: ignore[arg-type]
            latest["rationale"] or "",
            latest["seconds"] or 0.0,
            latest["active_seconds"],
        )

    def revise(self, key: str, draft: Draft) -> None:
        """Store a corrected judgment of a submitted place: the next revision, which supersedes the earlier ones.

        The earlier revisions stay in the database (append-only); the statistics use the
        latest (the others get the status `superseded`).
        """
        a = self._assignment(key)
        latest = self._latest(a)
        if latest is None:
            raise JudgingError("this comparison has no stored judgment to revise")
        record = replace(self._record(a, draft), revision=latest["revision"] + 1)
        if self.store.save_judgment(record) is None:
            raise JudgingError("this revision is already stored; the stored judgment is kept")

    def close(self) -> None:
        """The store belongs to the caller; nothing to release here."""
