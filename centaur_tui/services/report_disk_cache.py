"""Provides the report documents kept on disk between programs, keyed by what a document depends on.

A later program on unchanged data shows the results without computing them. Files are JSON
(`ReportDocument.to_json`), one per key, written atomically; the CACHE_FILES newest are kept.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from centaur_tui.report.document import ReportDocument
from centaur_tui.settings import settings

CACHE_FILES = 20
"""Report documents kept on disk (the most recently written)."""
CACHE_FORMAT = 14
"""Part of every key; raised when the document's JSON changes shape. 2: the statistics build the typed document
directly and an absent optional section is None (`ABSENT_WHEN_NONE`), not an unset field. 3: `record` (the
chain head, issue 27). 4: `integrity` (signals of expert judging, issue 27). 5: `agreement_matrix` (issue 27).
6: `outcomes.spend` (spend billed without an answer, apart; issue 23). 7-13: `workers`, `professional`,
`calibration`, `active`, `exam`, `served`, `dialogue`, `blinding` and the PPR options' estimator and ties
(issues 25, 26, 28)."""
"""Part of every key; raised when the document's JSON changes shape. 2: the statistics build the typed document
directly and an absent optional section is None (`ABSENT_WHEN_NONE`), not an unset field. 3: `record` (the
chain head, issue 27). 4: `integrity` (signals of expert judging, issue 27). 5: `agreement_matrix` (issue 27).
6: `outcomes.spend` (spend billed without an answer, apart; issue 23). 7-12: `workers`, `professional`,
`calibration`, `active`, `exam`, `served`, `dialogue` and `blinding` (issues 25, 26, 28)."""


def cache_dir() -> Path | None:
    """Where report documents are kept between programs: $CENTAUR_CACHE_DIR (empty: nowhere), else the user's cache."""
    return settings().report_cache()


@functools.cache
def code_version() -> str:
    """A digest of the code a report document depends on (domain, report, statistics, store, the report services).

    Part of the disk cache's key: a document computed by other code is never reused.
    """
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(
        [
            *package.joinpath("domain").glob("*.py"),
            *package.joinpath("report").glob("*.py"),
            *package.joinpath("stats").glob("*.py"),
            *package.joinpath("store").glob("*.py"),
            *package.joinpath("services").glob("report*.py"),
        ]
    ):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class DiskCache:
    """Report documents in a directory, one JSON file per key.

    Args:
        directory: Where documents are kept; None: nowhere (every lookup misses).
    """

    def __init__(self, directory: Path | None) -> None:
        self.directory = directory

    def file(self, key: Any) -> Path | None:
        """The file of a key (JSON-serialisable with lists for tuples), or None without a directory."""
        if self.directory is None:
            return None
        text = json.dumps([key, code_version(), CACHE_FORMAT], default=list)
        return self.directory / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"

    def load(self, key: Any) -> ReportDocument | None:
        """The kept document of a key, or None (missing, unreadable, half-written or of another shape: compute)."""
        path = self.file(key)
        if path is None:
            return None
        try:
            return ReportDocument.from_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # pydantic's ValidationError is a ValueError
            return None

    def save(self, key: Any, document: ReportDocument) -> None:
        """Write the document (atomically), keep only the CACHE_FILES newest; a failure only costs a later compute."""
        path = self.file(key)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(document.to_json(indent=None), encoding="utf-8")
            os.replace(partial, path)
            kept = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in kept[CACHE_FILES:]:
                old.unlink(missing_ok=True)
        except (OSError, ValueError):
            pass
