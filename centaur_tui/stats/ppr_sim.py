"""Provides simulated pairwise studies whose LLM judges are biased in planted ways (for prediction-powered rankings).

Not the simulated provider (that is `llm.simulation`): arrays only, so hundreds of studies are
one call. Each candidate has a quality, a family and a typical deliverable length; each
output draws its quality and length around them. Experts see quality only (Gaussian noise
on the gap of the two options' rubric averages; a tie when the gap is under a margin set to
give the asked share of expert ties). The panel's judges see the same outputs through
planted biases, so that the LLM-only ranking is wrong and the correction can be seen:

- "length": favours the longer deliverable (`length_bias` points per unit of length);
- "family": favours candidates of one family (`family_bias` points);
- "noisy": position bias (to the option shown first) and twice the experts' noise.

`judges="noise"` replaces the panel by judges whose verdicts ignore the outputs (they carry
no information: the cells where prediction-powered inference cannot help).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

JUDGES = ("length", "family", "noisy")


@dataclass(frozen=True)
class PanelStudies:
    """S studies of one round-robin design.

    Attributes:
        a, b: (U,) candidate indices of each comparison.
        k: Candidates.
        judges: (S, J, U) each judge's points for candidate_a (1, 0.5, 0).
        experts: (S, E, U) each expert's points for candidate_a on the labelled comparisons, NaN elsewhere.
        labeled: (S, U) the uniformly random subset the experts judged.
        truth_half: (S, k) the experts' expected points share per candidate on the study's outputs (ties 0.5).
        truth_drop: (S, k) their expected share of wins among decisive verdicts.
        truth_win: (S, k) their expected share of wins (a tie a loss for both: the PPR paper's code).
        tie_share: The experts' expected share of ties.
        judge_names: The panel's judges.
        judge_gaps: (S, J, U) each judge's rubric-average gap (candidate_a minus candidate_b)
            behind its verdict: the rubric scores a real judge writes beside its choice.
        length_gap: (S, U) candidate_a's deliverable length minus candidate_b's (in the
            simulation's length units), seen by everyone: the texts are stored.
        expected_points: (S, U) an expert's expected points for candidate_a on each comparison
            (win + half a tie): the best prediction any judge could make, for oracle bounds only.
    """

    a: np.ndarray
    b: np.ndarray
    k: int
    judges: np.ndarray
    experts: np.ndarray
    labeled: np.ndarray
    truth_half: np.ndarray
    truth_drop: np.ndarray
    truth_win: np.ndarray
    tie_share: float
    judge_names: tuple[str, ...]
    judge_gaps: np.ndarray
    length_gap: np.ndarray
    expected_points: np.ndarray

    def expert_mean(self) -> np.ndarray:
        """(S, U) the experts' mean points per comparison (NaN where none judged): one label per comparison."""
        count = np.isfinite(self.experts).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, np.nansum(self.experts, axis=1) / count, np.nan)


QUALITY = (0.30, 0.34, 0.38, 0.42, 0.46, 0.50, 0.54, 0.58, 0.62, 0.66, 0.70, 0.74)
LENGTH = (1.5, -0.5, 1.0, 0.0, -1.0, 0.5, 1.0, -1.0, 0.0, -0.5, -1.0, 0.5)
FAMILY = (0, 1, 2, 0, 1, 2, 3, 3, 0, 1, 2, 3)


def _margin(tie_share: float, sd: float, base: np.ndarray) -> float:
    """The tie margin giving the experts `tie_share` ties on average over the gaps `base` (bisection)."""
    if tie_share <= 0:
        return 0.0

    def share(m: float) -> float:
        return float(np.mean(stats.norm.cdf((m - base) / sd) - stats.norm.cdf((-m - base) / sd)))

    lo, hi = 0.0, 20.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if share(mid) < tie_share else (lo, mid)
    return (lo + hi) / 2


def panel_studies(
    studies: int,
    labeled: int,
    *,
    experts_per: int = 1,
    tie_share: float = 0.1,
    judges: str = "biased",
    tournaments: int = 30,
    quality: tuple[float, ...] = QUALITY,
    length: tuple[float, ...] = LENGTH,
    family: tuple[int, ...] = FAMILY,
    output_sd: float = 0.25,
    expert_sd: float = 0.8,
    length_bias: float = 3.0,
    family_bias: float = 3.0,
    favoured_family: int = 0,
    position_bias: float = 0.8,
    seed: int = 0,
) -> PanelStudies:
    """Simulate studies judged by a biased panel on every comparison and by experts on a random subset.

    Args:
        studies: S.
        labeled: n, comparisons per study drawn uniformly at random (without replacement) for the experts.
        experts_per: Experts judging each drawn comparison (independently).
        tie_share: The experts' expected share of ties (the judges use the same margin).
        judges: "biased" (the three planted judges) or "noise" (verdicts that ignore the outputs).
        tournaments: Round robins per study.
        seed: Seed of everything random.
    """
    if judges not in ("biased", "noise"):
        raise ValueError(f"judges must be 'biased' or 'noise', got {judges!r}")
    if experts_per < 1:
        raise ValueError(f"experts_per must be >= 1, got {experts_per}")
    rng = np.random.default_rng(seed)
    q = np.asarray(quality, dtype=float)
    k = len(q)
    pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
    a = np.tile(pairs[:, 0], tournaments)
    b = np.tile(pairs[:, 1], tournaments)
    tour = np.repeat(np.arange(tournaments), len(pairs))
    n_units = len(a)
    if not 0 <= labeled <= n_units:
        raise ValueError(f"labeled must be in [0, {n_units}], got {labeled}")
    x = q[None, None, :] + rng.normal(0.0, output_sd, (studies, tournaments, k))
    ln = np.asarray(length, dtype=float)[None, None, :] + rng.normal(0.0, 0.5, (studies, tournaments, k))
    base = 9.0 * (x[:, tour, a] - x[:, tour, b])
    margin = _margin(tie_share, expert_sd, base[: min(studies, 20)])

    def verdict(gap: np.ndarray) -> np.ndarray:
        return np.where(gap > margin, 1.0, np.where(gap < -margin, 0.0, 0.5))

    lab = np.zeros((studies, n_units), dtype=bool)
    order = rng.random((studies, n_units)).argsort(axis=1)
    np.put_along_axis(lab, order[:, :labeled], True, axis=1)
    experts = np.full((studies, experts_per, n_units), np.nan)
    for e in range(experts_per):
        gap = base + rng.normal(0.0, expert_sd, base.shape)
        experts[:, e] = np.where(lab, verdict(gap), np.nan)
    fam = np.asarray(family)
    panel = []
    gaps = []
    for name in JUDGES:
        if judges == "noise":
            gap = rng.normal(0.0, 3.0, base.shape)
            panel.append(verdict(gap))
            gaps.append(gap)
            continue
        if name == "length":
            gap = base + length_bias * (ln[:, tour, a] - ln[:, tour, b]) + rng.normal(0.0, expert_sd, base.shape)
        elif name == "family":
            fav = (fam[a] == favoured_family).astype(float) - (fam[b] == favoured_family).astype(float)
            gap = base + family_bias * fav + rng.normal(0.0, expert_sd, base.shape)
        else:
            first_a = rng.random(base.shape) < 0.5
            gap = base + np.where(first_a, position_bias, -position_bias) + rng.normal(0.0, 2 * expert_sd, base.shape)
        panel.append(verdict(gap))
        gaps.append(gap)
    p_win = stats.norm.sf((margin - base) / expert_sd)
    p_loss = stats.norm.cdf((-margin - base) / expert_sd)
    p_tie = 1.0 - p_win - p_loss
    eye = np.eye(k)
    ma, mb = eye[:, a], eye[:, b]
    count = (ma + mb).sum(1)
    truth_half = ((p_win + 0.5 * p_tie) @ ma.T + (p_loss + 0.5 * p_tie) @ mb.T) / count
    truth_drop = (p_win @ ma.T + p_loss @ mb.T) / ((p_win + p_loss) @ (ma + mb).T)
    truth_win = (p_win @ ma.T + p_loss @ mb.T) / count
    share = float(np.mean(p_tie)) if tie_share > 0 else 0.0
    return PanelStudies(
        a,
        b,
        k,
        np.stack(panel, axis=1),
        experts,
        lab,
        truth_half,
        truth_drop,
        truth_win,
        share,
        tuple(JUDGES),
        np.stack(gaps, axis=1),
        ln[:, tour, a] - ln[:, tour, b],
        p_win + 0.5 * p_tie,
    )
