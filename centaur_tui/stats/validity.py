"""Provides the validity checks of LLM judging (STATISTICS.md 9, 10, 12-15)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from centaur_tui.stats.common import correlation
from centaur_tui.stats.frames import DIM_PREFIX, Frames, status_counts, status_table
from centaur_tui.stats.rankings import TIE_DIGITS, plain_keys, win_rates

STATED_TOLERANCE = 0.05
"""A stated average further than this from the recomputed one is flagged (covers rounding to 0.1)."""
ALL_JUDGES = "(all judges)"


def _per_judge(flags: pd.DataFrame, judgments: pd.DataFrame) -> pd.DataFrame:
    """Sum integer flag columns per judge and over all judges; attach the status exclusions."""
    judges = sorted(str(x) for x in judgments["judge"].dropna().unique())
    values = [c for c in flags.columns if c != "judge"]
    flags = flags.assign(judge=flags["judge"].astype(object).astype(str))
    sums = flags.groupby("judge")[values].sum().reindex(judges).fillna(0)
    total = pd.DataFrame([flags[values].sum()], index=[ALL_JUDGES], columns=values)
    out = pd.concat([sums, total]).fillna(0).astype("int64")
    out.index.name = "judge"
    out = out.reset_index()
    excluded = status_table(judgments, "judge")
    out["excluded"] = [excluded.get(j, {}) if j != ALL_JUDGES else status_counts(judgments) for j in out["judge"]]
    return out


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
    ok = frames.ok
    full = ok["complete"].to_numpy()
    pos = ok["winner_pos"].to_numpy()
    a1 = ok["option1_avg"].round(TIE_DIGITS).to_numpy()
    a2 = ok["option2_avg"].round(TIE_DIGITS).to_numpy()
    decisive = full & (pos > 0)
    counted = decisive & (a1 != a2)
    agree = counted & ((a1 > a2) == (pos == 1))
    checked = np.zeros(len(ok), dtype="int64")
    mismatch = np.zeros(len(ok), dtype="int64")
    for opt in ("option1", "option2"):
        stated = ok[f"{opt}_mean"].to_numpy()
        has = full & np.isfinite(stated)
        checked += has
        mismatch += has & (np.abs(stated - ok[f"{opt}_avg"].to_numpy()) > tolerance)
    flags = pd.DataFrame(
        {
            "judge": ok["judge"].to_numpy(),
            "n": counted.astype("int64"),
            "agree": agree.astype("int64"),
            "ties": (full & (pos == 0)).astype("int64"),
            "equal_averages": (decisive & (a1 == a2)).astype("int64"),
            "missing_scores": (~full).astype("int64"),
            "stated_checked": checked,
            "stated_mismatch": mismatch,
        }
    )
    out = _per_judge(flags, frames.judgments)
    out["share"] = np.where(out["n"] > 0, out["agree"] / out["n"].where(out["n"] > 0), math.nan)
    out["reason"] = [None if n > 0 else "no decisive judgment with unequal averages" for n in out["n"]]
    return out[
        [
            "judge",
            "n",
            "agree",
            "share",
            "ties",
            "equal_averages",
            "missing_scores",
            "stated_checked",
            "stated_mismatch",
            "excluded",
            "reason",
        ]
    ]


def stated_average_mismatches(frames: Frames, tolerance: float = STATED_TOLERANCE) -> pd.DataFrame:
    """The usable judgments whose stated average differs from the recomputed one.

    Returns:
        Columns judgment_id, comparison_id, judge, option, stated, recomputed.
    """
    ok = frames.ok
    parts = []
    for opt in ("option1", "option2"):
        diff = (ok[f"{opt}_mean"] - ok[f"{opt}_avg"]).abs()
        bad = ok[(diff > tolerance).to_numpy()]
        parts.append(
            pd.DataFrame(
                {
                    "judgment_id": bad["judgment_id"].to_numpy(),
                    "comparison_id": bad["comparison_id"].astype(object).to_numpy(),
                    "judge": bad["judge"].astype(object).to_numpy(),
                    "option": opt,
                    "stated": bad[f"{opt}_mean"].to_numpy(),
                    "recomputed": bad[f"{opt}_avg"].to_numpy(),
                }
            )
        )
    return pd.concat(parts, ignore_index=True).sort_values(["judgment_id", "option"]).reset_index(drop=True)


def rubric_win_rate_cells(frames: Frames, rates: pd.DataFrame | None = None) -> pd.DataFrame:
    """Cells (run, task, mode, judge, candidate) with x = mean rubric average, y = win rate (statistic 10).

    x is the mean of m's recomputed rubric average over the judge's usable judgments of m
    that carry a full set of scores; y is the judge's win rate for m (all its usable judgments).

    Returns:
        Columns run, task, mode, judge, candidate, rubric_mean, win_rate, games.
    """
    rates = win_rates(frames) if rates is None else rates
    return rates[["run", "task", "mode", "judge", "candidate", "rubric_mean", "win_rate", "games"]]


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
    for model, _rank in sorted(order.items(), key=lambda kv: kv[1]):
        fam = design.model_families.get(model)
        if fam is not None:
            families.setdefault(fam, []).append(model)
    families = {f: ms for f, ms in families.items() if len(ms) >= 2}
    j = frames.judgments
    auto = j[(j["mode"] == "automation").to_numpy()]
    long = frames.long
    long = long[(long["mode"] == "automation").to_numpy()]
    pair_rows, rank_rows = [], []
    for fam, models in sorted(families.items()):
        within = auto[(auto["candidate_a"].isin(models) & auto["candidate_b"].isin(models)).to_numpy()]
        sub = long[(long["candidate"].isin(models) & long["opponent"].isin(models)).to_numpy()]
        for judge in sorted(str(x) for x in within["judge"].dropna().unique()):
            part = within[(within["judge"] == judge).to_numpy()]
            ok = part[(part["status"] == "ok").to_numpy()]
            ra = ok["candidate_a"].astype(object).map(order).to_numpy()
            rb = ok["candidate_b"].astype(object).map(order).to_numpy()
            code = ok["code"].to_numpy()
            later_is_a = ra > rb
            later = int((((code == 0) & later_is_a) | ((code == 1) & ~later_is_a)).sum())
            ties = int((code == 2).sum())
            n = len(ok)
            pair_rows.append(
                {
                    "judge": judge,
                    "family": fam,
                    "models": models,
                    "n": n,
                    "later": later,
                    "earlier": n - later - ties,
                    "ties": ties,
                    "share_later": later / n if n else math.nan,
                    "excluded": status_counts(part),
                    "reason": None if n else "no usable direct choice",
                }
            )
            g = sub[(sub["judge"] == judge).to_numpy()]
            if g.empty:
                continue
            wr = plain_keys(
                g.groupby(["run", "task", "candidate"], observed=True)["points"].mean().rename("win_rate").reset_index()
            )
            wr["rank"] = wr.groupby(["run", "task"])["win_rate"].rank(ascending=False, method="average")
            agg = wr.groupby("candidate")["rank"].agg(mean_rank="mean", sd=lambda v: v.std(ddof=1), task_runs="count")
            for model in models:
                if model in agg.index:
                    rank_rows.append(
                        {
                            "judge": judge,
                            "family": fam,
                            "candidate": model,
                            "release_order": order[model],
                            **{k: agg.loc[model, k] for k in ("mean_rank", "sd", "task_runs")},
                        }
                    )
    pairs = pd.DataFrame(
        pair_rows,
        columns=["judge", "family", "models", "n", "later", "earlier", "ties", "share_later", "excluded", "reason"],
    )
    ranks = pd.DataFrame(
        rank_rows, columns=["judge", "family", "candidate", "release_order", "mean_rank", "sd", "task_runs"]
    )
    if len(ranks):
        ranks["task_runs"] = ranks["task_runs"].astype("int64")
    return pairs, ranks


def general_profiles(frames: Frames, mode: str | None = None) -> pd.DataFrame:
    """Mean score per candidate on each general dimension (statistic 13, Appendix E).

    `mean` pools every score; `judge_balanced` is the mean of per-judge means, since the
    judge panel differs by family. Only usable judgments count.

    Args:
        frames: The frames.
        mode: One mode, or None for every mode.

    Returns:
        Columns mode, candidate, dimension, mean, judge_balanced, n, judges.
    """
    option = frames.option_scores
    dims = [c for c in option.columns if c.startswith(DIM_PREFIX)]
    cols = ["mode", "candidate", "dimension", "mean", "judge_balanced", "n", "judges"]
    ok = frames.ok
    if mode is not None:
        ok = ok[(ok["mode"] == mode).to_numpy()]
    if not dims or ok.empty:
        return pd.DataFrame(columns=cols)
    where = pd.Index(ok["judgment_id"].to_numpy()).get_indexer(option["judgment_id"].to_numpy())
    keep = where >= 0
    both = option.loc[keep, ["candidate", *dims]].assign(
        judge=ok["judge"].to_numpy()[where[keep]], mode=ok["mode"].to_numpy()[where[keep]]
    )
    keys = ["mode", "candidate", "judge"]
    sums = both.groupby(keys, observed=True)[dims].agg(["sum", "count"])
    rows = []
    for dim in dims:
        s = sums[(dim, "sum")]
        c = sums[(dim, "count")]
        per_judge = (s / c.where(c > 0)).groupby(level=["mode", "candidate"], observed=True)
        grouped_s = s.groupby(level=["mode", "candidate"], observed=True).sum()
        grouped_c = c.groupby(level=["mode", "candidate"], observed=True).sum()
        judges = (c > 0).groupby(level=["mode", "candidate"], observed=True).sum()
        part = pd.DataFrame(
            {
                "mean": grouped_s / grouped_c.where(grouped_c > 0),
                "judge_balanced": per_judge.mean(),
                "n": grouped_c.astype("int64"),
                "judges": judges.astype("int64"),
            }
        ).reset_index()
        part["dimension"] = dim[len(DIM_PREFIX) :]
        rows.append(part[part["n"] > 0])
    return plain_keys(pd.concat(rows, ignore_index=True)[cols])


def standardised_rubric_ranking(frames: Frames, pairwise_means: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rankings from z-scored rubric averages, and their agreement with the pairwise ranking (statistic 14).

    Each option's rubric average is z-scored within (judge, task, mode); z is averaged per
    (run, task, mode, candidate) and ranked within the run (highest z = rank 1, average
    ranks); the mean over runs is correlated (Spearman) with the pairwise mean rank per
    task and mode. Groups with zero spread cannot be z-scored and are counted as excluded.

    Returns:
        (ranks, agreement): ranks has columns task, mode, candidate, mean_rank, runs;
        agreement has columns task, mode, n (candidates), rho, p, zero_spread (option scores in
        groups without spread), missing_scores (usable judgments without a full set of scores), reason.
    """
    long = frames.long
    long = long[long["avg"].notna().to_numpy()]
    grp = long.groupby(["judge", "task", "mode"], observed=True)["avg"]
    sd = grp.transform("std")
    z = (long["avg"] - grp.transform("mean")) / sd.where(sd > 0)
    long = long.assign(z=z)
    zero = long[long["z"].isna().to_numpy()].groupby(["task", "mode"], observed=True).size()
    zero.index = zero.index.map(lambda k: (str(k[0]), str(k[1])))
    ok = frames.ok
    incomplete = ok[~ok["complete"].to_numpy()].groupby(["task", "mode"], observed=True).size()
    incomplete.index = incomplete.index.map(lambda k: (str(k[0]), str(k[1])))
    per_run = plain_keys(
        long.dropna(subset=["z"]).groupby(["run", "task", "mode", "candidate"], observed=True)["z"].mean().reset_index()
    )
    per_run["rank"] = per_run.groupby(["run", "task", "mode"])["z"].rank(ascending=False, method="average")
    ranks = per_run.groupby(["task", "mode", "candidate"])["rank"].agg(mean_rank="mean", runs="count").reset_index()
    rows = []
    for (task, mode), pw in pairwise_means.groupby(["task", "mode"], sort=False):
        rb = ranks[((ranks["task"] == task) & (ranks["mode"] == mode)).to_numpy()].set_index("candidate")["mean_rank"]
        pw = pw.set_index("candidate")["mean_rank"]
        names = sorted(set(pw.index) | set(rb.index))
        rho, p, n, reason = correlation(pw.reindex(names).to_numpy(float), rb.reindex(names).to_numpy(float))
        rows.append(
            {
                "task": task,
                "mode": mode,
                "n": n,
                "rho": rho,
                "p": p,
                "zero_spread": int(zero.get((str(task), str(mode)), 0)),
                "missing_scores": int(incomplete.get((str(task), str(mode)), 0)),
                "reason": reason,
            }
        )
    return ranks, pd.DataFrame(
        rows, columns=["task", "mode", "n", "rho", "p", "zero_spread", "missing_scores", "reason"]
    )


def position_bias(frames: Frames) -> pd.DataFrame:
    """Share of decisive choices for the first-shown option per judge, with a binomial test (statistic 15).

    The test is scipy's two-sided exact binomial test against 0.5 (the presented order is
    randomised). When some (comparison, judge) were judged in both orders, the flip rate is
    the share of those pairs whose two verdicts (in canonical orientation) differ.

    Returns:
        One row per judge, then "(all judges)". Columns judge, n (decisive), first, share_first,
        p, ties, both_orders (pairs judged in both orders), flips, flip_rate, excluded, reason.
    """
    ok = frames.ok
    pos = ok["winner_pos"].to_numpy()
    flags = pd.DataFrame(
        {
            "judge": ok["judge"].to_numpy(),
            "n": (pos > 0).astype("int64"),
            "first": (pos == 1).astype("int64"),
            "ties": (pos == 0).astype("int64"),
        }
    )
    twice = ok.duplicated(["unit", "judge"], keep=False).to_numpy()
    if twice.any():
        rep = ok[twice].groupby(["unit", "judge"], observed=True)["code"].agg(["min", "max"]).reset_index()
        both = pd.DataFrame(
            {
                "judge": rep["judge"].to_numpy(),
                "both_orders": 1,
                "flips": (rep["min"] != rep["max"]).astype("int64").to_numpy(),
            }
        )
        flags = pd.concat([flags, both], ignore_index=True).fillna(0)
    else:
        flags = flags.assign(both_orders=0, flips=0)
    out = _per_judge(flags, frames.judgments)
    out["share_first"] = out["first"] / out["n"].where(out["n"] > 0)
    tested: dict[tuple[int, int], float] = {}  # crowd judges share few (first, n): each tested once
    for f, n in {(int(f), int(n)) for f, n in zip(out["first"], out["n"], strict=True)}:
        tested[f, n] = float(stats.binomtest(f, n, 0.5).pvalue) if n else math.nan
    out["p"] = [tested[int(f), int(n)] for f, n in zip(out["first"], out["n"], strict=True)]
    out["flip_rate"] = out["flips"] / out["both_orders"].where(out["both_orders"] > 0)
    out["reason"] = [None if n > 0 else "no decisive judgment" for n in out["n"]]
    return out[
        ["judge", "n", "first", "share_first", "p", "ties", "both_orders", "flips", "flip_rate", "excluded", "reason"]
    ]
