"""Provides the CSV export of a session: judgments.csv, scores.csv, outputs.csv, and session.json naming the session.

session.json carries the session's name and a fingerprint of its database's random id, so
`centaur import` can refuse the files of another session whose comparison ids happen to match.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from centaur_tui.store import MANIFEST, Store, export_manifest

JUDGMENT_COLUMNS = (
    "run", "task", "mode", "comparison_id", "judge", "judge_kind", "judge_family", "option1", "option2",
    "winner", "option1_mean", "option2_mean", "valid", "invalid_reason", "rationale",
    # Beyond the documented columns, so an export re-imports exactly:
    "judgment_id", "presentation", "revision", "attempts", "seconds",
)
SCORE_COLUMNS = ("comparison_id", "judge", "candidate", "dimension", "dimension_kind", "score", "judgment_id")
OUTPUT_COLUMNS = ("run", "task", "mode", "candidate", "worker", "text", "assistance_text", "output_id")


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
            writer.writerow(
                ("true" if row[c] else "false") if c in bools else _cell(row[c]) for c in columns
            )
    tmp.replace(path)  # never leave a half-written file under the final name
    return len(rows)


def export_session(store: Store, out_dir: Path, session_name: str | None = None) -> dict[str, int]:
    """Write the three CSV files of a session into `out_dir`; returns rows written per file.

    judgments.csv holds every judgment, valid or not (option1/option2 in presented order;
    winner is a candidate name or `tie`, empty when invalid). With `session_name`,
    session.json is written last, so a folder with it holds a complete export.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {
        "judgments.csv": _write(out_dir / "judgments.csv", JUDGMENT_COLUMNS, store.judgment_rows(), bools=("valid",)),
        "scores.csv": _write(out_dir / "scores.csv", SCORE_COLUMNS, store.score_rows()),
        "outputs.csv": _write(out_dir / "outputs.csv", OUTPUT_COLUMNS, store.output_rows()),
    }
    if session_name is not None:
        tmp = out_dir / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(export_manifest(store, session_name, written), indent=2) + "\n", encoding="utf-8")
        tmp.replace(out_dir / MANIFEST)
    return written
