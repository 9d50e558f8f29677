"""Provides the reading of an export folder: judgments.csv and scores.csv checked against the session.

Every row is validated against the session's comparisons and rubrics (and, given `ImportRules`,
against who may have judged what); every problem names the file, the row, the line and the
column, and nothing is returned unless the whole folder is valid. The records returned keep the
file's judgment ids, so an export imported into a copy of the session exports to the same files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from centaur_tui.domain.records import (
    OPTIONAL_JUDGMENT_COLUMNS,
    REQUIRED_JUDGMENT_COLUMNS,
    SCORE_COLUMNS,
    ComparisonRecord,
    JudgmentRecord,
    ScoreRecord,
)
from centaur_tui.domain.task import Rubric
from centaur_tui.formats.problems import Problems, refusal
from centaur_tui.formats.reader import JsonError, Limits, Record, loads, open_regular, read_records
from centaur_tui.formats.rules import ImportRules
from centaur_tui.formats.text import MAX_TEXT_CHARS

JUDGE_KINDS = ("llm", "expert")
_BOOLS = {"true": True, "false": False, "1": True, "0": False}
_OPTION_WORDS = {"option1": 0, "option_1": 0, "option2": 1, "option_2": 1}

Err = Callable[[str, str], None]
"""Reports a problem of the current row: (column, message)."""


def _int(text: str, *, low: int | None = None, high: int | None = None) -> int:
    stripped = text.strip()
    if len(stripped) > 18:
        raise ValueError("too many digits")
    value = int(stripped)  # raises ValueError on "7.5", "", "x"
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{low}-{high}" if high is not None else f">= {low}"
        raise ValueError(f"{value} is outside {bounds}")
    return value


def _float(text: str) -> float | None:
    if text.strip() == "":
        return None
    if len(text.strip()) > 40:
        raise ValueError("too long for a number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


@dataclass
class _Pending:
    record: JudgmentRecord
    line: int
    row: int
    task: str
    scores: list[ScoreRecord] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"judgments.csv row {self.row} (line {self.line})"


@dataclass
class _Verdict:
    valid: bool | None
    winner: str | None
    reason: str | None


class _ExportReader:
    """The rows of one export folder, checked as they are read; `finish` returns the judgments."""

    def __init__(
        self, comparisons: Mapping[str, ComparisonRecord], rubrics: Mapping[str, Rubric], rules: ImportRules | None
    ) -> None:
        self.comparisons = comparisons
        self.rubrics = rubrics
        self.rules = rules
        self.judgments = Problems("judgments.csv", field_word="column", rows=True)
        self.scores = Problems("scores.csv", field_word="column", rows=True)
        self.pending: list[_Pending] = []
        self.by_id: dict[int, _Pending] = {}
        self.by_pair: dict[tuple[str, str], list[_Pending]] = {}
        self.keys: dict[tuple[str, str, int, int], str] = {}
        self.seen_scores: set[tuple[int, str, str]] = set()

    # -- judgments.csv ---------------------------------------------------------------------------

    def judgment(self, rec: Record) -> None:
        row = rec.values
        before = self.judgments.count

        def err(column: str, message: str) -> None:
            self.judgments.add(rec.line, column, message, row=rec.row)

        tally = (row["judge"].strip(), row["judge_kind"].strip())
        cid = row["comparison_id"].strip()
        comp = self.comparisons.get(cid)
        if comp is None:
            err("comparison_id", f"unknown comparison {cid!r} (not in this session)")
            self.judgments.refused[tally] += 1
            return
        self._check_place(row, comp, err)
        judge, kind = tally
        if not judge:
            err("judge", "empty")
        if kind not in JUDGE_KINDS:
            err("judge_kind", f"{kind!r} is not one of {', '.join(JUDGE_KINDS)}")
        option1, option2 = self._options(row, comp, err)
        verdict = self._verdict(row, option1, option2, err)
        means = [self._mean(row, column, err) for column in ("option1_mean", "option2_mean")]
        ints = self._ints(row, err)
        seconds = self._seconds(row, err)
        for column in ("rationale", "invalid_reason"):
            if len(row[column]) > MAX_TEXT_CHARS:
                err(column, f"{len(row[column]):,} characters, more than {MAX_TEXT_CHARS:,}")
        family = row["judge_family"].strip()
        if self.rules is not None and judge and kind in JUDGE_KINDS:
            for column, message in self.rules.problems(comp, kind, judge, family, ints["presentation"], verdict.winner):
                err(column, message)
            if kind == "llm" and not family and judge in {j.name for j in self.rules.session.judges}:
                family = self.rules.session.judge(judge).family
        if self.judgments.count != before:
            self.judgments.refused[tally] += 1
            return
        key = (cid, judge, ints["presentation"], ints["revision"])
        if key in self.keys:
            err("comparison_id", f"same comparison, judge, presentation and revision as {self.keys[key]}")
            self.judgments.refused[tally] += 1
            return
        self.keys[key] = f"row {rec.row}"
        record = JudgmentRecord(
            comparison_id=cid,
            judge=judge,
            judge_kind="llm" if kind == "llm" else "expert",
            judge_family=family or None,
            presentation=key[2],
            option1=option1,
            option2=option2,
            winner=verdict.winner,
            option1_mean=means[0],
            option2_mean=means[1],
            valid=bool(verdict.valid),
            invalid_reason=verdict.reason,
            rationale=row["rationale"] if row["rationale"] != "" else None,
            call_key=None,
            attempts=ints["attempts"],
            revision=key[3],
            seconds=seconds,
            id=ints["judgment_id"] or None,
        )
        item = _Pending(record, rec.line, rec.row, comp.task)
        if record.id is not None:
            if record.id in self.by_id:
                err("judgment_id", f"{record.id} appears twice (also {self.by_id[record.id].where})")
                return
            self.by_id[record.id] = item
        self.pending.append(item)
        self.by_pair.setdefault((cid, judge), []).append(item)

    @staticmethod
    def _check_place(row: dict[str, str], comp: ComparisonRecord, err: Err) -> None:
        try:
            if _int(row["run"]) != comp.run:
                err("run", f"{row['run']!r} but comparison {comp.id} is in run {comp.run}")
        except ValueError:
            err("run", f"{row['run']!r} is not an integer")
        for column, expected in (("task", comp.task), ("mode", comp.mode)):
            if row[column].strip() != expected:
                err(column, f"{row[column]!r} but comparison {comp.id} is {column} {expected!r}")

    @staticmethod
    def _options(row: dict[str, str], comp: ComparisonRecord, err: Err) -> tuple[str, str]:
        option1, option2 = row["option1"].strip(), row["option2"].strip()
        pair = {comp.candidate_a, comp.candidate_b}
        for column, value in (("option1", option1), ("option2", option2)):
            if value not in pair:
                err(
                    column,
                    f"{value!r} is not a candidate of comparison {comp.id} ({comp.candidate_a}, {comp.candidate_b})",
                )
        if option1 == option2 and option1 in pair:
            err("option2", "same candidate as option1")
        return option1, option2

    @staticmethod
    def _verdict(row: dict[str, str], option1: str, option2: str, err: Err) -> _Verdict:
        valid = _BOOLS.get(row["valid"].strip().lower())
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
        return _Verdict(valid, winner, reason)

    @staticmethod
    def _mean(row: dict[str, str], column: str, err: Err) -> float | None:
        try:
            return _float(row[column])
        except ValueError:
            err(column, f"{row[column]!r} is not a number")
            return None

    @staticmethod
    def _ints(row: dict[str, str], err: Err) -> dict[str, int]:
        ints: dict[str, int] = {}
        for column, default, low in (
            ("presentation", 0, 0),
            ("revision", 0, 0),
            ("attempts", 1, 0),
            ("judgment_id", 0, 1),
        ):
            text = row.get(column, "")
            try:
                ints[column] = default if text.strip() == "" else _int(text, low=low)
            except ValueError as exc:
                err(column, f"{text!r} is not an integer >= {low}" + (f" ({exc})" if "outside" in str(exc) else ""))
                ints[column] = default
        return ints

    @staticmethod
    def _seconds(row: dict[str, str], err: Err) -> float | None:
        try:
            seconds = _float(row.get("seconds", ""))
            if seconds is not None and seconds < 0:
                raise ValueError
        except ValueError:
            err("seconds", f"{row.get('seconds')!r} is not a non-negative number")
            return None
        return seconds

    # -- scores.csv ------------------------------------------------------------------------------

    def score(self, rec: Record) -> None:
        row = rec.values

        def err(column: str, message: str) -> None:
            self.scores.add(rec.line, column, message, row=rec.row)

        target = self._score_target(row, err)
        if target is None:
            return
        judgment = target.record
        if not judgment.valid:
            err("judgment_id", f"scores for an invalid judgment ({target.where})")
            return
        candidate = row["candidate"].strip()
        if candidate not in (judgment.option1, judgment.option2):
            err(
                "candidate", f"{candidate!r} is neither option of the judgment ({judgment.option1}, {judgment.option2})"
            )
            return
        rubric = self.rubrics.get(target.task)
        dim = row["dimension"].strip()
        if rubric is None:
            err("dimension", f"task {target.task!r} has no rubric in this session")
            return
        if dim not in rubric.ids:
            err("dimension", f"{dim!r} is not a dimension of task {target.task!r} ({', '.join(rubric.ids)})")
            return
        kind = row["dimension_kind"].strip()
        if kind != rubric.kind(dim):
            err("dimension_kind", f"{kind!r} but {dim!r} is a {rubric.kind(dim)} dimension")
            return
        try:
            score = _int(row["score"], low=1, high=10)
        except ValueError:
            err("score", f"{row['score']!r} is not an integer from 1 to 10")
            return
        key = (id(target), candidate, dim)
        if key in self.seen_scores:
            err("dimension", f"{candidate!r} scored twice on {dim!r} in the same judgment")
            return
        self.seen_scores.add(key)
        target.scores.append(ScoreRecord(candidate, dim, kind, score))

    def _score_target(self, row: dict[str, str], err: Err) -> _Pending | None:
        """The judgment a scores.csv row belongs to: by judgment_id, else the one judgment of that judge on it."""
        jid_text = row["judgment_id"].strip()
        cid, judge = row["comparison_id"].strip(), row["judge"].strip()
        if not jid_text:
            matches = self.by_pair.get((cid, judge), [])
            if len(matches) == 1:
                return matches[0]
            err(
                "judgment_id",
                "empty, and "
                + (
                    f"no judgment of {judge!r} on {cid!r} in judgments.csv"
                    if not matches
                    else f"{judge!r} judged {cid!r} {len(matches)} times: give judgment_id to say which"
                ),
            )
            return None
        try:
            target = self.by_id.get(_int(jid_text, low=1))
        except ValueError:
            err("judgment_id", f"{jid_text!r} is not a positive integer")
            return None
        if target is None:
            err("judgment_id", f"{jid_text} is not a judgment_id of a valid row in judgments.csv")
            return None
        if (target.record.comparison_id, target.record.judge) != (cid, judge):
            err(
                "comparison_id",
                f"{cid}/{judge} but judgment {jid_text} is {target.record.comparison_id}/{target.record.judge}",
            )
            return None
        return target

    # -- the whole folder ------------------------------------------------------------------------

    def finish(self) -> list[JudgmentRecord]:
        """Check every valid judgment has a full set of scores (or none: winner-only), then return them all."""
        for item in self.pending:
            rec = item.record
            if not rec.valid:
                continue
            rubric = self.rubrics.get(item.task)
            if rubric is None:
                self.judgments.add(item.line, None, f"task {item.task!r} has no rubric in this session", row=item.row)
                continue
            if not item.scores:
                continue  # winner-only: no rubric scores at all (a partial set is refused)
            for candidate in (rec.option1, rec.option2):
                have = {s.dimension for s in item.scores if s.candidate == candidate}
                lacking = [d for d in rubric.ids if d not in have]
                if lacking:
                    self.judgments.add(
                        item.line,
                        None,
                        f"valid judgment lacks scores.csv rows for {candidate!r} on {', '.join(lacking)}",
                        row=item.row,
                    )
        self.judgments.raise_if_any(also=self.scores)
        return [dataclasses.replace(p.record, scores=tuple(p.scores)) for p in self.pending]

    def ignored(self) -> dict[str, int]:
        """Undocumented columns of both files, left out: name (file-qualified) and rows holding them."""
        return {
            **{f"judgments.csv:{k}": n for k, n in self.judgments.ignored.items()},
            **{f"scores.csv:{k}": n for k, n in self.scores.ignored.items()},
        }


@dataclass(frozen=True)
class ExportFiles:
    """What an export folder holds, checked: its judgments (with scores) and the columns left out."""

    judgments: list[JudgmentRecord]
    ignored: dict[str, int] = field(default_factory=dict)
    """Undocumented columns ("file:column") and how many rows held them; they were not read."""


def read_export_folder(
    directory: Path,
    comparisons: Mapping[str, ComparisonRecord],
    rubrics: Mapping[str, Rubric],
    rules: ImportRules | None = None,
) -> ExportFiles:
    """Read and validate judgments.csv and scores.csv of an export folder.

    Args:
        directory: Folder holding judgments.csv and scores.csv (the format `centaur export` writes).
        comparisons: The session's comparisons by id.
        rubrics: The rubric of each task of the session.
        rules: Who may have judged what; None checks the files only (the judges are not checked).

    Returns:
        The judgments with their scores, in file order (`id` is the file's judgment_id, or None),
        and the undocumented columns left out.

    Raises:
        ImportFileError: listing every problem found (file, row, column); nothing is returned.
    """
    j_path, s_path = Path(directory) / "judgments.csv", Path(directory) / "scores.csv"
    if not j_path.exists():
        raise refusal(j_path, "file not found (expected the export format: judgments.csv and scores.csv)")
    reader = _ExportReader(comparisons, rubrics, rules)
    for rec in read_records(j_path, REQUIRED_JUDGMENT_COLUMNS, OPTIONAL_JUDGMENT_COLUMNS, reader.judgments):
        reader.judgment(rec)
    if s_path.exists():  # without scores.csv every valid judgment is winner-only
        for rec in read_records(s_path, SCORE_COLUMNS, (), reader.scores):
            reader.score(rec)
    return ExportFiles(reader.finish(), reader.ignored())


def read_export(
    directory: Path,
    comparisons: Mapping[str, ComparisonRecord],
    rubrics: Mapping[str, Rubric],
    rules: ImportRules | None = None,
) -> list[JudgmentRecord]:
    """The judgments of an export folder (`read_export_folder` without the ignored columns)."""
    return read_export_folder(directory, comparisons, rubrics, rules).judgments


MANIFEST_LIMITS = Limits(file_bytes=1024 * 1024, depth=4)
"""session.json is a few hundred bytes: a megabyte and four levels are a wide margin, and nothing larger is read."""
SIGNED_FILES = ("judgments.csv", "scores.csv")
"""The files of an export `centaur import` reads, so the files whose SHA-256 its signature must cover."""


def read_manifest(path: Path) -> dict[str, Any]:
    """Read an export's session.json through the one reader (regular file, size, depth, no duplicated key).

    Raises:
        ImportFileError: naming the file: missing, not a regular file, not UTF-8, not JSON, not an object.
    """
    with open_regular(path, MANIFEST_LIMITS) as fh:
        raw = fh.read()
    try:
        data = loads(raw.decode("utf-8"), MANIFEST_LIMITS)
    except UnicodeDecodeError as exc:
        raise refusal(path, f"not UTF-8 (byte {exc.start})") from None
    except JsonError as exc:
        raise refusal(path, f"not a JSON manifest ({exc})") from None
    if not isinstance(data, dict):
        raise refusal(path, "not a JSON object")
    return data


def file_digests(directory: Path, names: tuple[str, ...] = SIGNED_FILES) -> dict[str, str]:
    """SHA-256 (hex) of each of `names` present in `directory`, streamed; a missing file is left out.

    Raises:
        ImportFileError: a name that is there but is not a regular file, or is too large.
    """
    out: dict[str, str] = {}
    for name in names:
        path = Path(directory) / name
        if not os.path.lexists(path):
            continue
        h = hashlib.sha256()
        with open_regular(path) as fh:
            while chunk := fh.read(1024 * 1024):
                h.update(chunk)
        out[name] = h.hexdigest()
    return out
