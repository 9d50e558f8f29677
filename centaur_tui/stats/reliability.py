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

from centaur_tui.stats.frames import STATUSES, Frames


def ratings(frames: Frames) -> tuple[pd.DataFrame, int]:
    """One rating per (comparison, judge) from the usable judgments.

    With `orders = "both"` (or any repeat) only the first presented order is kept, so a
    comparison judged twice by a judge does not weigh twice.

    Returns:
        (ratings with columns comparison_id, unit, run, task, mode, judge, code; number of repeats dropped).
    """
    ok = frames.ok
    if ok.duplicated(["unit", "judge"]).any():
        ok = ok.sort_values(["unit", "judge", "presentation"], kind="stable")
        kept = ok.drop_duplicates(["unit", "judge"], keep="first")
    else:
        kept = ok
    cols = ["comparison_id", "unit", "run", "task", "mode", "judge", "code"]
    return kept[cols].reset_index(drop=True), len(ok) - len(kept)


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


def _triples(rated: pd.DataFrame, n_units: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(judge index, unit, code) of each rating whose unit is a comparison row (`unit`) below n_units.

    One rating per judge and unit (`ratings` keeps the first presented order).
    """
    _, judge_index = np.unique(rated["judge"].astype(str).to_numpy(), return_inverse=True)
    units = rated["unit"].to_numpy()
    keep = (units >= 0) & (units < n_units)
    return judge_index.reshape(-1)[keep], units[keep].astype(np.int64), rated["code"].to_numpy(dtype=float)[keep]


def agreement_from_matrix(matrix: np.ndarray) -> dict[str, object]:
    """Raw agreement and nominal alpha of a judges x units matrix of codes (NaN = missing).

    Units with fewer than two ratings are excluded (and counted).

    Returns:
        units, excluded_units, ratings, judges, pairs, agreeing_pairs, raw_agreement, alpha, reason.
    """
    judge, unit = np.nonzero(np.isfinite(matrix))
    return agreement_from_ratings(judge, unit, matrix[judge, unit], np.ones(matrix.shape[1], dtype=bool))


def agreement_from_ratings(
    judge: np.ndarray, unit: np.ndarray, code: np.ndarray, in_scope: np.ndarray
) -> dict[str, object]:
    """Raw agreement and nominal alpha of ratings given as (judge, unit, code) triples.

    The same figures as `agreement_from_matrix` on the judges x units matrix these triples fill
    (at most one rating per judge and unit), without building it: a study of 2,000 judges and
    30,000 comparisons would need a matrix of 480 MB. Alpha is computed from the units x values
    counts, which is what krippendorff.alpha builds from a matrix first.

    Args:
        judge: Judge index of each rating.
        unit: Unit index of each rating (0 to len(in_scope) - 1).
        code: Code of each rating.
        in_scope: One flag per unit: the units counted (units with fewer than two ratings are
            excluded, and counted).

    Returns:
        See `agreement_from_matrix`.
    """
    n_units = len(in_scope)
    r = in_scope[unit]
    judge, unit, code = judge[r], unit[r], code[r]
    values, vidx = np.unique(code, return_inverse=True)
    v = len(values)
    counts = np.bincount(unit * v + vidx.reshape(-1), minlength=n_units * v).reshape(n_units, v)[in_scope]
    m = counts.sum(axis=1)
    usable = m >= 2
    cu = counts[usable]
    mu = m[usable]
    pairs = int((mu * (mu - 1) // 2).sum())
    agreeing = 0
    for c_value in (0, 1, 2):
        column = np.flatnonzero(values == c_value)
        if column.size:
            c = cu[:, column[0]]
            agreeing += int((c * (c - 1) // 2).sum())
    usable_unit = np.zeros(n_units, dtype=bool)
    usable_unit[np.flatnonzero(in_scope)[usable]] = True
    result: dict[str, object] = {
        "units": int(usable.sum()),
        "excluded_units": int((~usable).sum()),
        "ratings": int(mu.sum()),
        "judges": int(np.unique(judge[usable_unit[unit]]).size),
        "pairs": pairs,
        "agreeing_pairs": agreeing,
        "raw_agreement": agreeing / pairs if pairs else math.nan,
    }
    present = cu.sum(axis=0) > 0
    alpha, reason = _alpha_from_counts(cu[:, present], values[present])
    result["alpha"] = alpha
    result["reason"] = reason if pairs else "no unit with two or more valid ratings"
    return result


def _alpha_from_counts(counts: np.ndarray, values: np.ndarray) -> tuple[float, str | None]:
    """`alpha_nominal` from the units x values counts of the units rated twice or more."""
    if counts.shape[0] == 0 or values.size == 0:
        return math.nan, "no unit with two or more ratings"
    if len(values) < 2:
        return math.nan, f"only one category observed (every rating is {int(values[0])}): no variation to agree on"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(krippendorff.alpha(value_counts=counts, value_domain=values, level_of_measurement="nominal"))
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
        See `agreement_from_matrix`.
    """
    ids = pd.Index(pd.unique(pd.Series(units).astype(str)))
    sub = rated[rated["comparison_id"].astype(str).isin(ids)]
    judge, unit, code = _triples(sub.assign(unit=ids.get_indexer(sub["comparison_id"].astype(str))), len(ids))
    return agreement_from_ratings(judge, unit, code, np.ones(len(ids), dtype=bool))


def reliability_table(frames: Frames) -> pd.DataFrame:
    """Raw agreement and alpha overall, per mode and per task x mode.

    Returns:
        Columns scope ("overall", "mode" or "task x mode"), mode, task, units, excluded_units,
        ratings, judges, pairs, agreeing_pairs, raw_agreement, alpha, reason, repeats_dropped,
        excluded (judgments left out, by status).
    """
    rated, _ = ratings(frames)
    comps = frames.comparisons
    judge, unit, code = _triples(rated, len(comps))
    ok = frames.ok
    dup = ok.duplicated(["unit", "judge"]).to_numpy()
    repeats = pd.DataFrame(
        {
            "extra": 1,
            "task": ok["task"].astype(object).to_numpy()[dup],
            "mode": ok["mode"].astype(object).to_numpy()[dup],
        }
    )
    j = frames.judgments
    status = j[j["status"] != "ok"].groupby(["task", "mode", "status"], observed=True).size()
    c_mode, c_task = comps["mode"].astype(object).to_numpy(), comps["task"].astype(object).to_numpy()
    scopes: list[tuple[str, str | None, str | None]] = [("overall", None, None)]
    scopes += [("mode", m, None) for m in frames.modes()]
    scopes += [("task x mode", m, t) for t in frames.tasks() for m in frames.modes()]
    rows = []
    for scope, mode, task in scopes:
        mask = np.ones(len(comps), dtype=bool)
        if mode is not None:
            mask &= c_mode == mode
        if task is not None:
            mask &= c_task == task
        res = agreement_from_ratings(judge, unit, code, mask)
        rep = repeats
        st = status
        # Compared as plain values: a categorical index level of more than 127 tasks (MT-Bench's
        # 80 questions x 2 turns) raised OverflowError in pandas' comparison with a scalar.
        if mode is not None:
            rep = rep[rep["mode"] == mode]
            st = st[np.asarray(st.index.get_level_values("mode"), dtype=object) == mode]
        if task is not None:
            rep = rep[rep["task"] == task]
            st = st[np.asarray(st.index.get_level_values("task"), dtype=object) == task]
        by = st.groupby(level="status", observed=True).sum()
        excluded = {k: int(by.get(k, 0)) for k in STATUSES[1:] if int(by.get(k, 0))}
        rows.append(
            {
                "scope": scope,
                "mode": mode,
                "task": task,
                **res,
                "repeats_dropped": int(rep["extra"].sum()),
                "excluded": excluded,
            }
        )
    return pd.DataFrame(rows)
