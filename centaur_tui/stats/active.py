"""Provides active allocation's statistics: the sequential draw, its estimator, and a planted-truth simulator.

Design (`centaur assign --strategy active`, `domain.assignment.active_weights`): an expert's
comparisons are drawn one at a time, without replacement, from the comparisons the expert may
judge and does not hold yet; draw t picks comparison u with probability

    p_t(u) = w(u) / sum of w over the comparisons still in the pool,
    w(u) = gamma + s(u),   s(u) = 1 - |2 Yhat(u) - 1| in [0, 1],

where Yhat(u) is the LLM panel's points for candidate_a on u (every valid verdict, both
presented orders, a tie 0.5): s is 0 when the panel is unanimous and 1 when it splits evenly, so
a judge panel that disagrees, flips between orders or calls ties raises it. gamma is set so that
a share `floor` (default 0.3) of the pool's weight is uniform: gamma = floor / (1 - floor) x the
mean of s; a comparison without any LLM verdict gets the mean s (uniform). Every draw's p_t is
stored with its assignment (`expert_assignments.probability`).

Estimator: Des Raj's (1956) estimator for ordered draws without replacement with varying
probabilities, applied to the prediction-powered decomposition (Angelopoulos et al. 2023;
active inference: Zrnic and Candes 2024). For candidate m with N_m comparisons, draw t gives

    z_t(x) = ( sum_{j < t} x(u_j) + x(u_t) / p_t(u_t) ) / N_m,

x(u) the candidate's points on u (0 when u does not involve m). Each z_t is an unbiased
estimate of the mean of x over the N_m comparisons given the draws before it, whatever rule
chose p_t (a martingale), so the average z-bar is unbiased and sum (z_t - z-bar)^2 / (n (n-1))
estimates its variance. With the LLM points Yhat known on every comparison, the estimate is

    theta_m = lambda_m mean_all(Yhat_m) + z-bar(Y_m) - lambda_m z-bar(Yhat_m),

a control variate; lambda_m = cov(z(Y), z(Yhat)) / var(z(Yhat)) clipped to [0, 1] (0: experts
alone). The estimand is the experts' expected points of m over the session's comparisons
(`stats.ppr`'s theta, on the comparisons as drawn); the covariance across candidates is the
sum of the products of the centred z terms, so `ppr.rank_sets` applies unchanged.

Assumptions: the probabilities stored are the ones used (the draws are seeded, the score is a
function of the LLM verdicts only, never of the experts' verdicts); every earlier draw of the
sequence is judged (a sequence is cut at its first unjudged place); the pool is the
session's comparisons of one mode that the expert may judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from centaur_tui.stats.ppr import Estimate, incidence

if TYPE_CHECKING:
    from centaur_tui.report.document import ActiveSection

FLOOR = 0.15
"""Share of the pool's weight drawn uniformly (domain.assignment.ACTIVE_FLOOR; kept equal by a test)."""


def uncertainty(yhat: np.ndarray) -> np.ndarray:
    """The judge panel's uncertainty on each comparison: 1 - |2 Yhat - 1| (NaN where no verdict)."""
    yhat = np.asarray(yhat, dtype=float)
    return 1.0 - np.abs(2.0 * yhat - 1.0)


BIN_EDGES = (0.2, 0.4, 0.6, 0.8)
"""Uncertainty bins of the residual model (domain.assignment.ACTIVE_BIN_EDGES)."""
PRIOR = 3.0
"""Pseudo-verdicts of squared residual 0.25 (the most a verdict in [0, 1] can have) per bin."""


def residual_model(s: np.ndarray, r2: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """(S, bins) mean squared residual (Y - Yhat)^2 per uncertainty bin, from the verdicts drawn so far.

    Shrunk towards 0.25 by `PRIOR` pseudo-verdicts, so with no expert verdict every bin is 0.25
    and the design is uniform.
    """
    bins = np.digitize(np.nan_to_num(s, nan=-1.0), BIN_EDGES)
    known = drawn & np.isfinite(s) & np.isfinite(r2)
    out = []
    for j in range(len(BIN_EDGES) + 1):
        sel = known & (bins == j)
        out.append(((np.where(sel, r2, 0.0)).sum(-1) + PRIOR * 0.25) / (sel.sum(-1) + PRIOR))
    return np.stack(out, -1)


OVERLAP_Z = 3.5
"""Scale of the overlap score (domain.assignment.ACTIVE_OVERLAP_Z)."""
STEER = 0.5
"""Exponent of the overlap steering (domain.assignment.ACTIVE_STEER)."""


def overlap_steering(
    a: np.ndarray, b: np.ndarray, k: int, yhat: np.ndarray, y: np.ndarray, drawn: np.ndarray, steer: float = STEER
) -> np.ndarray:
    """(S, U) overlap steering factors from the verdicts drawn so far, as `domain.assignment.overlap_steering`."""
    yh = np.nan_to_num(np.atleast_2d(yhat), nan=0.5)
    ma, mb = incidence(a, b, k)
    sign = ma - mb  # (k, U)
    m = ma + mb
    pts = ma * yh[..., None, :] + mb * (1.0 - yh[..., None, :])  # (S, k, U)
    base = (pts * m).sum(-1) / m.sum(-1)
    r = np.where(drawn, np.nan_to_num(y, nan=0.5) - yh, 0.0)[..., None, :] * sign
    j = (m * drawn[..., None, :]).sum(-1)
    theta = base + r.sum(-1) / (j + PRIOR)
    var = ((r**2).sum(-1) + PRIOR * 0.25) / (j + PRIOR) ** 2
    z2 = (theta[..., :, None] - theta[..., None, :]) ** 2 / (var[..., :, None] + var[..., None, :])
    over = np.exp(-0.5 * z2 / OVERLAP_Z**2) * (1.0 - np.eye(k))
    row = over.sum(-1)
    ab = over[..., a, b]
    return np.maximum(2.0 * ab + row[..., a] + row[..., b], 1e-12) ** steer


def active_weights(
    yhat: np.ndarray, model: np.ndarray | None = None, floor: float = FLOOR, steering: np.ndarray | None = None
) -> np.ndarray:
    """Draw weights gamma + sqrt(m2(bin of s)) x steering (last axis), as `domain.assignment.active_weights`.

    m2 is the residual model (`residual_model`; None: no verdicts yet, uniform); a comparison
    without an LLM verdict gets the pool's mean; gamma = floor / (1 - floor) x that mean, so a
    share `floor` of the weight is uniform.
    """
    if not 0.0 < floor <= 1.0:
        raise ValueError(f"floor must be in (0, 1], got {floor}")
    yhat = np.atleast_2d(np.asarray(yhat, dtype=float))
    if model is None or floor >= 1.0:
        return np.ones_like(yhat)
    s = uncertainty(yhat)
    bins = np.digitize(np.nan_to_num(s, nan=0.0), BIN_EDGES)
    sd = np.sqrt(np.take_along_axis(np.atleast_2d(model), bins, -1))
    known = np.isfinite(s)
    mean = np.where(known, sd, 0.0).sum(-1) / np.maximum(known.sum(-1), 1)
    mean = np.where(known.any(-1), mean, 1.0)
    sd = np.where(known, sd, mean[..., None])
    if steering is not None:
        sd = sd * steering
    return floor / (1.0 - floor) * sd.mean(-1, keepdims=True) + sd


def staged_draws(
    yhat: np.ndarray,
    y: np.ndarray,
    n: int,
    stages: int,
    rng: np.random.Generator,
    floor: float = FLOOR,
    pairs: tuple[np.ndarray, np.ndarray, int] | None = None,
    steer: float = STEER,
) -> tuple[np.ndarray, np.ndarray]:
    """n active draws in `stages` batches, the residual model refitted on the verdicts before each (the first: uniform).

    `pairs` = (a, b, k): also steer towards overlapping candidates (`overlap_steering`), refitted
    before each batch on the verdicts drawn before it.

    Returns:
        (idx, p) as `successive_draws`, over the whole sequence.
    """
    yhat = np.atleast_2d(yhat)
    drawn = np.zeros(yhat.shape, dtype=bool)
    s = uncertainty(yhat)
    r2 = (y - np.nan_to_num(yhat, nan=0.5)) ** 2
    sizes = [n // stages + (i < n % stages) for i in range(stages)]
    idx_all, p_all = [], []
    for i, size in enumerate(sizes):
        if size == 0:
            continue
        model = residual_model(s, r2, drawn) if i else None
        steering = None
        if pairs is not None and i and steer > 0.0:
            steering = overlap_steering(*pairs, yhat, y, drawn, steer)
        w = np.where(drawn, 0.0, active_weights(yhat, model, floor, steering))
        idx, p = successive_draws(w, size, rng)
        np.put_along_axis(drawn, idx, True, -1)
        idx_all.append(idx)
        p_all.append(p)
    return np.concatenate(idx_all, -1), np.concatenate(p_all, -1)


def successive_draws(w: np.ndarray, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n ordered draws without replacement, each proportional to w among those left (S studies at once).

    Efraimidis and Spirakis' keys (log U / w, largest first) give exactly the successive
    sampling order, so the S x n draws are one sort.

    Returns:
        (idx, p): (S, n) the drawn comparisons in draw order and each draw's probability.
    """
    w = np.atleast_2d(np.asarray(w, dtype=float))
    if n > int((w > 0).sum(-1).min()):
        raise ValueError(f"cannot draw {n} of {int((w > 0).sum(-1).min())} comparisons left")
    with np.errstate(divide="ignore"):
        keys = np.log(rng.random(w.shape)) / w  # weight 0 (drawn before): -inf, never drawn
    idx = np.argsort(-keys, axis=-1)[..., :n]
    wd = np.take_along_axis(w, idx, -1)
    left = w.sum(-1, keepdims=True) - np.concatenate([np.zeros_like(wd[..., :1]), np.cumsum(wd, -1)[..., :-1]], -1)
    return idx, wd / left


def _z(x_drawn: np.ndarray, p: np.ndarray, n_m: np.ndarray) -> np.ndarray:
    """(S, k, n) Des Raj terms of x (S, k, n) at the draws with probabilities p (S, n)."""
    before = np.cumsum(x_drawn, -1) - x_drawn
    with np.errstate(invalid="ignore", divide="ignore"):
        return (before + x_drawn / p[..., None, :]) / n_m[..., None]


def active_estimate(
    a: np.ndarray,
    b: np.ndarray,
    k: int,
    yhat: np.ndarray,
    idx: np.ndarray,
    p: np.ndarray,
    y_drawn: np.ndarray,
    *,
    lam: str | float = "tuned",
    min_labeled: int = 1,
) -> Estimate:
    """Candidates' expert win probabilities from ordered draws with known probabilities (module docstring).

    Args:
        a: (U,) index of candidate_a of each comparison of the pool.
        b: (U,) index of candidate_b.
        k: Number of candidates.
        yhat: (S, U) the LLM panel's points for candidate_a (NaN: none; counts as 0.5 in the
            mean and in the control variate, which keeps it unbiased).
        idx: (S, n) the drawn comparisons, in draw order.
        p: (S, n) each draw's probability given the draws before it (> 0, <= 1).
        y_drawn: (S, n) the experts' points for candidate_a on each draw.
        lam: "tuned" (control variate), "zero" (experts only), "one", or a number in [0, 1].
        min_labeled: Fewest draws involving a candidate; below it its theta is NaN (0: never NaN;
            the estimate is unbiased over every sequence of draws only then).

    Returns:
        The estimate (`labeled`: draws per candidate; `unlabeled`: the rest of its comparisons).
    """
    yhat = np.atleast_2d(np.asarray(yhat, dtype=float))
    idx = np.atleast_2d(np.asarray(idx, dtype=int))
    p = np.atleast_2d(np.asarray(p, dtype=float))
    y_drawn = np.atleast_2d(np.asarray(y_drawn, dtype=float))
    if idx.shape != p.shape or idx.shape != y_drawn.shape:
        raise ValueError(f"draws, probabilities and verdicts differ in shape: {idx.shape}, {p.shape}, {y_drawn.shape}")
    if not np.all((p > 0) & (p <= 1)):
        raise ValueError("every draw probability must be in (0, 1]: a zero-probability draw cannot be weighted")
    if not np.all(np.isfinite(y_drawn)):
        raise ValueError("every draw needs the expert's verdict (cut the sequence at its first unjudged place)")
    n = idx.shape[-1]
    ma, mb = incidence(a, b, k)
    m = ma + mb
    n_m = m.sum(-1)
    # Points centred at 0.5 (a candidate's points on a comparison it is not in are 0): the
    # prediction lambda (Yhat - 0.5) + 0.5 then leaves a residual near 0 where a confident panel
    # is right, so drawing where the panel is unsure pays; uncentred, lambda Yhat shrinks towards
    # 0 and leaves a residual of about (1 - lambda) / 2 on every confident comparison.
    yc = np.nan_to_num(yhat, nan=0.5) - 0.5
    ph_all = (ma - mb) * yc[..., None, :]
    mean_all = (ph_all * m).sum(-1) / np.where(n_m > 0, n_m, 1)
    ph = np.take_along_axis(ph_all, np.broadcast_to(idx[..., None, :], (*idx.shape[:-1], k, n)), -1)
    ma_d, mb_d = ma[:, idx].swapaxes(0, -2), mb[:, idx].swapaxes(0, -2)  # (S, k, n)
    py = (ma_d - mb_d) * (y_drawn[..., None, :] - 0.5)
    zy = _z(py, p, n_m)
    zh = _z(ph, p, n_m)
    denom = max(n * (n - 1), 1)
    zy_c = zy - zy.mean(-1, keepdims=True)
    zh_c = zh - zh.mean(-1, keepdims=True)
    if lam == "tuned":
        with np.errstate(invalid="ignore", divide="ignore"):
            lam_m = (zy_c * zh_c).sum(-1) / (zh_c**2).sum(-1)
        lam_m = np.clip(np.nan_to_num(lam_m, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
    else:
        value = {"one": 1.0, "zero": 0.0}.get(lam, lam) if isinstance(lam, str) else float(lam)
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"lambda must be in [0, 1], got {value}")
        lam_m = np.full(zy.shape[:-1], float(value))
    d = zy - lam_m[..., None] * zh
    theta = 0.5 + lam_m * mean_all + d.mean(-1)
    dc = d - d.mean(-1, keepdims=True)
    sigma = np.einsum("skt,sjt->skj", dc, dc) / denom
    # The expert's verdict on draw j is random, and it sits in every later z_t (the known part)
    # as well as in z_j: Des Raj's variance estimator, unbiased for fixed values, misses those
    # shared terms (it came out 0.84-0.97 of the true variance on 100 simulated studies). Their
    # variance, sum_j c_j^2 var(Y_j) with c_j = (1/p_j + n - j) / (n N_m) less the own term
    # the estimator does see, is added with var(Y_j) bounded by the squared residual (conservative).
    after = (n - 1 - np.arange(n))[None, :].astype(float)
    extra = (2.0 * after / p + after**2) / (n * n)
    res = py - lam_m[..., None] * ph
    sigma = sigma + np.einsum("skt,sjt,st->skj", res, res, extra) / (n_m[:, None] * n_m[None, :])
    drawn = m[:, idx].swapaxes(0, -2).sum(-1)  # (S, k)
    ok = (drawn >= min_labeled) & (n >= 2)
    theta = np.where(ok, theta, np.nan)
    return Estimate(theta, sigma, lam_m, drawn.astype(int), (n_m - drawn).astype(int))


# -- a planted-truth simulator (judges informative but imperfect) ----------------------------------


@dataclass(frozen=True)
class ActiveStudies:
    """S simulated studies on one round-robin pool: the truth, the experts' verdicts, the LLM panel's points.

    Attributes:
        a, b: (U,) candidate indices of every comparison.
        k: Candidates.
        y: (S, U) an expert's points for candidate_a on every comparison (read only where drawn).
        yhat: (S, U) the LLM panel's points for candidate_a (NaN where every judge's verdict is missing).
        theta: (S, k) the experts' expected points of each candidate over the study's comparisons.
    """

    a: np.ndarray
    b: np.ndarray
    k: int
    y: np.ndarray
    yhat: np.ndarray
    theta: np.ndarray


def active_studies(
    studies: int,
    *,
    k: int = 8,
    tasks: int = 40,
    judges: int = 3,
    spread: float = 0.8,
    output_sd: float = 1.5,
    judge_sd: float = 0.8,
    position_bias: float = 0.3,
    ties: float = 0.0,
    missing: float = 0.02,
    deterministic: bool = True,
    expert_scale: float = 1.0,
    qualities: tuple[float, ...] | None = None,
    seed: int = 0,
) -> ActiveStudies:
    """Simulate studies in which the LLM judges see what the experts see, with noise.

    Every pair of the k candidates meets once per task (U = tasks x k(k-1)/2 comparisons).
    Comparison u has a latent margin d(u) = q_a - q_b + e(u), e ~ N(0, output_sd): the
    candidates' qualities (evenly spaced over `spread` logits) plus how good these two outputs
    happen to be. The expert prefers candidate_a with probability sigmoid(expert_scale d(u)) (a
    larger scale: more consistent experts, who agree with one another more often; a tie with
    probability `ties`); each judge reads the margin with its own error, d(u) + N(0, judge_sd),
    shifted by +- position_bias in the two presented orders, and prefers candidate_a when that
    is above 0 (`deterministic`, a judge at temperature 0) or with probability sigmoid of it.
    So the panel is informative (it follows d) but imperfect (noise, position bias), and its
    split tracks how close the comparison is; `missing` is the share of comparisons with no
    valid LLM verdict. `qualities` (k values, in logits) replaces the even spacing, e.g. a
    leaderboard whose top candidates are close and the rest far apart.
    """
    if qualities is not None and len(qualities) != k:
        raise ValueError(f"qualities must hold k = {k} values, got {len(qualities)}")
    rng = np.random.default_rng(seed)
    a, b = np.triu_indices(k, 1)
    a = np.tile(a, tasks)
    b = np.tile(b, tasks)
    u = a.size
    q = np.linspace(spread / 2, -spread / 2, k) if qualities is None else np.asarray(qualities, dtype=float)
    d = q[a] - q[b] + rng.normal(0.0, output_sd, (studies, u))
    p_true = 1.0 / (1.0 + np.exp(-expert_scale * d))
    tie = rng.random((studies, u)) < ties
    y = np.where(tie, 0.5, (rng.random((studies, u)) < p_true).astype(float))
    p_exp = ties * 0.5 + (1.0 - ties) * p_true
    verdicts = []
    for _ in range(judges):
        shift = rng.normal(0.0, judge_sd, (studies, u))
        for side in (1.0, -1.0):
            margin = d + shift + side * position_bias
            tj = rng.random((studies, u)) < ties
            if deterministic:  # a judge at temperature 0: the same verdict whenever asked
                verdicts.append(np.where(tj, 0.5, (margin > 0).astype(float)))
            else:
                pj = 1.0 / (1.0 + np.exp(-margin))
                verdicts.append(np.where(tj, 0.5, (rng.random((studies, u)) < pj).astype(float)))
    yhat = np.mean(verdicts, axis=0)
    yhat = np.where(rng.random((studies, u)) < missing, np.nan, yhat)
    ma, mb = incidence(a, b, k)
    theta = (np.einsum("ku,su->sk", ma, p_exp) + np.einsum("ku,su->sk", mb, 1.0 - p_exp)) / (ma + mb).sum(-1)
    return ActiveStudies(a, b, k, y, yhat, theta)


# -- the report's section ----------------------------------------------------------------------


def _expert_estimate(
    k: int,
    n_m: np.ndarray,
    mean_all: np.ndarray,
    events: list[tuple[np.ndarray, np.ndarray, float | None]],
    lam: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int] | None:
    """(theta, sigma, lambda, draws per candidate, draws) of one expert's sequence in one mode (module docstring)."""
    draws = [(x_y, x_h, p) for x_y, x_h, p in events if p is not None]
    t_n = len(draws)
    if t_n < 2:
        return None
    c_y, c_h = np.zeros(k), np.zeros(k)
    zy, zh = np.zeros((k, t_n)), np.zeros((k, t_n))
    t = 0
    known: list[tuple[int, np.ndarray]] = []  # (draws before it, x_y) of places of other strategies
    for x_y, x_h, p in events:
        if p is not None:
            zy[:, t] = (c_y + x_y / p) / n_m
            zh[:, t] = (c_h + x_h / p) / n_m
            t += 1
        else:
            known.append((t, x_y))
        c_y, c_h = c_y + x_y, c_h + x_h
    zy_c = zy - zy.mean(-1, keepdims=True)
    zh_c = zh - zh.mean(-1, keepdims=True)
    if lam == "zero":
        lam_m = np.zeros(k)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            lam_m = (zy_c * zh_c).sum(-1) / (zh_c**2).sum(-1)
        lam_m = np.clip(np.nan_to_num(lam_m, nan=0.0, posinf=0.0, neginf=0.0), 0.0, 1.0)
    d = zy - lam_m[:, None] * zh
    dc = d - d.mean(-1, keepdims=True)
    sigma = dc @ dc.T / (t_n * (t_n - 1))
    # The verdicts' own noise (see active_estimate): a draw's verdict also sits in every later
    # z_t; a place of another strategy sits in every z_t after it and in none as a draw.
    outer = np.outer(n_m, n_m)
    for j, (x_y, x_h, p) in enumerate(draws):
        after = t_n - 1 - j
        res = x_y - lam_m * x_h
        sigma = sigma + np.outer(res, res) * (2.0 * after / p + after**2) / (t_n * t_n) / outer
    for before, x_y in known:
        share = (t_n - before) / t_n
        sigma = sigma + np.outer(x_y, x_y) * share**2 / outer
    theta = 0.5 + lam_m * mean_all + d.mean(-1)
    involved = np.array([(np.abs(x_y) > 0) | (np.abs(x_h) > 0) for x_y, x_h, _ in draws]).sum(0)
    return theta, sigma, lam_m, involved, t_n


def _sign(k: int, in_mode: np.ndarray, ia: np.ndarray, ib: np.ndarray, u: int) -> np.ndarray:
    """+1 for candidate_a, -1 for candidate_b of comparison u in the mode (zeros off the mode)."""
    x = np.zeros(k)
    if in_mode[u]:
        x[int(ia[u])], x[int(ib[u])] = 1.0, -1.0
    return x


ACTIVE_NOTE = (
    "Expert comparisons drawn by active allocation (`centaur assign --strategy active`), each weighted by the "
    "probability its draw had given the draws before it (Des Raj's estimator with the LLM panel's points as a "
    "control variate; docs/statistics.md, 'Active allocation'). Rank-sets cover the experts' ranking on these "
    "comparisons, all candidates at once, with probability >= 1 - alpha, if each expert's draws came from every "
    "comparison of the session (an expert restricted to some tasks draws from those only) and every earlier place "
    "of a sequence is judged (a sequence is cut at its first unjudged place)."
)


def active_rankings(frames: Any, alpha: float, method: Any, min_labeled: int) -> ActiveSection | None:
    """The report's rank-sets from active draws, per mode; None when no expert comparison was drawn actively.

    Per expert, the places in queue order (presentation 0) up to the first one without the
    expert's verdict; active places are draws (their stored probability), the others known
    values from then on. Experts' estimates are pooled with weights by their number of draws.
    """
    import pandas as pd

    from centaur_tui.report.document import ActiveMode, ActiveRow, ActiveSection
    from centaur_tui.stats.ppr import critical_value, rank_sets

    a = frames.assignments
    if "probability" not in a or not (a["strategy"] == "active").any():
        return None
    critical_value(2, alpha, method)  # refuse a bad alpha or method up front
    comps = frames.comparisons
    ok = frames.with_judge_kinds(("llm", "expert")).ok
    points = pd.Series(np.select([ok["code"] == 0, ok["code"] == 1], [1.0, 0.0], 0.5), index=ok.index)
    is_expert = (ok["judge_kind"].astype(str) == "expert").to_numpy()
    first = ok["presentation"].to_numpy() == 0 if "presentation" in ok else np.ones(len(ok), dtype=bool)
    llm = points[~is_expert].groupby(ok.loc[~is_expert, "unit"].to_numpy()).mean()
    ex = ok[is_expert & first]
    verdict = {
        (str(j), int(u)): float(v)
        for (j, u), v in points[is_expert & first]
        .groupby([ex["judge"].astype(str).to_numpy(), ex["unit"].to_numpy()])
        .mean()
        .items()
    }
    unit_of = {str(c): i for i, c in enumerate(comps["id"].astype(str))}
    sequences: dict[str, list[tuple[int, float | None]]] = {}
    used, not_used = 0, 0
    for expert, rows in a.sort_values(["expert", "position"], kind="stable").groupby("expert", sort=True):
        seq: list[tuple[int, float | None]] = []
        drawn = int((rows["strategy"] == "active").sum())
        for cid, strategy, p in zip(rows["comparison_id"], rows["strategy"], rows["probability"], strict=True):
            u = unit_of.get(str(cid))
            if u is None or (str(expert), u) not in verdict:
                break
            active_place = strategy == "active" and np.isfinite(p) and 0.0 < p <= 1.0
            seq.append((u, float(p) if active_place else None))
        n_draws = sum(p is not None for _, p in seq)
        if n_draws >= 2:
            sequences[str(expert)] = seq
            used += n_draws
            not_used += drawn - n_draws
        else:
            not_used += drawn
    modes: list[ActiveMode] = []
    for mode in frames.modes():
        names = frames.candidate_names(mode)
        k = len(names)
        pos = {n: i for i, n in enumerate(names)}
        in_mode = (comps["mode"].astype(str) == mode).to_numpy()
        ia = comps["candidate_a"].astype(str).map(pos).to_numpy()
        ib = comps["candidate_b"].astype(str).map(pos).to_numpy()
        n_m = np.zeros(k)
        mean_all = np.zeros(k)
        for row in np.flatnonzero(in_mode).tolist():
            yh = float(llm.get(row, 0.5)) - 0.5
            n_m[int(ia[row])] += 1
            n_m[int(ib[row])] += 1
            mean_all[int(ia[row])] += yh
            mean_all[int(ib[row])] -= yh
        mean_all = mean_all / np.maximum(n_m, 1)

        fits = {}
        for lam in ("tuned", "zero"):
            parts = []
            for expert, seq in sequences.items():
                events = [
                    (
                        _sign(k, in_mode, ia, ib, u) * (verdict[(expert, u)] - 0.5),
                        _sign(k, in_mode, ia, ib, u) * (float(llm.get(u, 0.5)) - 0.5),
                        p,
                    )
                    for u, p in seq
                ]
                got = _expert_estimate(k, np.maximum(n_m, 1), mean_all, events, lam)
                if got is not None:
                    parts.append(got)
            fits[lam] = parts
        draws = sum(t for *_, t in fits["tuned"])
        reason = None
        if not fits["tuned"] or k < 2:
            theta = np.full(k, np.nan)
            sigma = np.full((k, k), np.nan)
            lam_m = np.zeros(k)
            involved = np.zeros(k, dtype=int)
            e_theta, e_sigma = theta, sigma
            reason = "no expert has two judged active draws in a row from the start of their queue"
        else:
            total = float(sum(t for *_, t in fits["tuned"]))
            share = np.array([t / total for *_, t in fits["tuned"]])
            theta = np.einsum("e,ek->k", share, np.stack([f[0] for f in fits["tuned"]]))
            sigma = np.einsum("e,ekj->kj", share**2, np.stack([f[1] for f in fits["tuned"]]))
            lam_m = np.einsum("e,ek->k", share, np.stack([f[2] for f in fits["tuned"]]))
            involved = np.stack([f[3] for f in fits["tuned"]]).sum(0)
            e_theta = np.einsum("e,ek->k", share, np.stack([f[0] for f in fits["zero"]]))
            e_sigma = np.einsum("e,ekj->kj", share**2, np.stack([f[1] for f in fits["zero"]]))
            few = involved < max(min_labeled, 1)
            if few.any():
                theta, e_theta = np.where(few, np.nan, theta), np.where(few, np.nan, e_theta)
                reason = (
                    f"fewer than {min_labeled} active draws involve "
                    f"{', '.join(names[i] for i in np.flatnonzero(few))}: not ordered"
                )
        low, high = rank_sets(theta, sigma, alpha, method)
        e_low, e_high = rank_sets(e_theta, e_sigma, alpha, method)
        se = np.sqrt(np.clip(np.diagonal(sigma), 0.0, None))

        def num(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        rows_out = [
            ActiveRow(
                candidate=names[i],
                theta=num(theta[i]),
                se=num(se[i]) if np.isfinite(theta[i]) else None,
                low=int(low[i]),
                high=int(high[i]),
                lam=float(lam_m[i]),
                draws=int(involved[i]),
                expert_theta=num(e_theta[i]),
                expert_low=int(e_low[i]),
                expert_high=int(e_high[i]),
            )
            for i in sorted(range(k), key=lambda i: (-np.nan_to_num(theta[i], nan=-np.inf), names[i]))
        ]
        modes.append(
            ActiveMode(
                mode=mode,
                candidates=k,
                comparisons=int(in_mode.sum()),
                draws=int(draws),
                mean_set_size={
                    "active": float(np.mean(high - low + 1)),
                    "experts_only": float(np.mean(e_high - e_low + 1)),
                },
                reason=reason,
                rows=rows_out,
            )
        )
    return ActiveSection(
        note=ACTIVE_NOTE,
        alpha=alpha,
        method=str(method),
        experts=len(sequences),
        draws=used,
        draws_not_used=not_used,
        modes=modes,
    )
