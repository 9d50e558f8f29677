"""Provides the human-worker arm's statistics: which assistant helps human workers most, and productivity.

Inputs are the report document (`build_report(...).doc`, whose `modes` hold an entry for the
human arm's mode `human_augmentation` once `centaur judge-work` has judged it) and the
productivity rows of the submitted deliverables (`WorkStore.productivity_rows()`).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
from scipy.stats import spearmanr

from centaur_tui.stats.common import json_value

HUMAN_MODE = "human_augmentation"
MODEL_MODE = "augmentation"
MEASURES = ("seconds", "edits", "pastes", "words", "characters")


def _overall(doc: dict[str, Any], mode: str) -> dict[str, dict[str, Any]]:
    for m in doc.get("modes", []):
        if m["mode"] == mode:
            return {r["candidate"]: r for r in m["overall"]}
    return {}


def assistant_rankings(doc: dict[str, Any]) -> dict[str, Any]:
    """Conditions ranked for human workers next to the worker model, with their Spearman correlation.

    Returns:
        `rows` (condition, human mean rank and overall rank, worker-model mean rank and overall
        rank), `spearman` over the conditions ranked in both (`rho`, `p`, `n`, `reason` when NaN).
    """
    human, model = _overall(doc, HUMAN_MODE), _overall(doc, MODEL_MODE)
    names = sorted(human, key=lambda c: (human[c].get("overall_rank") or math.inf, c))
    rows = [
        {
            "condition": c,
            "human_mean_rank": human[c].get("mean_rank"),
            "human_rank": human[c].get("overall_rank"),
            "model_mean_rank": model.get(c, {}).get("mean_rank"),
            "model_rank": model.get(c, {}).get("overall_rank"),
        }
        for c in names
    ]
    both = [r for r in rows if _finite(r["human_mean_rank"]) and _finite(r["model_mean_rank"])]
    spearman: dict[str, Any] = {"rho": math.nan, "p": math.nan, "n": len(both), "reason": None}
    if not human:
        spearman["reason"] = "the human-worker arm has no judged comparisons (run centaur judge-work)"
    elif len(both) < 3:
        spearman["reason"] = f"{len(both)} condition(s) ranked in both arms; at least 3 are needed"
    elif len({r["human_mean_rank"] for r in both}) < 2 or len({r["model_mean_rank"] for r in both}) < 2:
        spearman["reason"] = "one arm ranks every condition alike"
    else:
        result = spearmanr([r["human_mean_rank"] for r in both], [r["model_mean_rank"] for r in both])
        spearman["rho"], spearman["p"] = float(result.statistic), float(result.pvalue)
    return {"rows": rows, "spearman": spearman}


def _finite(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def productivity(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Per condition: deliverables, and mean and median of time on task, edits, pastes, words, characters."""
    columns = ["condition", "n"] + [f"{s}_{m}" for m in MEASURES for s in ("mean", "median")]
    if not rows:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(rows)
    grouped = frame.groupby("condition", sort=True)
    out = grouped.size().rename("n").to_frame()
    for m in MEASURES:
        out[f"mean_{m}"] = grouped[m].mean()
        out[f"median_{m}"] = grouped[m].median()
    return out.reset_index()[columns]


def human_arm_doc(doc: dict[str, Any], productivity_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The human-worker section as a JSON-ready dict: rankings, their correlation, productivity."""
    table = productivity(productivity_rows)
    return json_value(
        {
            "assistants": assistant_rankings(doc),
            "productivity": table.to_dict(orient="records"),
            "deliverables": int(table["n"].sum()) if len(table) else 0,
        }
    )


def human_arm_text(section: dict[str, Any]) -> str:
    """Plain-text rendering of `human_arm_doc` (`report.render.human_workers_text`)."""
    from centaur_tui.report.render import human_workers_text

    return human_workers_text({"human_workers": section})
