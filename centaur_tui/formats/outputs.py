"""Provides the reading of an outputs file (`centaur import-outputs`): CSV or JSONL, checked, then streamed.

The file is read twice and never held: the first pass checks every record and keeps, per
output, its place and a SHA-256 of its texts; the second (`output_texts`, while the store
writes) reads the texts again one record at a time and refuses the import if any differs from
the first pass (a file changed in between). Peak memory stays near twice the largest text,
not a multiple of the file (it was about 11x the file: 3.6 GB for 320 MiB).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from centaur_tui.domain.blinding import Blinding, blinding_problem
from centaur_tui.domain.errors import ImportFileError
from centaur_tui.domain.plan import MODES, Mode
from centaur_tui.domain.records import ImportedOutput
from centaur_tui.domain.session import PLAIN, Session
from centaur_tui.formats.problems import Problems
from centaur_tui.formats.reader import LIMITS, Limits, read_records
from centaur_tui.formats.text import MAX_TEXT_CHARS, brief, int_value, label_problem, text_problem

OUTPUT_COLUMNS = ("task", "candidate", "text")
OUTPUT_OPTIONAL = ("mode", "run", "worker", "assistance_text", "output_id", "cut_off")
"""Optional columns of an outputs file; `output_id` (in `centaur export`'s outputs.csv) is read and ignored:
ids are derived again, from (run, task, mode, candidate), in the session imported into. `cut_off` (true or
false; empty: false) says the text was cut off at a token limit: it is stored and handled as a generated
one would be (`generation.on_truncated`: judged marked, or excluded)."""


def _flag(value: object) -> bool | None:
    """A true/false cell (CSV text or JSON bool; missing or empty: false); None when it is neither."""
    if value is None or value == "" or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    return None


def candidate_problem(
    session: Session, candidate: str, mode: str, blinding: Blinding, checked: dict[str, str | None]
) -> str | None:
    """Why `candidate` cannot have imported outputs in `mode` (unknown, generated, not in the mode, not maskable)."""
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


def mode_and_run(
    session: Session, record: Mapping[str, Any], line: int, problems: Problems
) -> tuple[Mode | None, int | None]:
    """A record's mode (default automation) and run (default 1), each checked against the session."""
    mode = record.get("mode", "automation")
    if isinstance(mode, str) and mode.strip() == "":
        mode = "automation"
    if mode not in MODES:
        problems.add(line, "mode", f"{brief(mode)} is not automation or augmentation")
        mode = None
    run_value = record.get("run", 1)
    if isinstance(run_value, str) and run_value.strip() == "":
        run_value = 1
    try:
        run: int | None = int_value(run_value, 1, session.runs)
    except ValueError:
        problems.add(line, "run", f"{brief(run_value)} is not a run of this session (1 to {session.runs})")
        run = None
    return cast("Mode | None", mode), run


def _digest(text: str, assistance: str | None) -> str:
    """SHA-256 of the texts, encoded 64 KiB at a time (no second copy of a large text)."""
    h = hashlib.sha256()
    for part in (text, "\0", assistance) if assistance is not None else (text,):
        for i in range(0, len(part), 65536):
            h.update(part[i : i + 65536].encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass(frozen=True)
class OutputsFile:
    """An outputs file, checked: its outputs (texts not held: see `output_texts`), expert workers, ignored columns."""

    path: Path
    outputs: list[ImportedOutput]
    expert_workers: set[str]
    ignored: dict[str, int] = field(default_factory=dict)


def _texts(rec: Mapping[str, Any], mode: Mode | None, line: int, problems: Problems) -> tuple[Any, Any]:
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
    return text, assistance


def read_outputs(
    path: Path, session: Session, blinding: Blinding, experts: Iterable[str] = (), *, limits: Limits = LIMITS
) -> OutputsFile:
    """Read and check an outputs file (CSV or JSONL) against the session, without holding its texts.

    Args:
        path: The file; columns task, candidate, text and optionally mode, run, worker,
            assistance_text (any other column is ignored and counted).
        session: The session (its tasks, imported candidates, runs).
        blinding: The session's blinding (a candidate name must be masked in full).
        experts: Registered expert ids (an output written by one is stored as an expert's).
        limits: The reader's limits.

    Returns:
        The outputs in file order (text None, digest set), and the expert ids among their workers.

    Raises:
        ImportFileError: listing every problem found (line and field); nothing is returned.
    """
    problems = Problems(str(path))
    out: list[ImportedOutput] = []
    seen: dict[tuple[str, str, str, int], int] = {}
    checked: dict[str, str | None] = {}
    expert_ids = set(experts)
    workers_expert: set[str] = set()
    for line, _, rec in read_records(path, OUTPUT_COLUMNS, OUTPUT_OPTIONAL, problems, limits=limits):
        before = problems.count
        task = rec["task"]
        if not isinstance(task, str) or task not in session.tasks:
            problems.add(
                line,
                "task",
                f"{brief(task)} is not a task of this session (its tasks: {', '.join(session.tasks)})",
            )
        mode, run = mode_and_run(session, rec, line, problems)
        candidate = rec["candidate"]
        bad = label_problem(candidate) or candidate_problem(session, candidate, mode or "automation", blinding, checked)
        if bad is not None:
            problems.add(line, "candidate", bad)
        text, assistance = _texts(rec, mode, line, problems)
        worker = rec.get("worker", "")
        if worker == "":
            worker = candidate if mode == "automation" else "imported"
        bad = label_problem(worker)
        if bad is not None:
            problems.add(line, "worker", bad)
        cut_off = _flag(rec.get("cut_off"))
        if cut_off is None:
            problems.add(line, "cut_off", f"{brief(rec.get('cut_off'))} is not true or false")
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
        digest = _digest(text, assistance)
        out.append(ImportedOutput(line, run, task, mode, candidate, worker, None, None, digest, bool(cut_off)))
    if not out and not problems.count:
        problems.add(None, None, "no output in the file")
    problems.raise_if_any()
    return OutputsFile(Path(path), out, workers_expert, dict(problems.ignored))


def output_texts(found: OutputsFile, *, limits: Limits = LIMITS) -> Iterator[ImportedOutput]:
    """The outputs of a checked file with their texts, read again one record at a time.

    Raises:
        ImportFileError: the file changed since it was checked (a text, or the records themselves).
    """
    by_line = {o.line: o for o in found.outputs}
    problems = Problems(str(found.path))
    given = 0
    for line, _, rec in read_records(found.path, OUTPUT_COLUMNS, OUTPUT_OPTIONAL, problems, limits=limits):
        output = by_line.get(line)
        if output is None:
            continue
        text = rec["text"]
        assistance = rec.get("assistance_text") or None
        if not isinstance(text, str) or _digest(text, assistance) != output.digest:
            raise ImportFileError(
                f"{found.path} line {line}: the file changed while it was imported; nothing was imported"
            )
        given += 1
        yield ImportedOutput(
            output.line,
            output.run,
            output.task,
            output.mode,
            output.candidate,
            output.worker,
            text,
            assistance,
            output.digest,
            output.cut_off,
        )
    if given != len(found.outputs) or problems.count:
        raise ImportFileError(f"{found.path}: the file changed while it was imported; nothing was imported")
