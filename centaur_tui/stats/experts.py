"""Provides the comparison of expert judges with LLM judges (STATISTICS.md, "Experts against LLM judges").

Everything starts from one usable verdict per (comparison, judge): the judge's first
presentation (an expert's swapped repeat, presentation 1, only feeds the repeat
consistency). The **reference set** is the comparisons with at least one expert verdict and
at least one LLM verdict (in a study with no LLM judge: the comparisons two or more experts
judged); agreement, majorities, rankings and the alternative annotator test
are computed on it. All bootstrap intervals resample the comparisons of the reference set
with one shared weight matrix, so intervals of different statistics are paired (the
expert-panel and LLM-panel rankings of a resample come from the same comparisons).
Biases are per judge over all of the judge's usable judgments.

Every statistic carries its n; one that cannot be computed is NaN with a reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse, stats

from centaur_tui.domain.report_options import REPORT_DEFAULTS
from centaur_tui.report.document import (
    AgreementBlockRow,
    AlphaRow,
    AltTest,
    AltTestExpertRow,
    AltTestRow,
    ConsistencyJudgeRow,
    ConsistencyJudgeTable,
    ExpertAgreement,
    ExpertBias,
    ExpertCounts,
    ExpertOptionsDoc,
    ExpertsSection,
    HeadlineRow,
    HeadlineTable,
    KappaRow,
    LengthBiasRow,
    LengthBiasTable,
    LeniencyRow,
    LeniencyTable,
    LooMajorityRow,
    LooMajorityTable,
    PanelCandidateRow,
    PanelMajority,
    PanelRankingRow,
    PanelRankings,
    PositionBiasJudgeRow,
    PositionBiasJudgeTable,
    RepeatsRow,
    RepeatsTable,
)
from centaur_tui.stats.agreement import (
    CHANCE_DECISIVE,
    CHANCE_WITH_TIES,
    block_agreement,
    code_counts,
    group_alpha,
    kappa_from_confusion,
    kappa_table,
    majority,
)
from centaur_tui.stats.alt_test import EPSILON, FDR_Q, MIN_ITEMS, alt_test
from centaur_tui.stats.bradley_terry import bradley_terry, fit_strengths
from centaur_tui.stats.common import bootstrap_weights, interval, json_value, percentile_interval, rows
from centaur_tui.stats.frames import Frames, status_counts
from centaur_tui.stats.rankings import TIE_DIGITS
from centaur_tui.stats.validity import choice_rubric_consistency

EXPERT = "expert"
LLM = "llm"
PARTS = ("agreement", "majority", "rankings", "bias", "alt_test", "headline")
"""Parts of the comparison; `centaur plan` asks only for agreement and rankings."""
ALL_TASKS = "(all tasks)"
ALL_EXPERTS = "(all experts)"
ALL_LLM = "(all LLM judges)"
LIMITS_OF_AGREEMENT = 1.96
"""Bland-Altman limits of agreement: mean difference +/- 1.96 SD of the differences."""
NO_EXPERTS_NOTE = (
    "No expert judgments in this session: nothing to compare with the LLM judges. Assign comparisons "
    "(`centaur assign`) and let experts judge them in the app or in a judging packet."
)


@dataclass(frozen=True)
class ExpertOptions:
    """Choices of the experts-vs-LLM comparison; all are written into the report.

    Attributes:
        bootstrap: Replicates of every bootstrap interval (0: no intervals).
        confidence: Interval coverage.
        seed: Seed of every resampling.
        epsilon: Cost-benefit margin of the alternative annotator test (0.2: experts).
        fdr_q: False discovery rate of its Benjamini-Yekutieli correction.
        alt_min_items: Fewest comparisons per expert for the alt-test (the paper's 30).
        alt_min_experts_per_item: Fewest expert verdicts on a comparison for the alt-test (3:
            leaving one expert out still leaves two to agree with).
        loo_min_others: Fewest other experts for a leave-one-out majority.
        parts: Which parts to compute (see PARTS).
    """

    bootstrap: int = REPORT_DEFAULTS.bootstrap
    confidence: float = REPORT_DEFAULTS.confidence
    seed: int = REPORT_DEFAULTS.seed
    epsilon: float = EPSILON
    fdr_q: float = FDR_Q
    alt_min_items: int = MIN_ITEMS
    alt_min_experts_per_item: int = REPORT_DEFAULTS.alt_min_experts_per_item
    loo_min_others: int = 1
    parts: tuple[str, ...] = PARTS


@dataclass
class ExpertResult:
    """The comparison as the report's typed section and the frames behind it."""

    section: ExpertsSection
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)

    @property
    def doc(self) -> dict[str, Any]:
        """The section as its JSON-ready dict (as `centaur report --json` writes it)."""
        return self.section.to_dict()


@dataclass
class Panel:
    """Verdicts of both judge kinds, and the reference set as a judges x comparisons matrix.

    Attributes:
        frames: The frames with LLM and expert judgments usable.
        rated: One usable verdict per (comparison, judge), every comparison.
        names: Judges in matrix order: experts (sorted), then LLM judges (session order).
        kinds: "expert" or "llm" per judge.
        units: Comparison rows (`frames.comparisons` positions) of the reference set.
        matrix: Judges x reference comparisons codes (NaN = no verdict).
        weights: (B, reference comparisons) bootstrap weights shared by every statistic.
    """

    frames: Frames
    rated: pd.DataFrame
    names: list[str]
    kinds: list[str]
    units: np.ndarray
    matrix: np.ndarray
    weights: np.ndarray

    @property
    def experts(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k == EXPERT]

    @property
    def llms(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k == LLM]


def has_expert_judgments(frames: Frames) -> bool:
    """True when any stored judgment (usable or not) is an expert's."""
    return bool((frames.judgments["judge_kind"].astype(object) == EXPERT).any())


def first_verdicts(frames: Frames) -> pd.DataFrame:
    """One usable judgment per (comparison, judge): the lowest presentation index."""
    ok = frames.ok
    if ok.duplicated(["unit", "judge"]).any():
        ok = ok.sort_values(["unit", "judge", "presentation"], kind="stable").drop_duplicates(["unit", "judge"])
    return ok


def build_panel(frames: Frames, options: ExpertOptions) -> Panel:
    """Make both judge kinds usable and lay out the reference set (see the module docstring)."""
    both = frames.with_judge_kinds((LLM, EXPERT))
    rated = first_verdicts(both)
    kind_of = dict(zip(rated["judge"].astype(str), rated["judge_kind"].astype(str), strict=False))
    experts = sorted(j for j, k in kind_of.items() if k == EXPERT)
    order = {name: i for i, name in enumerate(frames.design.judge_families)}
    llms = sorted((j for j, k in kind_of.items() if k == LLM), key=lambda j: (order.get(j, len(order)), j))
    names = experts + llms
    judge = rated["judge"].astype(str).to_numpy()
    unit = rated["unit"].to_numpy()
    is_expert = rated["judge_kind"].astype(str).to_numpy() == EXPERT
    if llms:
        units = np.intersect1d(np.unique(unit[is_expert]), np.unique(unit[~is_expert]))
    else:
        # A study of people only: the reference set is the comparisons two or more experts judged
        # (a comparison one expert judged adds no pair, no alpha unit and no majority).
        judged, times = np.unique(unit[is_expert], return_counts=True)
        units = judged[times >= 2]
    units = units[units >= 0]
    matrix = np.full((len(names), len(units)), np.nan)
    col = pd.Index(units).get_indexer(unit)
    row = pd.Index(names).get_indexer(judge)
    keep = (col >= 0) & (row >= 0)
    matrix[row[keep], col[keep]] = rated["code"].to_numpy(dtype=float)[keep]
    weights = bootstrap_weights(len(units), options.bootstrap, (options.seed, 1))
    return Panel(both, rated, names, [EXPERT] * len(experts) + [LLM] * len(llms), units, matrix, weights)


# -- agreement ------------------------------------------------------------------------------


def agreement_part(panel: Panel, ci: float) -> dict[str, pd.DataFrame]:
    """Agreement blocks, Krippendorff's alpha per group, Cohen's kappa per judge pair."""
    m, w, e, llm = panel.matrix, panel.weights, panel.experts, panel.llms
    blocks = pd.DataFrame(
        [
            {"block": "expert-expert", **block_agreement(m, e, None, w, ci)},
            {"block": "expert-LLM", **block_agreement(m, e, llm, w, ci)},
            {"block": "LLM-LLM", **block_agreement(m, llm, None, w, ci)},
        ]
    )
    alpha = pd.DataFrame(
        [
            {"group": "experts", **group_alpha(m, e, w, ci)},
            {"group": "LLM judges", **group_alpha(m, llm, w, ci)},
            {"group": "pooled", **group_alpha(m, e + llm, w, ci)},
        ]
    )
    kappa = kappa_table(m, panel.names, panel.kinds, w, ci)
    return {"blocks": blocks, "alpha": alpha, "kappa": kappa}


# -- majorities -----------------------------------------------------------------------------


def loo_majority(panel: Panel, ci: float, min_others: int = 1) -> pd.DataFrame:
    """Every judge against the leave-one-out expert majority, on the experts' own reference items.

    For each expert e and reference comparison u that e judged, the reference verdict is the
    code most of the *other* experts gave (at least `min_others` of them; a shared top is no
    majority, counted). An expert is scored on its own items (e, u). An LLM judge is scored
    against exactly the same references, item (e, u) for every expert e, wherever it judged
    u; beside its agreement stands the experts' agreement on those very items, and the
    difference (LLM minus experts) with a paired interval.

    Returns:
        One row per judge, then (all experts): judge, kind, n (items), agreement, ci_low,
        ci_high, expert_agreement, difference, diff_ci_low, diff_ci_high, no_majority, reason.
    """
    m, w = panel.matrix, panel.weights
    e_rows = panel.experts
    counts = code_counts(m, e_rows)
    u = m.shape[1]
    refs: list[tuple[int, np.ndarray, np.ndarray]] = []  # (expert row, item mask, majority code)
    no_majority: dict[int, int] = {}
    for i in e_rows:
        own = m[i]
        mine = np.isfinite(own)
        others = counts.copy()
        others[own[mine].astype(int), np.flatnonzero(mine)] -= 1
        enough = others.sum(axis=0) >= max(1, min_others)
        maj = majority(others)
        items = mine & enough & (maj >= 0)
        no_majority[i] = int((mine & enough & (maj < 0)).sum())
        refs.append((i, items, maj))
    rows = []

    def summarise(hits: np.ndarray, n: np.ndarray) -> tuple[float, float, float]:
        point = float(hits.sum() / n.sum()) if n.sum() else math.nan
        if not n.sum() or not w.shape[0]:
            return point, math.nan, math.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = (w @ hits) / (w @ n)
        return (point, *interval(boot, ci))

    all_hits, all_n = np.zeros(u), np.zeros(u)
    for i, items, maj in refs:
        hits = (items & (m[i] == maj)).astype(float)
        n = items.astype(float)
        all_hits += hits
        all_n += n
        agree, low, high = summarise(hits, n)
        rows.append(
            {
                "judge": panel.names[i],
                "kind": EXPERT,
                "n": int(n.sum()),
                "agreement": agree,
                "ci_low": low,
                "ci_high": high,
                "expert_agreement": math.nan,
                "difference": math.nan,
                "diff_ci_low": math.nan,
                "diff_ci_high": math.nan,
                "no_majority": no_majority[i],
                "reason": None
                if n.sum()
                else "no comparison of this expert with another expert's verdict and a majority",
            }
        )
    for j in panel.llms:
        judged = np.isfinite(m[j])
        hits, exp_hits, n = np.zeros(u), np.zeros(u), np.zeros(u)
        for i, items, maj in refs:
            take = items & judged
            hits += take & (m[j] == maj)
            exp_hits += take & (m[i] == maj)
            n += take
        agree, low, high = summarise(hits, n)
        exp_agree = float(exp_hits.sum() / n.sum()) if n.sum() else math.nan
        d_low = d_high = math.nan
        if n.sum() and w.shape[0]:
            with np.errstate(invalid="ignore", divide="ignore"):
                boot = (w @ (hits - exp_hits)) / (w @ n)
            d_low, d_high = interval(boot, ci)
        rows.append(
            {
                "judge": panel.names[j],
                "kind": LLM,
                "n": int(n.sum()),
                "agreement": agree,
                "ci_low": low,
                "ci_high": high,
                "expert_agreement": exp_agree,
                "difference": agree - exp_agree,
                "diff_ci_low": d_low,
                "diff_ci_high": d_high,
                "no_majority": sum(no_majority.values()),
                "reason": None if n.sum() else "judged none of the experts' reference items",
            }
        )
    agree, low, high = summarise(all_hits, all_n)
    rows.append(
        {
            "judge": ALL_EXPERTS,
            "kind": EXPERT,
            "n": int(all_n.sum()),
            "agreement": agree,
            "ci_low": low,
            "ci_high": high,
            "expert_agreement": math.nan,
            "difference": math.nan,
            "diff_ci_low": math.nan,
            "diff_ci_high": math.nan,
            "no_majority": sum(no_majority.values()),
            "reason": None if all_n.sum() else "no comparison judged by two or more experts",
        }
    )
    return pd.DataFrame(rows)


def panel_majority(panel: Panel, ci: float) -> PanelMajority:
    """The LLM-panel majority against the expert-panel majority, per reference comparison.

    A panel's majority is the code most of its judges gave (a shared top is no majority).

    Returns:
        n (comparisons with both majorities), agreement, ci_low, ci_high, decisive_n,
        decisive_agreement (both majorities decisive), decisive_ci_low, decisive_ci_high,
        kappa, kappa_ci_low, kappa_ci_high, confusion (rows: experts' majority A wins, B wins,
        tie; columns: LLM judges'), no_expert_majority, no_llm_majority, reason.
    """
    w = panel.weights
    me = majority(code_counts(panel.matrix, panel.experts))
    ml = majority(code_counts(panel.matrix, panel.llms))
    both = (me >= 0) & (ml >= 0)
    same = (both & (me == ml)).astype(float)
    decisive = both & (me < 2) & (ml < 2)

    def ratio(num: np.ndarray, den: np.ndarray) -> tuple[float, float, float]:
        point = float(num.sum() / den.sum()) if den.sum() else math.nan
        if not den.sum() or not w.shape[0]:
            return point, math.nan, math.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            return (point, *interval((w @ num) / (w @ den), ci))

    agree, low, high = ratio(same, both.astype(float))
    d_agree, d_low, d_high = ratio(same * decisive, decisive.astype(float))
    onehot = np.zeros((len(me), 9))
    onehot[both, (me * 3 + ml)[both]] = 1.0
    confusion = onehot.sum(axis=0)
    kappa = float(kappa_from_confusion(confusion))
    k_low = k_high = math.nan
    if both.sum() and w.shape[0]:
        k_low, k_high = interval(kappa_from_confusion(w @ onehot), ci)
    reason = None if both.sum() else "no reference comparison with a majority of both panels"
    section = {
        "n": int(both.sum()),
        "agreement": agree,
        "ci_low": low,
        "ci_high": high,
        "chance": CHANCE_WITH_TIES,
        "decisive_n": int(decisive.sum()),
        "decisive_agreement": d_agree,
        "decisive_ci_low": d_low,
        "decisive_ci_high": d_high,
        "decisive_chance": CHANCE_DECISIVE,
        "kappa": kappa,
        "kappa_ci_low": k_low,
        "kappa_ci_high": k_high,
        "confusion": confusion.reshape(3, 3).astype(int).tolist(),
        "no_expert_majority": int((me < 0).sum()),
        "no_llm_majority": int((ml < 0).sum()),
        "reason": reason,
    }
    return PanelMajority.model_validate(json_value(section))


# -- rankings -------------------------------------------------------------------------------


def rank_correlations(te: np.ndarray, tl: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spearman's rho and Kendall's tau-b of two strength vectors per row (e.g. per bootstrap replicate).

    Only candidates with a strength on both sides count (n per row); values are compared after
    rounding to 9 decimals, so float noise is no difference. Spearman = Pearson correlation of
    average ranks; tau-b corrects for ties as scipy.stats.kendalltau does. NaN where n < 3 or
    a side is constant.

    Args:
        te: (rows, candidates) strengths of one panel (NaN = not ranked).
        tl: The other panel's, same shape.

    Returns:
        (rho, tau, n), one value per row.
    """
    te, tl = np.atleast_2d(te), np.atleast_2d(tl)
    valid = np.isfinite(te) & np.isfinite(tl)
    n = valid.sum(axis=1)
    x = np.where(valid, np.round(te, TIE_DIGITS), np.nan)
    y = np.where(valid, np.round(tl, TIE_DIGITS), np.nan)
    rx = np.nan_to_num(stats.rankdata(x, axis=1, nan_policy="omit"))
    ry = np.nan_to_num(stats.rankdata(y, axis=1, nan_policy="omit"))
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (rx * valid).sum(axis=1, keepdims=True) / n[:, None]
        my = (ry * valid).sum(axis=1, keepdims=True) / n[:, None]
        dx, dy = (rx - mx) * valid, (ry - my) * valid
        rho = (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    i, j = np.triu_indices(te.shape[1], 1)
    both = valid[:, i] & valid[:, j]
    sx = np.where(both, np.sign(np.nan_to_num(x[:, i] - x[:, j])), 0.0)
    sy = np.where(both, np.sign(np.nan_to_num(y[:, i] - y[:, j])), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sx * sy).sum(axis=1) / np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1))
    enough = n >= 3
    rho = np.where(enough & np.isfinite(rho), rho, np.nan)
    tau = np.where(enough & np.isfinite(tau), tau, np.nan)
    return rho, tau, n


def _top(names: list[str], theta: np.ndarray) -> str | None:
    if not np.isfinite(theta).any():
        return None
    t = np.round(theta, TIE_DIGITS)
    best = np.nanmax(t)
    return " / ".join(sorted(n for n, v in zip(names, t, strict=True) if v == best))


def _panel_games(
    counts: np.ndarray, ia: np.ndarray, ib: np.ndarray, k: int
) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """Per comparison: points of each candidate, and games of the pair (flattened K x K), from a panel's code counts."""
    u = len(ia)
    pa = counts[0] + 0.5 * counts[2]
    pb = counts[1] + 0.5 * counts[2]
    games = counts.sum(axis=0)
    rows = np.arange(u)
    points = sparse.csr_matrix(
        (np.concatenate([pa, pb]), (np.concatenate([rows, rows]), np.concatenate([ia, ib]))), shape=(u, k)
    )
    pair = sparse.csr_matrix((games, (rows, ia * k + ib)), shape=(u, k * k))
    return points, pair


def _totals(points: sparse.csr_matrix, pair: sparse.csr_matrix, weights: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    pts = np.asarray(points.T @ weights.T).T
    g = np.asarray(pair.T @ weights.T).T.reshape(-1, k, k)
    g = g + g.transpose(0, 2, 1)
    return pts, g, g.sum(axis=2)


def ranking_part(panel: Panel, ci: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Expert-panel vs LLM-panel ranking per task and mode, and pooled over the tasks of a mode.

    Both panels are ranked by Bradley-Terry strengths fitted on the reference comparisons of
    the group (every verdict one game, ties half a win). Bradley-Terry copes with the
    incomplete designs of expert studies; on a complete balanced design its order is the
    order of the win rates, so nothing is lost where the design is complete. The same
    resampled comparisons feed both panels (paired cluster bootstrap: a comparison is drawn
    with all its verdicts).

    Returns:
        (rankings, candidates). rankings: mode, task, comparisons, expert_verdicts,
        llm_verdicts, n (candidates ranked by both), spearman, spearman_ci_low,
        spearman_ci_high, kendall, kendall_ci_low, kendall_ci_high, expert_top, llm_top,
        top_match, reason. candidates: mode, task, candidate, expert_theta, llm_theta,
        expert_rank, llm_rank, expert_games, llm_games, expert_win_rate, llm_win_rate, gap
        (experts minus LLM judges), gap_ci_low, gap_ci_high, reason.
    """
    comps = panel.frames.comparisons
    frames = panel.frames
    w = panel.weights
    ce_all = code_counts(panel.matrix, panel.experts)
    cl_all = code_counts(panel.matrix, panel.llms)
    c_mode = comps["mode"].astype(str).to_numpy()[panel.units]
    c_task = comps["task"].astype(str).to_numpy()[panel.units]
    cat_a = comps["candidate_a"].astype(str).to_numpy()[panel.units]
    cat_b = comps["candidate_b"].astype(str).to_numpy()[panel.units]
    rank_rows, cand_rows = [], []
    for mode in frames.modes():
        groups = [(t, (c_mode == mode) & (c_task == t)) for t in frames.tasks()]
        groups.append((ALL_TASKS, c_mode == mode))
        for task, sel in groups:
            if task != ALL_TASKS and not sel.any():
                continue
            names = sorted(set(cat_a[sel]) | set(cat_b[sel]))
            k = len(names)
            base = {
                "mode": mode,
                "task": task,
                "comparisons": int(sel.sum()),
                "expert_verdicts": int(ce_all[:, sel].sum()),
                "llm_verdicts": int(cl_all[:, sel].sum()),
            }
            if k < 2:
                rank_rows.append(
                    {
                        **base,
                        "n": 0,
                        "spearman": math.nan,
                        "spearman_ci_low": math.nan,
                        "spearman_ci_high": math.nan,
                        "kendall": math.nan,
                        "kendall_ci_low": math.nan,
                        "kendall_ci_high": math.nan,
                        "expert_top": None,
                        "llm_top": None,
                        "top_match": None,
                        "reason": "no reference comparison in this group",
                    }
                )
                continue
            index = {n: i for i, n in enumerate(names)}
            ia = np.array([index[x] for x in cat_a[sel]])
            ib = np.array([index[x] for x in cat_b[sel]])
            ws = np.vstack([np.ones((1, int(sel.sum()))), w[:, sel]])  # row 0: the data as observed
            fits = {}
            for label, counts in (("expert", ce_all[:, sel]), ("llm", cl_all[:, sel])):
                pts, pair, games = _totals(*_panel_games(counts, ia, ib, k), ws, k)
                theta = fit_strengths(pts, pair)
                with np.errstate(invalid="ignore", divide="ignore"):
                    rate = np.where(games > 0, pts / games, np.nan)
                fits[label] = (theta, games, rate)
            te, tl = fits["expert"][0], fits["llm"][0]
            rhos, taus, ns = rank_correlations(te, tl)
            rho, tau, n = float(rhos[0]), float(taus[0]), int(ns[0])
            rho_lo, rho_hi = interval(rhos[1:], ci) if n >= 3 else (math.nan, math.nan)
            tau_lo, tau_hi = interval(taus[1:], ci) if n >= 3 else (math.nan, math.nan)
            reason = None
            if n < 3:
                reason = f"fewer than 3 candidates ranked by both panels (n = {n})"
            elif math.isnan(rho):
                reason = "one panel's strengths are all equal"
            e_top, l_top = _top(names, te[0]), _top(names, tl[0])
            rank_rows.append(
                {
                    **base,
                    "n": n,
                    "spearman": rho,
                    "spearman_ci_low": rho_lo,
                    "spearman_ci_high": rho_hi,
                    "kendall": tau,
                    "kendall_ci_low": tau_lo,
                    "kendall_ci_high": tau_hi,
                    "expert_top": e_top,
                    "llm_top": l_top,
                    "top_match": None if e_top is None or l_top is None else e_top == l_top,
                    "reason": reason,
                }
            )
            gap = fits["expert"][2] - fits["llm"][2]
            g_lo, g_hi = percentile_interval(gap[1:], ci)
            e_rank = pd.Series(-np.round(te[0], TIE_DIGITS)).rank(method="min").to_numpy()
            l_rank = pd.Series(-np.round(tl[0], TIE_DIGITS)).rank(method="min").to_numpy()
            for c, name in enumerate(names):
                eg, lg = int(fits["expert"][1][0, c]), int(fits["llm"][1][0, c])
                why = None
                if not eg or not lg:
                    why = "no expert verdict" if not eg else "no LLM verdict"
                cand_rows.append(
                    {
                        "mode": mode,
                        "task": task,
                        "candidate": name,
                        "expert_theta": te[0, c],
                        "llm_theta": tl[0, c],
                        "expert_rank": e_rank[c],
                        "llm_rank": l_rank[c],
                        "expert_games": eg,
                        "llm_games": lg,
                        "expert_win_rate": fits["expert"][2][0, c],
                        "llm_win_rate": fits["llm"][2][0, c],
                        "gap": gap[0, c],
                        "gap_ci_low": g_lo[c] if why is None else math.nan,
                        "gap_ci_high": g_hi[c] if why is None else math.nan,
                        "reason": why,
                    }
                )
    rank_cols = [
        "mode",
        "task",
        "comparisons",
        "expert_verdicts",
        "llm_verdicts",
        "n",
        "spearman",
        "spearman_ci_low",
        "spearman_ci_high",
        "kendall",
        "kendall_ci_low",
        "kendall_ci_high",
        "expert_top",
        "llm_top",
        "top_match",
        "reason",
    ]
    cand_cols = [
        "mode",
        "task",
        "candidate",
        "expert_theta",
        "llm_theta",
        "expert_rank",
        "llm_rank",
        "expert_games",
        "llm_games",
        "expert_win_rate",
        "llm_win_rate",
        "gap",
        "gap_ci_low",
        "gap_ci_high",
        "reason",
    ]
    return pd.DataFrame(rank_rows, columns=rank_cols), pd.DataFrame(cand_rows, columns=cand_cols)


# -- biases ---------------------------------------------------------------------------------


def _binomial_rows(
    judges: pd.Series,
    kinds: pd.Series,
    n: np.ndarray,
    k: np.ndarray,
    order: list[str],
    kind_of: dict[str, str],
    empty: str,
) -> pd.DataFrame:
    """Per judge (and per judge kind): n, k, share = k / n, two-sided exact binomial p against 0.5."""
    flags = pd.DataFrame({"judge": judges.to_numpy(), "kind": kinds.to_numpy(), "n": n, "k": k})
    per = flags.groupby("judge")[["n", "k"]].sum().reindex(order).fillna(0).astype("int64").reset_index()
    per["kind"] = per["judge"].map(kind_of)
    kinds_sum = flags.groupby("kind")[["n", "k"]].sum()
    extra = [
        {
            "judge": ALL_EXPERTS if kd == EXPERT else ALL_LLM,
            "kind": kd,
            "n": int(kinds_sum.loc[kd, "n"]) if kd in kinds_sum.index else 0,
            "k": int(kinds_sum.loc[kd, "k"]) if kd in kinds_sum.index else 0,
        }
        for kd in (EXPERT, LLM)
        if kd in kind_of.values()
    ]
    out = pd.concat([per, pd.DataFrame(extra, columns=["judge", "kind", "n", "k"])], ignore_index=True)
    out["share"] = out["k"] / out["n"].where(out["n"] > 0)
    tested: dict[tuple[int, int], float] = {}  # crowd judges share few (k, n): test each once

    def p_value(a: int, b: int) -> float:
        if (a, b) not in tested:
            tested[a, b] = float(stats.binomtest(a, b, 0.5).pvalue) if b else math.nan
        return tested[a, b]

    out["p"] = [p_value(int(a), int(b)) for a, b in zip(out["k"], out["n"], strict=True)]
    out["reason"] = [None if n > 0 else empty for n in out["n"]]
    return out[["judge", "kind", "n", "k", "share", "p", "reason"]]


def bias_part(panel: Panel, options: ExpertOptions) -> dict[str, pd.DataFrame]:
    """Per judge: position, length, rubric leniency, choice-rubric consistency, swapped-repeat consistency.

    - position: share of decisive judgments won by the option shown first (binomial test vs 0.5);
    - length: share of decisive judgments, between outputs of unequal length, won by the longer
      one (binomial test vs 0.5); needs output lengths;
    - leniency: per (comparison, candidate), the judge's rubric average minus the mean rubric
      average of the LLM judges (other than itself) on the same comparison and candidate;
      mean difference with a bootstrap interval (resampling the judge's comparisons) and
      Bland-Altman limits of agreement (mean +/- 1.96 SD);
    - consistency: choice-rubric consistency (STATISTICS.md 9) per judge;
    - repeats: for (comparison, judge) judged in both presented orders (an expert's swapped
      repeat, or an LLM judge with orders = "both"): share with the same canonical verdict,
      and among those decisive both times, the same winner.

    Returns:
        Tables position, length, leniency, consistency, repeats; per judge then per kind.
    """
    frames = panel.frames
    ok = frames.ok
    kind_of = dict(zip(panel.names, panel.kinds, strict=True))
    order = list(panel.names)
    judges = ok["judge"].astype(str)
    kinds = ok["judge_kind"].astype(str)
    pos = ok["winner_pos"].to_numpy()
    position = _binomial_rows(
        judges, kinds, (pos > 0).astype(int), (pos == 1).astype(int), order, kind_of, "no decisive judgment"
    ).rename(columns={"k": "first", "share": "share_first"})

    comps = frames.comparisons
    unit = ok["unit"].to_numpy()
    unknown = np.full(len(comps), np.nan)
    la = (comps["length_a"].to_numpy(dtype=float) if "length_a" in comps else unknown)[unit]
    lb = (comps["length_b"].to_numpy(dtype=float) if "length_b" in comps else unknown)[unit]
    code = ok["code"].to_numpy()
    counted = (code < 2) & (code >= 0) & np.isfinite(la) & np.isfinite(lb) & (la != lb)
    longer = counted & (((code == 0) & (la > lb)) | ((code == 1) & (lb > la)))
    empty = (
        "no decisive judgment between outputs of unequal length"
        if frames.has_lengths
        else "output lengths not given to the statistics"
    )
    length = _binomial_rows(judges, kinds, counted.astype(int), longer.astype(int), order, kind_of, empty).rename(
        columns={"k": "longer", "share": "share_longer"}
    )

    consistency = choice_rubric_consistency(frames)
    consistency = consistency[consistency["judge"].isin(order)].copy()
    consistency = consistency.iloc[np.argsort([order.index(j) for j in consistency["judge"]], kind="stable")]
    consistency.insert(1, "kind", consistency["judge"].map(kind_of))
    for kd, label in ((EXPERT, ALL_EXPERTS), (LLM, ALL_LLM)):
        part = consistency[consistency["kind"] == kd]
        if len(part):
            n, agree = int(part["n"].sum()), int(part["agree"].sum())
            consistency = pd.concat(
                [
                    consistency,
                    pd.DataFrame(
                        [
                            {
                                "judge": label,
                                "kind": kd,
                                "n": n,
                                "agree": agree,
                                "share": agree / n if n else math.nan,
                                "ties": int(part["ties"].sum()),
                                "equal_averages": int(part["equal_averages"].sum()),
                                "missing_scores": int(part["missing_scores"].sum()),
                                "reason": None if n else "no decisive judgment with unequal averages",
                            }
                        ]
                    ),
                ],
                ignore_index=True,
            )
    consistency = consistency[
        ["judge", "kind", "n", "agree", "share", "ties", "equal_averages", "missing_scores", "reason"]
    ].reset_index(drop=True)
    return {
        "position": position,
        "length": length,
        "leniency": leniency(panel, options),
        "consistency": consistency,
        "repeats": repeats(panel),
    }


def leniency(panel: Panel, options: ExpertOptions) -> pd.DataFrame:
    """Rubric leniency per judge against the LLM judges on the same comparisons (see `bias_part`).

    Returns:
        judge, kind, n ((comparison, candidate) pairs), comparisons, mean_difference, ci_low,
        ci_high, sd, loa_low, loa_high, reason.
    """
    rated = panel.rated
    full = rated["complete"].to_numpy()
    first_is_a = rated["option1"].cat.codes.to_numpy() == rated["candidate_a"].cat.codes.to_numpy()
    avg_a = np.where(first_is_a, rated["option1_avg"], rated["option2_avg"])
    avg_b = np.where(first_is_a, rated["option2_avg"], rated["option1_avg"])
    long = pd.DataFrame(
        {
            "unit": np.concatenate([rated["unit"].to_numpy()] * 2),
            "side": np.repeat([0, 1], len(rated)),
            "judge": np.concatenate([rated["judge"].astype(str).to_numpy()] * 2),
            "kind": np.concatenate([rated["judge_kind"].astype(str).to_numpy()] * 2),
            "avg": np.concatenate([avg_a, avg_b]),
        }
    )
    long = long[np.concatenate([full, full]) & np.isfinite(long["avg"].to_numpy())]
    llm = long[long["kind"] == LLM]
    ref = llm.groupby(["unit", "side"])["avg"].agg(["sum", "count"])
    key = pd.MultiIndex.from_arrays([long["unit"], long["side"]])
    s = ref["sum"].reindex(key).fillna(0).to_numpy()
    c = ref["count"].reindex(key).fillna(0).to_numpy()
    own = (long["kind"] == LLM).to_numpy()
    s, c = s - np.where(own, long["avg"].to_numpy(), 0), c - own
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(c > 0, long["avg"].to_numpy() - s / np.where(c > 0, c, 1), np.nan)
    long = long.assign(d=d).dropna(subset=["d"])
    groups = {str(name): part for name, part in long.groupby("judge", sort=False)}  # per judge, not a scan each
    nothing = long.iloc[0:0]
    rows = []
    for k, name in enumerate(panel.names):
        part = groups.get(name, nothing)
        n = len(part)
        base = {"judge": name, "kind": panel.kinds[k], "n": n, "comparisons": int(part["unit"].nunique())}
        if n < 2:
            rows.append(
                {
                    **base,
                    "mean_difference": float(part["d"].mean()) if n else math.nan,
                    "ci_low": math.nan,
                    "ci_high": math.nan,
                    "sd": math.nan,
                    "loa_low": math.nan,
                    "loa_high": math.nan,
                    "reason": f"fewer than 2 completely scored options shared with another LLM judge (n = {n})",
                }
            )
            continue
        mean, sd = float(part["d"].mean()), float(part["d"].std(ddof=1))
        per_unit = part.groupby("unit")["d"].agg(["sum", "count"])
        w = bootstrap_weights(len(per_unit), options.bootstrap, (options.seed, 2, k))
        low = high = math.nan
        if w.shape[0]:
            low, high = interval(
                (w @ per_unit["sum"].to_numpy()) / (w @ per_unit["count"].to_numpy()), options.confidence
            )
        rows.append(
            {
                **base,
                "mean_difference": mean,
                "ci_low": low,
                "ci_high": high,
                "sd": sd,
                "loa_low": mean - LIMITS_OF_AGREEMENT * sd,
                "loa_high": mean + LIMITS_OF_AGREEMENT * sd,
                "reason": None,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "judge",
            "kind",
            "n",
            "comparisons",
            "mean_difference",
            "ci_low",
            "ci_high",
            "sd",
            "loa_low",
            "loa_high",
            "reason",
        ],
    )


def repeats(panel: Panel) -> pd.DataFrame:
    """Swapped-repeat consistency per judge (see `bias_part`).

    Returns:
        judge, kind, n (pairs judged in both orders), same, agreement, decisive_n, decisive_same,
        decisive_agreement, reason. Every expert is listed; LLM judges only when they judged a
        pair twice.
    """
    ok = panel.frames.ok
    twice = ok[ok.duplicated(["unit", "judge"], keep=False).to_numpy()]
    first = twice.sort_values("presentation").drop_duplicates(["unit", "judge"], keep="first")
    last = twice.sort_values("presentation").drop_duplicates(["unit", "judge"], keep="last")
    pairs = first[["unit", "judge", "code"]].merge(
        last[["unit", "judge", "code"]], on=["unit", "judge"], suffixes=("_1", "_2")
    )
    pairs["judge"] = pairs["judge"].astype(str)
    # Counted per judge in one pass and looked up by name: filtering the frame once per judge was
    # quadratic (5.9 s for 1,839 crowd judges of a Chatbot Arena set).
    same_all = pairs["code_1"] == pairs["code_2"]
    decisive_all = (pairs["code_1"] < 2) & (pairs["code_2"] < 2)
    tally = (
        pd.DataFrame(
            {
                "judge": pairs["judge"],
                "n": 1,
                "same": same_all.astype(int),
                "dn": decisive_all.astype(int),
                "dsame": (same_all & decisive_all).astype(int),
            }
        )
        .groupby("judge")
        .sum()
    )
    counts = {str(j): tuple(int(v) for v in row) for j, row in zip(tally.index, tally.to_numpy(), strict=True)}
    rows = []
    for name, kind in zip(panel.names, panel.kinds, strict=True):
        n, same, dn, dsame = counts.get(name, (0, 0, 0, 0))
        if kind == LLM and not n:
            continue
        rows.append(
            {
                "judge": name,
                "kind": kind,
                "n": n,
                "same": same,
                "agreement": same / n if n else math.nan,
                "decisive_n": dn,
                "decisive_same": dsame,
                "decisive_agreement": dsame / dn if dn else math.nan,
                "reason": None if n else "no swapped repeat judged",
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "judge",
            "kind",
            "n",
            "same",
            "agreement",
            "decisive_n",
            "decisive_same",
            "decisive_agreement",
            "reason",
        ],
    )


# -- alternative annotator test -------------------------------------------------------------


def _rubric_matrix(panel: Panel) -> tuple[np.ndarray, int]:
    """Judges x reference comparisons x 2: each verdict's recomputed rubric averages of candidate_a and candidate_b.

    NaN where the verdict is not completely scored (a winner-only judgment carries no rubric
    scores); also returns how many verdicts of the reference set that leaves out.
    """
    r = panel.rated
    col = pd.Index(panel.units).get_indexer(r["unit"].to_numpy())
    row = pd.Index(panel.names).get_indexer(r["judge"].astype(str).to_numpy())
    keep = (col >= 0) & (row >= 0)
    complete = r["complete"].to_numpy(dtype=bool)
    first_is_a = r["option1"].astype(str).to_numpy() == r["candidate_a"].astype(str).to_numpy()
    o1 = r["option1_avg"].to_numpy(dtype=float)
    o2 = r["option2_avg"].to_numpy(dtype=float)
    avg_a = np.where(first_is_a, o1, o2)
    avg_b = np.where(first_is_a, o2, o1)
    out = np.full((len(panel.names), len(panel.units), 2), np.nan)
    ok = keep & complete
    out[row[ok], col[ok], 0] = avg_a[ok]
    out[row[ok], col[ok], 1] = avg_b[ok]
    return out, int((keep & ~complete).sum())


ALT_COLUMNS = [
    "judge",
    "metric",
    "items",
    "experts_tested",
    "winning_rate",
    "advantage_probability",
    "passed",
    "reason",
]
ALT_EXPERT_COLUMNS = ["judge", "metric", "expert", "n", "rho_f", "rho_h", "p", "rejected", "tested", "reason"]


def alt_test_part(panel: Panel, options: ExpertOptions) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """The alternative annotator test of every LLM judge against the experts, on the reference set.

    Two alignments: `accuracy` on the verdicts (3 declared categories: candidate_a wins,
    candidate_b wins, tie) and `rmse` (negative RMSE) on the rubric scores, each verdict's
    recomputed averages of both candidates; verdicts without a full set of rubric scores
    (winner-only judgments) are left out of the second and counted.

    Returns:
        (judges, experts, verdicts left out of the rubric test): judges has judge, metric,
        items, experts_tested, winning_rate, advantage_probability, passed, reason; experts
        has judge, metric, expert, n, rho_f, rho_h, p, rejected (the LLM judge wins against
        this expert after the Benjamini-Yekutieli correction), tested, reason.
    """
    e = panel.experts
    names = [panel.names[i] for i in e]
    scores, unscored = _rubric_matrix(panel)
    rows, detail = [], []
    for metric, data in (("accuracy", panel.matrix), ("rmse", scores)):
        for j in panel.llms:
            res = alt_test(
                data[e],
                data[j],
                names,
                metric=metric,
                categories=3,
                epsilon=options.epsilon,
                q=options.fdr_q,
                min_items=options.alt_min_items,
                min_humans_per_item=options.alt_min_experts_per_item,
            )
            rows.append(
                {
                    "judge": panel.names[j],
                    "metric": metric,
                    "items": res.items,
                    "experts_tested": sum(bool(r["tested"]) for r in res.humans),
                    "winning_rate": res.winning_rate,
                    "advantage_probability": res.advantage_probability,
                    "passed": res.passed,
                    "reason": res.reason,
                }
            )
            detail += [{"judge": panel.names[j], "metric": metric, **r} for r in res.humans]
    return pd.DataFrame(rows, columns=ALT_COLUMNS), pd.DataFrame(detail, columns=ALT_EXPERT_COLUMNS), unscored


# -- headline findings ----------------------------------------------------------------------


def _plain_share(rated: pd.DataFrame, plain: str, options: ExpertOptions, salt: int) -> tuple[float, float, float, int]:
    """Points share of plain in its direct comparisons with assisted candidates, with an interval over comparisons."""
    a = rated["candidate_a"].astype(str).to_numpy()
    b = rated["candidate_b"].astype(str).to_numpy()
    code = rated["code"].to_numpy()
    is_a, is_b = a == plain, b == plain
    mine = is_a | is_b
    if not mine.any():
        return math.nan, math.nan, math.nan, 0
    won = ((code == 0) & is_a) | ((code == 1) & is_b)
    pts = np.where(code == 2, 0.5, np.where(won, 1.0, 0.0))[mine]
    unit = rated["unit"].to_numpy()[mine]
    per = pd.DataFrame({"unit": unit, "pts": pts}).groupby("unit")["pts"].agg(["sum", "count"])
    point = float(per["sum"].sum() / per["count"].sum())
    w = bootstrap_weights(len(per), options.bootstrap, (options.seed, 3, salt))
    low = high = math.nan
    if w.shape[0]:
        low, high = interval((w @ per["sum"].to_numpy()) / (w @ per["count"].to_numpy()), options.confidence)
    return point, low, high, int(mine.sum())


def headline_part(panel: Panel, options: ExpertOptions) -> pd.DataFrame:
    """The paper's headline findings with the expert panel beside the LLM panel.

    Rankings pool every usable verdict of a panel in a mode (all comparisons it judged, not
    only the reference set) into Bradley-Terry strengths with intervals resampling whole
    tournaments (run x task), as the report's own Bradley-Terry. Findings: the best solver
    (automation), the best assistant (augmentation, plain left out), and whether plain beats
    assisted (plain's points share in its direct comparisons with assisted candidates, above
    0.5; interval resampling those comparisons). `holds` says whether the experts reach the
    LLM judges' conclusion.

    Returns:
        finding, mode, experts, experts_value, experts_ci_low, experts_ci_high, experts_n, llm,
        llm_value, llm_ci_low, llm_ci_high, llm_n, holds, reason.
    """
    frames = panel.frames
    rated = panel.rated
    is_expert = (rated["judge_kind"].astype(str) == EXPERT).to_numpy()
    panels = {EXPERT: rated[is_expert], LLM: rated[~is_expert]}
    bts = {
        k: bradley_terry(v, frames.candidates, ("mode",), options.bootstrap, options.confidence, options.seed)
        for k, v in panels.items()
    }
    plain = frames.design.plain
    rows = []

    def best(kind: str, mode: str, skip: str | None) -> dict[str, Any]:
        bt = bts[kind]
        part = bt[(bt["mode"] == mode) & bt["theta"].notna()]
        if skip is not None:
            part = part[part["candidate"] != skip]
        n = int((panels[kind]["mode"].astype(str) == mode).sum())
        if part.empty:
            return {"name": None, "value": math.nan, "low": math.nan, "high": math.nan, "n": n}
        top = part.loc[part["theta"].round(TIE_DIGITS) == part["theta"].round(TIE_DIGITS).max()]
        r = top.iloc[0]
        return {
            "name": " / ".join(sorted(top["candidate"].astype(str))),
            "value": float(r["theta"]),
            "low": float(r["ci_low"]),
            "high": float(r["ci_high"]),
            "n": n,
        }

    modes = frames.modes()
    for finding, mode, skip in (("best solver", "automation", None), ("best assistant", "augmentation", plain)):
        if mode not in modes:
            continue
        e, llm = best(EXPERT, mode, skip), best(LLM, mode, skip)
        reason = None
        if e["name"] is None:
            reason = f"no usable expert judgment in {mode}"
        elif llm["name"] is None:
            reason = f"no usable LLM judgment in {mode}"
        rows.append(
            {
                "finding": finding,
                "mode": mode,
                "experts": e["name"],
                "experts_value": e["value"],
                "experts_ci_low": e["low"],
                "experts_ci_high": e["high"],
                "experts_n": e["n"],
                "llm": llm["name"],
                "llm_value": llm["value"],
                "llm_ci_low": llm["low"],
                "llm_ci_high": llm["high"],
                "llm_n": llm["n"],
                "holds": None if reason else e["name"] == llm["name"],
                "reason": reason,
            }
        )
    if "augmentation" in modes:
        vals = {}
        for salt, kind in enumerate((EXPERT, LLM)):
            part = panels[kind][(panels[kind]["mode"].astype(str) == "augmentation").to_numpy()]
            vals[kind] = _plain_share(part, plain, options, salt)
        ep, lp = vals[EXPERT], vals[LLM]  # experts' and LLMs' (share, ci low, ci high, n)
        reason = None
        if not ep[3]:
            reason = "no usable expert judgment of plain against an assisted candidate"
        elif not lp[3]:
            reason = "no usable LLM judgment of plain against an assisted candidate"
        rows.append(
            {
                "finding": "plain beats assisted",
                "mode": "augmentation",
                "experts": None if not ep[3] else ("yes" if ep[0] > 0.5 else "no"),
                "experts_value": ep[0],
                "experts_ci_low": ep[1],
                "experts_ci_high": ep[2],
                "experts_n": ep[3],
                "llm": None if not lp[3] else ("yes" if lp[0] > 0.5 else "no"),
                "llm_value": lp[0],
                "llm_ci_low": lp[1],
                "llm_ci_high": lp[2],
                "llm_n": lp[3],
                "holds": None if reason else (ep[0] > 0.5) == (lp[0] > 0.5),
                "reason": reason,
            }
        )
    columns = [
        "finding",
        "mode",
        "experts",
        "experts_value",
        "experts_ci_low",
        "experts_ci_high",
        "experts_n",
        "llm",
        "llm_value",
        "llm_ci_low",
        "llm_ci_high",
        "llm_n",
        "holds",
        "reason",
    ]
    return pd.DataFrame(rows, columns=columns)


# -- the whole comparison -------------------------------------------------------------------


def expert_options_doc(options: ExpertOptions) -> ExpertOptionsDoc:
    """The options as the section writes them."""
    return ExpertOptionsDoc(
        bootstrap=options.bootstrap,
        confidence=options.confidence,
        epsilon=options.epsilon,
        fdr_q=options.fdr_q,
        alt_min_items=options.alt_min_items,
        alt_min_experts_per_item=options.alt_min_experts_per_item,
        loo_min_others=options.loo_min_others,
    )


def experts_vs_llm(frames: Frames, options: ExpertOptions | None = None) -> ExpertResult:
    """Compare expert judges with LLM judges (the report's "experts vs LLM judges" section).

    Args:
        frames: Frames of the session (any judge kinds; both kinds are made usable here).
        options: Method choices.

    Returns:
        The typed section as `section` (an undefined number is None, with a reason beside it;
        a part not computed is None) and its frames as `tables`. Without expert judgments, the
        section only says so.
    """
    options = options or ExpertOptions()
    opts = expert_options_doc(options)
    if not has_expert_judgments(frames):
        return ExpertResult(ExpertsSection(present=False, note=NO_EXPERTS_NOTE, options=opts))
    panel = build_panel(frames, options)
    j = panel.frames.judgments
    is_expert = (j["judge_kind"].astype(object) == EXPERT).to_numpy()
    ok_expert = j[is_expert & (j["status"] == "ok").to_numpy()]
    expert_units = set(panel.rated.loc[(panel.rated["judge_kind"].astype(str) == EXPERT).to_numpy(), "unit"])
    counts = ExpertCounts(
        experts=[panel.names[i] for i in panel.experts],
        llm_judges=[panel.names[i] for i in panel.llms],
        expert_judgments=int(is_expert.sum()),
        expert_usable=len(ok_expert),
        expert_excluded=status_counts(j[is_expert]),
        expert_repeats=int(ok_expert.duplicated(["unit", "judge"]).sum()),
        expert_comparisons=len(expert_units),
        reference_comparisons=len(panel.units),
        expert_only_comparisons=len(expert_units) - len(panel.units),
        reference_expert_verdicts=int(np.isfinite(panel.matrix[panel.experts]).sum()),
        reference_llm_verdicts=int(np.isfinite(panel.matrix[panel.llms]).sum()),
        lengths_known=frames.has_lengths,
    )
    note = None
    if not len(ok_expert):
        note = "No usable expert judgment: every statistic of this section is undefined (NaN)."
    elif not len(panel.units) and not panel.llms:
        note = (
            "No LLM judge and no comparison judged by two or more experts: agreement and majorities are "
            "undefined (NaN)."
        )
    elif not len(panel.units):
        note = (
            "No comparison was judged by both an expert and an LLM judge: agreement, majorities, rankings "
            "and the alternative annotator test are undefined (NaN)."
        )
    elif not panel.llms:
        note = (
            "No LLM judge: the reference set is the comparisons two or more experts judged; the LLM-side "
            "statistics (expert-LLM agreement, the LLM panel, the alternative annotator test) are undefined."
        )
    ci = options.confidence
    tables: dict[str, pd.DataFrame] = {}
    agreement = loo = majority_section = rankings = bias = alt = headline = None
    if "agreement" in options.parts:
        part = agreement_part(panel, ci)
        tables.update({f"agreement_{k}": v for k, v in part.items()})
        agreement = ExpertAgreement(
            blocks=rows(AgreementBlockRow, part["blocks"]),
            alpha=rows(AlphaRow, part["alpha"]),
            kappa=rows(KappaRow, part["kappa"]),
        )
    if "majority" in options.parts:
        tables["loo_majority"] = loo_majority(panel, ci, options.loo_min_others)
        loo = LooMajorityTable(rows=rows(LooMajorityRow, tables["loo_majority"]))
        majority_section = panel_majority(panel, ci)
    if "rankings" in options.parts:
        tables["rankings"], tables["ranking_candidates"] = ranking_part(panel, ci)
        rankings = PanelRankings(
            rows=rows(PanelRankingRow, tables["rankings"]),
            candidates=rows(PanelCandidateRow, tables["ranking_candidates"]),
        )
    if "bias" in options.parts:
        part = bias_part(panel, options)
        tables.update({f"bias_{k}": v for k, v in part.items()})
        bias = ExpertBias(
            position=PositionBiasJudgeTable(rows=rows(PositionBiasJudgeRow, part["position"])),
            length=LengthBiasTable(rows=rows(LengthBiasRow, part["length"])),
            leniency=LeniencyTable(rows=rows(LeniencyRow, part["leniency"])),
            consistency=ConsistencyJudgeTable(rows=rows(ConsistencyJudgeRow, part["consistency"])),
            repeats=RepeatsTable(rows=rows(RepeatsRow, part["repeats"])),
        )
    if "alt_test" in options.parts:
        tables["alt_test"], tables["alt_test_experts"], unscored = alt_test_part(panel, options)
        alt = AltTest(
            rows=rows(AltTestRow, tables["alt_test"]),
            experts=rows(AltTestExpertRow, tables["alt_test_experts"]),
            unscored_verdicts=int(unscored),
        )
    if "headline" in options.parts:
        tables["headline"] = headline_part(panel, options)
        headline = HeadlineTable(rows=rows(HeadlineRow, tables["headline"]))
    section = ExpertsSection(
        present=True,
        note=note,
        options=opts,
        counts=counts,
        agreement=agreement,
        loo_majority=loo,
        panel_majority=majority_section,
        rankings=rankings,
        bias=bias,
        alt_test=alt,
        headline=headline,
    )
    return ExpertResult(section, tables)
