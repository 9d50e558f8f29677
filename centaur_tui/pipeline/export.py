"""Provides the CSV export of a session: judgments.csv, scores.csv, outputs.csv, and session.json naming the session.

session.json carries the session's name, a fingerprint of its database's random id, the SHA-256
of each CSV and an HMAC over them keyed with the session's secret (issue 23), so `centaur import`
refuses the files of another session, and a session.json copied beside other files.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from centaur_tui.domain.plan import MODES
from centaur_tui.domain.records import OPTIONAL_JUDGMENT_COLUMNS, REQUIRED_JUDGMENT_COLUMNS, SCORE_COLUMNS
from centaur_tui.formats.export import file_digests
from centaur_tui.store import MANIFEST, Store, batched_judgment_ids, export_manifest

# The columns `centaur import` reads, in that order: the documented ones, then those that make an
# export re-import exactly (judgment_id, presentation, revision, attempts, seconds; batch: the
# judge call was answered in a provider batch). One list, so export and import cannot drift.
JUDGMENT_COLUMNS = (*REQUIRED_JUDGMENT_COLUMNS, *OPTIONAL_JUDGMENT_COLUMNS)
OUTPUT_COLUMNS = ("run", "task", "mode", "candidate", "worker", "text", "assistance_text", "output_id", "cut_off")
"""cut_off: the provider cut the text off at max_tokens (true/false; `generation.on_truncated`)."""


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    return value


def _write(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]], bools: tuple[str, ...] = ()) -> int:
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


def _key(row: dict[str, Any], columns: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple((_MODE_ORDER.get(row[c], len(_MODE_ORDER)), row[c]) if c == "mode" else row[c] for c in columns)


def stable_rows(
    judgments: list[dict[str, Any]], scores: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Judgments in `JUDGMENT_KEY` order, numbered 1..n as `judgment_id`, and their scores in that order.

    The store's row ids follow the order in which judge calls completed, which changes from run
    to run (concurrency, latency); numbering the export's rows by a key of their content makes
    identical data give byte-identical files. A score keeps its place within its judgment
    (the rubric order it was stored in; `scores` come in the store's row order).
    """
    ordered = sorted(judgments, key=lambda r: _key(r, JUDGMENT_KEY))
    number = {r["judgment_id"]: i for i, r in enumerate(ordered, start=1)}
    out_judgments = [{**r, "judgment_id": number[r["judgment_id"]]} for r in ordered]
    # sorted() is stable: within one judgment, the scores keep their stored order.
    out_scores = sorted(
        ({**r, "judgment_id": number[r["judgment_id"]]} for r in scores), key=lambda r: r["judgment_id"]
    )
    return out_judgments, out_scores


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
    rows = [{**r, "batch": r["judgment_id"] in batched} for r in store.judgment_rows()]
    judgments, scores = stable_rows(rows, store.score_rows())
    outputs = sorted(store.output_rows(), key=lambda r: _key(r, OUTPUT_KEY))
    written = {
        "judgments.csv": _write(out_dir / "judgments.csv", JUDGMENT_COLUMNS, judgments, bools=("valid", "batch")),
        "scores.csv": _write(out_dir / "scores.csv", SCORE_COLUMNS, scores),
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
