"""Provides Bradley-Terry strengths with cluster-bootstrap intervals (STATISTICS.md, Rankings 8).

Model: P(i beats j) = p_i / (p_i + p_j). A tie counts as half a win for each side. Fitted by
maximum likelihood (Newton's method), with one virtual win and one virtual loss of every candidate
against a virtual opponent of strength 1: this keeps strengths finite when a candidate wins
(or loses) every game, and anchors the scale. Strengths are reported as
theta = log p, centred to mean 0 over the candidates that played. Intervals come from a
cluster bootstrap that resamples whole tournaments (run x task): every comparison of a
tournament shares its outputs, so comparisons are not independent, while runs are the
study's independent replicates. It copes with incomplete designs: any set of pairs that
connects the candidates is enough.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import sparse

MAX_ITER = 100
TOL = 1e-10


def fit_strengths(points: np.ndarray, pair_games: np.ndarray) -> np.ndarray:
    """Fit BT log-strengths for one or many (bootstrap) datasets at once.

    Maximises the log-likelihood, virtual games included, by Newton's method (it is
    strictly concave thanks to the virtual games); steps are capped at 2 log-units, which
    only matters for extreme data.

    Args:
        points: (B, K) points (wins + 0.5 ties) of each candidate.
        pair_games: (B, K, K) symmetric games between each pair.

    Returns:
        (B, K) theta = log strength, centred to mean 0 over candidates with games (NaN without games).
    """
    b, k = points.shape
    theta = np.zeros((b, k))
    played = pair_games.sum(axis=2) > 0
    target = points + 1.0
    eye = np.eye(k, dtype=bool)
    for _ in range(MAX_ITER):
        pi = 1.0 / (1.0 + np.exp(theta[:, None, :] - theta[:, :, None]))  # P(i beats j)
        sig = 1.0 / (1.0 + np.exp(-theta))  # P(i beats the virtual opponent)
        grad = target - (pair_games * pi).sum(axis=2) - 2.0 * sig
        w = pair_games * pi * (1.0 - pi)
        hess = w.copy()
        hess[:, eye] = -(w.sum(axis=2) + 2.0 * sig * (1.0 - sig))
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step = np.clip(step, -2.0, 2.0)
        theta = theta - step
        if np.max(np.abs(step)) < TOL:
            break
    theta = np.where(played, theta, np.nan)
    counts = played.sum(axis=1, keepdims=True)
    centre = np.where(played, theta, 0.0).sum(axis=1, keepdims=True) / np.maximum(counts, 1)
    return theta - centre


def _group_fit(group: pd.DataFrame, names: list[str], n_boot: int, ci: float, rng: np.random.Generator) -> pd.DataFrame:
    k = len(names)
    cats = list(group["candidate_a"].cat.categories)
    to_local = np.full(len(cats) + 1, -1)
    for i, name in enumerate(names):
        to_local[cats.index(name)] = i
    ia = to_local[group["candidate_a"].cat.codes.to_numpy()]
    ib = to_local[group["candidate_b"].cat.codes.to_numpy()]
    keep = (ia >= 0) & (ib >= 0)
    ia, ib = ia[keep], ib[keep]
    code = group["code"].to_numpy()[keep]
    pa = np.where(code == 0, 1.0, np.where(code == 1, 0.0, 0.5))
    n_comp = len(pd.unique(group["unit"].to_numpy()[keep]))
    # Clusters = tournaments (run, task): a candidate's output meets every other output of its
    # tournament, so comparisons are not independent; tournaments (runs) are.
    runs = group["run"].to_numpy()[keep]
    tasks = (
        group["task"].cat.codes.to_numpy()[keep]
        if isinstance(group["task"].dtype, pd.CategoricalDtype)
        else pd.factorize(group["task"].to_numpy()[keep])[0]
    )
    cluster, cluster_keys = pd.factorize(runs * 100_003 + tasks)
    n_cl = len(cluster_keys)
    contrib_points = sparse.csr_matrix(
        (np.concatenate([pa, 1.0 - pa]), (np.concatenate([cluster, cluster]), np.concatenate([ia, ib]))),
        shape=(n_cl, k),
    )
    contrib_games = sparse.csr_matrix((np.ones(len(ia)), (cluster, ia * k + ib)), shape=(n_cl, k * k))

    def totals(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pts = np.asarray(contrib_points.T @ weights.T).T
        g = np.asarray(contrib_games.T @ weights.T).T.reshape(-1, k, k)
        return pts, g + g.transpose(0, 2, 1)

    pts, pg = totals(np.ones((1, n_cl)))
    theta = fit_strengths(pts, pg)[0]
    low = np.full(k, math.nan)
    high = np.full(k, math.nan)
    if n_boot > 0 and n_cl > 1:
        weights = rng.multinomial(n_cl, np.full(n_cl, 1.0 / n_cl), size=n_boot).astype(float)
        boot = fit_strengths(*totals(weights))
        alpha = (1.0 - ci) / 2.0
        has = np.isfinite(boot).any(axis=0)
        if has.any():
            low[has] = np.nanquantile(boot[:, has], alpha, axis=0)
            high[has] = np.nanquantile(boot[:, has], 1.0 - alpha, axis=0)
    games_per = pg[0].sum(axis=1)
    out = pd.DataFrame(
        {"candidate": names, "theta": theta, "ci_low": low, "ci_high": high, "games": games_per.astype("int64")}
    )
    out["rank"] = (-out["theta"]).round(9).rank(method="min")
    out["comparisons"] = n_comp
    out["tournaments"] = n_cl
    reason = np.full(k, None, dtype=object)
    if n_boot > 0 and n_cl < 2:
        reason[:] = "one tournament: no bootstrap interval"
    reason[out["games"].to_numpy() == 0] = "no usable judgment"
    out["reason"] = reason
    return out


def bradley_terry(
    ok: pd.DataFrame,
    candidates: pd.DataFrame,
    by: tuple[str, ...] = ("mode",),
    n_boot: int = 200,
    ci: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Bradley-Terry log-strengths with bootstrap percentile intervals per group.

    Args:
        ok: Usable judgments (`Frames.ok`): candidate_a, candidate_b (categoricals), code, unit, run,
            task and the `by` columns.
        candidates: The tournaments' candidates (`Frames.candidates`), so candidates without games still appear.
        by: Grouping columns, e.g. ("mode",) pooled over tasks and runs, or ("task", "mode").
        n_boot: Bootstrap replicates (0: no intervals).
        ci: Interval coverage.
        seed: Seed of the bootstrap.

    Returns:
        Columns *by, candidate, theta, ci_low, ci_high, games, rank, comparisons, tournaments
        (bootstrap clusters), reason.
    """
    rng = np.random.default_rng(seed)
    keys = list(by)
    columns = [
        *keys,
        "candidate",
        "theta",
        "ci_low",
        "ci_high",
        "games",
        "rank",
        "comparisons",
        "tournaments",
        "reason",
    ]
    cand_groups = candidates.groupby(keys, sort=True, observed=True)["candidate"].unique()
    groups = {(k if isinstance(k, tuple) else (k,)): g for k, g in ok.groupby(keys, sort=False, observed=True)}
    parts = []
    for key, names in cand_groups.items():
        key = tuple(str(x) for x in (key if isinstance(key, tuple) else (key,)))
        group = next((g for k, g in groups.items() if tuple(str(x) for x in k) == key), ok.iloc[:0])
        part = _group_fit(group, sorted(str(n) for n in names), n_boot, ci, rng)
        for col, val in zip(keys, key, strict=True):
            part.insert(0, col, val)
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]
