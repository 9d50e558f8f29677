"""Provides the CSV export of a session: judgments.csv, scores.csv, outputs.csv."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from centaur_tui.store import Store

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


def export_session(store: Store, out_dir: Path) -> dict[str, int]:
    """Write the three CSV files of a session into `out_dir`; returns rows written per file.

    judgments.csv holds every judgment, valid or not (option1/option2 in presented order;
    winner is a candidate name or `tie`, empty when invalid).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    return {
        "judgments.csv": _write(out_dir / "judgments.csv", JUDGMENT_COLUMNS, store.judgment_rows(), bools=("valid",)),
        "scores.csv": _write(out_dir / "scores.csv", SCORE_COLUMNS, store.score_rows()),
        "outputs.csv": _write(out_dir / "outputs.csv", OUTPUT_COLUMNS, store.output_rows()),
    }
