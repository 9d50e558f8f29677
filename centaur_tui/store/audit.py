"""Provides the reads behind the audit screens: every record behind one rank cell, what the statistics left out.

Nothing here writes; every read returns domain records (or plain rows for the left-out list).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from centaur_tui.domain.records import (
    AssistanceRecord,
    CallFailure,
    CallRecord,
    ComparisonRecord,
    InvalidJudgmentRow,
    JudgmentRecord,
    OutputRecord,
    ScoreRecord,
)
from centaur_tui.store.db import Store
from centaur_tui.store.dialogue import DialogueTurn, dialogue_turns


@dataclass(frozen=True)
class AuditJudgment:
    """One stored judgment of a comparison, with whether a later revision replaced it."""

    record: JudgmentRecord
    superseded: bool


@dataclass(frozen=True)
class AuditComparison:
    """One comparison of the audited candidate: both outputs, their assistance texts, every judgment."""

    comparison: ComparisonRecord
    outputs: dict[str, OutputRecord]
    assistance: dict[str, AssistanceRecord]
    judgments: list[AuditJudgment] = field(default_factory=list)
    dialogues: dict[str, list[DialogueTurn]] = field(default_factory=dict)
    """Per candidate, the questions its worker asked and the answers, in order (dialogue candidates only)."""

    def opponent(self, candidate: str) -> str:
        c = self.comparison
        return c.candidate_b if c.candidate_a == candidate else c.candidate_a


@dataclass(frozen=True)
class CellAudit:
    """Everything behind one rank cell (task, mode, candidate)."""

    task: str
    mode: str
    candidate: str
    comparisons: list[AuditComparison]
    calls: dict[str, CallRecord]
    errors: dict[str, list[CallFailure]]


def _in(values: Iterable[Any]) -> tuple[str, tuple[Any, ...]]:
    items = tuple(values)
    return ("(" + ",".join("?" * len(items)) + ")" if items else "(NULL)"), items


def cell_audit(store: Store, task: str, mode: str, candidate: str) -> CellAudit:
    """Read every comparison of a candidate in one task and mode (all runs), with all it links to.

    Args:
        store: The session database.
        task: Task id.
        mode: "automation" or "augmentation".
        candidate: The candidate whose comparisons are wanted.

    Returns:
        The comparisons in (run, opponent) order, each with its outputs, assistance texts and
        judgments (valid, invalid and superseded), the calls they link to (prompts and raw
        replies) and the failed attempts logged for those calls.
    """
    rows = store.read(
        "SELECT * FROM comparisons WHERE task = ? AND mode = ? AND (candidate_a = ? OR candidate_b = ?)"
        " ORDER BY run, id",
        (task, mode, candidate, candidate),
    )
    audited, calls, errors = _audit([ComparisonRecord(**r) for r in rows], store)
    return CellAudit(task, mode, candidate, audited, calls, errors)


def comparisons_audit(store: Store, comparison_ids: Iterable[str]) -> CellAudit:
    """Every record behind some comparisons (a drill-down, a search hit, an adjudication), in the order given.

    The result's task, mode and candidate are empty: the comparisons need not share them.
    Unknown ids are left out (the caller counts what it asked for).
    """
    wanted = list(dict.fromkeys(comparison_ids))
    sql, params = _in(wanted)
    found = {r["id"]: ComparisonRecord(**r) for r in store.read(f"SELECT * FROM comparisons WHERE id IN {sql}", params)}
    audited, calls, errors = _audit([found[i] for i in wanted if i in found], store)
    return CellAudit("", "", "", audited, calls, errors)


def _audit(
    comps: list[ComparisonRecord], store: Store
) -> tuple[list[AuditComparison], dict[str, CallRecord], dict[str, list[CallFailure]]]:
    output_ids = {o for c in comps for o in (c.output_a, c.output_b)}
    sql, params = _in(output_ids)
    outputs = {
        r["id"]: OutputRecord(
            r["id"],
            r["run"],
            r["task"],
            r["mode"],
            r["candidate"],
            r["worker"],
            r["text"],
            r["assistance_id"],
            r["call_key"],
            r["worker_kind"],
            bool(r["cut_off"]),
            r["cut_off_reasks"],
        )
        for r in store.read(f"SELECT * FROM outputs WHERE id IN {sql}", params)
    }
    sql, params = _in({o.assistance_id for o in outputs.values() if o.assistance_id})
    assistance = {
        r["id"]: AssistanceRecord(
            r["id"],
            r["run"],
            r["task"],
            r["assistant"],
            r["text"],
            r["call_key"],
            bool(r["cut_off"]),
            r["cut_off_reasks"],
        )
        for r in store.read(f"SELECT * FROM assistance_texts WHERE id IN {sql}", params)
    }
    sql, params = _in(c.id for c in comps)
    jrows = store.read(f"SELECT * FROM judgments WHERE comparison_id IN {sql} ORDER BY id", params)
    jsql, jparams = _in(r["id"] for r in jrows)
    scores: dict[int, list[ScoreRecord]] = {}
    for s in store.read(f"SELECT * FROM scores WHERE judgment_id IN {jsql} ORDER BY rowid", jparams):
        scores.setdefault(s["judgment_id"], []).append(
            ScoreRecord(s["candidate"], s["dimension"], s["dimension_kind"], s["score"])
        )
    latest: dict[tuple[str, str, int], int] = {}
    for r in jrows:
        slot = (r["comparison_id"], r["judge"], r["presentation"])
        latest[slot] = max(latest.get(slot, r["revision"]), r["revision"])
    by_comparison: dict[str, list[AuditJudgment]] = {}
    for r in jrows:
        record = JudgmentRecord(
            comparison_id=r["comparison_id"],
            judge=r["judge"],
            judge_kind=r["judge_kind"],
            judge_family=r["judge_family"],
            presentation=r["presentation"],
            option1=r["option1"],
            option2=r["option2"],
            winner=r["winner"],
            option1_mean=r["option1_mean"],
            option2_mean=r["option2_mean"],
            valid=bool(r["valid"]),
            invalid_reason=r["invalid_reason"],
            rationale=r["rationale"],
            call_key=r["call_key"],
            attempts=r["attempts"],
            scores=tuple(scores.get(r["id"], ())),
            revision=r["revision"],
            seconds=r["seconds"],
            id=r["id"],
        )
        superseded = r["revision"] < latest[(r["comparison_id"], r["judge"], r["presentation"])]
        by_comparison.setdefault(r["comparison_id"], []).append(AuditJudgment(record, superseded))
    dialogues = {o: turns for o in outputs if (turns := dialogue_turns(store, o))}
    audited = []
    for c in comps:
        outs = {outputs[o].candidate: outputs[o] for o in (c.output_a, c.output_b) if o in outputs}
        helps = {
            cand: assistance[o.assistance_id]
            for cand, o in outs.items()
            if o.assistance_id and o.assistance_id in assistance
        }
        talks = {cand: dialogues[o.id] for cand, o in outs.items() if o.id in dialogues}
        audited.append(AuditComparison(c, outs, helps, by_comparison.get(c.id, []), talks))
    keys = {o.call_key for o in outputs.values() if o.call_key}
    keys |= {k for turns in dialogues.values() for t in turns for k in (t.question_key, t.answer_key) if k}
    keys |= {a.call_key for a in assistance.values() if a.call_key}
    keys |= {r["call_key"] for r in jrows if r["call_key"]}
    return audited, calls_of(store, keys), errors_of(store, keys)


def calls_of(store: Store, keys: Iterable[str]) -> dict[str, CallRecord]:
    """The stored calls with these keys: the exact messages sent (JSON) and the raw replies."""
    sql, params = _in(keys)
    return {
        r["key"]: CallRecord(
            r["key"],
            r["stage"],
            r["model"],
            r["sample"],
            r["messages"],
            r["params"],
            r["response"],
            r["prompt_tokens"],
            r["completion_tokens"],
            r["cost"],
            r["latency_s"],
            r["attempts"],
            bool(r["simulated"]),
            r.get("finish_reason"),
            r.get("served_model"),
        )
        for r in store.read(f"SELECT * FROM calls WHERE key IN {sql}", params)
    }


def _failure(r: dict[str, Any]) -> CallFailure:
    return CallFailure(
        r["key"],
        r["stage"],
        r["model"],
        r["attempt"],
        r["error_type"],
        r["message"],
        bool(r["final"]),
        r.get("finish_reason"),
    )


def errors_of(store: Store, keys: Iterable[str]) -> dict[str, list[CallFailure]]:
    """Failed attempts logged for these call keys, oldest first."""
    sql, params = _in(keys)
    out: dict[str, list[CallFailure]] = {}
    for r in store.read(f"SELECT * FROM call_errors WHERE key IN {sql} ORDER BY id", params):
        out.setdefault(r["key"], []).append(_failure(r))
    return out


@dataclass(frozen=True)
class LeftOut:
    """What the statistics could not use, session-wide: invalid judgments and provider errors."""

    invalid: list[InvalidJudgmentRow]
    invalid_total: int
    errors: list[CallFailure]
    errors_total: int
    cut_off_outputs: int = 0
    """Stored deliverables the provider cut off at max_tokens (never judged as if complete: generation.on_truncated)."""
    cut_off_assistance: int = 0
    """Stored assistance texts the provider cut off at max_tokens."""


def left_out(store: Store, limit: int = 500) -> LeftOut:
    """Invalid judgments (with their reasons and where they belong) and logged provider errors, newest first.

    Args:
        store: The session database.
        limit: Rows returned per list; the totals count them all.
    """
    invalid = [
        InvalidJudgmentRow(*r)
        for r in store.read_table(
            "SELECT j.id, c.run, c.task, c.mode, c.candidate_a, c.candidate_b, j.judge, j.judge_kind, j.attempts,"
            " j.invalid_reason FROM judgments j JOIN comparisons c ON c.id = j.comparison_id"
            " WHERE j.valid = 0 ORDER BY j.id DESC LIMIT ?",
            (limit,),
        ).rows
    ]
    errors = [_failure(r) for r in store.read("SELECT * FROM call_errors ORDER BY id DESC LIMIT ?", (limit,))]
    n_invalid = store.read_value("SELECT count(*) FROM judgments WHERE valid = 0")
    n_errors = store.read_value("SELECT count(*) FROM call_errors")
    cut_off = store.read_value("SELECT count(*) FROM outputs WHERE cut_off = 1")
    cut_off_help = store.read_value("SELECT count(*) FROM assistance_texts WHERE cut_off = 1")
    return LeftOut(invalid, n_invalid, errors, n_errors, cut_off, cut_off_help)
