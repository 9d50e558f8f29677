"""Provides the human-worker arm's statistics: which assistant helps human workers most, and productivity.

Inputs are the report document (`build_report(...).document`, whose `modes` hold an entry for the
human arm's mode `human_augmentation` once `centaur judge-work` has judged it) and the
productivity rows of the submitted deliverables (`WorkStore.productivity_rows()`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from scipy.stats import spearmanr

from centaur_tui.domain.seat import ProductivityRecord
from centaur_tui.report.document import (
    HumanAssistantRow,
    HumanAssistants,
    HumanSpearman,
    HumanWorkersSection,
    OverallRow,
    ProductivityRow,
    ReportDocument,
)
from centaur_tui.stats.common import rows

HUMAN_MODE = "human_augmentation"
MODEL_MODE = "augmentation"
MEASURES = ("seconds", "edits", "pastes", "words", "characters")


def _overall(document: ReportDocument, mode: str) -> dict[str, OverallRow]:
    section = document.mode(mode)
    return {r.candidate: r for r in section.overall} if section is not None else {}


def assistant_rankings(document: ReportDocument) -> HumanAssistants:
    """Conditions ranked for human workers next to the worker model, with their Spearman correlation.

    Returns:
        `rows` (condition, human mean rank and overall rank, worker-model mean rank and overall
        rank), `spearman` over the conditions ranked in both (`rho`, `p`, `n`, `reason` when NaN).
    """
    human, model = _overall(document, HUMAN_MODE), _overall(document, MODEL_MODE)
    names = sorted(human, key=lambda c: (human[c].overall_rank or math.inf, c))
    table = [
        HumanAssistantRow(
            condition=c,
            human_mean_rank=human[c].mean_rank,
            human_rank=human[c].overall_rank,
            model_mean_rank=model[c].mean_rank if c in model else None,
            model_rank=model[c].overall_rank if c in model else None,
        )
        for c in names
    ]
    both = [r for r in table if _finite(r.human_mean_rank) and _finite(r.model_mean_rank)]
    rho: float | None = None
    p: float | None = None
    reason = None
    if not human:
        reason = "the human-worker arm has no judged comparisons (run centaur judge-work)"
    elif len(both) < 3:
        reason = f"{len(both)} condition(s) ranked in both arms; at least 3 are needed"
    elif len({r.human_mean_rank for r in both}) < 2 or len({r.model_mean_rank for r in both}) < 2:
        reason = "one arm ranks every condition alike"
    else:
        result = spearmanr([r.human_mean_rank for r in both], [r.model_mean_rank for r in both])
        rho, p = _number(float(result.statistic)), _number(float(result.pvalue))
    return HumanAssistants(rows=table, spearman=HumanSpearman(rho=rho, p=p, n=len(both), reason=reason))


def _number(value: float) -> float | None:
    """A statistic for the document: NaN becomes None."""
    return None if math.isnan(value) else value


def _finite(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def productivity(records: Sequence[ProductivityRecord]) -> pd.DataFrame:
    """Per condition: deliverables, and mean and median of time on task, edits, pastes, words, characters."""
    columns = ["condition", "n"] + [f"{s}_{m}" for m in MEASURES for s in ("mean", "median")]
    if not records:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame({c: [getattr(r, c) for r in records] for c in ("condition", *MEASURES)})
    grouped = frame.groupby("condition", sort=True)
    out = grouped.size().rename("n").to_frame()
    for m in MEASURES:
        out[f"mean_{m}"] = grouped[m].mean()
        out[f"median_{m}"] = grouped[m].median()
    return out.reset_index()[columns]


def human_arm_section(document: ReportDocument, productivity_rows: Sequence[ProductivityRecord]) -> HumanWorkersSection:
    """The human-worker section: rankings, their correlation, productivity."""
    table = productivity(productivity_rows)
    return HumanWorkersSection(
        assistants=assistant_rankings(document),
        productivity=rows(ProductivityRow, table),
        deliverables=int(table["n"].sum()) if len(table) else 0,
    )
