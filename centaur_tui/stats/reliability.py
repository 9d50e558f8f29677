"""Provides inter-judge reliability: raw agreement and Krippendorff's nominal alpha (STATISTICS.md 11).

Unit = comparison. Each rating is coded in the canonical orientation of the pair (its two
candidates sorted by name): 0 = the first wins, 1 = the second wins, 2 = tie. The
presented order therefore cannot affect agreement. Alpha does depend on the orientation
in one way: swapping which candidate is "first" for some units moves ratings between
codes 0 and 1 and changes the pooled category frequencies, hence the expected
disagreement. Sorting by name fixes one orientation; any fixed rule gives the same raw
agreement but can give a slightly different alpha.
"""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
import pandas as pd

from centaur_tui.stats.frames import Frames, status_counts


def ratings(frames: Frames) -> tuple[pd.DataFrame, int]:
    """One rating per (comparison, judge) from the usable judgments.

    With `orders = "both"` (or any repeat) only the first presented order is kept, so a
    comparison judged twice by a judge does not weigh twice.

    Returns:
        (ratings with columns comparison_id, run, task, mode, judge, code; number of repeats dropped).
    """
    ok = frames.ok.sort_values(["comparison_id", "judge", "presentation"], kind="stable")
    kept = ok.drop_duplicates(["comparison_id", "judge"], keep="first")
    return kept[["comparison_id", "run", "task", "mode", "judge", "code"]].reset_index(drop=True), len(ok) - len(kept)


def alpha_nominal(matrix: np.ndarray) -> tuple[float, str | None]:
    """Krippendorff's nominal alpha of a judges x units matrix (NaN = missing), never raising.

    Returns:
        (alpha, reason): alpha is NaN and the reason says why when it is undefined.
    """
    values = matrix[np.isfinite(matrix)]
    if matrix.shape[1] == 0 or values.size == 0:
        return math.nan, "no unit with two or more ratings"
    distinct = np.unique(values)
    if len(distinct) < 2:
        return math.nan, f"only one category observed (every rating is {int(distinct[0])}): no variation to agree on"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    except (ValueError, ZeroDivisionError) as exc:  # degenerate subsets: report, never crash
        return math.nan, f"alpha undefined: {exc}"
    if not math.isfinite(value):
        return math.nan, "alpha undefined (no expected disagreement)"
    return value, None


def agreement(rated: pd.DataFrame, units: pd.Series) -> dict[str, object]:
    """Raw agreement and alpha over a set of units.

    Args:
        rated: Ratings of these units (from `ratings`).
        units: Every comparison id in scope, rated or not (units with fewer than two ratings
            are counted as excluded).

    Returns:
        units, excluded_units, ratings, judges, pairs, agreeing_pairs, raw_agreement, alpha, reason.
    """
    per_unit = rated.groupby("comparison_id").size()
    usable_ids = per_unit.index[per_unit >= 2]
    use = rated[rated["comparison_id"].isin(usable_ids)]
    m = per_unit[per_unit >= 2].to_numpy()
    pairs = int((m * (m - 1) // 2).sum())
    by_code = use.groupby(["comparison_id", "code"]).size().to_numpy()
    agreeing = int((by_code * (by_code - 1) // 2).sum())
    n_units = int(units.nunique())
    result: dict[str, object] = {
        "units": len(usable_ids),
        "excluded_units": n_units - len(usable_ids),
        "ratings": len(use),
        "judges": int(use["judge"].nunique()),
        "pairs": pairs,
        "agreeing_pairs": agreeing,
        "raw_agreement": agreeing / pairs if pairs else math.nan,
    }
    if len(use):
        matrix = use.pivot(index="judge", columns="comparison_id", values="code").to_numpy(dtype=float)
    else:
        matrix = np.empty((0, 0))
    alpha, reason = alpha_nominal(matrix)
    result["alpha"] = alpha
    result["reason"] = reason if pairs else "no unit with two or more valid ratings"
    return result


def reliability_table(frames: Frames) -> pd.DataFrame:
    """Raw agreement and alpha overall, per mode and per task x mode.

    Returns:
        Columns scope ("overall", "mode" or "task x mode"), mode, task, units, excluded_units,
        ratings, judges, pairs, agreeing_pairs, raw_agreement, alpha, reason, repeats_dropped,
        excluded (judgments left out, by status).
    """
    rated, _ = ratings(frames)
    comps = frames.comparisons
    ok = frames.ok
    repeats = ok.groupby(["comparison_id", "judge"]).size() - 1
    repeats = repeats[repeats > 0].reset_index().merge(comps[["id", "task", "mode"]], left_on="comparison_id",
                                                        right_on="id")
    scopes: list[tuple[str, str | None, str | None]] = [("overall", None, None)]
    scopes += [("mode", m, None) for m in frames.modes()]
    scopes += [("task x mode", m, t) for t in frames.tasks() for m in frames.modes()]
    rows = []
    for scope, mode, task in scopes:
        c_mask = np.ones(len(comps), dtype=bool)
        r_mask = np.ones(len(rated), dtype=bool)
        j_mask = np.ones(len(frames.judgments), dtype=bool)
        p_mask = np.ones(len(repeats), dtype=bool)
        if mode is not None:
            c_mask &= (comps["mode"] == mode).to_numpy()
            r_mask &= (rated["mode"] == mode).to_numpy()
            j_mask &= (frames.judgments["mode"] == mode).to_numpy()
            p_mask &= (repeats["mode"] == mode).to_numpy()
        if task is not None:
            c_mask &= (comps["task"] == task).to_numpy()
            r_mask &= (rated["task"] == task).to_numpy()
            j_mask &= (frames.judgments["task"] == task).to_numpy()
            p_mask &= (repeats["task"] == task).to_numpy()
        res = agreement(rated[r_mask], comps.loc[c_mask, "id"])
        rows.append({"scope": scope, "mode": mode, "task": task, **res,
                     "repeats_dropped": int(repeats.loc[p_mask, 0].sum()) if len(repeats) else 0,
                     "excluded": status_counts(frames.judgments[j_mask])})
    return pd.DataFrame(rows)
