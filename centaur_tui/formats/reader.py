"""Provides the one reader of CSV and JSONL files every import uses: streamed, bounded, the same rules for all.

Rules (issue 23): a file is opened without following a FIFO or a device (O_NONBLOCK, then fstat
must show a regular file: a FIFO path is refused at once instead of waiting for a writer); it is
read record by record, never whole, so memory stays near the largest record; UTF-8 with or
without a byte-order mark, LF or CRLF line ends, alike in CSV and JSONL (a CRLF inside a quoted
CSV cell becomes LF); a record (CSV row or JSONL line) is at most `Limits.record_bytes`; JSON is
parsed with limits on nesting depth and number length, refusing duplicated keys, non-finite
numbers and lone surrogates; columns (or JSON fields) a file documents nowhere are ignored and
counted, not refused. Every problem names the file, the line and the field.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

from centaur_tui.domain.errors import ImportFileError
from centaur_tui.formats.problems import Problems, refusal


@dataclass(frozen=True)
class Limits:
    """What one file may hold; the defaults fit every documented format with a wide margin."""

    file_bytes: int = 512 * 1024 * 1024
    """Largest file (512 MiB): MT-Bench's 5,755 public judgments with both conversations are 26 MB."""
    record_bytes: int = 16 * 1024 * 1024
    """Largest CSV record or JSONL line: two 200,000-character texts with JSON escapes fit."""
    depth: int = 32
    """Deepest JSON nesting: MT-Bench's conversations (a list of message objects) are 3 deep."""
    number_chars: int = 40
    """Longest JSON number literal (a 64-bit integer has 20 characters; a 5,000-digit one is refused)."""


LIMITS = Limits()


class Record(NamedTuple):
    """One record of a file: the line it starts on, its number among the records (CSV) and its values."""

    line: int
    row: int
    values: dict[str, Any]


class JsonError(ValueError):
    """JSON that breaks a limit or is malformed; `field` is the top-level key it was found under, if any."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


_FILE_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def open_regular(path: Path, limits: Limits = LIMITS) -> IO[bytes]:
    """Open a file for reading only if it is a regular file of at most `limits.file_bytes`.

    O_NONBLOCK makes opening a FIFO return at once (a blocking open waits for a writer forever,
    and SIGTERM did not end it); fstat on the opened descriptor then decides, so a path swapped
    between a check and the open cannot slip through.

    Raises:
        ImportFileError: missing, unreadable, not a regular file, or too large.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise refusal(path, "file not found") from None
    except OSError as exc:
        raise refusal(path, f"cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _FILE_KINDS if test(info.st_mode)), "not a regular file")
            raise refusal(path, f"{kind}, not a regular file; only files are read")
        if info.st_size > limits.file_bytes:
            raise refusal(path, f"{info.st_size:,} bytes, larger than the {limits.file_bytes:,} an import reads")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def file_format(path: Path) -> str:
    """`csv` or `jsonl`, from the file name; ImportFileError for any other extension."""
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    raise refusal(path, f"unknown format {suffix or '(no extension)'!r}: name the file .csv or .jsonl")


def read_records(
    path: Path,
    required: Sequence[str],
    optional: Sequence[str],
    problems: Problems,
    *,
    limits: Limits = LIMITS,
) -> Iterator[Record]:
    """Every record of a CSV or JSONL file, streamed, after the checks every import shares.

    A CSV record's values are strings (its line is the line it starts on); a JSONL record's are
    JSON values, null being absent. A record with a missing column, the wrong number of cells or
    malformed JSON is a problem of its line and is not yielded. Undocumented columns are left out
    and counted in `problems.ignored`.

    Raises:
        ImportFileError: the file cannot be read at all (see `open_regular`), is UTF-16, has a
            malformed header, or is malformed CSV.
    """
    kind = file_format(path)
    with open_regular(path, limits) as fh:
        head = fh.read(2)
        if head in (b"\xff\xfe", b"\xfe\xff"):
            raise refusal(path, "not UTF-8 text but UTF-16 (byte-order mark); save it as UTF-8")
        fh.seek(0)
        if kind == "csv":
            yield from _csv_records(fh, path, required, optional, problems, limits)
        else:
            yield from _jsonl_records(fh, required, optional, problems, limits)


def _check_header(path: Path, header: list[str], required: Sequence[str]) -> None:
    missing = [c for c in required if c not in header]
    dupes = sorted({c for c in header if header.count(c) > 1})
    bad = []
    if missing:
        bad.append(f"missing column(s): {', '.join(missing)}")
    if dupes:
        bad.append(f"duplicate column(s): {', '.join(dupes)}")
    if bad:
        raise refusal(path, "line 1 (header): " + "; ".join(bad))


def _csv_records(
    fh: IO[bytes], path: Path, required: Sequence[str], optional: Sequence[str], problems: Problems, limits: Limits
) -> Iterator[Record]:
    text = _decoded_lines(fh, path, limits)
    # The csv module refuses fields over 131,072 characters by default; records are bounded by
    # `limits.record_bytes` instead (each column checks its own length). The limit is process-wide:
    # it is raised while this file is read and restored after.
    previous = csv.field_size_limit(limits.record_bytes)
    reader = csv.reader(text, strict=True)
    header: list[str] | None = None
    start = row = 0
    try:
        header = next(reader, None)
        if header is None:
            raise refusal(path, "empty file (expected a header line)")
        _check_header(path, header, required)
        known = set(required) | set(optional)
        keep = [(i, name) for i, name in enumerate(header) if name in known]
        extra = [name for name in header if name not in known]
        start, row = reader.line_num + 1, 0
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not cells:
                continue
            row += 1
            if len(cells) != len(header):
                problems.add(line, None, f"{len(cells)} cell(s) but the header has {len(header)} column(s)", row=row)
                continue
            problems.ignore(extra)
            yield Record(line, row, {name: _lf(cells[i]) for i, name in keep})
    except csv.Error as exc:
        where = f"row {row + 1} (line {start})" if header is not None else "line 1 (header)"
        raise refusal(path, f"{where}: malformed CSV, read to line {reader.line_num} ({exc})") from None
    finally:
        csv.field_size_limit(previous)


def _decoded_lines(fh: IO[bytes], path: Path, limits: Limits) -> Iterator[str]:
    """The file's lines as text, line ends kept (the csv module reads CRLF itself, so a quoted cell keeps its breaks).

    Decoded one line at a time, so a byte that is not UTF-8 is named by its line; a spreadsheet's
    "CSV UTF-8" starts with a byte-order mark, which is dropped.
    """
    line = 0
    while raw := fh.readline(limits.record_bytes + 1):
        line += 1
        if len(raw) > limits.record_bytes:
            raise refusal(path, f"line {line} is longer than {limits.record_bytes:,} bytes")
        if line == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise refusal(
                path, f"line {line}: not UTF-8 text ({exc.reason} at byte {exc.start + 1:,} of the line)"
            ) from None


def _lf(cell: str) -> str:
    """A cell with CRLF line breaks as LF (a CRLF file writes its multi-line cells so)."""
    return cell.replace("\r\n", "\n") if "\r" in cell else cell


def _jsonl_records(
    fh: IO[bytes], required: Sequence[str], optional: Sequence[str], problems: Problems, limits: Limits
) -> Iterator[Record]:
    known = set(required) | set(optional)
    line = 0
    while raw := fh.readline(limits.record_bytes + 1):
        line += 1
        if len(raw) > limits.record_bytes and not raw.endswith(b"\n"):
            problems.add(line, None, f"longer than {limits.record_bytes:,} bytes (one record per line)")
            _skip_line(fh)
            continue
        if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if raw.isspace():
            continue
        # The line end (LF or CRLF) stays: JSON reads it as whitespace, and no copy of the line is made.
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.add(line, None, f"not UTF-8 text ({exc.reason} at byte {exc.start + 1:,} of the line)")
            continue
        del raw  # the line's bytes are dropped before its JSON is built: about 2x a text at the peak
        try:
            value = loads(text, limits)
        except JsonError as exc:
            problems.add(line, exc.field, str(exc))
            continue
        del text
        if not isinstance(value, dict):
            problems.add(line, None, f"a JSON {type(value).__name__}, not an object")
            continue
        missing = [c for c in required if value.get(c) is None]  # null is an absent value
        if missing:
            problems.add(line, ", ".join(missing), "missing")
            continue
        problems.ignore([c for c in value if c not in known])
        yield Record(line, line, {k: v for k, v in value.items() if v is not None and k in known})


def _skip_line(fh: IO[bytes]) -> None:
    """Read past the end of an over-long line, in bounded chunks."""
    while chunk := fh.readline(1024 * 1024):
        if chunk.endswith(b"\n"):
            return


_SURROGATE = re.compile("[\ud800-\udfff]")


def loads(text: str, limits: Limits = LIMITS) -> Any:
    """Parse JSON within `limits`: depth, number length, finite numbers, unique keys, no lone surrogate.

    Raises:
        JsonError: naming what broke (and the top-level key it was under, when there is one).
    """

    def number(literal: str) -> Any:
        if len(literal) > limits.number_chars:
            raise JsonError(f"a number of {len(literal):,} characters (at most {limits.number_chars})")
        value = float(literal) if any(c in literal for c in ".eE") else int(literal)
        if isinstance(value, float) and not math.isfinite(value):
            raise JsonError(f"{literal} is out of range (not a finite number)")
        return value

    def constant(name: str) -> Any:
        raise JsonError(f"{name} is not a number JSON allows")

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise JsonError(f"key {key[:40]!r} appears twice in one object (which value is meant?)")
            out[key] = value
        return out

    try:
        value = json.loads(
            text, object_pairs_hook=unique, parse_int=number, parse_float=number, parse_constant=constant
        )
    except JsonError:
        raise
    except RecursionError:
        raise JsonError(f"nested deeper than {limits.depth} levels") from None
    except json.JSONDecodeError as exc:
        raise JsonError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    _check_tree(value, limits.depth)
    return value


def _check_tree(value: Any, max_depth: int) -> None:
    """Depth and lone surrogates of a parsed JSON value, without recursion."""
    stack: list[tuple[Any, int, str | None]] = [(value, 1, None)]
    while stack:
        node, depth, top = stack.pop()
        if isinstance(node, str):
            bad = _SURROGATE.search(node)
            if bad is not None:
                raise JsonError(
                    f"a lone surrogate (U+{ord(bad.group()):04X}) at character {bad.start() + 1:,}: not Unicode text",
                    top,
                )
            continue
        if not isinstance(node, (dict, list)):
            continue
        if depth > max_depth:
            raise JsonError(f"nested deeper than {max_depth} levels", top)
        if isinstance(node, dict):
            for key, item in node.items():
                where = key if depth == 1 else top
                stack.append((key, depth + 1, where))
                stack.append((item, depth + 1, where))
        else:
            stack.extend((item, depth + 1, top) for item in node)


def peek_columns(path: Path, limits: Limits = LIMITS) -> set[str]:
    """The columns a file's first record names (CSV header, or the keys of the first JSONL object).

    Empty when the file cannot be read: reading it in full then reports why.
    """
    try:
        kind = file_format(path)
        with open_regular(path, limits) as fh:
            if kind == "csv":
                first = fh.readline(limits.record_bytes).removeprefix(b"\xef\xbb\xbf").decode("utf-8")
                return set(next(csv.reader([first]), []))
            while raw := fh.readline(limits.record_bytes):
                if raw.strip():
                    value = loads(raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8"), limits)
                    return set(value) if isinstance(value, dict) else set()
    except (ImportFileError, ValueError, OSError, csv.Error):
        return set()  # the full read names the problem
    return set()
