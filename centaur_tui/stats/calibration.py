"""Provides judge calibration from few expert labels and judge tiers against people (issue 26 items 1, 3).

**Corrected win rates.** For one LLM judge and one candidate (per mode, and per task and mode),
every comparison holding the candidate that the judge judged gives the judge's verdict from the
candidate's side: win, tie or lose. On the comparisons an expert also judged (the labels), the
judge's confusion against the experts is measured: M[j, e] = P(judge says j | expert says e).
The judge's verdicts on all its comparisons give q[j]; if the labelled comparisons are a random
subset, q = M p, where p is the experts' verdict distribution over the same comparisons, so
p = M^+ q (the Rogan-Gladen correction, p = (q - (1 - Sp)) / (Se + Sp - 1) for two classes,
generalised to win/tie/lose by the pseudo-inverse). The corrected win rate is p_win + p_tie / 2
(the experts' points). Its interval is a percentile bootstrap that resamples the labelled
comparisons and the judge-only ones apart (stratified, as the design drew them), so the
uncertainty of the calibration (M) and of the judge's rates (q) both enter. A judge whose
verdicts carry no information about the experts' (Youden's J = Se + Sp - 1, from the win and
lose labels, at most `MIN_YOUDEN`) is reported "not correctable", never dropped.

Measured coverage (bench/calibration.py, docs/statistics.md): with 5-10% of comparisons
labelled, the corrected intervals cover the planted expert win rate at the nominal level where
the naive ones (the judge's own win rate) do not.

**Tiers.** Each LLM judge's Cohen's kappa with the experts (mean over experts, weighted by
shared comparisons) against the expert-expert kappas: z = (kappa_judge - mean) / SD of the
expert pairs' kappas (with a single expert pair: its bootstrap SE); |z| <= 2 is "within the
range of people", above "more consistent than people", below "below people".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from centaur_tui.report.document import (
    CalibrationRow,
    CalibrationSection,
    JudgeTierRow,
    RubricCalibrationRow,
)
from centaur_tui.stats.proportions import wilson_interval

WIN, TIE, LOSE = 0, 1, 2
POINTS = np.array([1.0, 0.5, 0.0])
MIN_LABELS = 10
"""Fewest labelled comparisons (judge and expert both judged) for a corrected win rate."""
MIN_YOUDEN = 0.1
"""At or below this Se + Sp - 1 the judge is "not correctable" (the inversion divides by it)."""
RARE = 2
"""At most this many labelled expert wins (or losses) for a candidate: the Wilson floor applies."""
TIER_Z = 2.0
"""|z| beyond which a judge is placed above or below the expert-expert kappas."""
NO_EXPERTS = "no expert judgment: the judges cannot be calibrated"


@dataclass(frozen=True)
class Corrected:
    """One corrected win rate: estimates, intervals, the confusion behind them and why one may be missing."""

    naive: float
    naive_low: float
    naive_high: float
    corrected: float
    low: float
    high: float
    rogan_gladen: float
    rg_low: float
    rg_high: float
    expert_only: float
    sensitivity: float
    specificity: float
    youden: float
    labels: int
    judged: int
    reason: str | None
    rg_reason: str | None


def _confusion(pairs: np.ndarray) -> np.ndarray:
    """(..., 3, 3) counts [judge, expert] into P(judge | expert); empty expert columns are NaN."""
    cols = pairs.sum(axis=-2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cols > 0, pairs / np.where(cols > 0, cols, 1.0), np.nan)


def _solve(m: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Expert distribution p with M p = q, over the expert classes present; batched over the first axes."""
    present = np.isfinite(m).all(axis=-2)  # (..., 3) expert classes seen among the labels
    mz = np.where(present[..., None, :], np.nan_to_num(m), 0.0)
    p = np.einsum("...ij,...j->...i", np.linalg.pinv(mz), q)
    p = np.where(present, np.clip(p, 0.0, None), 0.0)
    total = p.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, p / total, np.nan)


def _inverse(pairs: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Experts' points from the judge's verdict shares q and P(expert | judge) on the labels; batched.

    A judge verdict the labels never hold takes the labels' expert distribution (no information).
    """
    rows = pairs.sum(axis=-1, keepdims=True)
    marginal = pairs.sum(axis=-2, keepdims=True)
    marginal = marginal / np.maximum(marginal.sum(axis=-1, keepdims=True), 1e-300)
    with np.errstate(invalid="ignore", divide="ignore"):
        given = np.where(rows > 0, pairs / np.where(rows > 0, rows, 1.0), marginal)
    return np.einsum("...j,...je,e->...", q, given, POINTS)


def _wilson(p: float, n: int, level: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion p observed on n items (two-sided, upper tail `level`)."""
    from scipy.stats import norm

    return wilson_interval(p, n, float(norm.ppf(level)))


def _youden(m: np.ndarray) -> np.ndarray:
    return m[..., WIN, WIN] + m[..., LOSE, LOSE] - 1.0


def correct_win_rate(
    labelled: np.ndarray,
    judge_labelled: np.ndarray,
    judge_only: np.ndarray,
    *,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    min_labels: int = MIN_LABELS,
) -> Corrected:
    """The judge's win rate for one candidate, corrected by its confusion against the experts.

    Args:
        labelled: (n_l, 3, 3) per labelled comparison, the share of (judge verdict, expert verdict)
            pairs, from the candidate's side (win, tie, lose); each comparison sums to 1.
        judge_labelled: (n_l, 3) the judge's verdict shares on the labelled comparisons.
        judge_only: (n_u, 3) the judge's verdict shares on the comparisons no expert judged.
        bootstrap: Replicates of the stratified bootstrap (0: no intervals).
        confidence: Interval level.
        seed: Seed of the bootstrap.
        min_labels: Fewest labelled comparisons for a correction.

    Returns:
        Naive (the judge's own rate), corrected (inverse form), Rogan-Gladen (matrix form), each
        with its bootstrap interval, the experts' rate on the labels, sensitivity, specificity,
        Youden's J, counts, and the reason a number is missing.
    """
    n_l, n_u = len(labelled), len(judge_only)
    q_all = np.concatenate([judge_labelled, judge_only]) if n_l + n_u else np.zeros((0, 3))
    rng = np.random.default_rng(seed)
    tail = (1 - confidence) / 2
    nan = math.nan
    naive = float(q_all.mean(axis=0) @ POINTS) if len(q_all) else nan

    def interval(values: np.ndarray, centre: float | None = None) -> tuple[float, float]:
        values = values[np.isfinite(values)]
        if len(values) < 2:
            return nan, nan
        if centre is None:
            low, high = np.quantile(values, [tail, 1 - tail])
            return float(low), float(high)
        # Small-sample form: the bootstrap SD inflated by n/(n - 3) (it divides by n within each of
        # the three verdict strata) times Student's t with n - 3 degrees of freedom; the percentile
        # interval covered the planted value in about 90% of studies at 20-40 labels (bench/calibration.py).
        from scipy.stats import t as student

        df = max(n_l - 3, 1)
        half = float(student.ppf(1 - tail, df)) * float(values.std(ddof=1)) * math.sqrt(n_l / df)
        return max(0.0, centre - half), min(1.0, centre + half)

    if n_l < min_labels or not bootstrap:
        w_all = rng.poisson(1.0, size=(bootstrap, len(q_all))).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            naive_ci = interval((w_all @ q_all) @ POINTS / w_all.sum(axis=1)) if bootstrap else (nan, nan)
    if n_l < min_labels:
        why = f"too few expert labels ({n_l} of {min_labels} needed)"
        return Corrected(naive, *naive_ci, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, n_l, n_l + n_u, why, why)
    pairs = labelled.sum(axis=0)
    m = _confusion(pairs)
    expert_only = float(pairs.sum(axis=0) / n_l @ POINTS)
    q = q_all.mean(axis=0)
    corrected = float(_inverse(pairs, q))
    youden = float(_youden(m))
    se, sp = float(m[WIN, WIN]), float(m[LOSE, LOSE])
    rg_reason: str | None = None
    if not math.isfinite(youden):
        rg_reason = "not correctable: the experts' labels hold no win or no loss for this candidate"
    elif youden <= MIN_YOUDEN:
        rg_reason = f"not correctable: sensitivity + specificity - 1 = {youden:.2f} (at most {MIN_YOUDEN})"
    rogan_gladen = float(_solve(m, q) @ POINTS) if rg_reason is None else nan
    ci = rg_ci = naive_ci = (nan, nan)
    if bootstrap:
        # Poisson weights (each comparison drawn Poisson(1) times: the bootstrap's large-sample
        # equivalent, vectorised), the labelled and the judge-only comparisons apart.
        w_l = rng.poisson(1.0, size=(bootstrap, n_l)).astype(float)
        boot_pairs = (w_l @ labelled.reshape(n_l, 9)).reshape(bootstrap, 3, 3)
        boot_q = w_l @ judge_labelled
        total = w_l.sum(axis=1)
        if n_u:
            w_u = rng.poisson(1.0, size=(bootstrap, n_u)).astype(float)
            boot_q = boot_q + w_u @ judge_only
            total = total + w_u.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            boot_q = boot_q / total[:, None]
        naive_ci = interval(boot_q @ POINTS)
        ci = interval(_inverse(boot_pairs, boot_q), corrected)
        points = labelled.sum(axis=1) @ POINTS  # the experts' points per labelled comparison
        if min((points > 0.5).sum(), (points < 0.5).sum()) <= RARE:
            # Near the boundary (the labels hold almost no win, or almost no loss) the bootstrap has
            # nothing to resample: its interval shrinks to a point. The experts' own Wilson interval
            # on the labels is the floor there (it missed 0.02 with 28 labels, all losses).
            w_low, w_high = _wilson(corrected, n_l, 1 - tail)
            ci = (min(ci[0], w_low), max(ci[1], w_high))
        if rg_reason is None:
            # A replicate without an expert class still estimates from the classes it holds.
            rg_ci = interval(_solve(_confusion(boot_pairs), boot_q) @ POINTS, rogan_gladen)
    return Corrected(
        naive,
        *naive_ci,
        corrected,
        *ci,
        rogan_gladen,
        *rg_ci,
        expert_only,
        se,
        sp,
        youden,
        n_l,
        n_l + n_u,
        None,
        rg_reason,
    )


def _side(code: np.ndarray, is_a: np.ndarray) -> np.ndarray:
    """Frame codes (0 A wins, 1 B wins, 2 tie) as verdicts from one candidate's side."""
    won = np.where(is_a, code == 0, code == 1)
    lost = np.where(is_a, code == 1, code == 0)
    return np.where(won, WIN, np.where(lost, LOSE, TIE))


def _shares(units: np.ndarray, verdicts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per comparison (sorted unit ids), the share of each verdict (a judge judging twice counts half each)."""
    ids, inverse = np.unique(units, return_inverse=True)
    counts = np.zeros((len(ids), 3))
    np.add.at(counts, (inverse, verdicts), 1.0)
    return ids, counts / counts.sum(axis=1, keepdims=True)


def calibration_rows(
    ok: pd.DataFrame, scopes: list[tuple[str, str | None]], *, bootstrap: int, confidence: float, seed: int
) -> list[CalibrationRow]:
    """Corrected win rates for every LLM judge, candidate and scope (mode, or task and mode).

    Args:
        ok: Usable judgments of both kinds (frames `ok` with experts), with unit, code,
            candidate_a, candidate_b, judge, judge_kind, task, mode.
        scopes: (mode, task or None for every task) to report.
        bootstrap, confidence, seed: Of the intervals.
    """
    out: list[CalibrationRow] = []
    is_expert = (ok["judge_kind"].astype(str) == "expert").to_numpy()
    for mode, task in scopes:
        in_scope = (ok["mode"].astype(str) == mode).to_numpy().copy()
        if task is not None:
            in_scope &= (ok["task"].astype(str) == task).to_numpy()
        part = ok[in_scope]
        ex_mask = is_expert[in_scope]
        experts = part[ex_mask]
        candidates = sorted(set(part["candidate_a"].astype(str)) | set(part["candidate_b"].astype(str)))
        for judge in sorted(set(part.loc[~ex_mask, "judge"].astype(str))):
            jp = part[(~ex_mask) & (part["judge"].astype(str) == judge).to_numpy()]
            for candidate in candidates:
                row = _one(jp, experts, candidate, bootstrap, confidence, seed)
                if row is None:
                    continue
                out.append(
                    CalibrationRow(
                        judge=judge,
                        mode=mode,
                        task=task,
                        candidate=candidate,
                        naive=_num(row.naive),
                        naive_ci_low=_num(row.naive_low),
                        naive_ci_high=_num(row.naive_high),
                        corrected=_num(row.corrected),
                        ci_low=_num(row.low),
                        ci_high=_num(row.high),
                        rogan_gladen=_num(row.rogan_gladen),
                        rg_ci_low=_num(row.rg_low),
                        rg_ci_high=_num(row.rg_high),
                        rg_reason=row.rg_reason,
                        expert_only=_num(row.expert_only),
                        sensitivity=_num(row.sensitivity),
                        specificity=_num(row.specificity),
                        youden=_num(row.youden),
                        labels=row.labels,
                        judged=row.judged,
                        reason=row.reason,
                    )
                )
    return out


def _one(
    jp: pd.DataFrame, experts: pd.DataFrame, candidate: str, bootstrap: int, confidence: float, seed: int
) -> Corrected | None:
    a_j, b_j = jp["candidate_a"].astype(str).to_numpy(), jp["candidate_b"].astype(str).to_numpy()
    mine = (a_j == candidate) | (b_j == candidate)
    if not mine.any():
        return None
    j_ids, jv = _shares(jp["unit"].to_numpy()[mine], _side(jp["code"].to_numpy()[mine], a_j[mine] == candidate))
    a_e, b_e = experts["candidate_a"].astype(str).to_numpy(), experts["candidate_b"].astype(str).to_numpy()
    emine = (a_e == candidate) | (b_e == candidate)
    e_ids, ev = _shares(
        experts["unit"].to_numpy()[emine], _side(experts["code"].to_numpy()[emine], a_e[emine] == candidate)
    )
    _, in_j, in_e = np.intersect1d(j_ids, e_ids, assume_unique=True, return_indices=True)
    lab_j, lab_e = jv[in_j], ev[in_e]
    # The judge's and the experts' verdicts on one comparison are paired as independent shares:
    # with one verdict each (the usual case) this is the one (judge, expert) cell.
    labelled = np.einsum("nj,ne->nje", lab_j, lab_e)
    only = np.delete(jv, in_j, axis=0)
    # Seeded per cell, so adding a judge or a candidate does not move another row's interval.
    cell_seed = seed + sum(ord(ch) for ch in candidate) * 7919
    return correct_win_rate(labelled, lab_j, only, bootstrap=bootstrap, confidence=confidence, seed=cell_seed)


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def tier_rows(kappa: pd.DataFrame) -> list[JudgeTierRow]:
    """Each LLM judge's kappa with the experts placed among the expert-expert kappas.

    Args:
        kappa: The experts section's Cohen's kappa table (judge_1, judge_2, kind_1, kind_2,
            block, n, kappa, ci_low, ci_high).
    """
    if kappa.empty:
        return []
    ok = kappa[kappa["kappa"].notna()]
    people = ok[(ok["kind_1"] == "expert") & (ok["kind_2"] == "expert")]
    k_people = people["kappa"].to_numpy(dtype=float)
    if len(k_people) >= 2:
        centre, spread = float(k_people.mean()), float(k_people.std(ddof=1))
        spread_from = "SD of the expert pairs' kappas"
    elif len(k_people) == 1:
        row = people.iloc[0]
        centre = float(row["kappa"])
        spread = float((row["ci_high"] - row["ci_low"]) / (2 * 1.96)) if pd.notna(row["ci_high"]) else math.nan
        spread_from = "bootstrap SE of the one expert pair's kappa"
    else:
        centre = spread = math.nan
        spread_from = "no expert pair with a kappa"
    mixed = ok[(ok["kind_1"] != ok["kind_2"])]
    out = []
    judges = sorted(
        set(kappa.loc[kappa["kind_1"] == "llm", "judge_1"].astype(str))
        | set(kappa.loc[kappa["kind_2"] == "llm", "judge_2"].astype(str))
    )
    for judge in judges:
        mine = mixed[(mixed["judge_1"].astype(str) == judge) | (mixed["judge_2"].astype(str) == judge)]
        n = int(mine["n"].sum())
        reason: str | None = None
        if mine.empty:
            k = z = math.nan
            tier = None
            reason = "no kappa with an expert (too few shared comparisons)"
        else:
            k = float(np.average(mine["kappa"].to_numpy(dtype=float), weights=mine["n"].to_numpy(dtype=float)))
            if not math.isfinite(spread) or spread <= 0:
                z = math.nan
                tier = None
                reason = f"no spread of expert-expert kappas to compare with ({spread_from})"
            else:
                z = (k - centre) / spread
                tier = (
                    "more consistent than people"
                    if z > TIER_Z
                    else "below people"
                    if z < -TIER_Z
                    else "within the range of people"
                )
        out.append(
            JudgeTierRow(
                judge=judge,
                kappa=_num(k),
                n=n,
                experts=len(mine),
                people_kappa=_num(centre),
                people_sd=_num(spread),
                people_pairs=len(k_people),
                people_n=int(people["n"].sum()),
                z=_num(z),
                tier=tier,
                spread_from=spread_from,
                reason=reason,
            )
        )
    return out


def rubric_rows(
    ok: pd.DataFrame,
    option_scores: pd.DataFrame,
    modes: list[str],
    *,
    bootstrap: int,
    confidence: float,
    seed: int,
) -> list[RubricCalibrationRow]:
    """Each LLM judge's rubric averages calibrated to the experts' by isotonic regression, per mode and candidate.

    On the (comparison, candidate) pairs both an expert and the judge scored, the experts' mean
    average is regressed isotonically on the judge's average (sklearn); the calibrated value of a
    candidate is the mean of the fitted map over every average the judge gave it. Intervals: a
    bootstrap over the labelled comparisons and the judge-only ones apart.
    """
    from sklearn.isotonic import IsotonicRegression

    if option_scores.empty or "mean" not in option_scores:
        return []
    scored = option_scores[["judgment_id", "candidate", "mean"]].dropna()
    frame = ok[["judgment_id", "unit", "judge", "judge_kind", "mode"]].merge(scored, on="judgment_id")
    frame["candidate"] = frame["candidate"].astype(str)
    is_expert = frame["judge_kind"].astype(str) == "expert"
    expert_mean = frame[is_expert].groupby(["unit", "candidate"])["mean"].mean()
    out = []
    tail = (1 - confidence) / 2
    for mode in modes:
        fm = frame[(frame["mode"].astype(str) == mode) & ~is_expert]
        for judge in sorted(set(fm["judge"].astype(str))):
            fj = fm[fm["judge"].astype(str) == judge].groupby(["unit", "candidate"])["mean"].mean()
            both = fj.index.intersection(expert_mean.index)
            x, y = fj.loc[both].to_numpy(), expert_mean.loc[both].to_numpy()
            units_l = np.asarray(both.get_level_values(0))
            n_l = len(set(units_l.tolist()))
            for candidate in sorted(set(fj.index.get_level_values(1))):
                cj = fj.xs(candidate, level=1)
                naive = float(cj.mean())
                base = {"judge": judge, "mode": mode, "candidate": candidate, "naive": naive, "labels": len(x)}
                if n_l < MIN_LABELS or len(set(x.tolist())) < 2:
                    out.append(
                        RubricCalibrationRow(
                            **base,
                            calibrated=None,
                            ci_low=None,
                            ci_high=None,
                            judged=len(cj),
                            reason=f"too few expert-scored comparisons ({n_l} of {MIN_LABELS} needed)",
                        )
                    )
                    continue
                iso = IsotonicRegression(out_of_bounds="clip").fit(x, y)
                calibrated = float(iso.predict(cj.to_numpy()).mean())
                rng = np.random.default_rng(seed + len(out))
                boots = []
                uniq = np.unique(units_l)
                for _ in range(bootstrap):
                    pick = rng.choice(uniq, size=len(uniq))
                    idx = np.concatenate([np.flatnonzero(units_l == u) for u in pick])
                    if len(set(x[idx].tolist())) < 2:
                        continue
                    f = IsotonicRegression(out_of_bounds="clip").fit(x[idx], y[idx])
                    sample = rng.choice(cj.to_numpy(), size=len(cj))
                    boots.append(float(f.predict(sample).mean()))
                low, high = (float(v) for v in np.quantile(boots, [tail, 1 - tail])) if boots else (None, None)
                out.append(
                    RubricCalibrationRow(
                        **base, calibrated=calibrated, ci_low=low, ci_high=high, judged=len(cj), reason=None
                    )
                )
    return out


def calibration_section(
    frames: object, *, bootstrap: int = 1000, confidence: float = 0.95, seed: int = 0, kappa: pd.DataFrame | None = None
) -> CalibrationSection:
    """The report's calibration section: corrected win rates, rubric calibration and judge tiers."""
    from centaur_tui.stats.frames import Frames

    assert isinstance(frames, Frames)
    kinds = frames.judgments["judge_kind"].astype(object)
    if not (kinds == "expert").any():
        return CalibrationSection(present=False, note=NO_EXPERTS)
    both = frames.with_judge_kinds(("llm", "expert"))
    ok = both.ok
    modes = frames.modes()
    scopes: list[tuple[str, str | None]] = [(m, None) for m in modes]
    scopes += [(m, t) for m in modes for t in frames.tasks()]
    rows = calibration_rows(ok, scopes, bootstrap=bootstrap, confidence=confidence, seed=seed)
    rubric = rubric_rows(ok, both.option_scores, modes, bootstrap=min(bootstrap, 200), confidence=confidence, seed=seed)
    tiers = tier_rows(kappa) if kappa is not None else []
    return CalibrationSection(
        present=True,
        note=None,
        confidence=confidence,
        bootstrap=bootstrap,
        min_labels=MIN_LABELS,
        min_youden=MIN_YOUDEN,
        rows=rows,
        not_correctable=sum(1 for r in rows if r.rg_reason and r.rg_reason.startswith("not correctable")),
        too_few_labels=sum(1 for r in rows if r.reason and r.reason.startswith("too few")),
        rubric=rubric,
        tiers=tiers,
        tier_z=TIER_Z,
    )
