"""Provides ReportCache: what the report process keeps between requests (its open store and last document).

The document is reused while nothing it reads has changed, so the overview can have it
computed ahead (a prefetch) and the results screen gets it at once; documents also go to the
disk cache (`services.report_disk_cache`) for later programs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from centaur_tui.domain.study import Study
from centaur_tui.report.document import ReportDocument
from centaur_tui.services import report as report_service
from centaur_tui.services.identity import check_identity
from centaur_tui.services.report_disk_cache import DiskCache


class ReportCache:
    """What the report process keeps: the last database open, its last document, and documents on disk.

    The document is reused while the store's fingerprint (`store.audit.fingerprint`: counts,
    highest judgment id, valid count, meta, submitted deliverables) and the session are
    unchanged, so the overview can have it computed ahead (a prefetch) and the results
    screen gets it at once; any new judgment, comparison or meta row means computing again.
    Documents are also written (JSON) to `report_disk_cache.cache_dir()`, keyed by the database file, the
    fingerprint, the session with its tasks' rubrics and `code_version()` (`DiskCache`), so a later
    program on unchanged data shows the results without computing them. The store stays
    open: its pages stay cached, and opening one writes its schema row.

    Args:
        directory: Where documents are kept on disk; None: nowhere.
    """

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._disk = DiskCache(directory)
        self._store: Any = None
        self._store_key: tuple[Any, ...] | None = None
        self._doc: ReportDocument | None = None
        self._doc_key: tuple[Any, ...] | None = None

    def _open(self, study: Study) -> Any:
        from centaur_tui.store import Store

        report_service.require_database(study)
        info = study.database.stat()
        key = (str(study.database.resolve()), info.st_dev, info.st_ino)
        if key != self._store_key:
            self.close()
            self._store, self._store_key = Store(study.database, readonly=True), key
        # Every time, not once per file: the session file may have changed since the last report.
        check_identity(study, self._store)
        return self._store

    def doc(self, study: Study) -> ReportDocument:
        """The session's report document: the kept one when nothing it reads has changed, else computed now."""
        from centaur_tui.store import fingerprint

        store = self._open(study)
        assert self._store_key is not None  # _open has just set it
        # Taken before the reads: a change during them makes the next request compute again.
        # The session and the rubrics of its tasks (task files may change between programs).
        design = json.dumps(
            [
                study.session.model_dump_json(),
                [d.id for d in study.universal.general_dimensions],
                {t: study.rubric(t).ids for t in study.tasks},
            ],
            sort_keys=True,
            default=list,
        )
        key = (self._store_key, design, fingerprint(store))
        if self._doc is not None and key == self._doc_key:
            return self._doc
        self._doc = self._doc_key = None
        disk_key = [list(key[0]), key[1], list(key[2])]
        doc = self._disk.load(disk_key)
        if doc is None:
            doc = report_service.session_report(study, store).document
            self._disk.save(disk_key, doc)
        self._doc, self._doc_key = doc, key
        return doc

    def close(self) -> None:
        """Close the kept store and forget the kept document."""
        if self._store is not None:
            self._store.close()
        self._store = self._store_key = self._doc = self._doc_key = None
