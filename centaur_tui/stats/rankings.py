"""Provides the pairwise rankings: win rates, within-run ranks, mean ranks, rank of ranks, overall, best, cross-mode.

Follows STATISTICS.md, "Rankings" 1-7. Lower ranks are better (1 = best) everywhere.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from centaur_tui.domain.report_options import RANK_METHODS, RankMethod
from centaur_tui.stats.common import correlation, permutation_p_spearman
from centaur_tui.stats.frames import Frames

__all__ = ["RANK_METHODS", "RankMethod"]  # re-exported: the within-run rank methods live with the report options

TOURNAMENT = ["run", "task", "mode"]
TIE_DIGITS = 9
"""Mean ranks are compared for exact ties after rounding to 9 decimals (float noise only)."""


def plain_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with categorical columns turned into plain strings (for small result tables)."""
    cats = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    return frame.astype({c: object for c in cats}) if cats else frame


def win_rates(frames: Frames) -> pd.DataFrame:
    """Win rate per judge (statistic 1): (wins + 0.5 ties) / judgments, per (run, task, mode, judge, candidate).

    Every usable judgment counts once; with `orders = "both"` a pair judged in both orders
    counts twice for that judge. Also carries the candidate's mean recomputed rubric
    average over the same judgments (completely scored ones only), for statistic 10.

    Returns:
        Columns run, task, mode, judge, candidate, wins, ties, losses, games, win_rate,
        rubric_mean, rubric_n.
    """
    long = frames.long
    pts = long["points"].to_numpy()
    long = long.assign(
        win=(pts == 1.0).astype("int64"), tie=(pts == 0.5).astype("int64"), loss=(pts == 0.0).astype("int64")
    )
    out = (
        long.groupby([*TOURNAMENT, "judge", "candidate"], sort=False, observed=True)
        .agg(
            wins=("win", "sum"),
            ties=("tie", "sum"),
            losses=("loss", "sum"),
            games=("points", "size"),
            points=("points", "sum"),
            rubric_mean=("avg", "mean"),
            rubric_n=("avg", "count"),
        )
        .reset_index()
    )
    out["win_rate"] = out["points"] / out["games"]
    out = plain_keys(out)
    return out[
        [*TOURNAMENT, "judge", "candidate", "wins", "ties", "losses", "games", "win_rate", "rubric_mean", "rubric_n"]
    ]


def within_run_ranks(
    frames: Frames, method: RankMethod = "mean_win_rate", rates: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Within-run rank of every candidate of every tournament (statistic 2).

    - `mean_win_rate` (default): average m's win rates over the judges that judged it, then
      rank the candidates of the tournament; ties get the average rank.
    - `rank_per_judge` (the paper's literal wording): each judge ranks the candidates it
      judged by win rate (average ranks), then m's ranks are averaged over its judges. Under
      leave-family-out a judge ranks only the candidates it may judge, so its ranks run
      over fewer places; the averaged rank is reported as is.
    - `pooled`: one win rate over all judges' judgments of m, then ranked.

    A candidate with no usable judgment in a run keeps its row with a NaN rank (counted as
    a missing run by `mean_ranks`) rather than being ranked last without evidence.

    Returns:
        Columns run, task, mode, candidate, score (win rate, or mean per-judge rank for
        rank_per_judge), judges, games, rank.
    """
    rates = win_rates(frames) if rates is None else rates
    keys = [*TOURNAMENT, "candidate"]
    if method == "rank_per_judge":
        rates = rates.assign(
            judge_rank=rates.groupby([*TOURNAMENT, "judge"])["win_rate"].rank(ascending=False, method="average")
        )
        agg = rates.groupby(keys, sort=False).agg(
            score=("judge_rank", "mean"), judges=("judge", "size"), games=("games", "sum")
        )
    elif method == "pooled":
        agg = (
            rates.assign(points=rates["wins"] + 0.5 * rates["ties"])
            .groupby(keys, sort=False)
            .agg(points=("points", "sum"), judges=("judge", "size"), games=("games", "sum"))
        )
        agg["score"] = agg["points"] / agg["games"]
        agg = agg.drop(columns="points")
    elif method == "mean_win_rate":
        agg = rates.groupby(keys, sort=False).agg(
            score=("win_rate", "mean"), judges=("judge", "size"), games=("games", "sum")
        )
    else:
        raise ValueError(f"unknown rank method {method!r} (one of {', '.join(RANK_METHODS)})")
    out = plain_keys(frames.candidates).merge(agg.reset_index(), on=keys, how="left")
    out["judges"] = out["judges"].fillna(0).astype("int64")
    out["games"] = out["games"].fillna(0).astype("int64")
    if method == "rank_per_judge":
        out["rank"] = out["score"]
    else:
        out["rank"] = out.groupby(TOURNAMENT)["score"].rank(ascending=False, method="average")
    return out


def mean_ranks(ranks: pd.DataFrame) -> pd.DataFrame:
    """Mean rank, SE and rank of ranks per (task, mode, candidate) (statistics 3 and 4).

    SE = sample SD (ddof 1) over runs / sqrt(runs). Rank of ranks ranks the unrounded mean
    ranks within (task, mode) with the min method (1, 1, 3).

    Returns:
        Columns task, mode, candidate, mean_rank, sd, se, runs, missing_runs, rank_of_ranks, reason.
    """
    g = ranks.groupby(["task", "mode", "candidate"], sort=False)["rank"]
    out = g.agg(mean_rank="mean", sd=lambda v: v.std(ddof=1), runs="count", size="size").reset_index()
    out["missing_runs"] = out.pop("size") - out["runs"]
    out["se"] = out["sd"] / np.sqrt(out["runs"].where(out["runs"] > 0))
    out.loc[out["runs"] < 2, ["sd", "se"]] = math.nan
    out["rank_of_ranks"] = out["mean_rank"].round(TIE_DIGITS).groupby([out["task"], out["mode"]]).rank(method="min")
    reason = np.full(len(out), None, dtype=object)
    reason[(out["runs"] == 1).to_numpy()] = "one run: SE undefined"
    reason[(out["runs"] == 0).to_numpy()] = "no usable judgment in any run"
    out["reason"] = reason
    return out[
        ["task", "mode", "candidate", "mean_rank", "sd", "se", "runs", "missing_runs", "rank_of_ranks", "reason"]
    ]


def overall(ranks: pd.DataFrame, means: pd.DataFrame) -> pd.DataFrame:
    """Overall ordering per mode (statistic 5).

    The overall mean rank is the mean of m's per-task mean ranks; it is ranked with the min
    method. Its SE (Appendix C): average m's within-run ranks over tasks in each run, then
    SD over runs / sqrt(runs).

    Returns:
        Columns mode, candidate, mean_rank, se, tasks, runs, overall_rank, reason.
    """
    by_task = (
        means.groupby(["mode", "candidate"], sort=False)
        .agg(mean_rank=("mean_rank", "mean"), tasks=("mean_rank", "count"))
        .reset_index()
    )
    per_run = ranks.groupby(["mode", "run", "candidate"], sort=False)["rank"].mean().reset_index()
    spread = (
        per_run.groupby(["mode", "candidate"], sort=False)["rank"]
        .agg(sd=lambda v: v.std(ddof=1), runs="count")
        .reset_index()
    )
    out = by_task.merge(spread, on=["mode", "candidate"], how="left")
    out["runs"] = out["runs"].fillna(0).astype("int64")
    out["se"] = out["sd"] / np.sqrt(out["runs"].where(out["runs"] > 0))
    out.loc[out["runs"] < 2, "se"] = math.nan
    out["overall_rank"] = out["mean_rank"].round(TIE_DIGITS).groupby(out["mode"]).rank(method="min")
    reason = np.full(len(out), None, dtype=object)
    reason[(out["runs"] == 1).to_numpy()] = "one run: SE undefined"
    reason[(out["tasks"] == 0).to_numpy()] = "no usable judgment in any task"
    out["reason"] = reason
    return out[["mode", "candidate", "mean_rank", "se", "tasks", "runs", "overall_rank", "reason"]]


def _best(names: pd.Series, values: pd.Series) -> tuple[str | None, float]:
    values = values.round(TIE_DIGITS)
    if values.notna().sum() == 0:
        return None, math.nan
    low = values.min()
    return " / ".join(sorted(names[values == low].tolist())), float(low)


def best_by_task(means: pd.DataFrame, overall_table: pd.DataFrame, plain: str, tasks: list[str]) -> pd.DataFrame:
    """Best candidate per task and mode, and overall (statistic 6, Appendix D).

    `best` joins every candidate with rank of ranks 1 with " / "; `best_assisted` does the
    same among the candidates other than plain (augmentation only). The row with task
    "(all tasks)" uses the overall mean ranks.

    Returns:
        Columns mode, task, best, best_mean_rank, best_assisted, best_assisted_mean_rank.
    """
    rows = []
    frames = [(t, means[means["task"] == t]) for t in tasks]
    frames.append(("(all tasks)", overall_table))
    for mode in [m for m in ("automation", "augmentation") if m in set(means["mode"])] + sorted(
        set(means["mode"]) - {"automation", "augmentation"}
    ):
        for task, table in frames:
            part = table[table["mode"] == mode]
            best, best_rank = _best(part["candidate"], part["mean_rank"])
            assisted = part[part["candidate"] != plain]
            has_plain = bool((part["candidate"] == plain).any())
            b_as, b_as_rank = _best(assisted["candidate"], assisted["mean_rank"]) if has_plain else (None, math.nan)
            rows.append(
                {
                    "mode": mode,
                    "task": task,
                    "best": best,
                    "best_mean_rank": best_rank,
                    "best_assisted": b_as,
                    "best_assisted_mean_rank": b_as_rank,
                }
            )
    return pd.DataFrame(
        rows, columns=["mode", "task", "best", "best_mean_rank", "best_assisted", "best_assisted_mean_rank"]
    )


def cross_mode_spearman(
    means: pd.DataFrame,
    overall_table: pd.DataFrame,
    plain: str,
    tasks: list[str],
    permutation: bool = True,
    exclude: tuple[str, ...] = (),
) -> pd.DataFrame:
    """Spearman correlation of automation and augmentation mean ranks (statistic 7, Table 1).

    Over the assistant models present in both modes (plain, and any name in `exclude`, left
    out); mean ranks as computed in each mode's full pool. p is scipy's two-sided default;
    `p_permutation` is the exact permutation p-value (n <= 9) when `permutation` is set.
    The last row, task "(model level)", correlates the per-mode overall mean ranks.

    Returns:
        Columns task, n, rho, p, p_permutation, permutation_method, models, reason.
    """
    rows = []
    pieces = [(t, means[means["task"] == t]) for t in tasks] + [("(model level)", overall_table)]
    for task, table in pieces:
        auto = table[table["mode"] == "automation"].set_index("candidate")["mean_rank"]
        aug = table[table["mode"] == "augmentation"].set_index("candidate")["mean_rank"]
        models = sorted((set(auto.index) & set(aug.index)) - {plain} - set(exclude))
        x = auto.reindex(models).to_numpy(dtype=float)
        y = aug.reindex(models).to_numpy(dtype=float)
        rho, p, n, reason = correlation(x, y, "spearman")
        p_perm, method = permutation_p_spearman(x, y) if permutation and reason is None else (math.nan, None)
        rows.append(
            {
                "task": task,
                "n": n,
                "rho": rho,
                "p": p,
                "p_permutation": p_perm,
                "permutation_method": method,
                "models": models,
                "reason": reason,
            }
        )
    return pd.DataFrame(rows)
