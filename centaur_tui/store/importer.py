"""Provides the import of exported judgments: read and validate judgments.csv and scores.csv, then store them.

Reading validates every row against the session's comparisons and rubrics and collects the
problems, each naming the file, the row and the column; nothing is written unless the
whole import is valid. Writing is one `BEGIN IMMEDIATE` transaction and idempotent: a
judgment is identified by (comparison_id, judge, presentation, revision), the table's
unique key; an identical stored judgment is left alone, a different one is a conflict (a
correction must come as a new revision). Judgment ids from the file are kept when they are
free, so an export imported into a copy of the session without judgments exports to the
same files.

An import is bound to its session (issue 13): an export carries `session.json` with the
session's name and a fingerprint of the random id its database got at creation (migration 5,
`meta.session_id`), and a folder exported from another database is refused, even when its
comparison ids match (they hash only run, task, mode and candidate names). With `ImportRules`,
every judgment must also fit the study: an LLM judge of the session that is eligible for the
comparison (leave-family-out), a registered expert (or one added explicitly), a tie only where
ties are allowed.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from centaur_tui.domain.errors import CentaurError
from centaur_tui.domain.plan import Comparison, Mode, digest, eligible_judges
from centaur_tui.domain.records import (
    OPTIONAL_JUDGMENT_COLUMNS,
    REQUIRED_JUDGMENT_COLUMNS,
    SCORE_COLUMNS,
    ComparisonRecord,
    JudgmentRecord,
    ScoreRecord,
)
from centaur_tui.domain.session import ExpertSpec, Session
from centaur_tui.domain.task import Rubric
from centaur_tui.store import chain
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store

JUDGE_KINDS = ("llm", "expert")
MAX_PROBLEMS = 25
"""Problems listed in one error message; the rest are counted."""
MANIFEST = "session.json"
"""The file beside an export's CSVs that names the session it comes from."""
MANIFEST_FORMAT = "centaur-export"
MANIFEST_VERSION = 1


class ImportFileError(CentaurError):
    """A file to import is malformed or does not fit the session; lists every problem found."""

    title = "Invalid import"


class ImportConflictError(CentaurError):
    """A judgment in the files differs from the stored judgment with the same key."""

    title = "Import conflict"


@dataclass(frozen=True)
class JudgeTally:
    """What an import stored for one judge."""

    judge: str
    kind: str
    inserted: int
    unchanged: int


@dataclass(frozen=True)
class ImportSummary:
    """What an import did: totals, per judge, and the experts it registered."""

    judgments: int
    inserted: int
    unchanged: int
    scores: int
    by_judge: tuple[JudgeTally, ...] = ()
    experts_added: tuple[str, ...] = ()
    bound: bool = False
    """The files carried this session's session.json (False: --external files without one)."""
    winner_only: int = 0
    """Judgments stored without rubric scores (a winner only): pairwise statistics count them, rubric ones cannot."""


@dataclass(frozen=True)
class ImportRules:
    """Who may have judged what: the session's LLM judges, its experts and judging rules.

    Args:
        session: The session (judges, families, `allow_ties`, `orders`).
        experts: The registered experts (session file and app), by id.
        add_experts: Expert ids to register with this import (`--add-experts`).
    """

    session: Session
    experts: Mapping[str, ExpertSpec]
    add_experts: tuple[str, ...] = ()

    def new_experts(self) -> list[ExpertSpec]:
        """The experts to register, checked (ImportFileError naming `--add-experts`); registered ones are skipped."""
        problems = []
        added: list[ExpertSpec] = []
        for expert_id in dict.fromkeys(self.add_experts):
            clash = self.session.name_clash(expert_id)
            if clash is not None:
                problems.append(f"{expert_id!r} is {clash}")
                continue
            try:
                spec = ExpertSpec(id=expert_id, name=expert_id)
            except ValueError:
                problems.append(f"{expert_id!r} is not an expert id (lowercase letters, digits, _; a letter first)")
                continue
            if expert_id not in self.experts:
                added.append(spec)
        if problems:
            raise ImportFileError("--add-experts: " + "; ".join(problems) + "; nothing was imported")
        return added

    def problems(
        self, comp: ComparisonRecord, kind: str, judge: str, family: str, presentation: int, winner: str | None
    ) -> list[tuple[str, str]]:
        """(column, problem) for each way a judgment does not fit the study; empty when it fits."""
        session = self.session
        out: list[tuple[str, str]] = []
        if winner == "tie" and not session.judging.allow_ties:
            out.append(("winner", "'tie', but this session does not allow ties ([judging] allow_ties = false)"))
        if kind == "llm":
            spec = next((j for j in session.judges if j.name == judge), None)
            if spec is None:
                known = ", ".join(j.name for j in session.judges)
                out.append(("judge", f"{judge!r} is not an LLM judge of this session (its judges: {known})"))
                return out
            if family and family != spec.family:
                out.append(("judge_family", f"{family!r} but LLM judge {judge!r} is of family {spec.family!r}"))
            orders = (0, 1) if session.judging.orders == "both" else (0,)
            if presentation not in orders:
                out.append(
                    (
                        "presentation",
                        f"{presentation} but this session judges each pair in "
                        f"{session.judging.orders} order(s) ([judging] orders)",
                    )
                )
            pair = Comparison(comp.run, comp.task, cast(Mode, comp.mode), comp.candidate_a, comp.candidate_b)
            try:
                eligible = {j.name for j in eligible_judges(session, pair)}
            except KeyError as exc:
                out.append(("comparison_id", f"candidate {exc.args[0]!r} of {comp.id} is not a model of this session"))
                return out
            if judge not in eligible:
                out.append(
                    (
                        "judge",
                        f"LLM judge {judge!r} (family {spec.family}) may not judge {comp.id}: it holds "
                        f"an output of family {spec.family} ({comp.candidate_a} vs {comp.candidate_b}; "
                        "leave-family-out)",
                    )
                )
            return out
        clash = session.name_clash(judge)
        if clash is not None:
            out.append(
                ("judge", f"expert {judge!r} is {clash}; an expert's id must differ from every judge and model name")
            )
            return out
        if family:
            out.append(("judge_family", f"{family!r} given for an expert (must be empty)"))
        expert = self.experts.get(judge)
        if expert is None and judge not in self.add_experts:
            known = ", ".join(sorted(self.experts)) or "none"
            out.append(
                (
                    "judge",
                    f"{judge!r} is not an expert of this session (registered: {known}); "
                    "register new experts with --add-experts",
                )
            )
        elif expert is not None and expert.tasks and comp.task not in expert.tasks:
            out.append(("judge", f"expert {judge!r} judges only {', '.join(expert.tasks)}, not {comp.task!r}"))
        if presentation not in (0, 1):
            out.append(
                (
                    "presentation",
                    f"{presentation} but an expert judgment is presentation 0 or 1 (1: the swapped repeat)",
                )
            )
        return out


@dataclass
class _Problems:
    items: list[str] = field(default_factory=list)
    count: int = 0
    refused: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Rows of judgments.csv with a problem, per (judge, kind)."""

    def add(self, where: str, message: str) -> None:
        self.count += 1
        if len(self.items) < MAX_PROBLEMS:
            self.items.append(f"{where}: {message}")

    def raise_if_any(self) -> None:
        if self.count:
            more = f"\n  ... and {self.count - len(self.items)} more" if self.count > len(self.items) else ""
            per_judge = ""
            if self.refused:
                per_judge = "\nRefused rows of judgments.csv per judge: " + ", ".join(
                    f"{judge or '(empty)'} ({kind or '?'}) {n:,}" for (judge, kind), n in sorted(self.refused.items())
                )
            raise ImportFileError(
                f"{self.count} problem(s); nothing was imported:\n  " + "\n  ".join(self.items) + more + per_judge
            )


def _read_csv(path: Path, problems: _Problems) -> tuple[list[str], list[tuple[int, int, dict[str, str]]]]:
    """Header and (row number, line number, row) of a CSV file."""
    if not path.is_file():
        raise ImportFileError(f"{path}: file not found (expected the export format: judgments.csv and scores.csv)")
    reader: csv.DictReader[str] | None = None
    try:
        with path.open(newline="", encoding="utf-8-sig") as fh:  # a spreadsheet's "CSV UTF-8" starts with a BOM
            reader = csv.DictReader(fh)
            header = list(reader.fieldnames or [])
            rows = []
            for i, row in enumerate(reader, start=1):
                if None in row:
                    problems.add(f"{path.name} row {i} (line {reader.line_num})", "more cells than header columns")
                    row.pop(None)
                rows.append((i, reader.line_num, {k: (v if v is not None else "") for k, v in row.items()}))
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        line = f" after line {reader.line_num}" if reader is not None else ""  # the bad record follows it
        raise ImportFileError(f"{path}: malformed CSV{line} ({exc})") from None
    return header, rows


def _check_header(name: str, header: list[str], required: tuple[str, ...], optional: tuple[str, ...]) -> None:
    missing = [c for c in required if c not in header]
    unknown = [c for c in header if c not in required and c not in optional]
    dupes = sorted({c for c in header if header.count(c) > 1})
    problems = []
    if missing:
        problems.append(f"missing column(s): {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown column(s): {', '.join(unknown)} (known: {', '.join(required + optional)})")
    if dupes:
        problems.append(f"duplicate column(s): {', '.join(dupes)}")
    if problems:
        raise ImportFileError(f"{name}, header: " + "; ".join(problems))


def _int(text: str, *, low: int | None = None, high: int | None = None) -> int:
    value = int(text.strip())  # raises ValueError on "7.5", "", "x"
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{low}-{high}" if high is not None else f">= {low}"
        raise ValueError(f"{value} is outside {bounds}")
    return value


def _float(text: str) -> float | None:
    if text.strip() == "":
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


_BOOLS = {"true": True, "false": False, "1": True, "0": False}
_OPTION_WORDS = {"option1": 0, "option_1": 0, "option2": 1, "option_2": 1}


@dataclass
class _Pending:
    record: JudgmentRecord
    where: str
    task: str
    scores: list[ScoreRecord] = field(default_factory=list)


def read_export(
    directory: Path,
    comparisons: Mapping[str, ComparisonRecord],
    rubrics: Mapping[str, Rubric],
    rules: ImportRules | None = None,
) -> list[JudgmentRecord]:
    """Read and validate judgments.csv and scores.csv of an export folder.

    Args:
        directory: Folder holding judgments.csv and scores.csv (the format `centaur export` writes).
        comparisons: The session's comparisons by id (`Store.comparisons()`).
        rubrics: The rubric of each task of the session.
        rules: Who may have judged what; None checks the files only (the judges are not checked).

    Returns:
        The judgments with their scores, in file order; `id` is the file's judgment_id (or None).

    Raises:
        ImportFileError: listing every problem found (file, row, column); nothing is returned.
    """
    problems = _Problems()
    j_path, s_path = Path(directory) / "judgments.csv", Path(directory) / "scores.csv"
    j_header, j_rows = _read_csv(j_path, problems)
    _check_header("judgments.csv", j_header, REQUIRED_JUDGMENT_COLUMNS, OPTIONAL_JUDGMENT_COLUMNS)
    s_rows: list[tuple[int, int, dict[str, str]]] = []
    if s_path.exists():  # without scores.csv every valid judgment is winner-only
        s_header, s_rows = _read_csv(s_path, problems)
        _check_header("scores.csv", s_header, SCORE_COLUMNS, ())

    pending: list[_Pending] = []
    by_id: dict[int, _Pending] = {}
    by_pair: dict[tuple[str, str], list[_Pending]] = {}
    keys: dict[tuple[str, str, int, int], str] = {}
    for i, line, row in j_rows:
        where = f"judgments.csv row {i} (line {line})"
        bad = len(problems.items), problems.count

        def err(column: str, message: str, where: str = where) -> None:
            problems.add(f"{where}, column {column}", message)

        cid = row["comparison_id"].strip()
        comp = comparisons.get(cid)
        tally = (row["judge"].strip(), row["judge_kind"].strip())
        if comp is None:
            err("comparison_id", f"unknown comparison {cid!r} (not in this session)")
            problems.refused[tally] += 1
            continue
        try:
            if _int(row["run"]) != comp.run:
                err("run", f"{row['run']!r} but comparison {cid} is in run {comp.run}")
        except ValueError:
            err("run", f"{row['run']!r} is not an integer")
        for column, expected in (("task", comp.task), ("mode", comp.mode)):
            if row[column].strip() != expected:
                err(column, f"{row[column]!r} but comparison {cid} is {column} {expected!r}")
        judge = row["judge"].strip()
        if not judge:
            err("judge", "empty")
        kind = row["judge_kind"].strip()
        if kind not in JUDGE_KINDS:
            err("judge_kind", f"{kind!r} is not one of {', '.join(JUDGE_KINDS)}")
        option1, option2 = row["option1"].strip(), row["option2"].strip()
        pair = {comp.candidate_a, comp.candidate_b}
        for column, value in (("option1", option1), ("option2", option2)):
            if value not in pair:
                err(
                    column, f"{value!r} is not a candidate of comparison {cid} ({comp.candidate_a}, {comp.candidate_b})"
                )
        if option1 == option2 and option1 in pair:
            err("option2", "same candidate as option1")
        valid_text = row["valid"].strip().lower()
        valid = _BOOLS.get(valid_text)
        if valid is None:
            err("valid", f"{row['valid']!r} is not true or false")
        winner_text = row["winner"].strip()
        winner: str | None = None
        reason = row["invalid_reason"] if row["invalid_reason"].strip() else None
        if valid is True:
            if winner_text in (option1, option2, "tie"):
                winner = winner_text
            elif winner_text.lower() in _OPTION_WORDS:
                winner = (option1, option2)[_OPTION_WORDS[winner_text.lower()]]
            else:
                err("winner", f"{winner_text!r} is not option1 ({option1}), option2 ({option2}) or tie")
            if reason is not None:
                err("invalid_reason", "given for a valid judgment")
        elif valid is False:
            if winner_text:
                err("winner", f"{winner_text!r} given for an invalid judgment (must be empty)")
            if reason is None:
                err("invalid_reason", "empty for an invalid judgment (say why it is invalid)")
        means: list[float | None] = []
        for column in ("option1_mean", "option2_mean"):
            try:
                means.append(_float(row[column]))
            except ValueError:
                err(column, f"{row[column]!r} is not a number")
                means.append(None)
        ints: dict[str, int | None] = {}
        for column, default, low in (
            ("presentation", 0, 0),
            ("revision", 0, 0),
            ("attempts", 1, 0),
            ("judgment_id", None, 1),
        ):
            text = row.get(column, "")
            try:
                ints[column] = default if text.strip() == "" else _int(text, low=low)
            except ValueError as exc:
                err(column, f"{text!r} is not an integer >= {low}" + (f" ({exc})" if "outside" in str(exc) else ""))
                ints[column] = default
        try:
            seconds = _float(row.get("seconds", ""))
            if seconds is not None and seconds < 0:
                raise ValueError
        except ValueError:
            err("seconds", f"{row.get('seconds')!r} is not a non-negative number")
            seconds = None
        family = row["judge_family"].strip()
        if rules is not None and judge and kind in JUDGE_KINDS:
            for column, message in rules.problems(comp, kind, judge, family, int(ints["presentation"] or 0), winner):
                err(column, message)
            if kind == "llm" and not family and judge in {j.name for j in rules.session.judges}:
                family = rules.session.judge(judge).family
        if (len(problems.items), problems.count) != bad:
            problems.refused[tally] += 1
            continue
        key = (cid, judge, int(ints["presentation"] or 0), int(ints["revision"] or 0))
        if key in keys:
            err("comparison_id", f"same comparison, judge, presentation and revision as {keys[key]}")
            problems.refused[tally] += 1
            continue
        keys[key] = f"row {i}"
        record = JudgmentRecord(
            comparison_id=cid,
            judge=judge,
            judge_kind="llm" if kind == "llm" else "expert",  # another kind is a reported problem: never stored
            judge_family=family or None,
            presentation=key[2],
            option1=option1,
            option2=option2,
            winner=winner,
            option1_mean=means[0],
            option2_mean=means[1],
            valid=bool(valid),
            invalid_reason=reason,
            rationale=row["rationale"] if row["rationale"] != "" else None,
            call_key=None,
            attempts=int(ints["attempts"] if ints["attempts"] is not None else 1),
            revision=key[3],
            seconds=seconds,
            id=ints["judgment_id"],
        )
        item = _Pending(record, where, comp.task)
        if record.id is not None:
            if record.id in by_id:
                err("judgment_id", f"{record.id} appears twice (also {by_id[record.id].where})")
                continue
            by_id[record.id] = item
        pending.append(item)
        by_pair.setdefault((cid, judge), []).append(item)

    seen_scores: set[tuple[int, str, str]] = set()
    for i, line, row in s_rows:
        where = f"scores.csv row {i} (line {line})"

        def serr(column: str, message: str, where: str = where) -> None:
            problems.add(f"{where}, column {column}", message)

        jid_text = row["judgment_id"].strip()
        cid, judge = row["comparison_id"].strip(), row["judge"].strip()
        target: _Pending | None = None
        if jid_text:
            try:
                target = by_id.get(_int(jid_text, low=1))
            except ValueError:
                serr("judgment_id", f"{jid_text!r} is not a positive integer")
                continue
            if target is None:
                serr("judgment_id", f"{jid_text} is not a judgment_id of a valid row in judgments.csv")
                continue
            if (target.record.comparison_id, target.record.judge) != (cid, judge):
                serr(
                    "comparison_id",
                    f"{cid}/{judge} but judgment {jid_text} is {target.record.comparison_id}/{target.record.judge}",
                )
                continue
        else:
            matches = by_pair.get((cid, judge), [])
            if len(matches) != 1:
                serr(
                    "judgment_id",
                    "empty, and "
                    + (
                        f"no judgment of {judge!r} on {cid!r} in judgments.csv"
                        if not matches
                        else f"{judge!r} judged {cid!r} {len(matches)} times: give judgment_id to say which"
                    ),
                )
                continue
            target = matches[0]
        rec = target.record
        if not rec.valid:
            serr("judgment_id", f"scores for an invalid judgment ({target.where})")
            continue
        candidate = row["candidate"].strip()
        if candidate not in (rec.option1, rec.option2):
            serr("candidate", f"{candidate!r} is neither option of the judgment ({rec.option1}, {rec.option2})")
            continue
        rubric = rubrics.get(target.task)
        dim = row["dimension"].strip()
        if rubric is None:
            serr("dimension", f"task {target.task!r} has no rubric in this session")
            continue
        if dim not in rubric.ids:
            serr("dimension", f"{dim!r} is not a dimension of task {target.task!r} ({', '.join(rubric.ids)})")
            continue
        kind = row["dimension_kind"].strip()
        if kind != rubric.kind(dim):
            serr("dimension_kind", f"{kind!r} but {dim!r} is a {rubric.kind(dim)} dimension")
            continue
        try:
            score = _int(row["score"], low=1, high=10)
        except ValueError:
            serr("score", f"{row['score']!r} is not an integer from 1 to 10")
            continue
        skey = (id(target), candidate, dim)
        if skey in seen_scores:
            serr("dimension", f"{candidate!r} scored twice on {dim!r} in the same judgment")
            continue
        seen_scores.add(skey)
        target.scores.append(ScoreRecord(candidate, dim, kind, score))

    for item in pending:
        rec = item.record
        if not rec.valid:
            continue
        rubric = rubrics.get(item.task)
        if rubric is None:
            problems.add(item.where, f"task {item.task!r} has no rubric in this session")
            continue
        if not item.scores:
            continue  # winner-only: no rubric scores at all (a partial set is refused below)
        for candidate in (rec.option1, rec.option2):
            have = {s.dimension for s in item.scores if s.candidate == candidate}
            missing = [d for d in rubric.ids if d not in have]
            if missing:
                problems.add(
                    f"{item.where}", f"valid judgment lacks scores.csv rows for {candidate!r} on {', '.join(missing)}"
                )
    problems.raise_if_any()
    return [dataclasses.replace(p.record, scores=tuple(p.scores)) for p in pending]


_COMPARED = (
    "judge_kind",
    "judge_family",
    "option1",
    "option2",
    "winner",
    "option1_mean",
    "option2_mean",
    "valid",
    "invalid_reason",
    "rationale",
    "attempts",
    "seconds",
)


def store_judgments(
    store: Store, records: Sequence[JudgmentRecord], new_experts: Sequence[ExpertSpec] = ()
) -> ImportSummary:
    """Store judgments with their scores in one BEGIN IMMEDIATE transaction, idempotently.

    Args:
        store: The session database.
        records: Validated judgments (`read_export`); `id` is kept as the row id when free.
        new_experts: Experts to register (table `app_experts`) in the same transaction.

    Returns:
        How many were inserted and how many were already stored identically, per judge too.

    Raises:
        ImportConflictError: a stored judgment with the same key differs (or is another kind of
            judge's); nothing is written.
    """
    with store.write() as c:
        return store_judgments_in(c, records, new_experts)


def store_judgments_in(
    c: sqlite3.Connection, records: Sequence[JudgmentRecord], new_experts: Sequence[ExpertSpec] = ()
) -> ImportSummary:
    """`store_judgments` inside the caller's transaction (an import that also stores outputs and comparisons)."""
    inserted = unchanged = n_scores = winner_only = 0
    tallies: dict[tuple[str, str], list[int]] = {}
    now = utc_now()
    c.executemany(
        "INSERT OR IGNORE INTO app_experts (id, name, tasks, created_at) VALUES (?, ?, ?, ?)",
        [(e.id, e.name, json.dumps(list(e.tasks)), now) for e in new_experts],
    )
    taken = {row[0] for row in c.execute("SELECT id FROM judgments")}
    for rec in records:
        tally = tallies.setdefault((rec.judge, rec.judge_kind), [0, 0])
        row = c.execute(
            "SELECT id, " + ", ".join(_COMPARED) + " FROM judgments"
            " WHERE comparison_id = ? AND judge = ? AND presentation = ? AND revision = ?",
            (rec.comparison_id, rec.judge, rec.presentation, rec.revision),
        ).fetchone()
        if row is not None:
            stored = dict(zip(_COMPARED, row[1:], strict=True))
            stored["valid"] = bool(stored["valid"])
            scores = c.execute(
                "SELECT candidate, dimension, dimension_kind, score FROM scores WHERE judgment_id = ? ORDER BY rowid",
                (row[0],),
            ).fetchall()
            same = all(stored[k] == getattr(rec, k) for k in _COMPARED) and [tuple(s) for s in scores] == [
                (s.candidate, s.dimension, s.dimension_kind, s.score) for s in rec.scores
            ]
            if stored["judge_kind"] != rec.judge_kind:
                # Never "already stored" for another kind of judge with the same name (issue 13).
                raise ImportConflictError(
                    f"{rec.judge_kind} judge {rec.judge!r} has the name of an {stored['judge_kind']} judge whose "
                    f"judgment of {rec.comparison_id} (presentation {rec.presentation}, revision {rec.revision}) "
                    f"is stored as id {row[0]}. Nothing was imported."
                )
            if not same:
                diff = [k for k in _COMPARED if stored[k] != getattr(rec, k)] or ["scores"]
                raise ImportConflictError(
                    f"judgment of {rec.judge!r} on {rec.comparison_id} (presentation {rec.presentation}, "
                    f"revision {rec.revision}) is already stored as id {row[0]} with a different "
                    f"{', '.join(diff)}; a correction must come as a new revision. Nothing was imported."
                )
            unchanged += 1
            tally[1] += 1
            continue
        judgment_id = rec.id if rec.id is not None and rec.id not in taken else None
        cur = c.execute(
            "INSERT INTO judgments (id, comparison_id, judge, judge_kind, judge_family, presentation, revision,"
            " option1, option2, winner, option1_mean, option2_mean, valid, invalid_reason, rationale, call_key,"
            " attempts, seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                judgment_id,
                rec.comparison_id,
                rec.judge,
                rec.judge_kind,
                rec.judge_family,
                rec.presentation,
                rec.revision,
                rec.option1,
                rec.option2,
                rec.winner,
                rec.option1_mean,
                rec.option2_mean,
                int(rec.valid),
                rec.invalid_reason,
                rec.rationale,
                rec.call_key,
                rec.attempts,
                rec.seconds,
                now,
            ),
        )
        new_id = cur.lastrowid
        taken.add(new_id)
        c.executemany(
            "INSERT INTO scores (judgment_id, candidate, dimension, dimension_kind, score) VALUES (?, ?, ?, ?, ?)",
            [(new_id, s.candidate, s.dimension, s.dimension_kind, s.score) for s in rec.scores],
        )
        chain.append(c, "judgments", new_id)
        inserted += 1
        tally[0] += 1
        n_scores += len(rec.scores)
        winner_only += int(rec.valid and not rec.scores)
    return ImportSummary(
        judgments=len(records),
        inserted=inserted,
        unchanged=unchanged,
        scores=n_scores,
        winner_only=winner_only,
        by_judge=tuple(JudgeTally(j, k, n[0], n[1]) for (j, k), n in sorted(tallies.items())),
        experts_added=tuple(e.id for e in new_experts),
    )


def session_id(store: Store) -> str:
    """The random id the session database got when it was created (migration 5)."""
    value = store.read_value("SELECT value FROM meta WHERE key = 'session_id'")
    if not value:  # only a database edited by hand lacks it: the migration writes it
        raise ImportFileError(f"{store.path}: meta.session_id is missing; the database cannot bind its exports")
    return str(value)


def export_fingerprint(store: Store) -> str:
    """The tag an export carries: a digest of the database's random id (the id itself stays in the database)."""
    return digest("export-session", session_id(store))[:32]


def export_manifest(
    store: Store, session_name: str, written: Mapping[str, int], *, stamp: bool = True
) -> dict[str, Any]:
    """The content of an export's session.json: format, session name, fingerprint, (time,) rows per file.

    Without `stamp` there is no `exported_at` (the publishable bundle: the same database, the same bytes).
    """
    out: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "version": MANIFEST_VERSION,
        "session": session_name,
        "fingerprint": export_fingerprint(store),
        "exported_at": utc_now(),
        "rows": dict(written),
    }
    if not stamp:
        del out["exported_at"]
    return out


def check_manifest(store: Store, session_name: str, directory: Path, *, external: bool = False) -> bool:
    """Refuse an export folder of another session; returns whether it carried a session.json.

    Args:
        store: The session database imported into.
        session_name: The session's name, for messages.
        directory: The export folder.
        external: Files made by another tool may come without session.json; one that is
            there is checked all the same.

    Raises:
        ImportFileError: session.json is missing (and not `external`), malformed, or names
            another session's database.
    """
    path = Path(directory) / MANIFEST
    if not path.is_file():
        if external:
            return False
        raise ImportFileError(
            f"{path}: missing; nothing was imported. `centaur export` writes it to tie the files to their session "
            "(comparison ids alone do not: two sessions with the same candidates share them). For judgments "
            "made with another tool, pass --external."
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportFileError(f"{path}: not a JSON manifest ({exc}); nothing was imported") from None
    if not isinstance(data, dict):
        raise ImportFileError(f"{path}: not a JSON object; nothing was imported")
    if data.get("format") != MANIFEST_FORMAT or data.get("version") != MANIFEST_VERSION:
        raise ImportFileError(
            f"{path}, field format/version: {data.get('format')!r} version {data.get('version')!r}, expected "
            f"{MANIFEST_FORMAT!r} version {MANIFEST_VERSION}; nothing was imported"
        )
    theirs = data.get("fingerprint")
    if theirs != export_fingerprint(store):
        other = data.get("session")
        why = (
            f"another database of a session named {other!r} (created separately: its comparison ids may match, "
            "its judgments are not this study's)"
            if other == session_name
            else f"session {other!r}"
        )
        raise ImportFileError(
            f"{path}, field fingerprint: these files were exported from {why}, not from this session's database "
            f"({session_name!r}, {store.path.name}); nothing was imported"
        )
    return True


def import_export(
    store: Store,
    directory: Path,
    rubrics: Mapping[str, Rubric],
    rules: ImportRules | None = None,
    *,
    session_name: str | None = None,
    external: bool = False,
) -> ImportSummary:
    """Validate an export folder against the session in `store`, then store its judgments.

    Args:
        store: The session database; its comparisons must already be there.
        directory: Folder with judgments.csv and scores.csv (and session.json).
        rubrics: The rubric of each task of the session.
        rules: Who may have judged what; with it session.json is checked too.
        session_name: The session's name (default: the rules' session).
        external: Accept a folder without session.json (judgments made with another tool).

    Returns:
        What was imported.

    Raises:
        ImportFileError: the files do not fit the session (nothing written).
        ImportConflictError: a judgment differs from the stored one with its key (nothing written).
    """
    new: list[ExpertSpec] = []
    bound = False
    if rules is not None:
        bound = check_manifest(store, session_name or rules.session.name, directory, external=external)
        new = rules.new_experts()
    records = read_export(directory, store.comparisons(), rubrics, rules)
    return replace(store_judgments(store, records, new), bound=bound)
