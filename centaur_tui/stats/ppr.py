"""Provides prediction-powered rankings: LLM-judge comparisons corrected by expert comparisons on a random subset.

The estimator of Chatzi, Straitouri, Thejaswi and Gomez-Rodriguez ("Prediction-Powered
Ranking of Large Language Models", NeurIPS 2024), built on prediction-powered inference
(Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference", Science
2023) and its power tuning (PPI++, Angelopoulos, Duchi and Zrnic 2023):

- Unit: one comparison u of two candidates. Y_m(u) = the experts' points for candidate m on
  u (wins + 0.5 ties, averaged over the experts who judged u), known only on the labelled
  set L (the comparisons experts judged); Yhat_m(u) = the LLM judges' points for m on u,
  known on every comparison. U = the comparisons no expert judged.
- Estimand: theta_m = the experts' win probability of m, the mean of Y_m over the
  comparisons involving m (on a round robin: the mean over opponents of P(m beats them)).
- Estimate, per candidate: theta_m = lambda_m mean_U(Yhat_m) + mean_L(Y_m - lambda_m Yhat_m),
  the means over the comparisons of each set that involve m. lambda = 1 is classical PPI
  (the paper's default), lambda = 0 the experts alone; "tuned" takes ppi-python's
  `ppi_mean_pointestimate(lam=None)` value for each candidate (clipped to [0, 1]).
- Covariance across candidates: the sum over comparisons of the products of their
  influence terms (each comparison moves the two candidates it involves), U and L
  independent; its diagonal equals ppi-python's `ppi_mean_ci` variance.
- Rank-sets: two candidates are ordered when the interval of their difference excludes 0,
  with simultaneous intervals: the paper's projection of the chi-square(k) confidence
  ellipsoid (`method="chatzi"`) or Bonferroni over the k(k-1)/2 pairs. The rank-set of m
  is [1 + candidates surely above m, k - candidates surely below m]. When theta lies in the
  simultaneous region, every rank-set holds the candidate's rank under theta, so all
  rank-sets cover the experts' ranking at once with probability >= 1 - alpha (asymptotically).

ppi-python itself is not a dependency: version 0.2.3 pulls in numba, llvmlite, scikit-learn,
statsmodels and gdown (16 packages; its import takes 1.4 s), for two lines of arithmetic per
candidate. `tests/test_ppr.py` checks these functions against values ppi-python computed.

Every function takes a leading batch axis (S studies), so 200 simulated studies are one call.

The report's default is the panel estimator of `stats.ppr_panel` (every judge a prediction,
a pooled lambda, ties half or dropped) with step-down max-t rank-sets (`method="maxt"`);
`PPROptions(estimator="mean")` keeps the estimator above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from centaur_tui.domain.report_options import (
    PPR_ESTIMATORS,
    PPR_MIN_LABELED_FLOOR,
    PPR_TIES,
    REPORT_DEFAULTS,
    PPREstimator,
    PPRLambda,
    PPRMethod,
    PPRTies,
)
from centaur_tui.report.document import PPRMode, PPROptionsDoc, PPRRow, PPRSection

ALPHA = REPORT_DEFAULTS.ppr_alpha
"""Default error level of the rank-sets (the paper's experiments use 0.05 and 0.1)."""
MIN_LABELED = REPORT_DEFAULTS.ppr_min_labeled
"""Fewest expert comparisons of a candidate for the report to order it (fewer: its rank-set spans every rank).

The normal approximation behind the intervals needs a few labelled comparisons per
candidate: with 10 candidates and 25 random expert comparisons (5 per candidate) the
planned rank-sets came out *smaller* on average than with 50 (8.4 vs 9.3 of 10 in
`centaur plan` on the demo session), a sign of variances estimated from too few points."""
MIN_LABELED_FLOOR = PPR_MIN_LABELED_FLOOR
"""The lowest `--ppr-min-labeled` the command line accepts (`domain.report_options`, where it is measured)."""
RankSetMethod = PPRMethod
Lambda = Literal["tuned", "one", "zero"] | float


@dataclass(frozen=True)
class Estimate:
    """Win-probability estimates of k candidates in S studies.

    Attributes:
        theta: (S, k) estimates (NaN for a candidate with no labelled comparison).
        sigma: (S, k, k) covariance of the estimates.
        lam: (S, k) the power-tuning weight of the LLM comparisons used per candidate.
        labeled: (S, k) labelled comparisons involving each candidate.
        unlabeled: (S, k) unlabelled comparisons involving each candidate.
    """

    theta: np.ndarray
    sigma: np.ndarray
    lam: np.ndarray
    labeled: np.ndarray
    unlabeled: np.ndarray

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diagonal(self.sigma, axis1=-2, axis2=-1), 0.0, None))


def incidence(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(k, U) indicator matrices: candidate m is candidate_a (first) / candidate_b (second) of comparison u."""
    a = np.asarray(a, dtype=int)
    b = np.asarray(b, dtype=int)
    if a.shape != b.shape or (a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= k)):
        raise ValueError("candidate indices must be in [0, k) and of one shape")
    if np.any(a == b):
        raise ValueError("a comparison needs two different candidates")
    eye = np.eye(k)
    return eye[:, a], eye[:, b]


def _points(ma: np.ndarray, mb: np.ndarray, p_a: np.ndarray) -> np.ndarray:
    """(S, k, U) points of every candidate on every comparison from candidate_a's points (NaN stays NaN)."""
    p = np.nan_to_num(p_a)[..., None, :]
    return ma * p + mb * (1.0 - p)


def _mean(m: np.ndarray, w: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate: weighted count and mean of x (S, k, U) over the comparisons with w (S, U) that involve it."""
    mw = m * w[..., None, :]
    count = mw.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (mw * x).sum(-1) / count
    return count, mean


def ppr_estimate(
    a: np.ndarray,
    b: np.ndarray,
    k: int,
    yhat: np.ndarray,
    y: np.ndarray,
    labeled: np.ndarray,
    *,
    usable: np.ndarray | None = None,
    lam: Lambda = "tuned",
    min_labeled: int = 1,
) -> Estimate:
    """The prediction-powered estimate of every candidate's expert win probability (see the module docstring).

    Args:
        a: (U,) index of candidate_a of each comparison.
        b: (U,) index of candidate_b.
        k: Number of candidates.
        yhat: (S, U) or (U,) the LLM judges' points for candidate_a (NaN: no LLM verdict).
        y: Same shape, the experts' points for candidate_a (read only where labelled).
        labeled: Same shape, True where experts judged the comparison.
        usable: Same shape, comparisons taking part at all (default: those with an LLM verdict).
        lam: "tuned" (PPI++), "one" (PPI), "zero" (experts only) or a number in [0, 1].
        min_labeled: Fewest labelled comparisons of a candidate; below it its theta is NaN
            (never ordered against another candidate).

    Returns:
        The estimate; a candidate without labelled comparisons has NaN theta and NaN covariance.
    """
    yhat = np.atleast_2d(np.asarray(yhat, dtype=float))
    y = np.atleast_2d(np.asarray(y, dtype=float))
    lab = np.atleast_2d(np.asarray(labeled, dtype=bool))
    use = np.isfinite(yhat) if usable is None else np.atleast_2d(np.asarray(usable, dtype=bool)) & np.isfinite(yhat)
    lab = lab & use & np.isfinite(y)
    unl = use & ~lab
    ma, mb = incidence(a, b, k)
    m = ma + mb
    ph = _points(ma, mb, yhat)
    py = _points(ma, mb, y)
    n_u, mu_u = _mean(m, unl.astype(float), ph)
    n_l, mu_lh = _mean(m, lab.astype(float), ph)
    _, mu_ly = _mean(m, lab.astype(float), py)
    wl = m * lab[..., None, :]
    wu = m * unl[..., None, :]
    if lam == "tuned":
        # ppi-python's _calc_lam_glm for a mean: cov(Y, Yhat) over L (1/n) divided by
        # (1 + n/N) times the sample variance (ddof 1) of Yhat over L and U together.
        with np.errstate(invalid="ignore", divide="ignore"):
            cov = (wl * (py - mu_ly[..., None]) * (ph - mu_lh[..., None])).sum(-1) / n_l
            both = wl + wu
            n_all = n_l + n_u
            mu_all = (both * ph).sum(-1) / n_all
            var = (both * (ph - mu_all[..., None]) ** 2).sum(-1) / (n_all - 1)
            lam_m = cov / ((1.0 + n_l / n_u) * var)
        lam_m = np.clip(np.nan_to_num(lam_m, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
    else:
        value = {"one": 1.0, "zero": 0.0}.get(lam, lam) if isinstance(lam, str) else float(lam)
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"lambda must be in [0, 1], got {value}")
        lam_m = np.full(n_l.shape, float(value))
    # A candidate all of whose comparisons are labelled has no unlabelled mean: experts only.
    lam_m = np.where(n_u > 0, lam_m, 0.0)
    mu_u0 = np.nan_to_num(mu_u)
    rect = py - lam_m[..., None] * ph
    with np.errstate(invalid="ignore", divide="ignore"):
        rbar = (wl * rect).sum(-1) / n_l
        theta = lam_m * mu_u0 + rbar
        psi_u = wu * (lam_m[..., None] * (ph - mu_u0[..., None])) / np.where(n_u > 0, n_u, 1.0)[..., None]
        psi_l = wl * (rect - rbar[..., None]) / n_l[..., None]
    sigma = np.einsum("sku,sju->skj", psi_u, psi_u) + np.einsum("sku,sju->skj", psi_l, psi_l)
    theta = np.where(n_l >= max(min_labeled, 1), theta, np.nan)
    return Estimate(theta, sigma, lam_m, n_l.astype(int), n_u.astype(int))


def mean_estimate(
    a: np.ndarray, b: np.ndarray, k: int, p_a: np.ndarray, mask: np.ndarray, min_labeled: int = 1
) -> Estimate:
    """One side alone: every candidate's mean points over the comparisons in `mask`, with the same covariance form.

    With the experts' points and the labelled mask it is the expert-only (classical)
    estimate; with the LLM points and every comparison it is the LLM-only ranking, whose
    interval only reflects the LLM judges' own sampling noise, not their bias.
    """
    p_a = np.atleast_2d(np.asarray(p_a, dtype=float))
    mask = np.atleast_2d(np.asarray(mask, dtype=bool)) & np.isfinite(p_a)
    ma, mb = incidence(a, b, k)
    m = ma + mb
    p = _points(ma, mb, p_a)
    count, mean = _mean(m, mask.astype(float), p)
    w = m * mask[..., None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        psi = w * (p - np.nan_to_num(mean)[..., None]) / count[..., None]
    sigma = np.einsum("sku,sju->skj", psi, psi)
    mean = np.where(count >= max(min_labeled, 1), mean, np.nan)
    return Estimate(mean, sigma, np.zeros_like(mean), count.astype(int), np.zeros_like(count, dtype=int))


def critical_value(k: int, alpha: float, method: RankSetMethod) -> float:
    """The multiplier of a difference's SE above which two candidates are ordered."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if k < 2:
        return math.inf
    if method == "chatzi":
        return float(math.sqrt(stats.chi2.ppf(1.0 - alpha, k)))
    if method == "bonferroni":
        return float(stats.norm.ppf(1.0 - alpha / (k * (k - 1))))
    if method == "maxt":
        return math.nan  # depends on the covariance: `ppr_panel.rank_sets_maxt`
    raise ValueError(f"unknown rank-set method {method!r} (maxt, chatzi, bonferroni)")


def rank_sets(
    theta: np.ndarray, sigma: np.ndarray, alpha: float = ALPHA, method: RankSetMethod = "chatzi"
) -> tuple[np.ndarray, np.ndarray]:
    """Rank-sets [low, high] (1 = best) of every candidate from estimates and their covariance.

    Args:
        theta: (..., k) estimates; a NaN candidate is never ordered against another.
        sigma: (..., k, k) covariance.
        alpha: Error level: all rank-sets cover the true ranking at once with probability >= 1 - alpha.
        method: "maxt" (step-down max-t, `ppr_panel.rank_sets_maxt`), "chatzi" (the paper's
            chi-square(k) ellipsoid) or "bonferroni".

    Returns:
        (low, high) integer arrays of theta's shape.
    """
    theta = np.asarray(theta, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    k = theta.shape[-1]
    crit = critical_value(k, alpha, method)
    if method == "maxt":
        from centaur_tui.stats.ppr_panel import MAXT_DRAWS, rank_sets_maxt

        # One study (the report): 20,000 draws; a batch of simulated studies (planning): 2,000 each.
        return rank_sets_maxt(theta, sigma, alpha, draws=MAXT_DRAWS if theta.ndim == 1 else 2000)
    diag = np.diagonal(sigma, axis1=-2, axis2=-1)
    var = diag[..., :, None] + diag[..., None, :] - 2.0 * sigma
    d = theta[..., :, None] - theta[..., None, :]
    with np.errstate(invalid="ignore"):
        sep = np.abs(d) > crit * np.sqrt(np.clip(var, 0.0, None))
    sep &= np.isfinite(d) & np.isfinite(var)
    sep &= ~np.eye(k, dtype=bool)
    low = 1 + (sep & (d < 0)).sum(-1)
    high = k - (sep & (d > 0)).sum(-1)
    return low.astype(int), high.astype(int)


def ranks_of(theta: np.ndarray) -> np.ndarray:
    """Rank of every candidate (1 = highest theta; exact ties share the best rank)."""
    theta = np.asarray(theta, dtype=float)
    return 1 + (theta[..., None, :] > theta[..., :, None]).sum(-1)


def covers(low: np.ndarray, high: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """True per study when every candidate's rank lies in its rank-set (simultaneous coverage)."""
    return np.all((low <= ranks) & (ranks <= high), axis=-1)


def set_sizes(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Mean rank-set size (high - low + 1) over the candidates, per study."""
    return np.mean(high - low + 1, axis=-1)


# -- the report's section ---------------------------------------------------------------------


@dataclass(frozen=True)
class PPROptions:
    """Choices of the prediction-powered rankings; all are written into the section.

    Attributes:
        alpha: Error level of the rank-sets (coverage >= 1 - alpha, simultaneously).
        method: "chatzi" (the paper's ellipsoid) or "bonferroni".
        lam: Power tuning: "tuned" (PPI++, per candidate), "one" (PPI) or "zero" (experts only).
        any_subset: Use every expert judgment, not only those the uniform-random strategy
            drew (the estimate is then flagged: its coverage holds only if that subset is random).
        min_labeled: Fewest expert comparisons of a candidate to order it (`MIN_LABELED`;
            the command line refuses less than `MIN_LABELED_FLOOR`).
        estimator: "panel" (every judge a prediction: `ppr_panel.panel_estimate`) or "mean"
            (the panel's mean points: `ppr_estimate`).
        ties: "half" (a tie 0.5 each) or "drop" (share of wins among decisive verdicts; panel only).
    """

    alpha: float = ALPHA
    method: RankSetMethod = REPORT_DEFAULTS.ppr_method
    lam: PPRLambda = REPORT_DEFAULTS.ppr_lam
    any_subset: bool = REPORT_DEFAULTS.ppr_any_subset
    min_labeled: int = MIN_LABELED
    estimator: PPREstimator = REPORT_DEFAULTS.ppr_estimator
    ties: PPRTies = REPORT_DEFAULTS.ppr_ties

    def __post_init__(self) -> None:
        if self.estimator not in PPR_ESTIMATORS:
            raise ValueError(f"unknown PPR estimator {self.estimator!r} ({', '.join(PPR_ESTIMATORS)})")
        if self.ties not in PPR_TIES:
            raise ValueError(f"unknown PPR ties option {self.ties!r} ({', '.join(PPR_TIES)})")
        if self.ties == "drop" and self.estimator != "panel":
            raise ValueError("ties 'drop' needs the panel estimator (--ppr-estimator panel)")


NO_EXPERTS = (
    "No expert judgments: prediction-powered rankings need experts' verdicts on a uniformly random subset of the "
    "comparisons (`centaur assign --strategy uniform-random`)."
)
PPR_COLUMNS = [
    "candidate",
    "ppr_theta",
    "ppr_se",
    "ppr_low",
    "ppr_high",
    "lam",
    "labeled",
    "unlabeled",
    "expert_theta",
    "expert_low",
    "expert_high",
    "llm_theta",
    "llm_low",
    "llm_high",
]


def _section_mode(
    mode: str,
    names: list[str],
    units: Any,
    llm_points: Any,
    expert_points: Any,
    options: PPROptions,
    panel: tuple[Any, Any] | None = None,
) -> tuple[PPRMode, Any]:
    import pandas as pd

    from centaur_tui.stats.common import rows as row_models

    k = len(names)
    pos = {n: i for i, n in enumerate(names)}
    a = units["candidate_a"].astype(str).map(pos).to_numpy()
    b = units["candidate_b"].astype(str).map(pos).to_numpy()
    rows = units["_row"].to_numpy()  # positions in `frames.comparisons`, as the judgments' `unit`
    yhat = llm_points.reindex(rows).to_numpy(dtype=float)
    y = expert_points.reindex(rows).to_numpy(dtype=float)
    usable = np.isfinite(yhat)
    labeled = np.isfinite(y) & usable
    if options.estimator == "panel" and panel is not None:
        # Every judge's own points (judge x unit) and every expert's (expert x unit) on this mode's comparisons.
        from centaur_tui.stats.ppr_panel import panel_estimate

        judges = panel[0].reindex(columns=rows).to_numpy(dtype=float)
        experts = panel[1].reindex(columns=rows).to_numpy(dtype=float)
        experts = np.where(labeled[None, :], experts, np.nan)
        # "one" on the panel: each judge 1/J, the panel's mean with lambda 1 (classical PPI).
        panel_lam: Any = {"zero": "zero", "tuned": "tuned"}.get(options.lam, np.full(len(judges), 1.0 / len(judges)))
        est = panel_estimate(
            a, b, k, judges, experts, labeled, lam=panel_lam, ties=options.ties, min_labeled=options.min_labeled
        )
        expert = panel_estimate(
            a, b, k, np.full((1, len(rows)), 0.5), experts, labeled, lam="zero", ties=options.ties,
            min_labeled=options.min_labeled,
        )  # fmt: skip
    else:
        est = ppr_estimate(a, b, k, yhat, y, labeled, lam=options.lam, min_labeled=options.min_labeled)
        expert = mean_estimate(a, b, k, y, labeled, min_labeled=options.min_labeled)
    llm = mean_estimate(a, b, k, yhat, usable)
    sets = {
        name: rank_sets(e.theta[0], e.sigma[0], options.alpha, options.method)
        for name, e in (("ppr", est), ("expert", expert), ("llm", llm))
    }
    frame = pd.DataFrame(
        {
            "candidate": names,
            "ppr_theta": est.theta[0],
            "ppr_se": est.se[0],
            "ppr_low": sets["ppr"][0],
            "ppr_high": sets["ppr"][1],
            "lam": est.lam[0],
            "labeled": est.labeled[0],
            "unlabeled": est.unlabeled[0],
            "expert_theta": expert.theta[0],
            "expert_low": sets["expert"][0],
            "expert_high": sets["expert"][1],
            "llm_theta": llm.theta[0],
            "llm_low": sets["llm"][0],
            "llm_high": sets["llm"][1],
        }
    )
    frame = (
        frame.assign(_o=-np.nan_to_num(frame["ppr_theta"].to_numpy(), nan=-np.inf))
        .sort_values(["_o", "candidate"], kind="stable")
        .drop(columns="_o")
    )
    n_lab = int(labeled.sum())
    reason = None
    if n_lab == 0:
        reason = "no comparison of this mode was judged by experts in the subset used"
    elif (est.labeled[0] < options.min_labeled).any():
        missing = [names[i] for i in np.flatnonzero(est.labeled[0] < options.min_labeled)]
        reason = (
            f"fewer than {options.min_labeled} expert comparisons involve {', '.join(missing)}: not ordered "
            "(their rank-sets span every rank, and they never narrow another's)"
        )

    def size(s: tuple[np.ndarray, np.ndarray]) -> float:
        return float(np.mean(s[1] - s[0] + 1))

    section = PPRMode(
        mode=mode,
        candidates=k,
        comparisons=int(usable.sum()),
        labeled=int(n_lab),
        no_llm_verdict=int((np.isfinite(y) & ~usable).sum()),
        mean_set_size={n: size(s) for n, s in sets.items()},
        reason=reason,
        rows=row_models(PPRRow, frame, PPR_COLUMNS),
    )
    return section, frame


def prediction_powered(frames: Any, options: PPROptions | None = None) -> tuple[PPRSection, dict[str, Any]]:
    """The report's prediction-powered rankings, per mode, pooled over tasks and runs.

    Per comparison, the LLM panel's points for candidate_a (mean of its usable first verdicts,
    ties 0.5) and the experts' (mean of the expert verdicts on it, counted only when the
    uniform-random strategy drew that (expert, comparison), unless `any_subset`). Expert
    verdicts left out are counted by the strategy that drew them.

    Returns:
        (section, tables): the report's section and a frame per mode.
    """
    import pandas as pd

    from centaur_tui.domain.assignment import RANDOM_STRATEGY

    options = options or PPROptions()
    critical_value(2, options.alpha, options.method)  # refuse a bad alpha or method up front
    opts = PPROptionsDoc(
        alpha=options.alpha,
        method=options.method,
        lam=options.lam,
        any_subset=options.any_subset,
        min_labeled=options.min_labeled,
        estimator=options.estimator,
        ties=options.ties,
    )
    kinds = frames.judgments["judge_kind"].astype(object)
    if not (kinds == "expert").any():
        return PPRSection(present=False, note=NO_EXPERTS, options=opts), {}
    both = frames.with_judge_kinds(("llm", "expert"))
    ok = both.ok
    if ok.duplicated(["unit", "judge"]).any():
        ok = ok.sort_values(["unit", "judge", "presentation"], kind="stable").drop_duplicates(["unit", "judge"])
    points = pd.Series(np.select([ok["code"] == 0, ok["code"] == 1], [1.0, 0.0], 0.5), index=ok.index)
    is_expert = (ok["judge_kind"].astype(str) == "expert").to_numpy()
    llm_points = points[~is_expert].groupby(ok.loc[~is_expert, "unit"].to_numpy()).mean()
    ex = ok[is_expert]
    strategy = pd.Series(
        frames.assignments["strategy"].to_numpy(),
        index=pd.MultiIndex.from_arrays([frames.assignments["expert"], frames.assignments["comparison_id"]]),
    )
    strategy = strategy[~strategy.index.duplicated()]
    drawn = (
        strategy.reindex(pd.MultiIndex.from_arrays([ex["judge"].astype(str), ex["comparison_id"].astype(str)]))
        .fillna("(no assignment: imported)")
        .to_numpy()
    )
    used = np.ones(len(ex), dtype=bool) if options.any_subset else drawn == RANDOM_STRATEGY
    excluded = {str(k): int(v) for k, v in pd.Series(drawn[~used]).value_counts().sort_index().items()}
    expert_points = points[is_expert][used].groupby(ex.loc[used, "unit"].to_numpy()).mean()
    llm_ok = ok[~is_expert]
    panel = (
        pd.DataFrame({"judge": llm_ok["judge"].astype(str).to_numpy(), "unit": llm_ok["unit"].to_numpy(),
                      "p": points[~is_expert].to_numpy()}).pivot_table(index="judge", columns="unit", values="p"),
        pd.DataFrame({"judge": ex.loc[used, "judge"].astype(str).to_numpy(), "unit": ex.loc[used, "unit"].to_numpy(),
                      "p": points[is_expert][used].to_numpy()}).pivot_table(index="judge", columns="unit", values="p"),
    )  # fmt: skip
    section = PPRSection(
        present=True,
        note=None,
        options=opts,
        random_subset=not options.any_subset,
        expert_verdicts=len(ex),
        expert_verdicts_used=int(used.sum()),
        excluded_not_random=excluded,
    )
    if not used.any():
        note = (
            "Refused: no expert judgment was drawn by the uniform-random strategy (drawn by: "
            + ", ".join(f"{k} {v}" for k, v in excluded.items())
            + "). A subset chosen by stratification or disagreement is not a random sample, and the rank-sets' "
            "coverage would not hold; assign with `--strategy uniform-random`, or pass --ppr-any-subset to "
            "compute them anyway (flagged)."
        )
        return section.model_copy(update={"note": note}), {}
    if options.any_subset:
        section = section.model_copy(
            update={
                "note": "Computed on every expert judgment, whatever strategy drew it (--ppr-any-subset): the "
                "coverage holds only if that subset is a uniformly random sample of the comparisons."
            }
        )
    comps = frames.comparisons
    modes: list[PPRMode] = []
    tables = {}
    for mode in frames.modes():
        units = comps.assign(_row=np.arange(len(comps)))[(comps["mode"] == mode).to_numpy()]
        names = frames.candidate_names(mode)
        mode_section, frame = _section_mode(mode, names, units, llm_points, expert_points, options, panel)
        modes.append(mode_section)
        tables[mode] = frame
    return section.model_copy(update={"modes": modes}), tables
