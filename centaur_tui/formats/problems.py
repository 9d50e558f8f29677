"""Provides the one problem collector of every file reader: problems named by file, line (or row) and field."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from centaur_tui.domain.errors import ImportFileError

MAX_PROBLEMS = 25
"""Problems listed in one error message; the rest are counted."""


def refusal(path: object, message: str) -> ImportFileError:
    """The error for a whole file that cannot be read (too large, not UTF-8, not a regular file, ...)."""
    return ImportFileError(f"{path}: {message}; nothing was imported")


@dataclass
class Problems:
    """Every problem of one file, raised all at once, and the columns the reader ignored.

    Args:
        file: The file's name as messages show it.
        field_word: "column" (the export format's CSVs) or "field".
    """

    file: str
    field_word: str = "field"
    limit: int = MAX_PROBLEMS
    """Problems listed; the rest are counted."""
    items: list[str] = field(default_factory=list)
    count: int = 0
    refused: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Records with a problem, per (judge, kind), for a judgment file's message."""
    rows: bool = False
    """Name a record by its row number too ("row 3 (line 4)"), as the export format's messages do."""
    ignored: dict[str, int] = field(default_factory=dict)
    """Columns (CSV) or fields (JSONL) not documented for this file: ignored, with the records holding them."""

    def add(self, line: int | None, column: str | None, message: str, *, row: int | None = None) -> None:
        """Record one problem at `line` (and CSV `row`, the record's number) in `column`."""
        self.count += 1
        if len(self.items) < self.limit:
            where = self.file
            if row is not None and self.rows:
                where += f" row {row} (line {line})"
            elif line is not None:
                where += f" line {line}"
            if column:
                where += f", {self.field_word} {column}"
            self.items.append(f"{where}: {message}")

    def add_at(self, where: str, column: str | None, message: str) -> None:
        """Record one problem of a place that is not a line ("item 3 (token ...) result"), in `column`."""
        self.count += 1
        if len(self.items) < self.limit:
            self.items.append(f"{where}: {self.field_word} {column}: {message}" if column else f"{where}: {message}")

    def ignore(self, columns: list[str]) -> None:
        """Count a record's undocumented columns (they are left out, not refused)."""
        for name in columns:
            self.ignored[name] = self.ignored.get(name, 0) + 1

    def raise_if_any(self, also: Problems | None = None) -> None:
        """Raise ImportFileError listing every problem (of this file and `also`), if there is one."""
        items = self.items + (also.items if also is not None else [])
        count = self.count + (also.count if also is not None else 0)
        refused = self.refused + (also.refused if also is not None else Counter())
        if not count:
            return
        shown = items[: self.limit]
        more = f"\n  ... and {count - len(shown)} more" if count > len(shown) else ""
        per_judge = ""
        if refused:
            per_judge = f"\nRefused rows of {self.file} per judge: " + ", ".join(
                f"{judge or '(empty)'} ({kind or '?'}) {n:,}" for (judge, kind), n in sorted(refused.items())
            )
        raise ImportFileError(f"{count} problem(s); nothing was imported:\n  " + "\n  ".join(shown) + more + per_judge)
