"""Provides the typed report document: every section of `centaur report` as pydantic models (docs/report.md).

The statistics (`stats.report.build_report`, `stats.experts`, `stats.ppr`, `stats.human_arm`)
build these models section by section, and every renderer (`report.render`, the results
screen) reads them by attribute, so the type checker checks both sides. `to_dict` / `to_json`
give the dict and the JSON `centaur report --json` writes (keys in field order, NaN as null,
an optional section absent rather than null), and `from_json` / `from_dict` read them again
(the disk cache, the report process's replies). Models are strict and forbid unknown keys, so a
statistic that changes its columns without this file fails the tests instead of writing a
document nobody documented.

To add a section: a model here (rows as a `list[RowModel]`, an optional section as
`Model | None = None` listed in its parent's `ABSENT_WHEN_NONE`), its field on the parent,
the statistic that fills it (`stats.common.rows` turns a frame into row models), a section
builder in `report.render` (one small function) added to `render.sections`, and its keys in
docs/report.md.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from centaur_tui.domain import integrity

SCHEMA = "centaur-report/1"
SIMULATED_BANNER = (
    "SIMULATED DATA: every number below comes from the seeded simulated provider, not from language models."
)

_M = TypeVar("_M", bound="_Model")


class _Model(BaseModel):
    """Base of the document's models; `from_dict` validates a JSON-ready dict."""

    # strict: an int never turns into a float (or back), so the JSON round trip is byte-exact;
    # frozen: the screen and the renderers share one document and never change it.
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, populate_by_name=True)

    @classmethod
    def from_dict(cls: type[_M], data: dict[str, Any]) -> _M:
        """Validate a JSON-ready dict (as `to_dict` gives) into the model."""
        return cls.model_validate(data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict (NaN stays NaN: the statistics give None for an undefined number)."""
        return self.model_dump(mode="json", by_alias=True)


class _WithAbsent(_Model):
    """A model with optional sections that are left out of its dict (not written as null) when None."""

    ABSENT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self.ABSENT_WHEN_NONE:
            if name in data and data[name] is None:
                del data[name]
        return data


class ConsistencyJudgeTable(_Model):
    """A section that is one table: `{"rows": [ConsistencyJudgeRow, ...]}`."""

    rows: list[ConsistencyJudgeRow]


class HeadlineTable(_Model):
    """A section that is one table: `{"rows": [HeadlineRow, ...]}`."""

    rows: list[HeadlineRow]


class LengthBiasTable(_Model):
    """A section that is one table: `{"rows": [LengthBiasRow, ...]}`."""

    rows: list[LengthBiasRow]


class LeniencyTable(_Model):
    """A section that is one table: `{"rows": [LeniencyRow, ...]}`."""

    rows: list[LeniencyRow]


class LooMajorityTable(_Model):
    """A section that is one table: `{"rows": [LooMajorityRow, ...]}`."""

    rows: list[LooMajorityRow]


class PositionBiasJudgeTable(_Model):
    """A section that is one table: `{"rows": [PositionBiasJudgeRow, ...]}`."""

    rows: list[PositionBiasJudgeRow]


class PositionBiasTable(_Model):
    """A section that is one table: `{"rows": [PositionBiasRow, ...]}`."""

    rows: list[PositionBiasRow]


class ReliabilityTable(_Model):
    """A section that is one table: `{"rows": [ReliabilityRow, ...]}`."""

    rows: list[ReliabilityRow]


class RepeatsTable(_Model):
    """A section that is one table: `{"rows": [RepeatsRow, ...]}`."""

    rows: list[RepeatsRow]


class StandardisedTable(_Model):
    """A section that is one table: `{"rows": [StandardisedRow, ...]}`."""

    rows: list[StandardisedRow]


class ReportOptionsDoc(_Model):
    """The options the report was built with (`stats.report.ReportOptions`)."""

    rank_method: str
    bootstrap: int
    confidence: float
    seed: int
    permutation: bool
    judge_kinds: list[str]
    alt_epsilon: float


class ExpertOptionsDoc(_Model):
    """The options of the experts-vs-LLM section (`stats.experts.ExpertOptions`)."""

    bootstrap: int
    confidence: float
    epsilon: float
    fdr_q: float
    alt_min_items: int
    alt_min_experts_per_item: int
    loo_min_others: int


class HumanAssistantRow(_Model):
    """One condition ranked for human workers beside the worker model."""

    condition: str
    human_mean_rank: float | None
    human_rank: float | None
    model_mean_rank: float | None
    model_rank: float | None


class ProductivityRow(_Model):
    """Mean and median effort per submitted deliverable of one condition."""

    condition: str
    n: int
    mean_seconds: float | None
    median_seconds: float | None
    mean_edits: float | None
    median_edits: float | None
    mean_pastes: float | None
    median_pastes: float | None
    mean_words: float | None
    median_words: float | None
    mean_characters: float | None
    median_characters: float | None


class PositionBiasJudgeRow(_Model):
    """One judge's (or group's) share of decisive choices for the option shown first, with its binomial p."""

    judge: str
    kind: str
    n: int
    first: int
    share_first: float | None
    p: float | None
    reason: str | None


class LengthBiasRow(_Model):
    """One judge's share of decisive choices won by the longer output, with its binomial p."""

    judge: str
    kind: str
    n: int
    longer: int
    share_longer: float | None
    p: float | None
    reason: str | None


class LeniencyRow(_Model):
    """One judge's mean rubric-average difference against the other LLM judges, with Bland-Altman limits."""

    judge: str
    kind: str
    n: int
    comparisons: int
    mean_difference: float | None
    ci_low: float | None
    ci_high: float | None
    sd: float | None
    loa_low: float | None
    loa_high: float | None
    reason: str | None


class ConsistencyJudgeRow(_Model):
    """One judge's winner-has-the-higher-rubric-average share (experts section)."""

    judge: str
    kind: str
    n: int
    agree: int
    share: float | None
    ties: int
    equal_averages: int
    missing_scores: int
    reason: str | None


class RepeatsRow(_Model):
    """One judge's agreement with itself on comparisons seen again with the options swapped."""

    judge: str
    kind: str
    n: int
    same: int
    agreement: float | None
    decisive_n: int
    decisive_same: int
    decisive_agreement: float | None
    reason: str | None


class ChoiceRubric(_Model):
    """Choice-rubric consistency per judge, and stated averages off the recomputed ones."""

    rows: list[ChoiceRubricRow]
    stated_mismatches: int
    tolerance: float | None


class ChoiceRubricRow(_Model):
    """One judge's choice-rubric consistency, with its denominators and exclusions."""

    judge: str
    n: int
    agree: int
    share: float | None
    ties: int
    equal_averages: int
    missing_scores: int
    stated_checked: int
    stated_mismatch: int
    excluded: dict[str, int]
    reason: str | None


class CriterionRankRow(_Model):
    """One model's mean within-family rank by one judge (Figure 15)."""

    judge: str
    family: str
    candidate: str
    release_order: int
    mean_rank: float | None
    sd: float | None
    task_runs: int


class Criterion(_Model):
    """Criterion validity: direct choices between releases of a family, and within-family ranks."""

    pairs: list[CriterionPairRow]
    ranks: list[CriterionRankRow]


class CriterionPairRow(_Model):
    """One judge's choices between the models of one family: later vs earlier release."""

    judge: str
    family: str
    models: list[str]
    n: int
    later: int
    earlier: int
    ties: int
    share_later: float | None
    excluded: dict[str, int]
    reason: str | None


class ProfileRow(_Model):
    """One candidate's mean score on one general dimension (Figure 12), pooled and judge-balanced."""

    mode: str
    candidate: str
    dimension: str
    mean: float | None
    judge_balanced: float | None
    n: int
    judges: int


class StandardisedRow(_Model):
    """Spearman rho between the standardised rubric ranking and the pairwise ranking of one (task, mode)."""

    task: str
    mode: str
    n: int
    rho: float | None
    p: float | None
    zero_spread: int
    missing_scores: int
    reason: str | None


class PositionBiasRow(_Model):
    """One judge's position bias and flip rate (validity section)."""

    judge: str
    n: int
    first: int
    share_first: float | None
    p: float | None
    ties: int
    both_orders: int
    flips: int
    flip_rate: float | None
    excluded: dict[str, int]
    reason: str | None


class HumanSpearman(_Model):
    """Spearman correlation of the conditions' mean ranks, human workers vs the worker model."""

    rho: float | None
    p: float | None
    n: int
    reason: str | None


class AgreementBlockRow(_Model):
    """Agreement of judge pairs within or across the panels (expert-expert, expert-LLM, LLM-LLM)."""

    block: str
    units: int
    pairs: int
    agreement: float | None
    ci_low: float | None
    ci_high: float | None
    chance: float | None
    decisive_pairs: int
    decisive_agreement: float | None
    decisive_ci_low: float | None
    decisive_ci_high: float | None
    decisive_chance: float | None
    reason: str | None


class AlphaRow(_Model):
    """Krippendorff's alpha within the experts, within the LLM judges, or pooled, on the reference set."""

    group: str
    judges: int
    units: int
    excluded_units: int
    ratings: int
    alpha: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None


class KappaRow(_Model):
    """Cohen's kappa of one pair of judges over the reference comparisons both judged."""

    judge_1: str
    judge_2: str
    kind_1: str
    kind_2: str
    block: str
    n: int
    agreement: float | None
    kappa: float | None
    ci_low: float | None
    ci_high: float | None
    reason: str | None


class LooMajorityRow(_Model):
    """One judge scored against the leave-one-out expert majority."""

    judge: str
    kind: str
    n: int
    agreement: float | None
    ci_low: float | None
    ci_high: float | None
    expert_agreement: float | None
    difference: float | None
    diff_ci_low: float | None
    diff_ci_high: float | None
    no_majority: int
    reason: str | None


class PanelRankingRow(_Model):
    """Expert-panel vs LLM-panel ranking of one (mode, task): Spearman, Kendall, top candidates."""

    mode: str
    task: str
    comparisons: int
    expert_verdicts: int
    llm_verdicts: int
    n: int
    spearman: float | None
    spearman_ci_low: float | None
    spearman_ci_high: float | None
    kendall: float | None
    kendall_ci_low: float | None
    kendall_ci_high: float | None
    expert_top: str | None
    llm_top: str | None
    top_match: bool | None
    reason: str | None


class PanelCandidateRow(_Model):
    """One candidate's Bradley-Terry strength, rank and win rate by panel, with the gap's interval."""

    mode: str
    task: str
    candidate: str
    expert_theta: float | None
    llm_theta: float | None
    expert_rank: float | None
    llm_rank: float | None
    expert_games: int
    llm_games: int
    expert_win_rate: float | None
    llm_win_rate: float | None
    gap: float | None
    gap_ci_low: float | None
    gap_ci_high: float | None
    reason: str | None


class AltTestExpertRow(_Model):
    """One (LLM judge, left-out expert) test of the alternative annotator test."""

    judge: str
    metric: str
    expert: str
    n: int
    rho_f: float | None
    rho_h: float | None
    p: float | None
    rejected: bool | None
    tested: bool | None
    reason: str | None


class AltTest(_Model):
    """The alternative annotator test: per LLM judge, and per (LLM judge, expert)."""

    rows: list[AltTestRow]
    experts: list[AltTestExpertRow]
    unscored_verdicts: int
    """Reference verdicts without a full set of rubric scores (winner-only), left out of the `rmse` test."""


class AltTestRow(_Model):
    """Whether one LLM judge could replace an expert (winning rate, advantage probability)."""

    judge: str
    metric: str
    items: int
    experts_tested: int
    winning_rate: float | None
    advantage_probability: float | None
    passed: bool | None
    reason: str | None


class HeadlineRow(_Model):
    """One headline finding (best solver, best assistant, plain beats assisted) by both panels."""

    finding: str
    mode: str
    experts: str | None
    experts_value: float | None
    experts_ci_low: float | None
    experts_ci_high: float | None
    experts_n: int
    llm: str | None
    llm_value: float | None
    llm_ci_low: float | None
    llm_ci_high: float | None
    llm_n: int
    holds: bool | None
    reason: str | None


class MatrixCell(_Model):
    """One (task, candidate) cell of a mode's rank matrix: mean rank over runs, SD, SE, rank of ranks."""

    task: str
    candidate: str
    mean_rank: float | None
    sd: float | None
    se: float | None
    runs: int
    missing_runs: int
    rank_of_ranks: float | None
    reason: str | None


class OverallRow(_Model):
    """A candidate's overall ordering in a mode (mean of its per-task mean ranks)."""

    candidate: str
    mean_rank: float | None
    se: float | None
    tasks: int
    runs: int
    overall_rank: float | None
    reason: str | None


class BradleyTerryRow(_Model):
    """A candidate's Bradley-Terry strength in a mode, pooled over tasks and runs, with its interval."""

    candidate: str
    theta: float | None
    ci_low: float | None
    ci_high: float | None
    games: int
    rank: float | None
    comparisons: int
    tournaments: int
    reason: str | None


class BradleyTerryTaskRow(_Model):
    """A candidate's Bradley-Terry strength in one task of a mode."""

    task: str
    candidate: str
    theta: float | None
    games: int
    rank: float | None
    reason: str | None


class CrossMode(_Model):
    """Cross-mode Spearman correlations (Table 1) and the models ranked in one mode only."""

    rows: list[CrossModeRow]
    only_automation: list[str]
    only_augmentation: list[str]


class CrossModeRow(_Model):
    """Spearman rho of automation vs augmentation mean ranks for one task, or "(model level)"."""

    task: str
    n: int
    rho: float | None
    p: float | None
    p_permutation: float | None
    permutation_method: str | None
    models: list[str]
    reason: str | None


class ReliabilityRow(_Model):
    """Raw agreement and Krippendorff's alpha overall, per mode, or per task x mode (Appendix F)."""

    scope: str
    mode: str | None
    task: str | None
    units: int
    excluded_units: int
    ratings: int
    judges: int
    pairs: int
    agreeing_pairs: int
    raw_agreement: float | None
    alpha: float | None
    reason: str | None
    repeats_dropped: int
    excluded: dict[str, int]


class RubricVsWinRate(_Model):
    """Pearson r between rubric averages and win rates over cells (Figure 13A)."""

    r: float | None
    n: int
    missing: int
    reason: str | None
    cells: int


class Profiles(_Model):
    """General-rubric profiles per mode, with their denominators (Figure 12)."""

    augmentation: list[ProfileRow]
    automation: list[ProfileRow]
    judgments: dict[str, int]
    excluded: dict[str, dict[str, int]]
    dimensions: list[str]


class HumanAssistants(_Model):
    """Conditions ranked for human workers beside the worker model, and their correlation."""

    rows: list[HumanAssistantRow]
    spearman: HumanSpearman


class ExpertCounts(_Model):
    """Denominators of the experts section: judgments, the reference set, repeats."""

    experts: list[str]
    llm_judges: list[str]
    expert_judgments: int
    expert_usable: int
    expert_excluded: dict[str, int]
    expert_repeats: int
    expert_comparisons: int
    reference_comparisons: int
    expert_only_comparisons: int
    reference_expert_verdicts: int
    reference_llm_verdicts: int
    lengths_known: bool


class ExpertAgreement(_Model):
    """Agreement blocks, Krippendorff's alpha and Cohen's kappa of the two panels."""

    blocks: list[AgreementBlockRow]
    alpha: list[AlphaRow]
    kappa: list[KappaRow]


class PanelMajority(_Model):
    """The LLM-panel majority vs the expert-panel majority per reference comparison."""

    n: int
    agreement: float | None
    ci_low: float | None
    ci_high: float | None
    chance: float | None
    decisive_n: int
    decisive_agreement: float | None
    decisive_ci_low: float | None
    decisive_ci_high: float | None
    decisive_chance: float | None
    kappa: float | None
    kappa_ci_low: float | None
    kappa_ci_high: float | None
    confusion: list[list[int]]
    no_expert_majority: int
    no_llm_majority: int
    reason: str | None


class PanelRankings(_Model):
    """Expert-panel vs LLM-panel rankings, per (mode, task) and per candidate."""

    rows: list[PanelRankingRow]
    candidates: list[PanelCandidateRow]


class ExpertBias(_Model):
    """Per judge: position, length, leniency, consistency and repeat consistency."""

    position: PositionBiasJudgeTable
    length: LengthBiasTable
    leniency: LeniencyTable
    consistency: ConsistencyJudgeTable
    repeats: RepeatsTable


class Counts(_Model):
    """What was stored and used: comparisons, judgments by status, runs, tasks, modes, judges."""

    comparisons: int
    judgments: int
    by_status: dict[str, int]
    runs: int
    tasks: list[str]
    modes: list[str]
    judges: list[str]
    winner_only: int = 0
    """Used judgments with a winner and no rubric score (imported): in every pairwise statistic, in no rubric one."""
    winner_only_all_kinds: int = 0
    """The same over both judge kinds (the experts-vs-LLM section uses both)."""


class ModeReport(_Model):
    """One mode: candidates, tasks, denominators (n, excluded, missing cells), rank matrix, ordering, Bradley-Terry."""

    mode: str
    candidates: list[str]
    tasks: list[str]
    runs: int
    n: int
    excluded: dict[str, int]
    missing_cells: int
    cells: int
    matrix: list[MatrixCell]
    overall: list[OverallRow]
    bradley_terry: list[BradleyTerryRow]
    bradley_terry_by_task: list[BradleyTerryTaskRow]


class BestByTaskRow(_Model):
    """The best candidate (and best assisted one) of a task and mode (Appendix D)."""

    mode: str
    task: str
    best: str | None
    best_mean_rank: float | None
    best_assisted: str | None
    best_assisted_mean_rank: float | None


class Validity(_Model):
    """Choice-rubric consistency, rubric vs win rate, criterion validity, profiles, standardised rank, position bias."""

    choice_rubric: ChoiceRubric
    rubric_vs_win_rate: RubricVsWinRate
    criterion: Criterion
    profiles: Profiles
    standardised: StandardisedTable
    position_bias: PositionBiasTable


class ExpertsSection(_WithAbsent):
    """Experts vs LLM judges; the sub-sections are absent (not null) when no expert judged."""

    ABSENT_WHEN_NONE = (
        "counts",
        "agreement",
        "loo_majority",
        "panel_majority",
        "rankings",
        "bias",
        "alt_test",
        "headline",
    )

    present: bool
    note: str | None
    options: ExpertOptionsDoc
    counts: ExpertCounts | None = None
    agreement: ExpertAgreement | None = None
    loo_majority: LooMajorityTable | None = None
    panel_majority: PanelMajority | None = None
    rankings: PanelRankings | None = None
    bias: ExpertBias | None = None
    alt_test: AltTest | None = None
    headline: HeadlineTable | None = None


class PPROptionsDoc(_Model):
    """The options of the prediction-powered rankings (`stats.ppr.PPROptions`)."""

    alpha: float
    method: str
    lam: str
    any_subset: bool
    min_labeled: int
    estimator: str = "mean"
    ties: str = "half"


class PPRRow(_Model):
    """One candidate: prediction-powered, expert-only and LLM-only win probability and rank-set [low, high]."""

    candidate: str
    ppr_theta: float | None
    ppr_se: float | None
    ppr_low: int
    ppr_high: int
    lam: float
    labeled: int
    unlabeled: int
    expert_theta: float | None
    expert_low: int
    expert_high: int
    llm_theta: float | None
    llm_low: int
    llm_high: int


class PPRMode(_Model):
    """Prediction-powered rankings of one mode, pooled over its tasks and runs."""

    mode: str
    candidates: int
    comparisons: int
    labeled: int
    no_llm_verdict: int
    mean_set_size: dict[str, float]
    reason: str | None
    rows: list[PPRRow]


class ActiveRow(_Model):
    """One candidate from active draws: the weighted (Des Raj) estimate, and the experts alone with the same weights."""

    candidate: str
    theta: float | None
    se: float | None
    low: int
    high: int
    lam: float
    draws: int
    expert_theta: float | None
    expert_low: int
    expert_high: int


class ActiveMode(_Model):
    """Rankings of one mode from the experts' active draws (`stats.active.active_rankings`)."""

    mode: str
    candidates: int
    comparisons: int
    draws: int
    mean_set_size: dict[str, float]
    reason: str | None
    rows: list[ActiveRow]


class ActiveSection(_Model):
    """Rank-sets from expert comparisons drawn by active allocation, each weighted by its stored draw probability."""

    note: str
    alpha: float
    method: str
    experts: int
    draws: int
    """Active draws used (each expert's sequence up to its first unjudged place)."""
    draws_not_used: int
    """Active draws after an expert's first unjudged place (or all of an expert with fewer than 2)."""
    modes: list[ActiveMode]


class PPRSection(_WithAbsent):
    """Prediction-powered rankings (Chatzi et al., 2024): LLM comparisons corrected by a random expert subset."""

    ABSENT_WHEN_NONE = ("random_subset", "expert_verdicts", "expert_verdicts_used", "excluded_not_random", "modes")

    present: bool
    note: str | None
    options: PPROptionsDoc
    random_subset: bool | None = None
    expert_verdicts: int | None = None
    expert_verdicts_used: int | None = None
    excluded_not_random: dict[str, int] | None = None
    modes: list[PPRMode] | None = None


class HumanWorkersSection(_Model):
    """The human-worker arm (sessions with `[human_workers]`): assistants ranked for people, productivity."""

    assistants: HumanAssistants
    productivity: list[ProductivityRow]
    deliverables: int


class SeatRow(_Model):
    """One expert at work: judgments, lower-average winners, times, practice and gold checks."""

    expert: str
    judgments: int
    lower_average: int
    lower_average_confirmed: int
    median_seconds: float | None
    median_active_seconds: float | None
    active_measured: int
    practice_made: int
    practice_judged: int
    gold_made: int
    gold_judged: int
    gold_passed: int
    gold_pass_rate: float | None
    left_out: bool
    flag_notes: int = 0
    """Notes the expert left when flagging a place (either seat)."""


class FlagNoteRow(_Model):
    """An expert's note on a place they flagged, for the researcher."""

    expert: str
    task: str | None
    """The place's task (None: the place is gone)."""
    note: str
    noted_at: str


class SeatSection(_Model):
    """Experts at work (issue 14): per expert, and who the statistics leave out for a low gold-check pass rate.

    `lower_average`: judgments whose winner has the lower rubric average of the two options;
    `lower_average_confirmed`: of those, the ones the expert confirmed when asked (the rest
    came through a front end that does not ask). Practice and gold verdicts are stored apart
    from judgments and never counted in any statistic.
    """

    rows: list[SeatRow]
    min_gold_pass: float | None
    left_out: list[str]
    left_out_judgments: int
    note: str | None
    flag_notes: list[FlagNoteRow] = []
    """Every flag's note, oldest first (a place flagged twice with a note has two)."""


class IntegrityRow(_Model):
    """One expert's integrity signals (issue 27): each count beside its denominator.

    The one record of them: the organiser's console (`services.console`) shows it, the report holds it.
    """

    expert: str
    judgments: int
    paste_recorded: int
    """Judgments whose seat recorded paste events (the denominator of `pasted`)."""
    pasted: int
    """Of those, rationales with at least `integrity.PASTED_SHARE` of their characters pasted."""
    pasted_share: float | None
    """Pasted characters of all characters of the recorded rationales (None: none recorded)."""
    timed: int
    """Judgments with a recorded wall time (the denominator of `too_fast`)."""
    too_fast: int
    """Of those, stored in less time than reading both deliverables needs at `integrity.READING_WORDS_PER_MINUTE`."""
    repeated: int
    """Judgments whose rationale also stands, identical, on another comparison."""
    decided: int
    """Judgments with a winner that is not a tie (the denominator of `option1_wins`)."""
    option1_wins: int
    option1_share: float | None
    order_p: float | None
    """Two-sided exact binomial test of `option1_wins` of `decided` against 1/2."""

    @property
    def follows_order(self) -> bool:
        """The option-1 share departs from 1/2 at p below `integrity.ORDER_ALPHA`."""
        return self.order_p is not None and self.order_p < integrity.ORDER_ALPHA

    @property
    def any(self) -> bool:
        """Any signal raised (what the console marks)."""
        return bool(self.pasted or self.too_fast or self.repeated or self.follows_order)


class IntegritySection(_Model):
    """Integrity signals of expert judging, for the organiser: counted, never used to leave anything out.

    A rationale is pasted when at least `pasted_share` of its characters came from a paste; a
    judgment is too fast when stored in less time than both deliverables need at
    `reading_words_per_minute`; repeated: its rationale stands, identical, on another comparison;
    option-1 wins of decided (non-tie) judgments, with an exact two-sided binomial test against 1/2.
    """

    rows: list[IntegrityRow]
    reading_words_per_minute: int
    pasted_share: float
    order_alpha: float


class OutcomeRow(_Model):
    """How many planned items (of a stage, a judge or a mode's judgments) ended in each outcome."""

    planned: int
    answered: int
    invalid: int
    failed: int
    blocked: int
    missing: int
    not_sent: int = 0
    """Nothing stored, no call of it failed: a stopped run never sent it ("not sent (run stopped)"); in `missing`."""
    excluded: int = 0
    """Judgments not asked: an output was cut off at max_tokens and the session excludes such deliverables."""
    cut_off: int = 0
    """Stored texts cut off at max_tokens; for judgments, stored ones of a comparison holding such a text."""


class SpendRow(_Model):
    """What the session's calls cost: the answered ones, and apart the requests billed without an answer (issue 23).

    `answered_usd` sums the cost litellm recorded for the stored calls (`unpriced_calls` of them
    have no price: counted, not guessed). `unanswered` requests may have been billed although no
    answer was stored (timed out, broken reply, out when a run was stopped or killed); they are
    estimated at their worst case (`unanswered_usd`, counted toward `max_cost_usd`), except
    `unanswered_unknown` sent without a budget, which have no estimate.
    """

    answered_usd: float
    answered_calls: int
    unpriced_calls: int
    unanswered: int
    unanswered_usd: float
    unanswered_unknown: int
    unanswered_causes: dict[str, int]
    """`unanswered` by cause: timeout, broken, stopped, killed."""


class OutcomesSection(_WithAbsent):
    """Every planned item of the session and its outcome (domain/outcomes.py), read from the store.

    `failed`: nothing stored although the inputs are, and the call failed for good; `not_sent`:
    nothing stored and no call failed (a stopped run never sent it); `blocked`: nothing stored
    because an input is missing; `missing` = the three. `excluded`: judgments left out by the
    session's design (a cut-off output, `generation.on_truncated = "exclude"`), counted apart.
    `failed_calls` counts the calls whose last attempt failed for good and that have no answer
    since (`call_errors`); a judgment may have needed more than one call (re-asks).
    """

    complete: bool
    stages: dict[str, OutcomeRow]
    judges: dict[str, OutcomeRow]
    modes: dict[str, OutcomeRow]
    failed_calls: int
    batched_judgments: int | None = None
    """LLM judgments whose judge call was answered in a provider batch (batch mode; `batch` in judgments.csv);
    absent for a session that never used batch mode."""
    batches_in_flight: int | None = None
    """Batches not collected yet: their calls count as failed until a run collects them; absent as above."""
    tasks: dict[str, OutcomeRow] = Field(default_factory=dict)
    """Judgments per task (missing ones included)."""
    candidates: dict[str, OutcomeRow] = Field(default_factory=dict)
    """Per candidate: its outputs (planned, answered, cut off) and the judgments excluded for its cut-off outputs."""
    on_truncated: str | None = None
    """The session's `generation.on_truncated` (what happens to a text cut off at max_tokens)."""
    spend: SpendRow | None = None
    """What the calls cost: answered calls, and apart, requests billed without an answer (absent in old caches)."""

    ABSENT_WHEN_NONE = ("batched_judgments", "batches_in_flight", "spend")


class RecordSection(_Model):
    """The tamper-evident record (store/chain.py): the head of the database's hash chain when the report was made.

    `head` ties every number of this report to one state of the database: `centaur verify`
    recomputes the chain and prints the same head while nothing has changed.
    """

    head: str
    length: int


class AgreementCell(_Model):
    """Two judges on one dimension (or the winner): comparisons both labelled, how many agree, share, Cohen's kappa."""

    judge_a: str
    kind_a: str
    judge_b: str
    kind_b: str
    dimension: str
    n: int
    agree: int
    agreement: float
    kappa: float | None
    """None below `kappa_min_n` shared comparisons, or when chance agreement is 1."""


class AgreementMatrixSection(_Model):
    """The agreement matrix (issue 27): every expert against every LLM judge and every other expert, per dimension.

    `reference` says which reference labels it holds: "judgments" (judges only), or
    "judgments and adjudicated verdicts" (the adjudications in force as the judge
    "adjudicated", kind "adjudicated", when the report was asked for them).
    """

    reference: str
    dimensions: list[str]
    kappa_min_n: int
    cells: list[AgreementCell]


_Excluding = TypeVar("_Excluding", ModeReport, ReliabilityRow, ChoiceRubricRow, PositionBiasRow)
"""The rows with an `excluded` object that `ReportDocument.with_outcomes` adds missing judgments to."""


class WorkerRankRow(_Model):
    """One candidate in one worker's augmentation tournaments: mean within-run rank over runs and tasks."""

    worker: str
    mode: str
    candidate: str
    mean_rank: float | None
    overall_rank: int | None
    cells: int
    missing_cells: int
    best: bool


class WorkerGainRow(_Model):
    """One assistant's gain over one worker's own plain baseline."""

    worker: str
    assistant: str
    win_rate_vs_plain: float | None
    ci_low: float | None
    ci_high: float | None
    judgments: int
    comparisons: int
    rank_gain: float | None


class WorkerStabilityRow(_Model):
    """How alike two workers rank the assistants they share: Spearman and Kendall with run-resampled intervals."""

    worker_a: str
    worker_b: str
    assistants: int
    spearman: float | None
    spearman_low: float | None
    spearman_high: float | None
    kendall: float | None
    kendall_low: float | None
    kendall_high: float | None
    replicates: int
    reason: str | None


class WorkersSection(_Model):
    """A worker panel (issue 28): the assistants per worker, their gains over plain, and rank stability."""

    workers: list[str]
    ranks: list[WorkerRankRow]
    best: dict[str, str | None]
    gains: list[WorkerGainRow]
    stability: list[WorkerStabilityRow]
    runs: int
    bootstrap: int


class ProfessionalRow(_Model):
    """One candidate's wins plus ties against the human professional's deliverable, in one task (or all) and mode."""

    mode: str
    task: str
    candidate: str
    professional: str
    wins_or_ties: int
    judgments: int
    comparisons: int
    rate: float
    ci_low: float | None
    ci_high: float | None


class ProfessionalSection(_Model):
    """The human professional as the bar (issue 28, GDPval's headline)."""

    professionals: list[str]
    rows: list[ProfessionalRow]
    note: str | None


class CalibrationRow(_Model):
    """One LLM judge's win rate for one candidate, naive and corrected by its confusion against the experts."""

    judge: str
    mode: str
    task: str | None
    """None: every task of the mode pooled."""
    candidate: str
    naive: float | None
    naive_ci_low: float | None
    naive_ci_high: float | None
    corrected: float | None
    ci_low: float | None
    ci_high: float | None
    rogan_gladen: float | None
    """The matrix (Rogan-Gladen) form: P(judge | expert) inverted; None when not correctable."""
    rg_ci_low: float | None
    rg_ci_high: float | None
    rg_reason: str | None
    expert_only: float | None
    """The experts' win rate on the labelled comparisons alone (for reference)."""
    sensitivity: float | None
    specificity: float | None
    youden: float | None
    labels: int
    """Comparisons both the judge and an expert judged (the calibration's n)."""
    judged: int
    """Comparisons of the candidate the judge judged (the naive rate's n)."""
    reason: str | None


class RubricCalibrationRow(_Model):
    """One LLM judge's mean rubric average for a candidate, naive and calibrated to the experts' (isotonic)."""

    judge: str
    mode: str
    candidate: str
    naive: float | None
    calibrated: float | None
    ci_low: float | None
    ci_high: float | None
    labels: int
    """(comparison, candidate) averages both the judge and an expert gave (the fit's n)."""
    judged: int
    reason: str | None


class JudgeTierRow(_Model):
    """One LLM judge's kappa with the experts, placed among the expert-expert kappas."""

    judge: str
    kappa: float | None
    n: int
    """Shared comparisons summed over the experts it was compared with."""
    experts: int
    people_kappa: float | None
    people_sd: float | None
    people_pairs: int
    people_n: int
    z: float | None
    tier: str | None
    spread_from: str
    reason: str | None


class CalibrationSection(_WithAbsent):
    """Judge calibration from expert labels (issue 26): corrected win rates, calibrated rubric averages, tiers."""

    ABSENT_WHEN_NONE = (
        "confidence",
        "bootstrap",
        "min_labels",
        "min_youden",
        "rows",
        "not_correctable",
        "too_few_labels",
        "rubric",
        "tiers",
        "tier_z",
    )

    present: bool
    note: str | None
    confidence: float | None = None
    bootstrap: int | None = None
    min_labels: int | None = None
    min_youden: float | None = None
    rows: list[CalibrationRow] | None = None
    not_correctable: int | None = None
    too_few_labels: int | None = None
    rubric: list[RubricCalibrationRow] | None = None
    tiers: list[JudgeTierRow] | None = None
    tier_z: float | None = None


class ExamJudgeRow(_Model):
    """One judge's admission exam, over every flaw kind (`kind` "all") or one: each pair counted once.

    A pair is `answered` when both orders got a valid verdict, `invalid` when a reply stayed
    invalid, `failed` when a call failed every attempt, `not_asked` when nothing is stored yet.
    `examined` = answered + invalid (an invalid reply is not a right answer); `correct`: pairs
    whose intact copy won in both orders (position-consistent); `accuracy` = correct / examined
    with a 95 % Wilson interval. `first_picks` of `decided` answers chose the option shown first.
    """

    judge: str
    kind: str
    pairs: int
    answered: int
    invalid: int
    failed: int
    not_asked: int
    examined: int
    correct: int
    accuracy: float | None
    ci_low: float | None
    ci_high: float | None
    decided: int
    first_picks: int


class ExamKindRow(_Model):
    """One (task, flaw kind) of the exam plan: slots, pairs planted, slots left not applicable and why."""

    task: str
    kind: str
    slots: int
    planted: int
    not_applicable: int
    reason: str | None


class ExamAdmissionRow(_Model):
    """Whether a judge meets the session's `judging.admit_min_accuracy`, and whether it was left out of the panel."""

    judge: str
    accuracy: float | None
    examined: int
    admitted: bool
    left_out: bool
    reason: str


class ExamSection(_Model):
    """The judges' admission exam (issue 26): planted-flaw pairs asked of every judge in both orders.

    `min_accuracy`: the session's `judging.admit_min_accuracy` (None: no minimum); `enforce`: the
    judges below it are left out of every statistic (`left_out`, with `left_out_judgments` of
    their tournament judgments), otherwise only reported.
    """

    seed: str
    pairs: int
    planted: int
    not_applicable: int
    questions: int
    rows: list[ExamJudgeRow]
    kinds: list[ExamKindRow]
    min_accuracy: float | None
    enforce: bool
    admission: list[ExamAdmissionRow]
    left_out: list[str]
    left_out_judgments: int
    note: str


class ServedRow(_Model):
    """One LLM judge's answered judge calls by who served them (issue 26).

    `other_model`: answered by a model other than the one scheduled (a provider-side fallback or
    alias); of those, `other_family` by a model of another family (or one no session entry
    names), whose judgments are refused for leave-family-out (status `served_other_family`).
    """

    judge: str
    scheduled: str
    family: str
    judgments: int
    not_recorded: int
    other_model: int
    other_family: int
    served: list[str]


class ServedSection(_Model):
    """Which model served each LLM judge's judgments, and the judgments refused because another family answered."""

    rows: list[ServedRow]
    refused: int
    note: str


class DialogueRow(_Model):
    """One assistant at 1 turn and at N turns ([augmentation] turns, issue 28)."""

    assistant: str
    dialogue_candidate: str
    rank_1: float | None
    """Rank (1 = best, average ranks for ties) among the 1-turn assistants and plain, by win rate."""
    win_rate_1: float | None
    games_1: int
    rank_n: float | None
    """Rank among the N-turn (dialogue) candidates and plain, by win rate."""
    win_rate_n: float | None
    games_n: int
    head_to_head: float | None
    """Win rate of the N-turn candidate against its own 1-turn candidate (ties = half a win)."""
    head_to_head_games: int
    reason: str | None = None


class DialogueSection(_Model):
    """Each assistant's rank at 1 turn and at N turns: does a dialogue change which assistant helps most?"""

    turns: int
    plain: str
    n_1: int
    """Usable judgments among the 1-turn candidates and plain."""
    n_n: int
    """Usable judgments among the N-turn candidates and plain."""
    n_head_to_head: int
    excluded: dict[str, int]
    """Augmentation judgments not used, by status (invalid, other judge kind, ...)."""
    rows: list[DialogueRow]


class IdentifiabilityRow(_Model):
    """Issue 26: how well a text classifier names the candidate behind a deliverable of one task and mode.

    `status` is "ok", "too few" (fewer than `min_per_candidate` deliverables of some candidate:
    no classifier is trained, the row stays with its counts) or "one candidate".
    """

    task: str
    mode: str
    presentation: str
    """"as written" or "normalised" (the layout experts see with `[blinding] normalise_presentation`)."""
    status: str
    candidates: int
    deliverables: int
    folds: int | None
    correct: int | None
    accuracy: float | None
    low: float | None
    high: float | None
    chance: float | None
    threat: bool
    reason: str | None


class GuessRow(_Model):
    """Bang's blinding index of the experts' free-text guesses of who wrote option 1, for one expert or one arm."""

    level: str
    """"candidate" (the guess names the candidate) or "family" (it names the candidate's family)."""
    group: str
    """"expert" or "candidate" (the arm: the candidate that truly wrote option 1)."""
    name: str
    guesses: int
    """Every guess of the group."""
    scored: int
    """The n of the index: the guesses less those not scored (family level: one family in the comparison)."""
    correct: int
    incorrect: int
    """Wrong guesses, the unmatched ones included."""
    unmatched: int
    """Texts that named none of the session's candidates or families ("named something else")."""
    family_only: int
    """Candidate level: texts naming only the right family, scored 0 (always 0 at the family level)."""
    dont_know: int
    index: float | None
    low: float | None
    high: float | None
    flagged: bool


class BlindingSection(_Model):
    """Issue 26: blinding measured: identifiability of the candidates by a classifier, and the experts' guesses.

    Identifiability: character n-grams (TF-IDF) and layout counts, a linear SVM,
    stratified k-fold held-out top-1 accuracy with a Wilson interval against chance 1/K; a threat
    when the interval's lower bound exceeds chance by `margin`. Guesses (free text matched against the
    candidates, domain.guessing): Bang's blinding index generalised to K choices, BI = (correct -
    incorrect/(K-1)) / n (don't-know answers in n), at the candidate and the family level, with a
    Wald interval; flagged when |BI| exceeds `threshold`.
    """

    identifiability: list[IdentifiabilityRow]
    guesses: list[GuessRow]
    margin: float
    threshold: float
    confidence: float
    min_per_candidate: int
    seed: int
    excluded: dict[str, int]
    """Deliverables left out, by reason (e.g. "empty": no text)."""
    note: str | None


class ReportDocument(_WithAbsent):
    """The whole report: header counts, per-mode rankings, cross-mode, reliability, validity, experts, human workers."""

    ABSENT_WHEN_NONE = (
        "ppr",
        "calibration",
        "active",
        "human_workers",
        "outcomes",
        "seat",
        "record",
        "integrity",
        "agreement_matrix",
        "workers",
        "professional",
        "exam",
        "served",
        "section",
        "dialogue",
        "blinding",
    )

    schema_: str = Field(alias="schema")
    session: str
    simulated: bool
    banner: str | None
    options: ReportOptionsDoc
    counts: Counts
    modes: list[ModeReport]
    best_by_task: list[BestByTaskRow]
    cross_mode: CrossMode
    reliability: ReliabilityTable
    validity: Validity
    experts: ExpertsSection
    ppr: PPRSection | None = None
    calibration: CalibrationSection | None = None
    active: ActiveSection | None = None
    """Rank-sets from active draws (`centaur assign --strategy active`); absent when there are none."""
    human_workers: HumanWorkersSection | None = None
    outcomes: OutcomesSection | None = None
    seat: SeatSection | None = None
    record: RecordSection | None = None
    integrity: IntegritySection | None = None
    agreement_matrix: AgreementMatrixSection | None = None
    workers: WorkersSection | None = None
    """A worker panel (`[[workers]]`): absent for a session with one worker model."""
    professional: ProfessionalSection | None = None
    """The human professional as the bar: absent when the session declares no professional deliverable."""
    exam: ExamSection | None = None
    served: ServedSection | None = None
    blinding: BlindingSection | None = None
    section: str | None = None
    """The one section computed (`centaur report --section`); absent: every section."""
    dialogue: DialogueSection | None = None
    """Ranks at 1 turn and at N turns (sessions with `[augmentation] turns` > 1; absent otherwise)."""

    @property
    def schema_name(self) -> str:
        """The document's schema id ("centaur-report/1")."""
        return self.schema_

    def mode(self, name: str) -> ModeReport | None:
        """The section of one mode, or None when the session has no such mode."""
        return next((m for m in self.modes if m.mode == name), None)

    def with_human_workers(self, section: HumanWorkersSection) -> ReportDocument:
        """This document with the human-worker arm's section (`stats.human_arm.human_arm_section`) added."""
        return self.model_copy(update={"human_workers": section})

    def with_dialogue(self, section: DialogueSection) -> ReportDocument:
        """This document with the 1-turn against N-turn ranks (`stats.dialogue.dialogue_section`) added."""
        return self.model_copy(update={"dialogue": section})

    def with_seat(self, section: SeatSection) -> ReportDocument:
        """This document with the experts-at-work section (`services.report.seat_section`) added."""
        return self.model_copy(update={"seat": section})

    def with_integrity(self, section: IntegritySection) -> ReportDocument:
        """This document with the integrity signals of expert judging (`services.console.integrity_section`)."""
        return self.model_copy(update={"integrity": section})

    def with_blinding(self, section: BlindingSection | None) -> ReportDocument:
        """This document with blinding measured (`services.report.blinding_section`) added."""
        return self.model_copy(update={"blinding": section})

    def with_agreement_matrix(self, section: AgreementMatrixSection | None) -> ReportDocument:
        """This document with the agreement matrix (`services.report.agreement_section`) added."""
        return self.model_copy(update={"agreement_matrix": section})

    def with_exam(self, section: ExamSection | None) -> ReportDocument:
        """This document with the judges' admission exam (`services.exam.exam_section`) added."""
        return self.model_copy(update={"exam": section})

    def with_served(self, section: ServedSection | None) -> ReportDocument:
        """This document with the served models of the judge calls (`services.exam.served_section`) added."""
        return self.model_copy(update={"served": section})

    def with_record(self, section: RecordSection) -> ReportDocument:
        """This document with the chain head it was computed from (`services.report`)."""
        return self.model_copy(update={"record": section})

    def with_outcomes(self, value: OutcomesSection) -> ReportDocument:
        """This document with the planned items' outcomes, and `missing` judgments in the `excluded` denominators.

        A planned judgment with nothing stored is left out of every statistic like an invalid one,
        so it joins as `missing` (absent when none is) each mode's `excluded`, the reliability
        rows of the whole session and of each mode, and the per-judge rows of choice-rubric
        consistency and position bias.
        """

        def missing(row: OutcomeRow | None) -> int:
            return row.missing if row is not None else 0

        def add(model: _Excluding, n: int) -> _Excluding:
            return model if not n else model.model_copy(update={"excluded": {**model.excluded, "missing": n}})

        judging = value.stages.get("judging")
        modes = [add(m, missing(value.modes.get(m.mode))) for m in self.modes]
        reliability = [
            add(
                r,
                missing(judging)
                if r.scope == "overall"
                else missing(value.modes.get(r.mode or ""))
                if r.scope == "mode"
                else 0,
            )
            for r in self.reliability.rows
        ]
        v = self.validity
        choice = [add(r, missing(value.judges.get(r.judge))) for r in v.choice_rubric.rows]
        bias = [add(r, missing(value.judges.get(r.judge))) for r in v.position_bias.rows]
        validity = v.model_copy(
            update={
                "choice_rubric": v.choice_rubric.model_copy(update={"rows": choice}),
                "position_bias": v.position_bias.model_copy(update={"rows": bias}),
            }
        )
        return self.model_copy(
            update={
                "outcomes": value,
                "modes": modes,
                "validity": validity,
                "reliability": self.reliability.model_copy(update={"rows": reliability}),
            }
        )

    def to_json(self, indent: int | None = 2) -> str:
        """The document as `centaur report --json` writes it (no NaN, UTF-8 kept, no trailing newline)."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> ReportDocument:
        """Read a document written by `to_json` (raises pydantic's ValidationError on another shape)."""
        return cls.from_dict(json.loads(text))


for _model in list(globals().values()):
    if isinstance(_model, type) and issubclass(_model, BaseModel) and _model is not BaseModel:
        _model.model_rebuild()
