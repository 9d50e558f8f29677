"""Provides the validity checks of LLM judging: choice-rubric consistency, rubric vs win rate, criterion
validity, general-rubric profiles, standardised rubric ranking and position bias (STATISTICS.md 9-15).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from centaur_tui.stats.common import correlation
from centaur_tui.stats.frames import Frames, games, status_counts
from centaur_tui.stats.rankings import TIE_DIGITS, win_rates

STATED_TOLERANCE = 0.05
"""A stated average further than this from the recomputed one is flagged (covers rounding to 0.1)."""


def _complete(frames: Frames) -> pd.Series:
    """Per judgment: both options carry a full set of rubric scores.

    With the session's rubric known, "full" means every dimension of the task; without it,
    both options scored on the same, non-zero number of dimensions.
    """
    j = frames.judgments
    d1, d2 = j["option1_dims"], j["option2_dims"]
    rubric = frames.design.rubric
    if rubric:
        expected = j["task"].map(lambda t: len(rubric.get(t, ()))).fillna(0).astype("int64")
        known = expected > 0
        return (d1 > 0) & (d2 == d1) & (~known | (d1 == expected))
    return (d1 > 0) & (d2 == d1)


def choice_rubric_consistency(frames: Frames, tolerance: float = STATED_TOLERANCE) -> pd.DataFrame:
    """Share of decisive judgments whose winner has the higher rubric average (statistic 9).

    Each option's average is the unweighted mean of all its rubric scores, recomputed from
    the scores. Only judgments with a decisive winner and unequal averages count; ties,
    equal averages and judgments without a full set of scores are counted and left out.
    Also counts judgments whose stated average (option1_mean/option2_mean, when given)
    differs from the recomputed one by more than `tolerance`.

    Returns:
        One row per judge, then a row with judge "(all judges)". Columns judge, n, agree,
        share, ties, equal_averages, missing_scores, stated_checked, stated_mismatch,
        excluded (judgments left out by status), reason.
    """
    j = frames.judgments.assign(complete=_complete(frames))
    rows = []
    for judge, part in [*sorted(j.groupby("judge", observed=True), key=lambda kv: str(kv[0])), ("(all judges)", j)]:
        ok = part[part["status"] == "ok"]
        full = ok[ok["complete"]]
        decisive = full[full["code"] != 2]
        a1 = decisive["option1_avg"].round(TIE_DIGITS)
        a2 = decisive["option2_avg"].round(TIE_DIGITS)
        unequal = decisive[(a1 != a2).to_numpy()]
        higher = np.where(unequal["option1_avg"] > unequal["option2_avg"], unequal["option1"], unequal["option2"])
        agree = int((unequal["winner"].to_numpy() == higher).sum())
        n = len(unequal)
        stated = []
        for opt in ("option1", "option2"):
            has = full[f"{opt}_mean"].notna()
            diff = (full.loc[has, f"{opt}_mean"] - full.loc[has, f"{opt}_avg"]).abs()
            stated.append((int(has.sum()), int((diff > tolerance).sum())))
        rows.append({
            "judge": judge, "n": n, "agree": agree, "share": agree / n if n else math.nan,
            "ties": int((full["code"] == 2).sum()), "equal_averages": len(decisive) - n,
            "missing_scores": len(ok) - len(full),
            "stated_checked": stated[0][0] + stated[1][0], "stated_mismatch": stated[0][1] + stated[1][1],
            "excluded": status_counts(part), "reason": None if n else "no decisive judgment with unequal averages",
        })
    return pd.DataFrame(rows)


def stated_average_mismatches(frames: Frames, tolerance: float = STATED_TOLERANCE) -> pd.DataFrame:
    """The usable judgments whose stated average differs from the recomputed one.

    Returns:
        Columns judgment_id, comparison_id, judge, option, stated, recomputed.
    """
    ok = frames.ok
    parts = []
    for opt in ("option1", "option2"):
        diff = (ok[f"{opt}_mean"] - ok[f"{opt}_avg"]).abs()
        bad = ok[diff > tolerance]
        parts.append(pd.DataFrame({"judgment_id": bad["judgment_id"], "comparison_id": bad["comparison_id"],
                                   "judge": bad["judge"], "option": opt, "stated": bad[f"{opt}_mean"],
                                   "recomputed": bad[f"{opt}_avg"]}))
    return pd.concat(parts, ignore_index=True).sort_values(["judgment_id", "option"]).reset_index(drop=True)


def rubric_win_rate_cells(frames: Frames, rates: pd.DataFrame | None = None) -> pd.DataFrame:
    """Cells (run, task, mode, judge, candidate) with x = mean rubric average, y = win rate (statistic 10).

    x is the mean of m's recomputed rubric average over the judge's usable judgments of m
    that carry a full set of scores; y is the judge's win rate for m (all its usable judgments).

    Returns:
        Columns run, task, mode, judge, candidate, rubric_mean, win_rate, games.
    """
    rates = win_rates(frames) if rates is None else rates
    j = frames.judgments.assign(complete=_complete(frames))
    ok = j[(j["status"] == "ok") & j["complete"]]
    keys = ["run", "task", "mode", "judge"]
    long = pd.concat([
        ok[keys].assign(candidate=ok["option1"].to_numpy(), avg=ok["option1_avg"].to_numpy()),
        ok[keys].assign(candidate=ok["option2"].to_numpy(), avg=ok["option2_avg"].to_numpy()),
    ], ignore_index=True)
    x = long.groupby([*keys, "candidate"], sort=False)["avg"].mean().rename("rubric_mean").reset_index()
    out = rates[[*keys, "candidate", "win_rate", "games"]].merge(x, on=[*keys, "candidate"], how="left")
    return out[[*keys, "candidate", "rubric_mean", "win_rate", "games"]]


def rubric_vs_win_rate(cells: pd.DataFrame) -> dict[str, object]:
    """Pearson r between the cells' rubric means and win rates (descriptive: cells are not independent).

    Returns:
        r, n (cells with both values), missing (cells without a rubric mean), reason.
    """
    r, _, n, reason = correlation(cells["rubric_mean"].to_numpy(), cells["win_rate"].to_numpy(), "pearson")
    return {"r": r, "n": n, "missing": int(cells["rubric_mean"].isna().sum()), "reason": reason}


def criterion_validity(frames: Frames) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Release-order checks on automation outputs (statistic 12, Figure 15).

    For each family with two or more models that have a release order, and each judge
    that judged direct comparisons between them: the share of its direct choices that
    favour the later-released model (ties are counted and are not in favour), and each
    model's within-family rank per task-run from that judge's direct choices only (win
    rate within the family sub-tournament, average ranks, 1 = best), as mean and SD (ddof
    1) across task-runs.

    Returns:
        (pairs, ranks): pairs has columns judge, family, models, n, later, earlier, ties,
        share_later, excluded, reason; ranks has columns judge, family, candidate,
        release_order, mean_rank, sd, task_runs.
    """
    design = frames.design
    order = design.release_order
    families: dict[str, list[str]] = {}
    for model, rank in sorted(order.items(), key=lambda kv: kv[1]):
        fam = design.model_families.get(model)
        if fam is not None:
            families.setdefault(fam, []).append(model)
    families = {f: ms for f, ms in families.items() if len(ms) >= 2}
    j = frames.judgments
    auto = j[j["mode"] == "automation"]
    pair_rows, rank_rows = [], []
    for fam, models in sorted(families.items()):
        within = auto[auto["candidate_a"].isin(models) & auto["candidate_b"].isin(models)]
        for judge, part in sorted(within.groupby("judge", observed=True), key=lambda kv: str(kv[0])):
            ok = part[part["status"] == "ok"]
            if part.empty:
                continue
            ra = ok["candidate_a"].map(order).to_numpy()
            rb = ok["candidate_b"].map(order).to_numpy()
            code = ok["code"].to_numpy()
            later_is_a = ra > rb
            later = int((((code == 0) & later_is_a) | ((code == 1) & ~later_is_a)).sum())
            ties = int((code == 2).sum())
            n = len(ok)
            pair_rows.append({"judge": judge, "family": fam, "models": models, "n": n, "later": later,
                              "earlier": n - later - ties, "ties": ties,
                              "share_later": later / n if n else math.nan, "excluded": status_counts(part),
                              "reason": None if n else "no usable direct choice"})
            g = games(Frames(ok, frames.scores, frames.comparisons, frames.candidates, design))
            if g.empty:
                continue
            wr = g.groupby(["run", "task", "candidate"])["points"].mean().rename("win_rate").reset_index()
            wr["rank"] = wr.groupby(["run", "task"])["win_rate"].rank(ascending=False, method="average")
            agg = wr.groupby("candidate")["rank"].agg(mean_rank="mean", sd=lambda v: v.std(ddof=1), task_runs="count")
            for model in models:
                if model in agg.index:
                    rank_rows.append({"judge": judge, "family": fam, "candidate": model, "release_order": order[model],
                                      **{k: agg.loc[model, k] for k in ("mean_rank", "sd", "task_runs")}})
    pairs = pd.DataFrame(pair_rows, columns=["judge", "family", "models", "n", "later", "earlier", "ties",
                                             "share_later", "excluded", "reason"])
    ranks = pd.DataFrame(rank_rows, columns=["judge", "family", "candidate", "release_order", "mean_rank", "sd",
                                             "task_runs"])
    if len(ranks):
        ranks["task_runs"] = ranks["task_runs"].astype("int64")
    return pairs, ranks


def general_profiles(frames: Frames, mode: str = "augmentation") -> pd.DataFrame:
    """Mean score per candidate on each general dimension (statistic 13, Appendix E).

    `mean` pools every score; `judge_balanced` is the mean of per-judge means, since the
    judge panel differs by family.

    Returns:
        Columns mode, candidate, dimension, mean, judge_balanced, n, judges.
    """
    general = frames.design.general_dimensions
    s = frames.scores
    if general:
        s = s[s["dimension"].isin(general)]
    else:
        s = s[s["dimension_kind"] == "general"]
    ok = frames.ok
    ok = ok[ok["mode"] == mode][["judgment_id", "mode"]]
    s = s.merge(ok, on="judgment_id", how="inner")
    pooled = s.groupby(["mode", "candidate", "dimension"]).agg(mean=("score", "mean"), n=("score", "size"),
                                                              judges=("judge", "nunique"))
    per_judge = s.groupby(["mode", "candidate", "dimension", "judge"])["score"].mean()
    balanced = per_judge.groupby(["mode", "candidate", "dimension"]).mean().rename("judge_balanced")
    out = pooled.join(balanced).reset_index()
    return out[["mode", "candidate", "dimension", "mean", "judge_balanced", "n", "judges"]]


def standardised_rubric_ranking(frames: Frames, pairwise_means: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rankings from z-scored rubric averages, and their agreement with the pairwise ranking (statistic 14).

    Each option's rubric average is z-scored within (judge, task, mode); z is averaged per
    (run, task, mode, candidate) and ranked within the run (highest z = rank 1, average
    ranks); the mean over runs is correlated (Spearman) with the pairwise mean rank per
    task and mode. Groups with zero spread cannot be z-scored and are counted as excluded.

    Returns:
        (ranks, agreement): ranks has columns task, mode, candidate, mean_rank, runs;
        agreement has columns task, mode, n, rho, p, zero_spread, reason.
    """
    j = frames.judgments.assign(complete=_complete(frames))
    ok = j[(j["status"] == "ok") & j["complete"]]
    keys = ["run", "task", "mode", "judge"]
    long = pd.concat([
        ok[keys].assign(candidate=ok["option1"].to_numpy(), avg=ok["option1_avg"].to_numpy()),
        ok[keys].assign(candidate=ok["option2"].to_numpy(), avg=ok["option2_avg"].to_numpy()),
    ], ignore_index=True)
    grp = long.groupby(["judge", "task", "mode"])["avg"]
    sd = grp.transform("std")
    long["z"] = (long["avg"] - grp.transform("mean")) / sd.where(sd > 0)
    zero = long[long["z"].isna()].groupby(["task", "mode"]).size()
    per_run = long.dropna(subset=["z"]).groupby(["run", "task", "mode", "candidate"])["z"].mean().reset_index()
    per_run["rank"] = per_run.groupby(["run", "task", "mode"])["z"].rank(ascending=False, method="average")
    ranks = per_run.groupby(["task", "mode", "candidate"])["rank"].agg(mean_rank="mean", runs="count").reset_index()
    rows = []
    for (task, mode), pw in pairwise_means.groupby(["task", "mode"], sort=False):
        rb = ranks[(ranks["task"] == task) & (ranks["mode"] == mode)].set_index("candidate")["mean_rank"]
        pw = pw.set_index("candidate")["mean_rank"]
        names = sorted(set(pw.index) | set(rb.index))
        rho, p, n, reason = correlation(pw.reindex(names).to_numpy(float), rb.reindex(names).to_numpy(float))
        rows.append({"task": task, "mode": mode, "n": n, "rho": rho, "p": p,
                     "zero_spread": int(zero.get((task, mode), 0)), "reason": reason})
    return ranks, pd.DataFrame(rows, columns=["task", "mode", "n", "rho", "p", "zero_spread", "reason"])


def position_bias(frames: Frames) -> pd.DataFrame:
    """Share of decisive choices for the first-shown option per judge, with a binomial test (statistic 15).

    The test is scipy's two-sided exact binomial test against 0.5 (the presented order is
    randomised). When some (comparison, judge) were judged in both orders, the flip rate is
    the share of those pairs whose two verdicts (in canonical orientation) differ.

    Returns:
        One row per judge, then "(all judges)". Columns judge, n (decisive), first, share_first,
        p, ties, both_orders (pairs judged in both orders), flips, flip_rate, excluded, reason.
    """
    j = frames.judgments
    rows = []
    for judge, part in [*sorted(j.groupby("judge", observed=True), key=lambda kv: str(kv[0])), ("(all judges)", j)]:
        ok = part[part["status"] == "ok"]
        decisive = ok[ok["code"] != 2]
        first = int((decisive["winner"] == decisive["option1"]).sum())
        n = len(decisive)
        p = float(stats.binomtest(first, n, 0.5).pvalue) if n else math.nan
        twice = ok.groupby(["comparison_id", "judge"], observed=True)["code"].agg(["nunique", "size"])
        twice = twice[twice["size"] >= 2]
        flips = int((twice["nunique"] > 1).sum())
        rows.append({"judge": judge, "n": n, "first": first, "share_first": first / n if n else math.nan, "p": p,
                     "ties": int((ok["code"] == 2).sum()), "both_orders": len(twice), "flips": flips,
                     "flip_rate": flips / len(twice) if len(twice) else math.nan, "excluded": status_counts(part),
                     "reason": None if n else "no decisive judgment"})
    return pd.DataFrame(rows)
