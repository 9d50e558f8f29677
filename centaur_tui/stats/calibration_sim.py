"""Provides planted-truth studies for judge calibration: a biased LLM judge, unbiased experts (tests, bench).

Not the simulated provider: no texts, no calls, a few milliseconds a study. Each candidate has
a quality and a length (log2 of its typical length, independent of quality) and a family. Each
comparison's outputs differ by the candidates' quality gap plus an output-level deviation that
judge and experts both see. An expert's verdict: that difference plus Gaussian noise (SD `NOISE`),
a tie below `TIE_MARGIN`. The judge adds its planted biases first (points per doubling of
length, points for a family), then noise, and reverses a `flip` share of its decided verdicts.
The planted value of a candidate is the experts' expected points (win 1, tie 0.5) averaged over
its comparisons: what a corrected win rate must cover, and what the judge's naive rate misses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

TIE_MARGIN = 0.2
"""Half-width of the latent band the judge and the experts call a tie."""
NOISE = 0.7
"""SD of the judge's and each expert's own noise on the latent difference."""


@dataclass(frozen=True)
class PlantedJudge:
    """The planted biases of the simulated LLM judge."""

    length: float = 0.6
    family: dict[str, float] = field(default_factory=lambda: {"F1": 0.5})
    flip: float = 0.1


@dataclass
class PlantedStudy:
    """Usable judgments shaped like the frames' `ok` (both kinds) and each candidate's planted value."""

    ok: pd.DataFrame
    planted: dict[str, float]
    labels: int
    comparisons: int


def _verdict(latent: np.ndarray) -> np.ndarray:
    """Frame codes: 0 candidate_a wins, 1 candidate_b wins, 2 tie."""
    return np.where(latent > TIE_MARGIN, 0, np.where(latent < -TIE_MARGIN, 1, 2))


def planted_study(
    seed: int,
    *,
    candidates: int = 6,
    comparisons: int = 1200,
    label_share: float | tuple[float, float] = (0.05, 0.10),
    judge: PlantedJudge | None = None,
    experts_per_label: int = 1,
) -> PlantedStudy:
    """One study: every comparison judged by the LLM judge, a random share also by experts.

    Args:
        seed: Seed of the study.
        candidates: Number of candidates (families F1, F2, F3 in turn).
        comparisons: Comparisons, pairs drawn uniformly.
        label_share: Share of comparisons an expert judged (or a range drawn uniformly).
        judge: The judge's planted biases.
        experts_per_label: Experts on each labelled comparison.
    """
    judge = judge or PlantedJudge()
    rng = np.random.default_rng(seed)
    names = [f"c{i + 1}" for i in range(candidates)]
    quality = rng.normal(0.0, 0.8, candidates)
    length = rng.normal(0.0, 0.7, candidates)
    family = np.array([f"F{i % 3 + 1}" for i in range(candidates)])
    a = rng.integers(0, candidates, comparisons)
    b = (a + rng.integers(1, candidates, comparisons)) % candidates
    gap = quality[a] - quality[b] + rng.normal(0.0, 0.6, comparisons)
    len_gap = length[a] - length[b] + rng.normal(0.0, 0.3, comparisons)
    fam = np.array([judge.family.get(f, 0.0) for f in family])
    judge_latent = gap + judge.length * len_gap + fam[a] - fam[b] + rng.normal(0.0, NOISE, comparisons)
    code = _verdict(judge_latent)
    flip = (code != 2) & (rng.random(comparisons) < judge.flip)
    code = np.where(flip, 1 - code, code)
    share = label_share if isinstance(label_share, float) else rng.uniform(*label_share)
    labelled = np.flatnonzero(rng.random(comparisons) < share)
    rows = [
        pd.DataFrame(
            {"unit": np.arange(comparisons), "code": code, "a": a, "b": b, "judge": "llm_judge", "judge_kind": "llm"}
        )
    ]
    for e in range(experts_per_label):
        e_code = _verdict(gap[labelled] + rng.normal(0.0, NOISE, len(labelled)))
        rows.append(
            pd.DataFrame(
                {
                    "unit": labelled,
                    "code": e_code,
                    "a": a[labelled],
                    "b": b[labelled],
                    "judge": f"expert_{e + 1}",
                    "judge_kind": "expert",
                }
            )
        )
    ok = pd.concat(rows, ignore_index=True)
    ok["candidate_a"] = np.array(names)[ok["a"].to_numpy()]
    ok["candidate_b"] = np.array(names)[ok["b"].to_numpy()]
    ok = ok.drop(columns=["a", "b"]).assign(task="t", mode="automation")
    # The experts' expected points for candidate_a on each comparison, given what both see.
    p_a = norm.sf((TIE_MARGIN - gap) / NOISE)
    p_b = norm.cdf((-TIE_MARGIN - gap) / NOISE)
    points_a = p_a + 0.5 * (1 - p_a - p_b)
    planted = {}
    for k, name in enumerate(names):
        pts = np.concatenate([points_a[a == k], 1 - points_a[b == k]])
        planted[name] = float(pts.mean())
    return PlantedStudy(ok=ok, planted=planted, labels=len(labelled), comparisons=comparisons)
