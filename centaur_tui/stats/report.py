"""Provides `build_report`: every statistic of STATISTICS.md as one typed report document (docs/report.md).

`build_report` runs the statistics on the tidy frames and returns a `Report`: `document`, the
`report.ReportDocument` that `centaur report` prints, writes as JSON and Markdown, and the
results screen shows, built section by section from typed models (`stats.common.rows`); `doc`,
its JSON-ready dict (tests compare it with the JSON); and `tables`, the frames behind it (for
figures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from centaur_tui.domain.report_options import REPORT_DEFAULTS, ReportOptions
from centaur_tui.report.document import (
    SCHEMA,
    SIMULATED_BANNER,
    BestByTaskRow,
    BradleyTerryRow,
    BradleyTerryTaskRow,
    ChoiceRubric,
    ChoiceRubricRow,
    Counts,
    Criterion,
    CriterionPairRow,
    CriterionRankRow,
    CrossMode,
    CrossModeRow,
    ExpertsSection,
    MatrixCell,
    ModeReport,
    OverallRow,
    PositionBiasRow,
    PositionBiasTable,
    ProfileRow,
    Profiles,
    ReliabilityRow,
    ReliabilityTable,
    ReportDocument,
    ReportOptionsDoc,
    RubricVsWinRate,
    StandardisedRow,
    StandardisedTable,
    Validity,
)
from centaur_tui.stats.bradley_terry import bradley_terry
from centaur_tui.stats.common import json_value, rows
from centaur_tui.stats.experts import ExpertOptions, expert_options_doc, experts_vs_llm
from centaur_tui.stats.frames import STATUSES, Frames, status_counts
from centaur_tui.stats.ppr import PPROptions, prediction_powered
from centaur_tui.stats.rankings import (
    best_by_task,
    cross_mode_spearman,
    mean_ranks,
    overall,
    win_rates,
    within_run_ranks,
)
from centaur_tui.stats.reliability import reliability_table
from centaur_tui.stats.validity import (
    choice_rubric_consistency,
    criterion_validity,
    general_profiles,
    position_bias,
    rubric_vs_win_rate,
    rubric_win_rate_cells,
    standardised_rubric_ranking,
    stated_average_mismatches,
)
from centaur_tui.stats.workers import professional_section, workers_section

__all__ = ["REPORT_DEFAULTS", "SCHEMA", "SIMULATED_BANNER", "Report", "ReportOptions", "build_report", "is_missing"]


@dataclass
class Report:
    """A built report: the typed document and the frames behind it."""

    document: ReportDocument
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    @cached_property
    def doc(self) -> dict[str, Any]:
        """The document as its JSON-ready dict (`ReportDocument.to_dict`); treat it as read-only."""
        return self.document.to_dict()


def _order(frame: pd.DataFrame, column: str, order: list[str]) -> pd.DataFrame:
    pos = {name: i for i, name in enumerate(order)}
    return frame.assign(_o=frame[column].map(pos).fillna(len(pos))).sort_values(["_o", column]).drop(columns="_o")


def build_report(frames: Frames, options: ReportOptions | None = None) -> Report:
    """Compute every statistic and assemble the report document.

    Args:
        frames: The tidy frames (`build_frames`).
        options: Method choices; defaults follow STATISTICS.md.

    Returns:
        The report; its document is validated (`ReportDocument`) and JSON-serialisable
        (NaN as null, with a reason beside it).
    """
    options = options or ReportOptions()
    design = frames.design
    tasks = frames.tasks()
    modes = frames.modes()
    j = frames.judgments

    def want(*names: str) -> bool:
        """Whether a section is computed (`options.section`: one alone; None: all of them)."""
        return options.section is None or options.section in names

    tables: dict[str, pd.DataFrame] = {}
    if want("rankings", "best", "cross-mode", "validity", "workers"):
        rates = win_rates(frames)
        ranks = within_run_ranks(frames, options.rank_method, rates=rates)
        means = mean_ranks(ranks)
        over = overall(ranks, means)
        tables.update(win_rates=rates, ranks=ranks, means=means, overall=over)

    mode_docs: list[ModeReport] = []
    if want("rankings"):
        bt = bradley_terry(frames.ok, frames.candidates, ("mode",), options.bootstrap, options.confidence, options.seed)
        bt_task = bradley_terry(frames.ok, frames.candidates, ("task", "mode"), 0, options.confidence, options.seed)
        tables.update(bradley_terry=bt, bradley_terry_by_task=bt_task)
    for mode in modes if want("rankings") else []:
        names = frames.candidate_names(mode)
        jm = j[j["mode"] == mode]
        rm = ranks[ranks["mode"] == mode]
        mm = _order(_order(means[means["mode"] == mode], "candidate", names), "task", tasks)
        om = over[over["mode"] == mode].sort_values(["overall_rank", "candidate"])
        runs = sorted(rm["run"].unique().tolist())
        mode_docs.append(
            ModeReport(
                mode=mode,
                candidates=names,
                tasks=[t for t in tasks if t in set(rm["task"])],
                runs=len(runs),
                n=int((jm["status"] == "ok").sum()),
                excluded=status_counts(jm),
                missing_cells=int(rm["rank"].isna().sum()),
                cells=len(rm),
                matrix=rows(
                    MatrixCell,
                    mm,
                    ["task", "candidate", "mean_rank", "sd", "se", "runs", "missing_runs", "rank_of_ranks", "reason"],
                ),
                overall=rows(
                    OverallRow, om, ["candidate", "mean_rank", "se", "tasks", "runs", "overall_rank", "reason"]
                ),
                bradley_terry=rows(
                    BradleyTerryRow,
                    bt[bt["mode"] == mode].sort_values(["rank", "candidate"]),
                    [
                        "candidate",
                        "theta",
                        "ci_low",
                        "ci_high",
                        "games",
                        "rank",
                        "comparisons",
                        "tournaments",
                        "reason",
                    ],
                ),
                bradley_terry_by_task=rows(
                    BradleyTerryTaskRow,
                    _order(bt_task[bt_task["mode"] == mode], "task", tasks),
                    ["task", "candidate", "theta", "games", "rank", "reason"],
                ),
            )
        )

    best_rows: list[BestByTaskRow] = []
    cross_doc = CrossMode(rows=[], only_automation=[], only_augmentation=[])
    if want("best"):
        best = best_by_task(means, over, design.plain, tasks)
        best_rows = rows(BestByTaskRow, best)
        tables["best"] = best
    if want("cross-mode"):
        # The worker model is an automation candidate only, so the intersection leaves it out.
        cross = cross_mode_spearman(means, over, design.plain, tasks, options.permutation)
        auto_models = set(frames.candidate_names("automation"))
        aug_models = set(frames.candidate_names("augmentation")) - {design.plain}
        cross_doc = CrossMode(
            rows=rows(CrossModeRow, cross),
            only_automation=sorted(auto_models - aug_models),
            only_augmentation=sorted(aug_models - auto_models),
        )
        tables["cross_mode"] = cross

    reliability = ReliabilityTable(rows=[])
    if want("reliability"):
        rel = reliability_table(frames)
        reliability = ReliabilityTable(rows=rows(ReliabilityRow, rel))
        tables["reliability"] = rel
    validity = (
        _validity(frames, rates, means, tables)
        if want("validity")
        else Validity(
            choice_rubric=ChoiceRubric(rows=[], stated_mismatches=0, tolerance=0.05),
            rubric_vs_win_rate=RubricVsWinRate(r=None, n=0, missing=0, reason=SKIPPED, cells=0),
            criterion=Criterion(pairs=[], ranks=[]),
            profiles=Profiles(augmentation=[], automation=[], judgments={}, excluded={}, dimensions=[]),
            standardised=StandardisedTable(rows=[]),
            position_bias=PositionBiasTable(rows=[]),
        )
    )
    # The experts section always uses both judge kinds, whatever `judge_kinds` the rest uses.
    expert_doc = ExpertsSection(present=False, note=SKIPPED, options=expert_options_doc(_expert_options(options)))
    if want("experts"):
        expert = experts_vs_llm(frames, _expert_options(options))
        expert_doc = expert.section
        tables.update({f"experts_{k}": v for k, v in expert.tables.items()})
    ppr_section = None
    if want("ppr"):
        ppr_section, ppr_tables = prediction_powered(
            frames,
            PPROptions(
                alpha=options.ppr_alpha,
                method=options.ppr_method,
                lam=options.ppr_lam,
                any_subset=options.ppr_any_subset,
                min_labeled=options.ppr_min_labeled,
                estimator=options.ppr_estimator,
                ties=options.ppr_ties,
            ),
        )
        tables.update({f"ppr_{k}": v for k, v in ppr_tables.items()})
    active_section = None
    if want("ppr"):  # rank-sets from active draws (issue 25), beside the prediction-powered ones
        from centaur_tui.stats.active import active_rankings

        active_section = active_rankings(frames, options.ppr_alpha, options.ppr_method, options.ppr_min_labeled)

    workers_doc = professional_doc = None  # issue 28: absent unless the session has a panel / a professional
    if want("workers") and "ranks" in tables:
        workers_doc = workers_section(frames, tables["ranks"], options.bootstrap, options.seed, options.confidence)
    if want("professional"):
        professional_doc = professional_section(frames)

    calibration_doc = None
    if want("calibration"):
        from centaur_tui.stats.calibration import calibration_section

        # The tiers read the experts section's kappa table: computed here when that section was not.
        kappa = tables.get("experts_agreement_kappa")
        if kappa is None and (frames.judgments["judge_kind"].astype(object) == "expert").any():
            kappa = experts_vs_llm(frames, _expert_options(options)).tables.get("agreement_kappa")
        calibration_doc = calibration_section(
            frames,
            bootstrap=max(options.bootstrap, 200) if options.bootstrap else 0,
            confidence=options.confidence,
            seed=options.seed,
            kappa=kappa,
        )
    status = j["status"].value_counts()
    # Winner-only judgments (imported with a winner and no rubric score) count in every pairwise
    # statistic and cannot enter a rubric one: their number is stated, never a silent shrink.
    unscored = ((j["option1_dims"] == 0) & (j["option2_dims"] == 0)).to_numpy()
    winner_only = int((unscored & (j["status"] == "ok").to_numpy()).sum())
    winner_only_all = int((unscored & j["status"].isin(["ok", "other_kind"]).to_numpy()).sum())
    document = ReportDocument(
        schema_=SCHEMA,
        session=design.session,
        simulated=bool(design.simulated),
        banner=SIMULATED_BANNER if design.simulated else None,
        options=ReportOptionsDoc(
            rank_method=options.rank_method,
            bootstrap=options.bootstrap,
            confidence=options.confidence,
            seed=options.seed,
            permutation=options.permutation,
            judge_kinds=list(options.judge_kinds),
            alt_epsilon=options.alt_epsilon,
        ),
        counts=Counts(
            comparisons=len(frames.comparisons),
            judgments=len(j),
            by_status={s: int(status.get(s, 0)) for s in STATUSES},
            runs=len(frames.runs),
            tasks=tasks,
            modes=modes,
            judges=sorted(str(x) for x in j.loc[j["status"] == "ok", "judge"].unique()),
            winner_only=winner_only,
            winner_only_all_kinds=winner_only_all,
        ),
        modes=mode_docs,
        best_by_task=best_rows,
        cross_mode=cross_doc,
        reliability=reliability,
        validity=validity,
        experts=expert_doc,
        ppr=ppr_section,
        workers=workers_doc,
        professional=professional_doc,
        calibration=calibration_doc,
        active=active_section,
        section=options.section,
    )
    return Report(document=document, tables=_in_order(tables))


TABLE_ORDER = (
    "win_rates",
    "ranks",
    "means",
    "overall",
    "bradley_terry",
    "bradley_terry_by_task",
    "best",
    "cross_mode",
    "reliability",
    "consistency",
    "stated_mismatches",
    "cells",
    "criterion_pairs",
    "criterion_ranks",
    "profiles",
    "standardised_ranks",
    "standardised",
    "position_bias",
)
"""The order of `Report.tables` (the experts' and prediction-powered tables follow)."""

SKIPPED = "not computed: the report was asked for one section (--section)"
"""The note of a section left empty because another was asked for alone."""


def _in_order(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    first = {k: tables[k] for k in TABLE_ORDER if k in tables}
    return {**first, **{k: v for k, v in tables.items() if k not in first}}


def _expert_options(options: ReportOptions) -> ExpertOptions:
    return ExpertOptions(
        bootstrap=options.bootstrap,
        confidence=options.confidence,
        seed=options.seed,
        epsilon=options.alt_epsilon,
        alt_min_experts_per_item=options.alt_min_experts_per_item,
    )


def _validity(frames: Frames, rates: pd.DataFrame, means: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> Validity:
    """The validity section (choice-rubric, rubric vs win rate, criterion, profiles, standardised, position bias)."""
    design, tasks, modes, j = frames.design, frames.tasks(), frames.modes(), frames.judgments
    consistency = choice_rubric_consistency(frames)
    mismatches = stated_average_mismatches(frames)
    cells = rubric_win_rate_cells(frames, rates)
    rubric_r = rubric_vs_win_rate(cells)
    crit_pairs, crit_ranks = criterion_validity(frames)
    all_profiles = general_profiles(frames)
    profiles = all_profiles[all_profiles["mode"] == "augmentation"]
    profiles_auto = all_profiles[all_profiles["mode"] == "automation"]
    z_ranks, z_agree = standardised_rubric_ranking(frames, means)
    bias = position_bias(frames)
    tables.update(
        consistency=consistency,
        stated_mismatches=mismatches,
        cells=cells,
        criterion_pairs=crit_pairs,
        criterion_ranks=crit_ranks,
        profiles=profiles,
        standardised_ranks=z_ranks,
        standardised=z_agree,
        position_bias=bias,
    )
    return Validity(
        choice_rubric=ChoiceRubric(
            rows=rows(ChoiceRubricRow, consistency), stated_mismatches=len(mismatches), tolerance=0.05
        ),
        rubric_vs_win_rate=RubricVsWinRate.model_validate({**json_value(rubric_r), "cells": len(cells)}),
        criterion=Criterion(pairs=rows(CriterionPairRow, crit_pairs), ranks=rows(CriterionRankRow, crit_ranks)),
        profiles=Profiles(
            augmentation=rows(ProfileRow, profiles),
            automation=rows(ProfileRow, profiles_auto),
            judgments={m: int(((j["mode"] == m) & (j["status"] == "ok")).sum()) for m in modes},
            excluded={m: status_counts(j[(j["mode"] == m).to_numpy()]) for m in modes},
            dimensions=list(design.general_dimensions) or sorted(profiles["dimension"].unique().tolist()),
        ),
        standardised=StandardisedTable(
            rows=rows(StandardisedRow, _order(_order(z_agree, "task", tasks), "mode", modes))
        ),
        position_bias=PositionBiasTable(rows=rows(PositionBiasRow, bias)),
    )


def is_missing(value: Any) -> bool:
    """True for None and NaN (as found in the document)."""
    return value is None or (isinstance(value, float) and math.isnan(value))
