"""Provides the expert side of a session database: assignments, drafts, masking log, judging packets.

Expert judgments go into the same `judgments` and `scores` tables as LLM judgments
(judge_kind 'expert', judge = expert id, judge_family NULL, presentation 0 or 1 for a swapped
repeat, seconds = time spent), so export, import and report treat both alike. This module adds
the tables only experts need, each created on first use:

- `expert_assignments`: an expert's queue: comparison, place, strategy, presented order
  (`flipped`: candidate_b shown as option 1), swapped-repeat flag, state (pending, skipped,
  flagged; an assignment is done when its judgment exists, so a crash between the two writes
  cannot leave them disagreeing);
- `expert_drafts`: partial work, saved as it is entered, newest version wins;
- `expert_maskings`: every identity phrase masked in a text an expert was shown;
- `expert_packets` and `app_experts`: exported packets (their secret, never in the file) and
  experts added in the app.

A judging packet is a small SQLite file (rollback journal, so it is always one consistent
file to send back) holding only the task, rubric and masked texts of an expert's open
assignments, keyed by tokens derived from a secret kept in the session database.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from centaur_tui.domain.assignment import ExistingAssignment, PlannedAssignment, PoolComparison
from centaur_tui.domain.blinding import (
    MIN_RATIONALE_CHARS,
    Blinding,
    Draft,
    JudgingItem,
    QueueItem,
    blinding_for,
    clean_text,
    missing,
)
from centaur_tui.domain.errors import CentaurError, StoreError
from centaur_tui.domain.plan import digest, summarize
from centaur_tui.domain.records import JudgmentRecord, ScoreRecord
from centaur_tui.domain.session import ExpertSpec
from centaur_tui.domain.study import Study
from centaur_tui.domain.task import Rubric
from centaur_tui.store.db import Store, immediate_transaction

EXPERT_SCHEMA_VERSION = 1
PACKET_FORMAT = "centaur-judging-packet"
PACKET_VERSION = 1
STATES = ("pending", "skipped", "flagged")

_EXPERT_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS expert_assignments (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        expert TEXT NOT NULL,
        comparison_id TEXT NOT NULL REFERENCES comparisons (id),
        presentation INTEGER NOT NULL,
        position INTEGER NOT NULL,
        strategy TEXT NOT NULL,
        flipped INTEGER NOT NULL,
        repeat INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'pending',
        created_at TEXT NOT NULL,
        UNIQUE (expert, comparison_id, presentation)
    )""",
    "CREATE INDEX IF NOT EXISTS expert_assignments_queue ON expert_assignments (expert, position)",
    """CREATE TABLE IF NOT EXISTS expert_drafts (
        assignment_id INTEGER PRIMARY KEY REFERENCES expert_assignments (id),
        scores TEXT NOT NULL, winner TEXT, rationale TEXT NOT NULL, seconds REAL NOT NULL,
        version INTEGER NOT NULL, updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS expert_maskings (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        assignment_id INTEGER NOT NULL REFERENCES expert_assignments (id),
        option INTEGER NOT NULL, output_id TEXT NOT NULL REFERENCES outputs (id),
        term TEXT NOT NULL, occurrences INTEGER NOT NULL, created_at TEXT NOT NULL,
        UNIQUE (assignment_id, option, term)
    )""",
    """CREATE TABLE IF NOT EXISTS expert_packets (
        id TEXT PRIMARY KEY, expert TEXT NOT NULL, secret TEXT NOT NULL, items INTEGER NOT NULL,
        created_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS app_experts (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, tasks TEXT NOT NULL, created_at TEXT NOT NULL
    )""",
)

_PACKET_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS packet_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS items (
        token TEXT PRIMARY KEY, position INTEGER NOT NULL, task_title TEXT NOT NULL, task_prompt TEXT NOT NULL,
        deliverable TEXT NOT NULL, rubric TEXT NOT NULL, option_1 TEXT NOT NULL, option_2 TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending'
    )""",
    """CREATE TABLE IF NOT EXISTS drafts (
        token TEXT PRIMARY KEY REFERENCES items (token), scores TEXT NOT NULL, winner TEXT,
        rationale TEXT NOT NULL, seconds REAL NOT NULL, version INTEGER NOT NULL, updated_at TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS results (
        token TEXT PRIMARY KEY REFERENCES items (token), scores TEXT NOT NULL, winner TEXT NOT NULL,
        rationale TEXT NOT NULL, seconds REAL NOT NULL, judged_at TEXT NOT NULL
    )""",
)


class PacketError(CentaurError):
    """A judging packet that cannot be read, or does not belong to this session."""

    title = "Judging packet"


class JudgingError(CentaurError):
    """Expert work that cannot be stored as asked (incomplete, unknown, already judged)."""

    title = "Cannot submit"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def read_blinding_file(study: Study) -> str:
    """Text of the session's blinding file (`NAME.blinding.txt` beside the session file), or ''."""
    path = study.session_file.with_name(study.session_file.stem + ".blinding.txt")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise StoreError(f"{path}: cannot read the blinding file ({exc.strerror})") from None


def session_blinding(study: Study) -> Blinding:
    """The blinding of a session: defaults, its identity terms, and its blinding file."""
    return blinding_for(study.session, read_blinding_file(study))


def session_fingerprint(study: Study) -> str:
    """Opaque tag tying a packet to its session without naming it."""
    return digest("packet-session", study.session.name, study.session.seed)[:16]


# -- the session-side tables ------------------------------------------------------------------


@dataclass(frozen=True)
class SessionState:
    """What the home screen shows for one session."""

    calls_done: int
    calls_left: int
    llm_judgments: int
    expert_judgments: int
    expert_waiting: int
    simulated: bool


class ExpertStore:
    """The expert tables of one session database.

    Args:
        store: The session database; its connection, lock and BEGIN IMMEDIATE writes are reused
            (one writer connection per process, NOTES.md).
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        present = {r["name"] for r in self._rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"expert_assignments", "expert_drafts", "expert_maskings", "expert_packets", "app_experts"} <= present:
            with store.write() as c:
                for statement in _EXPERT_SCHEMA:
                    c.execute(statement)
                c.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('expert_schema_version', ?)",
                    (str(EXPERT_SCHEMA_VERSION),),
                )

    # Store's private reader is used on purpose: this module is part of the store package and
    # must take the same lock as every other use of the shared connection.
    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        return self.store._rows(sql, params)

    # -- experts ----------------------------------------------------------------------------

    def experts(self, study: Study) -> list[ExpertSpec]:
        """Experts of the session file, then those added in the app."""
        listed = list(study.session.experts)
        known = {e.id for e in listed}
        for r in self._rows("SELECT id, name, tasks FROM app_experts ORDER BY created_at, id"):
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
        with self.store.write() as c:
            c.execute(
                "INSERT INTO app_experts (id, name, tasks, created_at) VALUES (?, ?, ?, ?)",
                (expert.id, expert.name, json.dumps(list(expert.tasks)), _now()),
            )

    # -- assignment -------------------------------------------------------------------------

    def pool(self) -> list[PoolComparison]:
        """Every stored comparison with the latest valid LLM verdict of each judge slot."""
        rows = self._rows(
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
                r["id"], r["run"], r["task"], r["mode"], r["candidate_a"], r["candidate_b"],
                tuple(r["winners"].split("\x1f")) if r["winners"] else (),
                tuple(r["authors"].split("\x1f")) if r["authors"] else (),
            )
            for r in rows
        ]

    def existing(self) -> list[ExistingAssignment]:
        rows = self._rows(
            "SELECT a.expert, a.comparison_id, a.presentation, a.flipped, a.position,"
            " EXISTS (SELECT 1 FROM judgments j WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert"
            "  AND j.presentation = a.presentation AND j.judge_kind = 'expert') AS judged"
            " FROM expert_assignments a ORDER BY a.expert, a.position"
        )
        return [
            ExistingAssignment(r["expert"], r["comparison_id"], r["presentation"], bool(r["flipped"]),
                               bool(r["judged"]), r["position"])
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
                    " flipped, repeat, state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
                    (expert, p.comparison_id, p.presentation, start + i, p.strategy, int(p.flipped), int(p.repeat),
                     _now()),
                )
                added += cur.rowcount
        return added

    def workload(self) -> dict[str, tuple[int, int]]:
        """(assigned, judged) per expert id."""
        rows = self._rows(
            "SELECT a.expert, count(*) AS assigned, sum(EXISTS (SELECT 1 FROM judgments j"
            " WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
            " AND j.judge_kind = 'expert')) AS judged FROM expert_assignments a GROUP BY a.expert"
        )
        return {r["expert"]: (r["assigned"], r["judged"] or 0) for r in rows}

    def maskings(self) -> list[dict[str, Any]]:
        """The masking log, oldest first (for audits; never shown to experts)."""
        return self._rows(
            "SELECT m.id, a.expert, a.comparison_id, m.option, m.output_id, m.term, m.occurrences, m.created_at"
            " FROM expert_maskings m JOIN expert_assignments a ON a.id = m.assignment_id ORDER BY m.id"
        )

    def state(self, study: Study) -> SessionState:
        """Calls done and left, judgments by kind, expert work waiting."""
        # Only the counts the home screen shows: Store.counts() also sums tokens and cost over
        # every call, 48 ms of the 60 ms this took on the demo database.
        plan = summarize(study.session)
        by_stage = {r["stage"]: r["n"] for r in self._rows("SELECT stage, count(*) AS n FROM calls GROUP BY stage")}
        by_kind = {r["judge_kind"]: r["n"] for r in self._rows(  # corrections are one judgment, not two
            "SELECT judge_kind, count(*) AS n FROM judgments WHERE revision = 0 GROUP BY judge_kind")}
        left = sum(max(0, plan.calls[s] - by_stage.get(s, 0)) for s in ("automation", "assistance", "worker"))
        left += max(0, plan.total_judgments - by_kind.get("llm", 0))
        waiting = sum(a - j for a, j in self.workload().values())
        simulated = self.store.meta().get("simulated", "true" if study.session.simulated else "false") == "true"
        return SessionState(sum(by_stage.values()), left, by_kind.get("llm", 0), by_kind.get("expert", 0), waiting,
                            simulated)


# -- judging, from the session database or from a packet ----------------------------------------


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


def _check_state(state: str) -> None:
    if state not in STATES:
        raise JudgingError(f"unknown state {state!r} (known: {', '.join(STATES)})")


def _queue_state(state: str, done: bool) -> str:
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
    return JudgmentRecord(
        comparison_id=comparison_id, judge=expert, judge_kind="expert", judge_family=None,
        presentation=presentation, option1=first, option2=second, winner=winner,
        option1_mean=sum(s.score for s in scores[0::2]) / n, option2_mean=sum(s.score for s in scores[1::2]) / n,
        valid=True, invalid_reason=None, rationale=draft.rationale.strip(), call_key=None, attempts=1,
        scores=tuple(scores), seconds=round(draft.seconds, 1),
    )


class SessionJudging:
    """An expert judging inside the session database (the app on the machine holding it).

    Args:
        store: The session database.
        study: The session, for tasks, rubrics and ties.
        expert: Who is judging.
        blinding: What to mask; the session's blinding by default.
    """

    def __init__(self, store: Store, study: Study, expert: ExpertSpec, blinding: Blinding | None = None) -> None:
        self.experts = ExpertStore(store)
        self.store = store
        self.study = study
        self.expert = expert
        self.expert_name = expert.name
        self.blinding = blinding or session_blinding(study)
        self.simulated = store.meta().get("simulated", "true" if study.session.simulated else "false") == "true"
        self.min_rationale = study.session.judging.expert_min_rationale
        self.masked = 0
        """Masks inserted by `item()` so far (the log keeps one row per phrase, not per occurrence)."""

    def _assignment(self, key: str) -> dict[str, Any]:
        rows = self.experts._rows(
            "SELECT a.id, a.comparison_id, a.presentation, a.flipped, c.task, c.candidate_a, c.candidate_b,"
            " c.output_a, c.output_b FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE a.id = ? AND a.expert = ?",
            (int(key), self.expert.id),
        )
        if not rows:
            raise JudgingError(f"no such place in {self.expert.name}'s queue")
        return rows[0]

    def queue(self) -> list[QueueItem]:
        rows = self.experts._rows(
            "SELECT a.id, a.position, a.state, c.task, EXISTS (SELECT 1 FROM judgments j"
            " WHERE j.comparison_id = a.comparison_id AND j.judge = a.expert AND j.presentation = a.presentation"
            " AND j.judge_kind = 'expert') AS done"
            " FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id"
            " WHERE a.expert = ? ORDER BY a.position",
            (self.expert.id,),
        )
        return [
            QueueItem(str(r["id"]), r["position"], _queue_state(r["state"], bool(r["done"])),  # type: ignore[arg-type]
                      self.study.task(r["task"]).title)
            for r in rows
        ]

    def item(self, key: str) -> JudgingItem:
        a = self._assignment(key)
        task = self.study.task(a["task"])
        ids = (a["output_b"], a["output_a"]) if a["flipped"] else (a["output_a"], a["output_b"])
        texts = {r["id"]: r["text"] for r in self.experts._rows(
            "SELECT id, text FROM outputs WHERE id IN (?, ?)", ids)}
        shown: list[str] = []
        log: list[tuple[Any, ...]] = []
        for option, output_id in enumerate(ids, start=1):
            text, masked = self.blinding.mask(clean_text(texts[output_id]))
            shown.append(text)
            log.extend((a["id"], option, output_id, m.term, m.occurrences, _now()) for m in masked)
            self.masked += sum(m.occurrences for m in masked)
        if log:
            with self.store.write() as c:
                c.executemany(
                    "INSERT OR IGNORE INTO expert_maskings (assignment_id, option, output_id, term, occurrences,"
                    " created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    log,
                )
        return JudgingItem(
            key=key, task_title=task.title, task_prompt=clean_text(task.prompt), deliverable=task.deliverable,
            rubric=self.study.rubric(task.id), option_1=shown[0], option_2=shown[1],
            allow_ties=self.study.session.judging.allow_ties, min_rationale=self.min_rationale,
        )

    def draft(self, key: str) -> Draft | None:
        rows = self.experts._rows(
            "SELECT d.scores, d.winner, d.rationale, d.seconds FROM expert_drafts d"
            " JOIN expert_assignments a ON a.id = d.assignment_id WHERE d.assignment_id = ? AND a.expert = ?",
            (int(key), self.expert.id),
        )
        if not rows:
            return None
        r = rows[0]
        return Draft(Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"])

    def resume_key(self) -> str | None:
        rows = self.experts._rows(
            "SELECT d.assignment_id FROM expert_drafts d JOIN expert_assignments a ON a.id = d.assignment_id"
            " WHERE a.expert = ? AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.comparison_id = a.comparison_id"
            " AND j.judge = a.expert AND j.presentation = a.presentation AND j.judge_kind = 'expert')"
            " ORDER BY d.version DESC LIMIT 1",
            (self.expert.id,),
        )
        return str(rows[0]["assignment_id"]) if rows else None

    def save_draft(self, key: str, draft: Draft, version: int) -> None:
        self._assignment(key)
        with self.store.write() as c:
            c.execute(
                "INSERT INTO expert_drafts (assignment_id, scores, winner, rationale, seconds, version, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (assignment_id) DO UPDATE SET scores = excluded.scores,"
                " winner = excluded.winner, rationale = excluded.rationale, seconds = excluded.seconds,"
                " version = excluded.version, updated_at = excluded.updated_at"
                " WHERE excluded.version > expert_drafts.version",
                (int(key), draft.to_json(), draft.winner, draft.rationale, draft.seconds, version, _now()),
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
        record = self._record(self._assignment(key), draft)
        if self.store.save_judgment(record) is None:
            raise JudgingError("this comparison is already judged; the stored judgment is kept")
        with self.store.write() as c:
            c.execute("DELETE FROM expert_drafts WHERE assignment_id = ?", (int(key),))

    def set_state(self, key: str, state: str) -> None:
        _check_state(state)
        self._assignment(key)
        with self.store.write() as c:
            c.execute("UPDATE expert_assignments SET state = ? WHERE id = ?", (state, int(key)))

    # -- revising a submitted judgment -----------------------------------------------------

    can_revise = True
    """The judging screen offers "revise a submitted judgment" for this source."""

    def _latest(self, a: dict[str, Any]) -> dict[str, Any] | None:
        rows = self.experts._rows(
            "SELECT id, winner, rationale, seconds, revision, option1, option2 FROM judgments"
            " WHERE comparison_id = ? AND judge = ? AND presentation = ? AND judge_kind = 'expert'"
            " ORDER BY revision DESC LIMIT 1",
            (a["comparison_id"], self.expert.id, a["presentation"]),
        )
        return rows[0] if rows else None

    def submitted_before(self, key: str | None) -> QueueItem | None:
        """The expert's submitted place judged (latest revision stored) just before `key`'s, or the latest one.

        Stepping back from the latest submission: ctrl+z on the judging screen.
        """
        rows = self.experts._rows(
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
        for s in self.experts._rows("SELECT candidate, dimension, score FROM scores WHERE judgment_id = ?",
                                    (latest["id"],)):
            scores.setdefault(s["dimension"], [None, None])[position[s["candidate"]]] = s["score"]
        winner = {latest["option1"]: "option_1", latest["option2"]: "option_2"}.get(latest["winner"], "tie")
        return Draft(scores, winner, latest["rationale"] or "", latest["seconds"] or 0.0)  # type: ignore[arg-type]

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


# -- packets ---------------------------------------------------------------------------------


class _PacketDb:
    """The connection of one packet file, shared across threads under a lock."""

    def __init__(self, path: Path, create: bool = False, read_only: bool = False) -> None:
        if not create and not path.exists():
            raise PacketError(f"{path}: no such file")
        try:
            if read_only:
                conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=10,
                                       isolation_level=None, check_same_thread=False)
            else:
                conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
                # One self-contained file to send back: no -wal beside it.
                conn.execute("PRAGMA journal_mode=DELETE")
                conn.execute("PRAGMA busy_timeout=10000")
            conn.row_factory = sqlite3.Row
            if create:
                for statement in _PACKET_SCHEMA:
                    conn.execute(statement)
            meta = {r["key"]: r["value"] for r in conn.execute("SELECT key, value FROM packet_meta")}
        except sqlite3.DatabaseError as exc:
            raise PacketError(f"{path}: not a judging packet ({exc})") from None
        if not create and meta.get("format") != PACKET_FORMAT:
            raise PacketError(f"{path}: not a judging packet")
        if not create and int(meta.get("version", "0")) != PACKET_VERSION:
            raise PacketError(f"{path}: packet version {meta.get('version')}, this program reads {PACKET_VERSION}")
        self.path = path
        self.meta = meta
        self._conn = conn
        self._lock = threading.RLock()

    def write(self) -> Any:
        return immediate_transaction(self._conn, self._lock)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _rubric_json(rubric: Rubric) -> str:
    return rubric.model_dump_json()


def _token(secret: str, assignment_id: int) -> str:
    return "p" + digest("packet-item", secret, assignment_id)[:19]


@dataclass(frozen=True)
class PacketExport:
    path: Path
    packet_id: str
    items: int
    maskings: int


def export_packet(store: Store, study: Study, expert: ExpertSpec, out: Path,
                  blinding: Blinding | None = None) -> PacketExport:
    """Write a judging packet of an expert's open assignments; it holds no identity at all.

    Raises:
        PacketError: nothing to export, or the file exists.
    """
    if out.exists():
        raise PacketError(f"{out} already exists; choose another file name")
    judging = SessionJudging(store, study, expert, blinding)
    open_items = [q for q in judging.queue() if q.state != "done"]
    if not open_items:
        raise PacketError(f"{expert.id} has no open assignments; run `centaur assign` first")
    packet_id = "k" + secrets.token_hex(8)
    secret = secrets.token_hex(16)
    tmp = out.with_name(out.name + ".partial")
    tmp.unlink(missing_ok=True)
    db = _PacketDb(tmp, create=True)
    try:
        with db.write() as c:
            meta = {
                "format": PACKET_FORMAT, "version": str(PACKET_VERSION), "packet_id": packet_id,
                "session": session_fingerprint(study), "expert_id": expert.id, "expert_name": expert.name,
                "allow_ties": "true" if study.session.judging.allow_ties else "false",
                "min_rationale": str(judging.min_rationale), "simulated": "true" if judging.simulated else "false",
                "created_at": _now(),
            }
            c.executemany("INSERT INTO packet_meta (key, value) VALUES (?, ?)", list(meta.items()))
            for position, q in enumerate(open_items, start=1):
                item = judging.item(q.key)
                c.execute(
                    "INSERT INTO items (token, position, task_title, task_prompt, deliverable, rubric, option_1, option_2,"
                    " state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (_token(secret, int(q.key)), position, item.task_title, item.task_prompt, item.deliverable,
                     _rubric_json(item.rubric), item.option_1, item.option_2,
                     q.state if q.state in STATES else "pending"),
                )
                saved = judging.draft(q.key)
                if saved is not None:
                    c.execute(
                        "INSERT INTO drafts (token, scores, winner, rationale, seconds, version, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, 0, ?)",
                        (_token(secret, int(q.key)), saved.to_json(), saved.winner, saved.rationale, saved.seconds,
                         _now()),
                    )
    finally:
        db.close()
    with store.write() as c:
        c.execute(
            "INSERT INTO expert_packets (id, expert, secret, items, created_at) VALUES (?, ?, ?, ?, ?)",
            (packet_id, expert.id, secret, len(open_items), _now()),
        )
    tmp.replace(out)
    return PacketExport(out, packet_id, len(open_items), judging.masked)


class PacketJudging:
    """An expert judging from a packet file, on any machine; results are written into the file.

    Args:
        path: The packet file from `centaur packet export`.
    """

    def __init__(self, path: Path) -> None:
        self.db = _PacketDb(path)
        self.expert_name = self.db.meta.get("expert_name", "Expert")
        self.simulated = self.db.meta.get("simulated") == "true"
        self.allow_ties = self.db.meta.get("allow_ties") == "true"
        self.min_rationale = int(self.db.meta.get("min_rationale", MIN_RATIONALE_CHARS))

    def _item_row(self, key: str) -> sqlite3.Row:
        rows = self.db.rows("SELECT * FROM items WHERE token = ?", (key,))
        if not rows:
            raise JudgingError("no such place in this packet")
        return rows[0]

    def queue(self) -> list[QueueItem]:
        rows = self.db.rows(
            "SELECT i.token, i.position, i.state, i.task_title, r.token IS NOT NULL AS done"
            " FROM items i LEFT JOIN results r ON r.token = i.token ORDER BY i.position"
        )
        return [QueueItem(r["token"], r["position"], _queue_state(r["state"], bool(r["done"])),  # type: ignore[arg-type]
                          r["task_title"]) for r in rows]

    def item(self, key: str) -> JudgingItem:
        r = self._item_row(key)
        # A packet may have travelled: clean its texts again rather than trust the file.
        return JudgingItem(
            key=key, task_title=r["task_title"], task_prompt=clean_text(r["task_prompt"]),
            deliverable=r["deliverable"], rubric=Rubric.model_validate_json(r["rubric"]),
            option_1=clean_text(r["option_1"]), option_2=clean_text(r["option_2"]),
            allow_ties=self.allow_ties, min_rationale=self.min_rationale,
        )

    def draft(self, key: str) -> Draft | None:
        rows = self.db.rows("SELECT scores, winner, rationale, seconds FROM drafts WHERE token = ?", (key,))
        if not rows:
            return None
        r = rows[0]
        return Draft(Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"])

    def resume_key(self) -> str | None:
        rows = self.db.rows(
            "SELECT d.token FROM drafts d LEFT JOIN results r ON r.token = d.token WHERE r.token IS NULL"
            " ORDER BY d.version DESC LIMIT 1"
        )
        return rows[0]["token"] if rows else None

    def save_draft(self, key: str, draft: Draft, version: int) -> None:
        self._item_row(key)
        with self.db.write() as c:
            c.execute(
                "INSERT INTO drafts (token, scores, winner, rationale, seconds, version, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (token) DO UPDATE SET scores = excluded.scores,"
                " winner = excluded.winner, rationale = excluded.rationale, seconds = excluded.seconds,"
                " version = excluded.version, updated_at = excluded.updated_at WHERE excluded.version > drafts.version",
                (key, draft.to_json(), draft.winner, draft.rationale, draft.seconds, version, _now()),
            )

    def submit(self, key: str, draft: Draft) -> None:
        item = self.item(key)
        lacks = missing(draft, item.rubric, self.allow_ties, self.min_rationale)
        if lacks:
            raise JudgingError("still missing: " + ", ".join(lacks))
        with self.db.write() as c:
            cur = c.execute(
                "INSERT OR IGNORE INTO results (token, scores, winner, rationale, seconds, judged_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (key, draft.to_json(), draft.winner, draft.rationale.strip(), round(draft.seconds, 1), _now()),
            )
            if cur.rowcount == 0:
                raise JudgingError("this comparison is already judged; the stored judgment is kept")
            c.execute("DELETE FROM drafts WHERE token = ?", (key,))

    def set_state(self, key: str, state: str) -> None:
        _check_state(state)
        self._item_row(key)
        with self.db.write() as c:
            c.execute("UPDATE items SET state = ? WHERE token = ?", (state, key))

    def close(self) -> None:
        self.db.close()


@dataclass(frozen=True)
class PacketImport:
    """What `packet import` did: judgments added, already stored, rejected (with reasons)."""

    added: int
    already_stored: int
    open_items: int
    rejected: tuple[str, ...] = ()


def import_packet(store: Store, study: Study, path: Path) -> PacketImport:
    """Merge a packet's results into the session database; importing twice adds nothing.

    Raises:
        PacketError: the file is not a packet of this session.
    """
    db = _PacketDb(path, read_only=True)
    try:
        if db.meta.get("session") != session_fingerprint(study):
            raise PacketError(f"{path}: this packet belongs to another session")
        experts = ExpertStore(store)
        packets = experts._rows("SELECT expert, secret FROM expert_packets WHERE id = ?", (db.meta.get("packet_id", ""),))
        if not packets:
            raise PacketError(f"{path}: packet {db.meta.get('packet_id')!r} was not exported from this database")
        expert_id, secret = packets[0]["expert"], packets[0]["secret"]
        assignments = experts._rows(
            "SELECT a.id, a.comparison_id, a.presentation, a.flipped, c.task, c.candidate_a, c.candidate_b"
            " FROM expert_assignments a JOIN comparisons c ON c.id = a.comparison_id WHERE a.expert = ?",
            (expert_id,),
        )
        by_token = {_token(secret, a["id"]): a for a in assignments}
        results = db.rows("SELECT token, scores, winner, rationale, seconds FROM results ORDER BY token")
        n_items = db.rows("SELECT count(*) AS n FROM items")[0]["n"]
    finally:
        db.close()
    added = already = 0
    rejected: list[str] = []
    for r in results:
        a = by_token.get(r["token"])
        if a is None:
            rejected.append(f"{r['token']}: not an assignment of {expert_id} in this session")
            continue
        rubric = study.rubric(a["task"])
        draft = Draft(Draft.scores_from_json(r["scores"]), r["winner"], r["rationale"], r["seconds"])
        lacks = missing(draft, rubric, study.session.judging.allow_ties, 1)
        out_of_range = [
            d.id for d in rubric.all for o in (1, 2)
            if draft.score(d.id, o) is not None and draft.score(d.id, o) not in range(1, 11)
        ]
        if lacks or out_of_range or draft.winner not in ("option_1", "option_2", "tie"):
            problem = ", ".join(lacks) or (f"scores outside 1-10: {', '.join(out_of_range)}" if out_of_range else "winner")
            rejected.append(f"{r['token']}: not usable ({problem})")
            continue
        first, second = (a["candidate_b"], a["candidate_a"]) if a["flipped"] else (a["candidate_a"], a["candidate_b"])
        record = expert_record(a["comparison_id"], expert_id, a["presentation"], first, second, rubric, draft)
        if store.save_judgment(record) is None:
            already += 1
        else:
            added += 1
    return PacketImport(added, already, n_items - len(results), tuple(rejected))
