"""Provides the CSV export of a session: judgments.csv, scores.csv, outputs.csv, and session.json naming the session.

session.json carries the session's name, a fingerprint of its database's random id, the SHA-256
of each CSV and an HMAC over them keyed with the session's secret (issue 23), so `centaur import`
refuses the files of another session, and a session.json copied beside other files.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from centaur_tui.domain.plan import MODES
from centaur_tui.domain.records import (
    OPTIONAL_JUDGMENT_COLUMNS,
    OUTPUT_ROW_FIELDS,
    REQUIRED_JUDGMENT_COLUMNS,
    SCORE_COLUMNS,
    JudgmentRow,
    OutputRow,
    ScoreRow,
)
from centaur_tui.formats.export import file_digests
from centaur_tui.store import MANIFEST, Store, batched_judgment_ids, export_manifest

# The columns `centaur import` reads, in that order: the documented ones, then those that make an
# export re-import exactly (judgment_id, presentation, revision, attempts, seconds; batch: the
# judge call was answered in a provider batch). One list, so export and import cannot drift.
JUDGMENT_COLUMNS = (*REQUIRED_JUDGMENT_COLUMNS, *OPTIONAL_JUDGMENT_COLUMNS)
OUTPUT_COLUMNS = OUTPUT_ROW_FIELDS
"""cut_off: the provider cut the text off at max_tokens (true/false; `generation.on_truncated`)."""


def _cell(value: object) -> object:
    if value is None:
        return ""
    return value


def _write(
    path: Path, columns: tuple[str, ...], rows: Sequence[Mapping[str, object]], bools: tuple[str, ...] = ()
) -> int:
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        for row in rows:
            writer.writerow(("true" if row[c] else "false") if c in bools else _cell(row[c]) for c in columns)
    tmp.replace(path)  # never leave a half-written file under the final name
    return len(rows)


JUDGMENT_KEY = ("run", "task", "mode", "comparison_id", "judge", "presentation", "revision")
"""The order of judgments.csv: the store's unique key of a judgment, led by its tournament."""
OUTPUT_KEY = ("run", "task", "mode", "candidate", "worker", "output_id")
"""The order of outputs.csv (output_id last: it is unique)."""
_MODE_ORDER = {mode: i for i, mode in enumerate(MODES)}  # automation first, as everywhere else


def _key(row: JudgmentRow | OutputRow, columns: tuple[str, ...]) -> tuple[Any, ...]:
    values = (getattr(row, c) for c in columns)
    return tuple(
        (_MODE_ORDER.get(v, len(_MODE_ORDER)), v) if c == "mode" else v for c, v in zip(columns, values, strict=True)
    )


def stable_rows(judgments: list[JudgmentRow], scores: list[ScoreRow]) -> tuple[list[JudgmentRow], list[ScoreRow]]:
    """Judgments in `JUDGMENT_KEY` order, numbered 1..n as `judgment_id`, and their scores in that order.

    The store's row ids follow the order in which judge calls completed, which changes from run
    to run (concurrency, latency); numbering the export's rows by a key of their content makes
    identical data give byte-identical files. A score keeps its place within its judgment
    (the rubric order it was stored in; `scores` come in the store's row order).
    """
    ordered = sorted(judgments, key=lambda r: _key(r, JUDGMENT_KEY))
    number = {r.judgment_id: i for i, r in enumerate(ordered, start=1)}
    out_judgments = [dataclasses.replace(r, judgment_id=number[r.judgment_id]) for r in ordered]
    # sorted() is stable: within one judgment, the scores keep their stored order.
    out_scores = sorted(
        (dataclasses.replace(r, judgment_id=number[r.judgment_id]) for r in scores), key=lambda r: r.judgment_id
    )
    return out_judgments, out_scores


def _identity(row: JudgmentRow) -> tuple[str, str, int, int]:
    """The store's unique key of a judgment (it survives `stable_rows`' renumbering)."""
    return (row.comparison_id, row.judge, row.presentation, row.revision)


def export_session(
    store: Store, out_dir: Path, session_name: str | None = None, *, stamp: bool = True
) -> dict[str, int]:
    """Write the three CSV files of a session into `out_dir`; returns rows written per file.

    judgments.csv holds every judgment, valid or not (option1/option2 in presented order;
    winner is a candidate name or `tie`, empty when invalid). Every file is ordered by a key of
    its content (`JUDGMENT_KEY`, `OUTPUT_KEY`), never by the order calls completed in, and
    `judgment_id` numbers the exported judgments in that order (`stable_rows`). With
    `session_name`, session.json is written last, so a folder with it holds a complete export;
    without `stamp` it holds no `exported_at` (the bundle's files are byte-identical when rebuilt).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    batched = batched_judgment_ids(store)
    stored = store.judgment_rows()
    batched_keys = {_identity(r) for r in stored if r.judgment_id in batched}
    judgments, scores = stable_rows(stored, store.score_rows())
    judgment_cells = [{**r.as_row(), "batch": _identity(r) in batched_keys} for r in judgments]
    outputs = [r.as_row() for r in sorted(store.output_rows(), key=lambda r: _key(r, OUTPUT_KEY))]
    written = {
        "judgments.csv": _write(out_dir / "judgments.csv", JUDGMENT_COLUMNS, judgment_cells, bools=("valid", "batch")),
        "scores.csv": _write(out_dir / "scores.csv", SCORE_COLUMNS, [r.as_row() for r in scores]),
        "outputs.csv": _write(out_dir / "outputs.csv", OUTPUT_COLUMNS, outputs, bools=("cut_off",)),
    }
    if session_name is not None:
        tmp = out_dir / (MANIFEST + ".tmp")
        tmp.write_text(
            json.dumps(
                export_manifest(store, session_name, written, file_digests(out_dir, tuple(written)), stamp=stamp),
                indent=2,
            )
            + "\n",
            encoding="utf-8",
        )
        tmp.replace(out_dir / MANIFEST)
    return written
