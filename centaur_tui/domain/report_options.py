"""Provides `ReportOptions`: the report's method choices and their defaults, defined once.

`centaur report`'s flags, a session's `[statistics]` table, the report services, the app's
report process and the statistics (`stats.report.build_report`, `ExpertOptions`,
`PPROptions`) all take their defaults from here, so they cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from centaur_tui.domain.session import StatisticsParams

RankMethod = Literal["mean_win_rate", "rank_per_judge", "pooled"]
RANK_METHODS: tuple[RankMethod, ...] = ("mean_win_rate", "rank_per_judge", "pooled")
PPRMethod = Literal["maxt", "chatzi", "bonferroni"]
PPR_METHODS: tuple[PPRMethod, ...] = ("maxt", "chatzi", "bonferroni")
PPRLambda = Literal["tuned", "one", "zero"]
PPREstimator = Literal["panel", "mean"]
PPR_ESTIMATORS: tuple[PPREstimator, ...] = ("panel", "mean")
PPRTies = Literal["half", "drop"]
PPR_TIES: tuple[PPRTies, ...] = ("half", "drop")
PPR_MIN_LABELED_FLOOR = 5
"""The lowest `--ppr-min-labeled` the report accepts (lower values are refused).

Measured with `stats.ppr_panel.panel_estimate` and step-down max-t rank-sets on 300 simulated
studies per cell (12 candidates with planted judge biases, 12-45 expert comparisons, ties
10-30%; and the 6-candidate `stats.synthetic.ppr_studies` at 12-40): with a guard of 1 the rank-sets
covered the experts' ranking in only 35-55% of studies at 12-20 comparisons (alpha 0.1), 2 in
76-89%, 3 in 90-95% (below 1 - alpha - 0.02 at alpha 0.05 and 20 comparisons: 0.933 against
0.93, too close), 4 in 96-100%, 5 and more in at least 97% everywhere."""

REPORT_SECTIONS: tuple[str, ...] = (
    "outcomes",
    "rankings",
    "best",
    "cross-mode",
    "reliability",
    "validity",
    "experts",
    "ppr",
    "calibration",
    "seat",
    "workers",
    "professional",
)
"""The sections `centaur report --section NAME` computes and prints alone, in print order."""

SESSION_OPTIONS = ("alt_epsilon", "alt_min_experts_per_item", "ppr_alpha", "ppr_method")
"""Options a session may fix in its `[statistics]` table (`StatisticsParams`); a flag given to `centaur report` wins."""


@dataclass(frozen=True)
class ReportOptions:
    """Choices a report is built with; all are written into the document.

    Attributes:
        rank_method: Within-run rank method (mean_win_rate, rank_per_judge or pooled).
        bootstrap: Bootstrap replicates of every interval (0: no intervals).
        confidence: Coverage of the intervals.
        seed: Seed of the bootstrap.
        permutation: Also compute exact permutation p-values for the cross-mode correlations.
        judge_kinds: Judge kinds the statistics use ("llm", "expert").
        alt_epsilon: Cost-benefit margin of the alternative annotator test in the experts
            section (0.2, the paper's value for expert annotators).
        alt_min_experts_per_item: Fewest expert verdicts on a comparison for the alt-test (3;
            the authors allow 2).
        ppr_alpha: Error level of the prediction-powered rank-sets.
        ppr_method: Their simultaneous intervals: "maxt" (step-down max-t over the pairwise
            differences), "chatzi" (the paper's chi-square ellipsoid) or "bonferroni".
        ppr_estimator: "panel" (every LLM judge a prediction, pooled lambda: `stats.ppr_panel`)
            or "mean" (the panel's mean points, a lambda per candidate: `stats.ppr.ppr_estimate`).
        ppr_ties: A tie is 0.5 for each side ("half") or dropped ("drop": share of wins among
            decisive verdicts); "drop" needs the panel estimator.
        ppr_lam: Power tuning of the LLM comparisons: "tuned", "one" or "zero".
        ppr_any_subset: Use every expert judgment for them, not only uniform-random draws (flagged).
        ppr_min_labeled: Fewest expert comparisons of a candidate for it to be ordered.
        section: Compute this section of `REPORT_SECTIONS` alone (the others are left empty and
            the document's `section` says so); None: every section.
    """

    rank_method: RankMethod = "mean_win_rate"
    bootstrap: int = 200
    confidence: float = 0.95
    seed: int = 0
    permutation: bool = True
    judge_kinds: tuple[str, ...] = ("llm",)
    alt_epsilon: float = 0.2
    alt_min_experts_per_item: int = 3
    ppr_alpha: float = 0.1
    ppr_method: PPRMethod = "maxt"
    ppr_lam: PPRLambda = "tuned"
    ppr_estimator: PPREstimator = "panel"
    ppr_ties: PPRTies = "half"
    ppr_any_subset: bool = False
    ppr_min_labeled: int = 10
    section: str | None = None

    @classmethod
    def for_session(cls, statistics: StatisticsParams | None = None, **changes: Any) -> ReportOptions:
        """The defaults, with what a session's `[statistics]` fixes, then `changes` (flags given) on top.

        Args:
            statistics: The session's `[statistics]` table (None: the defaults alone).
            **changes: ReportOptions fields; an unknown name raises TypeError.
        """
        fixed = {name: getattr(statistics, name) for name in SESSION_OPTIONS} if statistics is not None else {}
        return replace(cls(), **{**fixed, **changes})


REPORT_DEFAULTS = ReportOptions()
"""The defaults every front end shows and every statistic starts from."""
