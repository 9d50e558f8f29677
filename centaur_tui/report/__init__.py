"""Provides the typed report document and its public renderers (text, Markdown, JSON); no pandas here."""

from centaur_tui.report.document import SCHEMA, SIMULATED_BANNER, ModeReport, ReportDocument
from centaur_tui.report.render import (
    ModeSections,
    Section,
    agreement_matrix_sections,
    best_by_task_section,
    cross_mode_section,
    expert_sections,
    human_worker_sections,
    human_workers_text,
    mode_sections,
    ppr_sections,
    reliability_section,
    sections,
    to_json,
    to_markdown,
    to_text,
    validity_sections,
)

__all__ = [
    "SCHEMA",
    "SIMULATED_BANNER",
    "ModeReport",
    "ModeSections",
    "ReportDocument",
    "Section",
    "agreement_matrix_sections",
    "best_by_task_section",
    "cross_mode_section",
    "expert_sections",
    "human_worker_sections",
    "human_workers_text",
    "mode_sections",
    "ppr_sections",
    "reliability_section",
    "sections",
    "to_json",
    "to_markdown",
    "to_text",
    "validity_sections",
]
