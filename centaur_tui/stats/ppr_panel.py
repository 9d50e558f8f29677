"""Provides the panel prediction-powered estimator: every LLM judge as a prediction, ties options, max-t rank-sets.

Tighter than `stats.ppr.ppr_estimate` (one prediction per comparison, the panel's mean, one
lambda per candidate, chi-square ellipsoid) by three changes, each measured in
`bench/ppr_coverage.py`:

- **Multi-proxy**: each judge's verdict is its own prediction h_j (a judge without a verdict
  on a comparison, e.g. leave-family-out, is replaced by the mean of the panel's other
  verdicts there: any fixed function of the LLM verdicts is a valid prediction). Per
  candidate m: theta_m = mean_L(Y_m) + sum_j lambda_j (mean_U(h_jm) - mean_L(h_jm)).
- **Pooled lambda**: one lambda vector for all candidates, chosen to minimise the variance
  (PPI++ for several predictions: lambda = ((1 + n/N) Cov(h))^-1 Cov(h, Y)), estimated from
  all labelled comparisons together: a candidate has about 2n/k labelled comparisons, far
  too few to fit its own lambda vector.
- **Max-t rank-sets** (`rank_sets_maxt`): the critical value of the largest standardised
  pairwise difference under the estimated covariance (a parametric bootstrap of the
  multivariate normal), not the projection of the chi-square(k) ellipsoid, which guards
  every linear contrast and is wider than the k(k-1)/2 differences need.

Several experts on one comparison are one label, their mean (the variance is clustered by
comparison: the comparison is the sampling unit). Ties: "half" counts a tie 0.5 for each
side (the estimand is the points share); "drop" estimates each candidate's share of wins
among decisive verdicts, the ratio of two prediction-powered means (wins, decisive), with
the delta method's influence terms, so a tie is neither a win nor a loss and the labelled
set stays the random sample it was drawn as.

Every function takes a leading batch axis (S studies).
"""

from __future__ import annotations

import contextlib
import math
import warnings
from collections.abc import Iterator
from typing import Literal

import numpy as np

from centaur_tui.stats.ppr import Estimate, incidence

Ties = Literal["half", "drop"]
TIES: tuple[Ties, ...] = ("half", "drop")
PanelLambda = Literal["tuned", "zero"]
Target = Literal["study", "superpopulation"]
TARGETS: tuple[Target, ...] = ("study", "superpopulation")
MAXT_DRAWS = 20_000
"""Normal draws behind the report's max-t critical value (its Monte Carlo SE is about 0.01 at 0.95)."""


def fill_panel(judges: np.ndarray) -> np.ndarray:
    """Judges' points (S, J, U) with a missing verdict replaced by the mean of the other judges' there.

    A comparison no judge answered stays NaN (it takes no part).
    """
    judges = np.asarray(judges, dtype=float)
    with np.errstate(invalid="ignore"), _quiet():
        panel = np.nanmean(judges, axis=-2, keepdims=True)
    return np.where(np.isfinite(judges), judges, panel)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence numpy's 'Mean of empty slice' warning (a comparison no judge answered is NaN by design)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _side(xa: np.ndarray, xb: np.ndarray, w: np.ndarray, ma: np.ndarray, mb: np.ndarray) -> np.ndarray:
    """Per candidate, the sum over comparisons of w x (its side's value): (S, ..., U) -> (S, ..., k)."""
    return (w * xa) @ ma.T + (w * xb) @ mb.T


def _ppi(
    ma: np.ndarray,
    mb: np.ndarray,
    lab: np.ndarray,
    unl: np.ndarray,
    ya: np.ndarray,
    yb: np.ndarray,
    ha: np.ndarray,
    hb: np.ndarray,
    lam: PanelLambda | np.ndarray,
    target: Target = "study",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-candidate prediction-powered means with a pooled lambda vector.

    Args:
        ma, mb: (k, U) incidence (candidate m is side a / side b of comparison u).
        lab, unl: (S, U) labelled / unlabelled masks (float 0/1).
        ya, yb: (S, U) the label of side a / side b (0 where unlabelled).
        ha, hb: (S, J, U) the predictions of side a / side b (finite wherever lab or unl).
        lam: "tuned", "zero" or a (J,) / (S, J) vector.
        target: "study" (the mean over these comparisons: the difference estimator, the
            predictions' mean over every comparison taken as known) or "superpopulation" (PPI:
            the unlabelled mean's sampling variance counted too).

    Returns:
        (theta (S, k), psi (S, k, U) influence terms, lam (S, J)).
    """
    s, j, _ = ha.shape
    k = ma.shape[0]
    m = ma + mb
    lab3 = lab[:, None, :]
    unl3 = unl[:, None, :]
    n_l = lab @ m.T
    n_u = unl @ m.T
    with np.errstate(invalid="ignore", divide="ignore"):
        my = _side(ya, yb, lab, ma, mb) / n_l
        mh_l = _side(ha, hb, lab3, ma, mb) / n_l[:, None, :]
        mh_u = _side(ha, hb, unl3, ma, mb) / n_u[:, None, :]
    if isinstance(lam, str) and lam == "tuned":
        both = lab + unl
        n_b = n_l + n_u
        with np.errstate(invalid="ignore", divide="ignore"):
            mh_b = _side(ha, hb, both[:, None, :], ma, mb) / n_b[:, None, :]
        mh_l0, my0, mh_b0 = np.nan_to_num(mh_l), np.nan_to_num(my), np.nan_to_num(mh_b)
        # Pooled over candidates: each comparison has one side a and one side b.
        cross = np.einsum("su,sju,su->sj", lab, ha, ya) + np.einsum("su,sju,su->sj", lab, hb, yb)
        cov = (cross - np.einsum("sk,sjk,sk->sj", n_l, mh_l0, my0)) / np.maximum(n_l.sum(-1), 1.0)[:, None]
        second = np.einsum("su,sju,siu->sji", both, ha, ha) + np.einsum("su,sju,siu->sji", both, hb, hb)
        var = (second - np.einsum("sk,sjk,sik->sji", n_b, mh_b0, mh_b0)) / np.maximum(n_b.sum(-1), 1.0)[:, None, None]
        ratio = lab.sum(-1) / np.maximum(unl.sum(-1), 1.0) if target == "superpopulation" else np.zeros(s)
        a_mat = (1.0 + ratio)[:, None, None] * var
        ridge = 1e-9 + 1e-6 * np.trace(a_mat, axis1=-2, axis2=-1)
        a_mat = a_mat + ridge[:, None, None] * np.eye(j)
        lam_v = np.linalg.solve(a_mat, cov[..., None])[..., 0]
        lam_v = np.where(np.isfinite(lam_v), lam_v, 0.0)
    elif isinstance(lam, str) and lam == "zero":
        lam_v = np.zeros((s, j))
    elif isinstance(lam, str):
        raise ValueError(f"unknown lambda {lam!r} (tuned, zero, or one weight per judge)")
    else:
        lam_v = np.broadcast_to(np.asarray(lam, dtype=float), (s, j)).copy()
    has_u = n_u > 0
    if target == "study":
        # Difference estimator: theta = mean_all(lambda.h) + mean_L(Y - lambda.h); only L is random.
        n_b = n_l + n_u
        with np.errstate(invalid="ignore", divide="ignore"):
            mh_all = _side(ha, hb, (lab + unl)[:, None, :], ma, mb) / n_b[:, None, :]
        corr = np.einsum("sj,sjk->sk", lam_v, np.nan_to_num(mh_all) - np.nan_to_num(mh_l))
    else:
        corr = np.einsum("sj,sjk->sk", lam_v, np.nan_to_num(mh_u) - np.nan_to_num(mh_l))
    theta = my + np.where(has_u, corr, 0.0)
    # Influence terms: labelled residual Y - lambda.h, unlabelled lambda.h, centred per candidate.
    ra = ya - np.einsum("sj,sju->su", lam_v, ha)
    rb = yb - np.einsum("sj,sju->su", lam_v, hb)
    ga = np.einsum("sj,sju->su", lam_v, ha)
    gb = np.einsum("sj,sju->su", lam_v, hb)
    use_lam = np.where(has_u, 1.0, 0.0)[..., None]  # a candidate with no unlabelled comparison: experts only
    r_cand = ma * ra[:, None, :] + mb * rb[:, None, :]
    y_cand = ma * ya[:, None, :] + mb * yb[:, None, :]
    r_cand = use_lam * r_cand + (1.0 - use_lam) * y_cand
    rbar = np.where(has_u, my - np.einsum("sj,sjk->sk", lam_v, np.nan_to_num(mh_l)), my)
    g_cand = ma * ga[:, None, :] + mb * gb[:, None, :]
    gbar = np.einsum("sj,sjk->sk", lam_v, np.nan_to_num(mh_u))
    wl = m * lab[:, None, :]
    wu = m * unl[:, None, :] * use_lam * (target == "superpopulation")
    with np.errstate(invalid="ignore", divide="ignore"):
        psi = wl * (r_cand - np.nan_to_num(rbar)[..., None]) / n_l[..., None]
        psi = psi + np.nan_to_num(wu * (g_cand - gbar[..., None]) / np.where(n_u > 0, n_u, 1.0)[..., None])
    assert theta.shape == (s, k)
    return theta, np.nan_to_num(psi), lam_v


def panel_estimate(
    a: np.ndarray,
    b: np.ndarray,
    k: int,
    judges: np.ndarray,
    experts: np.ndarray,
    labeled: np.ndarray | None = None,
    *,
    lam: PanelLambda | np.ndarray = "tuned",
    ties: Ties = "half",
    target: Target = "study",
    min_labeled: int = 1,
    continuous: bool = False,
) -> Estimate:
    """Every candidate's expert win probability from the whole LLM panel and the expert labels.

    Args:
        a: (U,) index of candidate_a of each comparison.
        b: (U,) index of candidate_b.
        k: Number of candidates.
        judges: (S, J, U) or (J, U) each LLM judge's points for candidate_a (1, 0.5, 0; NaN: no verdict).
        experts: (S, E, U) or (E, U) each expert's points for candidate_a on the comparisons they
            judged (NaN elsewhere); several experts on one comparison are one label, their mean.
        labeled: (S, U) comparisons drawn for the experts (default: those with an expert verdict);
            a drawn comparison without an expert verdict is refused (a label missing not at random).
        lam: "tuned" (variance-minimising, pooled over candidates), "zero" (experts only) or a
            weight per judge.
        ties: "half" (a tie is 0.5 for each side) or "drop" (the share of wins among decisive verdicts).
        target: "study" (the experts' ranking on these comparisons) or "superpopulation" (PPI's:
            on new comparisons drawn like these).
        min_labeled: Fewest labelled comparisons of a candidate; below it its theta is NaN.
        continuous: Take `judges` as predictions anywhere in [0, 1] (a judge's probability, or
            the simulation's oracle `expected_points`), not verdicts; ties "half" only.

    Returns:
        The estimate; `lam` holds the pooled lambda's sum over judges, per candidate.
    """
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (study, superpopulation)")
    if ties not in TIES:
        raise ValueError(f"unknown ties option {ties!r} (half, drop)")
    judges = np.asarray(judges, dtype=float)
    experts = np.asarray(experts, dtype=float)
    if judges.ndim == 2:
        judges = judges[None]
    if experts.ndim == 2:
        experts = experts[None]
    if judges.ndim != 3 or experts.ndim != 3 or judges.shape[-1] != experts.shape[-1]:
        raise ValueError("judges and experts must be (S, J, U) and (S, E, U) with the same comparisons")
    if continuous and ties != "half":
        raise ValueError("continuous predictions need ties 'half'")
    if continuous and (np.isfinite(judges) & ((judges < 0.0) | (judges > 1.0))).any():
        raise ValueError("a prediction must lie in [0, 1] (or be NaN: none)")
    checked = (experts,) if continuous else (judges, experts)
    if any((np.isfinite(x) & ~np.isin(x, (0.0, 0.5, 1.0))).any() for x in checked):
        raise ValueError("a verdict's points must be 1, 0.5 or 0 (or NaN: no verdict)")
    ma, mb = incidence(a, b, k)
    h = fill_panel(judges)
    usable = np.isfinite(h).all(axis=-2)
    has_expert = np.isfinite(experts).any(axis=-2)
    lab_b = has_expert if labeled is None else np.atleast_2d(np.asarray(labeled, dtype=bool))
    if (lab_b & ~has_expert).any():
        raise ValueError("a comparison drawn for the experts has no expert verdict")
    lab_b = lab_b & usable
    lab = lab_b.astype(float)
    unl = (usable & ~lab_b).astype(float)
    h0 = np.nan_to_num(h)
    with np.errstate(invalid="ignore"), _quiet():
        if ties == "half":
            y = np.nan_to_num(np.nanmean(experts, axis=-2)) * lab
            theta, psi, lam_v = _ppi(ma, mb, lab, unl, y, lab - y, h0, 1.0 - h0, lam, target)
        else:
            win_a = np.nan_to_num(np.nanmean(np.where(np.isfinite(experts), experts == 1.0, np.nan), axis=-2)) * lab
            win_b = np.nan_to_num(np.nanmean(np.where(np.isfinite(experts), experts == 0.0, np.nan), axis=-2)) * lab
            # Each judge's win indicators, a missing one filled from the panel's (not from its filled points).
            ok = np.isfinite(judges)
            hwa = np.nan_to_num(fill_panel(np.where(ok, judges == 1.0, np.nan)))
            hwb = np.nan_to_num(fill_panel(np.where(ok, judges == 0.0, np.nan)))
            dec = win_a + win_b
            hdec = hwa + hwb
            t_w, psi_w, lam_v = _ppi(ma, mb, lab, unl, win_a, win_b, hwa, hwb, lam, target)
            t_d, psi_d, _ = _ppi(ma, mb, lab, unl, dec, dec, hdec, hdec, lam, target)
            with np.errstate(divide="ignore"):
                theta = t_w / t_d
                psi = np.nan_to_num((psi_w - theta[..., None] * psi_d) / t_d[..., None])
    n_l = lab @ (ma + mb).T
    n_u = unl @ (ma + mb).T
    sigma = np.einsum("sku,sju->skj", psi, psi)
    theta = np.where((n_l >= max(min_labeled, 1)) & np.isfinite(theta), theta, np.nan)
    lam_sum = np.broadcast_to(lam_v.sum(-1, keepdims=True), theta.shape)
    return Estimate(theta, sigma, lam_sum, n_l.astype(int), n_u.astype(int))


def experts_only(
    a: np.ndarray, b: np.ndarray, k: int, experts: np.ndarray, *, ties: Ties = "half", min_labeled: int = 1
) -> Estimate:
    """The experts alone (lambda zero), with the same ties option and one label per comparison."""
    experts = np.asarray(experts, dtype=float)
    if experts.ndim == 2:
        experts = experts[None]
    judges = np.full((experts.shape[0], 1, experts.shape[-1]), 0.5)
    return panel_estimate(a, b, k, judges, experts, lam="zero", ties=ties, min_labeled=min_labeled)


# -- simultaneous intervals for pairwise differences ---------------------------------------


def max_abs_critical(
    corr: np.ndarray, alpha: float, *, draws: int = MAXT_DRAWS, seed: int = 0, chunk: int = 16
) -> np.ndarray:
    """The (1 - alpha) quantile of max_i |Z_i| for Z ~ N(0, corr), by a seeded parametric bootstrap.

    Args:
        corr: (..., P, P) correlation (or covariance: the quantile is of Z itself) matrices; may be singular.
        alpha: Error level in (0, 1).
        draws: Normal draws per matrix.
        seed: Seed of the draws (the same draws for every matrix: common random numbers).

    Returns:
        (...) critical values.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    corr = np.asarray(corr, dtype=float)
    batch = corr.shape[:-2]
    p = corr.shape[-1]
    flat = corr.reshape(-1, p, p)
    eps = np.random.default_rng(seed).standard_normal((draws, p))
    out = np.empty(flat.shape[0])
    for i in range(0, flat.shape[0], chunk):
        vals, vecs = np.linalg.eigh(flat[i : i + chunk])
        root = vecs * np.sqrt(np.clip(vals, 0.0, None))[:, None, :]
        z = np.abs(np.einsum("bp,sqp->sbq", eps, root)).max(-1)
        out[i : i + chunk] = np.quantile(z, 1.0 - alpha, axis=-1)
    return out.reshape(batch)


def _pairs(k: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(k, 1)
    return i, j


def maxt_critical(
    sigma: np.ndarray, theta: np.ndarray, alpha: float, *, draws: int = MAXT_DRAWS, seed: int = 0
) -> np.ndarray:
    """Per study, the max-t critical value of the standardised pairwise differences of the ordered candidates.

    Pairs with a NaN candidate (not ordered) or a zero-variance difference take no part.
    """
    sigma = np.asarray(sigma, dtype=float)
    theta = np.asarray(theta, dtype=float)
    k = theta.shape[-1]
    if k < 2:
        return np.full(theta.shape[:-1], np.inf)
    i, j = _pairs(k)
    c = np.zeros((len(i), k))
    c[np.arange(len(i)), i] = 1.0
    c[np.arange(len(i)), j] = -1.0
    cov = np.einsum("pk,...kl,ql->...pq", c, np.nan_to_num(sigma), c)
    sd = np.sqrt(np.clip(np.diagonal(cov, axis1=-2, axis2=-1), 0.0, None))
    ok = np.isfinite(theta[..., i]) & np.isfinite(theta[..., j]) & (sd > 0)
    sd_safe = np.where(ok, sd, 1.0)
    corr = cov / (sd_safe[..., :, None] * sd_safe[..., None, :])
    corr = np.where(ok[..., :, None] & ok[..., None, :], corr, 0.0)
    crit = max_abs_critical(corr, alpha, draws=draws, seed=seed)
    return np.where(ok.any(-1), crit, np.inf)


def rank_sets_maxt(
    theta: np.ndarray,
    sigma: np.ndarray,
    alpha: float,
    *,
    stepdown: bool = True,
    draws: int = MAXT_DRAWS,
    seed: int = 0,
    chunk: int = 16,
) -> tuple[np.ndarray, np.ndarray]:
    """Rank-sets [low, high] from simultaneous max-t tests of every ordered pair "i above j".

    The first step is the single-step max-t: i is placed above j when its standardised
    difference exceeds the (1 - alpha) quantile of the largest |difference| under the
    estimated covariance. With `stepdown` (Romano and Wolf 2005, as Mogstad, Romano, Shaikh
    and Wilhelm 2024 use it for confidence sets of ranks), the quantile is then recomputed
    over the one-sided hypotheses not yet rejected, and so on until none is: the chance of any
    wrong "i above j" stays <= alpha, so all rank-sets hold the true ranks at once.

    Args:
        theta: (..., k) estimates; a NaN candidate is never ordered.
        sigma: (..., k, k) covariance.
        alpha: Error level in (0, 1).
        stepdown: Step down (True) or the single-step max-t (False).
        draws: Normal draws of the parametric bootstrap.
        seed: Its seed (the same draws for every study).

    Returns:
        (low, high) integer arrays of theta's shape.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    theta = np.asarray(theta, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    batch = theta.shape[:-1]
    k = theta.shape[-1]
    th = theta.reshape(-1, k)
    sg = np.nan_to_num(sigma.reshape(-1, k, k))
    i, j = np.nonzero(~np.eye(k, dtype=bool))  # ordered pairs: hypothesis "i is not above j"
    eps = np.random.default_rng(seed).standard_normal((draws, k))
    rank = min(draws - 1, math.ceil((1.0 - alpha) * draws) - 1)  # the (1 - alpha) empirical quantile
    above = np.zeros((th.shape[0], len(i)), dtype=bool)
    for c0 in range(0, th.shape[0], chunk):
        t_ = th[c0 : c0 + chunk]
        s_ = sg[c0 : c0 + chunk]
        var = s_[:, i, i] + s_[:, j, j] - 2.0 * s_[:, i, j]
        sd = np.sqrt(np.clip(var, 0.0, None))
        ok = np.isfinite(t_[:, i]) & np.isfinite(t_[:, j]) & (sd > 1e-12)
        sd1 = np.where(ok, sd, 1.0)
        with np.errstate(invalid="ignore"):
            stat = np.where(ok, (t_[:, i] - t_[:, j]) / sd1, -np.inf)
        vals, vecs = np.linalg.eigh(s_)
        root = vecs * np.sqrt(np.clip(vals, 0.0, None))[:, None, :]
        z = np.einsum("bk,slk->sbl", eps, root)  # (s, draws, k) draws of theta - its mean
        null = (z[:, :, i] - z[:, :, j]) / sd1[:, None, :]  # (s, draws, pairs)
        rejected = np.zeros_like(ok)
        while True:
            active = ok & ~rejected
            # -1e300, not -inf: a study with no active pair would give inf - inf in the quantile.
            top = np.where(active[:, None, :], null, -1e300).max(-1)
            crit = np.partition(top, rank, axis=-1)[:, rank]
            new = active & (stat > crit[:, None])
            if not new.any():
                break
            rejected |= new
            if not stepdown:
                break
        above[c0 : c0 + chunk] = rejected
    sep = np.zeros((th.shape[0], k, k), dtype=bool)
    sep[:, i, j] = above  # sep[s, i, j]: i surely above j
    low = 1 + sep.sum(-2)  # candidates surely above
    high = k - sep.sum(-1)  # candidates surely below
    return low.reshape((*batch, k)).astype(int), high.reshape((*batch, k)).astype(int)


# -- the PPR paper's released code, for comparison only ---------------------------------------


def paper_code_estimate(
    a: np.ndarray, b: np.ndarray, k: int, yhat: np.ndarray, y: np.ndarray, labeled: np.ndarray
) -> Estimate:
    """The arithmetic of Networks-Learning/prediction-powered-ranking `src/estimate.py` (tuned lambda), vectorised.

    Kept to measure it, not to use it: a tie is a loss for both sides (`winner1`/`winner2`
    are 1 only for a win), one lambda for all candidates from traces (`lhat_opt`, clipped to
    [0, 1]), the LLM mean over every comparison (labelled ones too), and each covariance
    divided by the total number of comparisons squared (`AA^T / N^2`, `BB^T / n^2`) where a
    candidate's own count squared is right: its standard errors are about 2/k of the right
    ones on a round robin (0.17 for k = 12).

    Args:
        yhat: (S, U) one judge's (or the panel's rounded) points for candidate_a; 0.5 a tie.
        y: (S, U) the expert's points for candidate_a (read where labelled).
        labeled: (S, U) the labelled comparisons.
    """
    ma, mb = incidence(a, b, k)
    yhat = np.atleast_2d(np.asarray(yhat, dtype=float))
    y = np.nan_to_num(np.atleast_2d(np.asarray(y, dtype=float)))
    lab = np.atleast_2d(np.asarray(labeled, dtype=bool)).astype(float)
    big = np.isfinite(yhat).astype(float)
    h = np.nan_to_num(yhat)
    wf1, wf2 = (h == 1.0) * 1.0, (h == 0.0) * 1.0
    w1, w2 = (y == 1.0) * lab, (y == 0.0) * lab
    n = lab.sum(-1)
    n_big = big.sum(-1)

    def avg(x1: np.ndarray, x2: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cnt = w @ (ma + mb).T
        mean = ((w * x1) @ ma.T + (w * x2) @ mb.T) / cnt
        dev = ma * (x1 - mean @ ma)[:, None, :] + mb * (x2 - mean @ mb)[:, None, :]
        return mean, dev * w[:, None, :]

    with np.errstate(invalid="ignore", divide="ignore"):
        a_big, dev_big = avg(wf1, wf2, big)
        _, dev_fn = avg(wf1, wf2, lab)
        _, dev_hn = avg(w1, w2, lab)
        cov_big = np.einsum("sku,sju->skj", dev_big, dev_big) / n_big[:, None, None]
        cov_n = np.einsum("sku,sju->skj", dev_hn, dev_fn) / n[:, None, None]
        lam = np.trace(cov_n, axis1=-2, axis2=-1) / ((1 + n / n_big) * np.trace(cov_big, axis1=-2, axis2=-1))
        lam = np.clip(np.nan_to_num(lam), 0.0, 1.0)
        b_mean, dev_b = avg(lam[:, None] * wf1 - w1, lam[:, None] * wf2 - w2, lab)
        theta = lam[:, None] * a_big - b_mean
        sigma = (lam**2)[:, None, None] * np.einsum("sku,sju->skj", dev_big, dev_big) / (n_big**2)[:, None, None]
        sigma = sigma + np.einsum("sku,sju->skj", dev_b, dev_b) / (n**2)[:, None, None]
    n_l = lab @ (ma + mb).T
    return Estimate(
        theta, sigma, np.broadcast_to(lam[:, None], theta.shape), n_l.astype(int), (big @ (ma + mb).T).astype(int)
    )
