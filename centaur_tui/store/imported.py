"""Provides the import of what was made elsewhere: outputs (`centaur import-outputs`) and winner-only judgments.

Both read a CSV or JSONL file strictly: UTF-8 without a byte-order mark, LF line ends, every
documented column present and no other, each value checked; every problem names the file, the
line and the field, and nothing is written unless the whole file is valid. Writing is one
`BEGIN IMMEDIATE` transaction (outputs, their assistance texts, the round-robin comparisons built
from them and the judgments), so an import is all or nothing; importing the same file again
stores nothing new, and a file that disagrees with what is stored (another text for an output,
another winner for a judgment) is refused as a conflict.

Outputs belong to the session's imported candidates (`[[candidates]]`, `source = "imported"`):
a candidate is an identity like a model, so its name and family are among the session's
blinding terms, and a name the blinding would not mask in full is refused before anything is
stored. Text is untrusted: control characters and escape sequences are refused, not cleaned, so
what experts and judges read is exactly what the file holds.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from centaur_tui.domain.blinding import Blinding, blinding_problem
from centaur_tui.domain.plan import (
    MODES,
    Comparison,
    Mode,
    assistance_id,
    candidate_output_id,
    candidates_for,
    comparisons,
)
from centaur_tui.domain.records import ComparisonRecord, JudgmentRecord
from centaur_tui.domain.session import PLAIN, ExpertSpec, Session
from centaur_tui.domain.untrusted import CONTROL_CHARACTERS
from centaur_tui.store.connection import utc_now
from centaur_tui.store.db import Store
from centaur_tui.store.importer import (
    MAX_PROBLEMS,
    ImportConflictError,
    ImportFileError,
    ImportRules,
    ImportSummary,
    store_judgments_in,
)

MAX_FILE_BYTES = 512 * 1024 * 1024
"""Largest file read (512 MiB): MT-Bench's 5,755 public judgments with both conversations are 26 MB."""
MAX_TEXT_CHARS = 200_000
"""Longest output or assistance text (characters): about 30,000 words, 3x the longest deliverable tested."""
MAX_LABEL_CHARS = 200
"""Longest name (candidate, worker, judge), as in session files."""

OUTPUT_COLUMNS = ("task", "candidate", "text")
OUTPUT_OPTIONAL = ("mode", "run", "worker", "assistance_text", "output_id", "cut_off")
"""Optional columns of an outputs file; `output_id` (in `centaur export`'s outputs.csv) is read and ignored:
ids are derived again, from (run, task, mode, candidate), in the session imported into. `cut_off` (true or
false; empty: false) says the text was cut off at a token limit: it is stored and handled as a generated
one would be (`generation.on_truncated`: judged marked, or excluded)."""

WINNER_OPTIONAL = (
    "turn",
    "run",
    "mode",
    "judge_kind",
    "rationale",
    "conversation_a",
    "conversation_b",
    "tstamp",
)
"""Optional columns of a winner-only file; `tstamp` (Chatbot Arena's time stamp) is read and ignored."""
WINNER_LABELS = {"model_a": 0, "model_b": 1, "tie": 2, "tie (bothbad)": 2}
"""MT-Bench's winner labels: the option shown first (model_a) or second, or a tie (`tie (bothbad)`: both bad)."""


@dataclass
class Problems:
    """Every problem of one file, each naming the file, the line and the field; raised all at once."""

    file: str
    items: list[str] = field(default_factory=list)
    count: int = 0

    def add(self, line: int | None, column: str | None, message: str) -> None:
        self.count += 1
        if len(self.items) < MAX_PROBLEMS:
            where = self.file + (f" line {line}" if line is not None else "") + (f", field {column}" if column else "")
            self.items.append(f"{where}: {message}")

    def raise_if_any(self) -> None:
        if self.count:
            more = f"\n  ... and {self.count - len(self.items)} more" if self.count > len(self.items) else ""
            raise ImportFileError(
                f"{self.count} problem(s); nothing was imported:\n  " + "\n  ".join(self.items) + more
            )


def _fail(path: Path, message: str) -> ImportFileError:
    return ImportFileError(f"{path}: {message}; nothing was imported")


def read_records(
    path: Path, required: Sequence[str], optional: Sequence[str], problems: Problems
) -> list[tuple[int, dict[str, Any]]]:
    """(line, record) of every record of a CSV or JSONL file, after the checks every import shares.

    A CSV record's line is the line it starts on; a JSONL record is one line. Values are strings
    in CSV; in JSONL any JSON value (each column checks its own). Missing, unknown and (CSV)
    duplicate columns are problems of the header or of the line.

    Raises:
        ImportFileError: the file is missing, too large, not UTF-8, starts with a byte-order mark,
            has CRLF or CR line ends, is not .csv/.jsonl, or is malformed CSV.
    """
    path = Path(path)
    if not path.is_file():
        raise _fail(path, "file not found")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _fail(path, f"{size:,} bytes, larger than the {MAX_FILE_BYTES:,} an import reads")
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raise _fail(path, "starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _fail(path, "UTF-16 text (byte-order mark); save it as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise _fail(path, f"line {line}: not UTF-8 text ({exc.reason} at byte {exc.start:,})") from None
    cr = text.find("\r")
    if cr >= 0:
        line = text.count("\n", 0, cr) + 1
        kind = "CRLF" if text.startswith("\r\n", cr) else "CR"
        raise _fail(path, f"line {line} ends with {kind}; write LF line ends (a CR would be kept inside texts)")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _csv_records(path, text, required, optional, problems)
    if suffix in (".jsonl", ".ndjson"):
        return _jsonl_records(text, required, optional, problems)
    raise _fail(path, f"unknown format {suffix or '(no extension)'!r}: name the file .csv or .jsonl")


def _csv_records(
    path: Path, text: str, required: Sequence[str], optional: Sequence[str], problems: Problems
) -> list[tuple[int, dict[str, Any]]]:
    # The csv module refuses fields over 131,072 characters by default; texts are bounded by
    # MAX_TEXT_CHARS instead, with a message naming the line. The limit is process-wide, so it is
    # raised for this read only (the export-format importer keeps the default).
    previous = csv.field_size_limit(MAX_FILE_BYTES)
    try:
        return _csv_rows(path, text, required, optional, problems)
    finally:
        csv.field_size_limit(previous)


def _csv_rows(
    path: Path, text: str, required: Sequence[str], optional: Sequence[str], problems: Problems
) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        header = next(reader, None)
        if header is None:
            raise _fail(path, "empty file (expected a header line)")
        missing = [c for c in required if c not in header]
        unknown = [c for c in header if c not in required and c not in optional]
        dupes = sorted({c for c in header if header.count(c) > 1})
        bad = []
        if missing:
            bad.append(f"missing column(s): {', '.join(missing)}")
        if unknown:
            bad.append(f"unknown column(s): {', '.join(unknown)} (known: {', '.join((*required, *optional))})")
        if dupes:
            bad.append(f"duplicate column(s): {', '.join(dupes)}")
        if bad:
            raise _fail(path, "line 1 (header): " + "; ".join(bad))
        start = reader.line_num + 1
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not cells:
                continue
            if len(cells) != len(header):
                problems.add(line, None, f"{len(cells)} cell(s) but the header has {len(header)} column(s)")
                continue
            out.append((line, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise _fail(path, f"malformed CSV after line {reader.line_num} ({exc})") from None
    return out


def _jsonl_records(
    text: str, required: Sequence[str], optional: Sequence[str], problems: Problems
) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    known = (*required, *optional)
    for line, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            problems.add(line, None, f"not JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(value, dict):
            problems.add(line, None, f"a JSON {type(value).__name__}, not an object")
            continue
        missing = [c for c in required if value.get(c) is None]  # null is an absent value
        unknown = [c for c in value if c not in known]
        if missing:
            problems.add(line, ", ".join(missing), "missing")
        if unknown:
            problems.add(line, ", ".join(unknown), f"unknown field(s) (known: {', '.join(known)})")
        if missing or unknown:
            continue
        out.append((line, {k: v for k, v in value.items() if v is not None}))
    return out


def text_problem(value: Any, *, limit: int, allow_empty: bool = False) -> str | None:
    """Why a text value cannot be imported (not a string, empty, too long, a control character), or None."""
    if not isinstance(value, str):
        return f"a JSON {type(value).__name__}, not a string"
    if not value.strip() and not allow_empty:
        return "empty"
    if len(value) > limit:
        return f"{len(value):,} characters, more than {limit:,}"
    bad = CONTROL_CHARACTERS.search(value)  # CR is refused as a line end elsewhere
    if bad is not None:
        what = "an escape sequence" if bad.group() == "\x1b" else "a control character"
        return f"{what} (U+{ord(bad.group()):04X}) at character {bad.start() + 1:,}; remove it"
    return None


def label_problem(value: Any) -> str | None:
    """Why a name (candidate, worker, judge) cannot be imported, or None."""
    problem = text_problem(value, limit=MAX_LABEL_CHARS)
    if problem is None and value != value.strip():
        return f"{value!r} has leading or trailing space"
    return problem


def int_value(value: Any, low: int, high: int) -> int:
    """An integer in [low, high] from a CSV string or a JSON integer; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        n = value
    elif isinstance(value, str) and re.fullmatch(r"[0-9]+", value.strip()):
        n = int(value.strip())
    else:
        raise ValueError
    if not low <= n <= high:
        raise ValueError
    return n


@dataclass(frozen=True)
class ImportedOutput:
    """One output read from a file, for an imported candidate."""

    line: int
    run: int
    task: str
    mode: Mode
    candidate: str
    worker: str
    text: str
    assistance_text: str | None = None
    cut_off: bool = False

    def id(self, session: Session) -> str:
        return candidate_output_id(session, self.run, self.task, self.mode, self.candidate)


def _flag(value: Any) -> bool | None:
    """A true/false cell (CSV text or JSON bool; missing or empty: false); None when it is neither."""
    if value is None or value == "" or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    return None


def _candidate_problem(
    session: Session, candidate: str, mode: str, blinding: Blinding, checked: dict[str, str | None]
) -> str | None:
    if candidate not in session.imported_names:
        if candidate in {m.name for m in session.models} or candidate == PLAIN:
            return (
                f"{candidate!r} is a generated candidate of this session, not an imported one "
                '(declare it under [[candidates]] with source = "imported")'
            )
        known = ", ".join(sorted(session.imported_names)) or "none"
        return f"unknown candidate {candidate!r} (the session's imported candidates: {known})"
    spec = session.imported(candidate)
    if not getattr(spec, mode):
        return f"candidate {candidate!r} does not take part in {mode} ([[candidates]] {mode} = false)"
    if candidate not in checked:
        checked[candidate] = blinding_problem(candidate, blinding)
    return checked[candidate]


def _mode_run(
    session: Session, record: Mapping[str, Any], line: int, problems: Problems
) -> tuple[Mode | None, int | None]:
    mode = record.get("mode", "automation")
    if isinstance(mode, str) and mode.strip() == "":
        mode = "automation"
    if mode not in MODES:
        problems.add(line, "mode", f"{mode!r} is not automation or augmentation")
        mode = None
    run_value = record.get("run", 1)
    if isinstance(run_value, str) and run_value.strip() == "":
        run_value = 1
    try:
        run: int | None = int_value(run_value, 1, session.runs)
    except ValueError:
        problems.add(line, "run", f"{run_value!r} is not a run of this session (1 to {session.runs})")
        run = None
    return cast("Mode | None", mode), run


def read_outputs(
    path: Path, session: Session, blinding: Blinding, experts: Iterable[str] = ()
) -> tuple[list[ImportedOutput], set[str]]:
    """Read and check an outputs file (CSV or JSONL) against the session.

    Args:
        path: The file; columns task, candidate, text and optionally mode, run, worker,
            assistance_text.
        session: The session (its tasks, imported candidates, runs).
        blinding: The session's blinding (a candidate name must be masked in full).
        experts: Registered expert ids (an output written by one is stored as an expert's).

    Returns:
        The outputs in file order, and the expert ids among their workers.

    Raises:
        ImportFileError: listing every problem found (line and field); nothing is returned.
    """
    problems = Problems(str(path))
    records = read_records(path, OUTPUT_COLUMNS, OUTPUT_OPTIONAL, problems)
    out: list[ImportedOutput] = []
    seen: dict[tuple[str, str, str, int], int] = {}
    checked: dict[str, str | None] = {}
    expert_ids = set(experts)
    workers_expert: set[str] = set()
    for line, rec in records:
        before = problems.count
        task = rec["task"]
        if not isinstance(task, str) or task not in session.tasks:
            problems.add(
                line, "task", f"{task!r} is not a task of this session (its tasks: {', '.join(session.tasks)})"
            )
        mode, run = _mode_run(session, rec, line, problems)
        candidate = rec["candidate"]
        bad = label_problem(candidate)
        if bad is None:
            bad = _candidate_problem(session, candidate, mode or "automation", blinding, checked)
        if bad is not None:
            problems.add(line, "candidate", bad)
        text = rec["text"]
        bad = text_problem(text, limit=MAX_TEXT_CHARS)
        if bad is not None:
            problems.add(line, "text", bad)
        assistance = rec.get("assistance_text")
        if isinstance(assistance, str) and assistance == "":
            assistance = None
        if assistance is not None:
            bad = text_problem(assistance, limit=MAX_TEXT_CHARS)
            if bad is None and mode == "automation":
                bad = "given for an automation output (an assistance text belongs to augmentation)"
            if bad is not None:
                problems.add(line, "assistance_text", bad)
        worker = rec.get("worker", "")
        if worker == "":
            worker = candidate if mode == "automation" else "imported"
        bad = label_problem(worker)
        if bad is not None:
            problems.add(line, "worker", bad)
        cut_off = _flag(rec.get("cut_off"))
        if cut_off is None:
            problems.add(line, "cut_off", f"{rec.get('cut_off')!r} is not true or false")
        if problems.count != before:
            continue
        assert mode is not None and run is not None
        key = (task, candidate, mode, run)
        if key in seen:
            problems.add(
                line,
                "candidate",
                f"a second output of {candidate!r} for task {task!r}, {mode}, run {run} (also line {seen[key]})",
            )
            continue
        seen[key] = line
        if worker in expert_ids:
            workers_expert.add(worker)
        out.append(ImportedOutput(line, run, task, mode, candidate, worker, text, assistance, bool(cut_off)))
    if not out and not problems.count:
        problems.add(None, None, "no output in the file")
    problems.raise_if_any()
    return out, workers_expert


@dataclass(frozen=True)
class OutputsSummary:
    """What an import of outputs (and judgments) stored."""

    outputs: int
    inserted: int
    unchanged: int
    assistance: int
    comparisons: int
    """Comparisons new in the store."""
    comparisons_total: int
    """Comparisons the imported outputs take part in (new or already stored)."""
    judgments: ImportSummary | None = None


def _insert_outputs(
    c: Any, session: Session, outputs: Sequence[ImportedOutput], expert_workers: set[str], path: str
) -> tuple[int, int, int, set[tuple[int, str, str]]]:
    inserted = unchanged = assistance = 0
    tournaments: set[tuple[int, str, str]] = set()
    now = utc_now()
    for o in outputs:
        oid = o.id(session)
        aid = assistance_id(o.run, o.task, o.candidate) if o.assistance_text is not None else None
        tournaments.add((o.run, o.task, o.mode))
        row = c.execute(
            "SELECT o.text, o.worker, o.origin, a.text FROM outputs o LEFT JOIN assistance_texts a"
            " ON a.id = o.assistance_id WHERE o.id = ?",
            (oid,),
        ).fetchone()
        if row is not None:
            if tuple(row) != (o.text, o.worker, "imported", o.assistance_text):
                what = [
                    name
                    for name, stored, new in (
                        ("text", row[0], o.text),
                        ("worker", row[1], o.worker),
                        ("origin", row[2], "imported"),
                        ("assistance text", row[3], o.assistance_text),
                    )
                    if stored != new
                ]
                raise ImportConflictError(
                    f"{path} line {o.line}: the output of {o.candidate!r} for task {o.task!r}, {o.mode}, run {o.run} "
                    f"is already stored with a different {', '.join(what)}; an imported output cannot be replaced "
                    "(import into a new session). Nothing was imported."
                )
            unchanged += 1
            continue
        if aid is not None:
            c.execute(
                "INSERT INTO assistance_texts (id, run, task, assistant, text, call_key, created_at)"
                " VALUES (?, ?, ?, ?, ?, NULL, ?)",
                (aid, o.run, o.task, o.candidate, o.assistance_text, now),
            )
            assistance += 1
        c.execute(
            "INSERT INTO outputs (id, run, task, mode, candidate, worker, worker_kind, text, assistance_id,"
            " call_key, created_at, origin, cut_off) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, 'imported', ?)",
            (
                oid,
                o.run,
                o.task,
                o.mode,
                o.candidate,
                o.worker,
                "expert" if o.worker in expert_workers else "model",
                o.text,
                aid,
                now,
                int(o.cut_off),
            ),
        )
        inserted += 1
    return inserted, unchanged, assistance, tournaments


def _build_comparisons(c: Any, session: Session, tournaments: Iterable[tuple[int, str, str]]) -> tuple[int, int]:
    """Insert the round robin of each tournament among the candidates with a stored output; (new, total)."""
    new = total = 0
    for run, task, mode in sorted(tournaments):
        names = candidates_for(session, cast(Mode, mode))
        ids = {n: candidate_output_id(session, run, task, mode, n) for n in names}
        stored = {
            r[0]
            for r in c.execute(
                f"SELECT id FROM outputs WHERE id IN ({', '.join('?' * len(ids))})", tuple(ids.values())
            ).fetchall()
        }
        for comp in comparisons(session, run, task, cast(Mode, mode)):
            a, b = ids[comp.candidate_a], ids[comp.candidate_b]
            if a not in stored or b not in stored:
                continue
            total += 1
            cur = c.execute(
                "INSERT OR IGNORE INTO comparisons (id, run, task, mode, candidate_a, candidate_b, output_a, output_b)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (comp.id, run, task, mode, comp.candidate_a, comp.candidate_b, a, b),
            )
            new += cur.rowcount
    return new, total


def store_imported(
    store: Store,
    session: Session,
    outputs: Sequence[ImportedOutput],
    *,
    path: str,
    expert_workers: set[str] | None = None,
    judgments: Sequence[JudgmentRecord] = (),
    new_experts: Sequence[ExpertSpec] = (),
    tournaments: Iterable[tuple[int, str, str]] = (),
) -> OutputsSummary:
    """Store outputs, the comparisons built from them and judgments in one BEGIN IMMEDIATE transaction.

    Raises:
        ImportConflictError: an output or judgment differs from the stored one (nothing written).
    """
    with store.write() as c:
        inserted, unchanged, assistance, touched = _insert_outputs(c, session, outputs, expert_workers or set(), path)
        new, total = _build_comparisons(c, session, touched | set(tournaments))
        summary = store_judgments_in(c, judgments, new_experts) if (judgments or new_experts) else None
    return OutputsSummary(len(outputs), inserted, unchanged, assistance, new, total, summary)


def import_outputs(
    store: Store, session: Session, outputs: Sequence[ImportedOutput], expert_workers: set[str], *, path: Path
) -> OutputsSummary:
    """Store outputs checked by `read_outputs` with their round-robin comparisons (`store_imported`)."""
    return store_imported(store, session, outputs, path=str(path), expert_workers=expert_workers)


# -- winner-only judgments ----------------------------------------------------------------------


def _conversation_text(value: Any, turn: int) -> str | None:
    """The answer of turn `turn` in a conversation (MT-Bench: a list of {role, content}), or the text itself."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        answers = [m.get("content") for m in value if isinstance(m, dict) and m.get("role") == "assistant"]
        if len(answers) >= turn and isinstance(answers[turn - 1], str):
            return cast(str, answers[turn - 1])
    return None


@dataclass(frozen=True)
class WinnerFile:
    """What a winner-only judgment file holds, checked: the judgments and the outputs it brings."""

    judgments: list[JudgmentRecord]
    outputs: list[ImportedOutput]
    tournaments: set[tuple[int, str, str]]
    """(run, task, mode) of every judgment: their comparisons are built where missing."""
    stored_conversations: int = 0
    """Outputs the file's conversations give that were stored already (with the same text)."""


def read_winner_judgments(
    path: Path,
    stored_outputs: Mapping[str, str],
    stored: Mapping[str, ComparisonRecord],
    rules: ImportRules,
    blinding: Blinding,
    *,
    task_template: str = "mtbench_{question_id}_t{turn}",
) -> WinnerFile:
    """Read and check a winner-only judgment file (the documented CSV/JSONL, or MT-Bench's layout).

    Columns: `task` (or MT-Bench's `question_id`, turned into a task id by `task_template`),
    `model_a`, `model_b` (the options in the order shown), `winner` (model_a, model_b, tie,
    tie (bothbad), or a candidate's name), `judge`; optionally `turn` (default 1), `run`, `mode`,
    `judge_kind` (default: llm for one of the session's LLM judges, expert otherwise),
    `rationale`, and `conversation_a`/`conversation_b` (the texts judged: a string, or MT-Bench's
    list of messages, of which the assistant's answer of the turn is taken).

    The comparison a row refers to must be stored, or be buildable: both outputs stored, or
    given in the row for an imported candidate. Rules as for any import (`ImportRules`): an
    eligible LLM judge of the session or a registered expert, ties only where allowed.

    Args:
        path: The file.
        stored_outputs: Text of every stored output, by id.
        stored: The stored comparisons, by id.
        rules: Who may have judged what.
        blinding: The session's blinding (an imported candidate's name must be masked in full).
        task_template: The task id of an MT-Bench row, from its `question_id` and `turn`.

    Raises:
        ImportFileError: listing every problem (line and field); nothing is returned.
    """
    session = rules.session
    try:
        task_template.format(question_id="81", turn=1)
    except (KeyError, IndexError, ValueError, AttributeError) as exc:
        raise ImportFileError(
            f"--task-template {task_template!r}: not a template of {{question_id}} and {{turn}} ({exc!r}); "
            "nothing was imported"
        ) from None
    problems = Problems(str(path))
    has_task = _header_has(path, "task")
    required = ("task" if has_task else "question_id", "model_a", "model_b", "winner", "judge")
    optional = WINNER_OPTIONAL + (("question_id",) if has_task else ())
    records = read_records(path, required, optional, problems)
    stored_comparisons = dict(stored)
    judges = {j.name for j in session.judges}
    checked: dict[str, str | None] = {}
    new_outputs: dict[str, ImportedOutput] = {}
    already: set[str] = set()
    judgments: list[JudgmentRecord] = []
    keys: dict[tuple[str, str, int], int] = {}
    for line, rec in records:
        before = problems.count
        turn_value = rec.get("turn", 1)
        try:
            turn = int_value(turn_value if turn_value != "" else 1, 1, 100)
        except ValueError:
            problems.add(line, "turn", f"{turn_value!r} is not a turn number (1, 2, ...)")
            continue
        if has_task:
            task = rec["task"]
            if not isinstance(task, str):
                problems.add(line, "task", f"a JSON {type(task).__name__}, not a string")
                continue
        else:
            qid = rec["question_id"]
            if isinstance(qid, bool) or not isinstance(qid, (int, str)) or not str(qid).strip():
                problems.add(line, "question_id", f"{qid!r} is not a question id")
                continue
            task = task_template.format(question_id=str(qid).strip(), turn=turn)
        if task not in session.tasks:
            made = "" if has_task else f" (made from question_id and turn by --task-template {task_template!r})"
            problems.add(
                line,
                "task" if has_task else "question_id",
                f"{task!r}{made} is not a task of this session (its tasks: {', '.join(session.tasks)})",
            )
        mode, run = _mode_run(session, rec, line, problems)
        names: list[str] = []
        for column in ("model_a", "model_b"):
            name = rec[column]
            bad = label_problem(name)
            if bad is None and mode is not None and name not in candidates_for(session, mode):
                known = ", ".join(candidates_for(session, mode)) or "none"
                article = "an" if mode[0] in "aeiou" else "a"
                bad = f"{name!r} is not {article} {mode} candidate of this session (its candidates: {known})"
            if bad is None and name in session.imported_names:
                bad = _candidate_problem(session, name, mode or "automation", blinding, checked)
            if bad is not None:
                problems.add(line, column, bad)
            names.append(name if isinstance(name, str) else "")
        if names[0] == names[1] and names[0]:
            problems.add(line, "model_b", "the same candidate as model_a")
        judge = rec["judge"]
        bad = label_problem(judge)
        if bad is not None:
            problems.add(line, "judge", bad)
        kind = rec.get("judge_kind", "") or ("llm" if isinstance(judge, str) and judge in judges else "expert")
        if kind not in ("llm", "expert"):
            problems.add(line, "judge_kind", f"{kind!r} is not llm or expert")
        winner_text = rec["winner"]
        winner: str | None = None
        if isinstance(winner_text, str) and winner_text.strip() in WINNER_LABELS:
            pick = WINNER_LABELS[winner_text.strip()]
            winner = "tie" if pick == 2 else names[pick]
        elif isinstance(winner_text, str) and winner_text.strip() in names and winner_text.strip():
            winner = winner_text.strip()
        else:
            problems.add(
                line,
                "winner",
                f"{winner_text!r} is not one of {', '.join(WINNER_LABELS)} (or the name of model_a or model_b); "
                "a label outside this set is refused, never read as a tie",
            )
        rationale = rec.get("rationale")
        if rationale == "":
            rationale = None
        if rationale is not None:
            bad = text_problem(rationale, limit=MAX_TEXT_CHARS)
            if bad is not None:
                problems.add(line, "rationale", bad)
        if problems.count != before:
            continue
        assert mode is not None and run is not None
        a, b = sorted(names)
        comp = Comparison(run, task, mode, a, b)
        # The texts of the row (MT-Bench's conversations) become imported outputs where none is stored.
        for column, name in (("conversation_a", names[0]), ("conversation_b", names[1])):
            oid = candidate_output_id(session, run, task, mode, name)
            value = rec.get(column)
            if value is None:
                if oid not in stored_outputs and oid not in new_outputs:
                    problems.add(
                        line,
                        column,
                        f"no output of {name!r} for task {task!r}, {mode}, run {run} is stored and the row gives "
                        "none (import outputs first, or give the conversations)",
                    )
                continue
            text = _conversation_text(value, turn)
            bad = (
                f"has no assistant answer for turn {turn}" if text is None else text_problem(text, limit=MAX_TEXT_CHARS)
            )
            if bad is not None:
                problems.add(line, column, bad)
                continue
            assert text is not None
            known_text = stored_outputs.get(oid, new_outputs[oid].text if oid in new_outputs else None)
            if oid in stored_outputs:
                already.add(oid)
            if known_text is not None:
                if known_text != text:
                    where = "stored" if oid in stored_outputs else f"line {new_outputs[oid].line}"
                    problems.add(line, column, f"another text for {name!r} on task {task!r} than the one {where}")
                continue
            if name not in session.imported_names:
                problems.add(
                    line,
                    column,
                    f"{name!r} is a generated candidate with no stored output for task {task!r}, run {run}: "
                    "run the session first (only imported candidates take their text from the file)",
                )
                continue
            new_outputs[oid] = ImportedOutput(
                line, run, task, mode, name, name if mode == "automation" else "imported", text
            )
        if problems.count != before:
            continue
        if comp.id not in stored_comparisons:
            ids = {n: candidate_output_id(session, run, task, mode, n) for n in (a, b)}
            stored_comparisons[comp.id] = ComparisonRecord(comp.id, run, task, mode, a, b, ids[a], ids[b])
        record_comp = stored_comparisons[comp.id]
        for column, message in rules.problems(record_comp, kind, judge, "", 0, winner):
            problems.add(line, column, message)
        if problems.count != before:
            continue
        key = (comp.id, judge, 0)
        if key in keys:
            problems.add(
                line,
                "judge",
                f"{judge!r} judged {names[0]} vs {names[1]} on task {task!r} twice (also line {keys[key]})",
            )
            continue
        keys[key] = line
        family = session.judge(judge).family if kind == "llm" else None
        judgments.append(
            JudgmentRecord(
                comparison_id=comp.id,
                judge=judge,
                judge_kind="llm" if kind == "llm" else "expert",
                judge_family=family,
                presentation=0,
                option1=names[0],
                option2=names[1],
                winner=winner,
                option1_mean=None,
                option2_mean=None,
                valid=True,
                invalid_reason=None,
                rationale=rationale,
                call_key=None,
                attempts=1,
            )
        )
    if not judgments and not problems.count:
        problems.add(None, None, "no judgment in the file")
    problems.raise_if_any()
    tournaments = {(c.run, c.task, c.mode) for c in (stored_comparisons[j.comparison_id] for j in judgments)}
    return WinnerFile(judgments, list(new_outputs.values()), tournaments, len(already))


def _header_has(path: Path, column: str) -> bool:
    """Whether the file's first record names `column` (CSV header or first JSONL object); False when unreadable."""
    try:
        with Path(path).open(encoding="utf-8", newline="") as fh:
            first = fh.readline()
    except (OSError, UnicodeDecodeError):
        return False
    if Path(path).suffix.lower() == ".csv":
        return column in next(csv.reader([first]), [])
    try:
        value = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and column in value


def stored_texts(store: Store) -> dict[str, str]:
    """Text of every stored output, by id (what a winner-only file's conversations are checked against)."""
    return {r["id"]: r["text"] for r in store.read("SELECT id, text FROM outputs")}


def import_winner_judgments(store: Store, found: WinnerFile, rules: ImportRules, *, path: Path) -> OutputsSummary:
    """Store a checked winner-only judgment file with the outputs and comparisons it needs, all at once."""
    new_experts = rules.new_experts()
    summary = store_imported(
        store,
        rules.session,
        found.outputs,
        path=str(path),
        judgments=found.judgments,
        new_experts=new_experts,
        tournaments=found.tournaments,
    )
    return replace(summary, unchanged=summary.unchanged + found.stored_conversations)
