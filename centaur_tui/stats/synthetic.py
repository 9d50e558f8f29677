"""Provides synthetic judgments for a session design, in the store's row format (benchmarks and tests).

Not the simulated provider: no texts, no calls. Every comparison of the design (domain
`all_comparisons`) is judged by each eligible judge in its presented order(s); each option
gets integer rubric scores around a planted quality (1 + 9 x skill) with Gaussian noise,
the winner is the option with the higher average (tie below a margin), and a share of
judgments is invalid. The planted skills are returned, so tests can check recovery.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np

from centaur_tui.domain.plan import all_comparisons, eligible_judges, output_id, presented_orders
from centaur_tui.domain.records import ComparisonRecord, JudgmentRow, OutputRow, ScoreRow
from centaur_tui.domain.session import Session


@dataclass
class SyntheticRows:
    """Rows of the types `Store.judgment_rows()`, `score_rows()`, `output_rows()` and `comparisons()` hand out."""

    judgment_rows: list[JudgmentRow]
    score_rows: list[ScoreRow]
    output_rows: list[OutputRow]
    comparisons: list[ComparisonRecord]
    skills: dict[tuple[str, str, str], float] = field(default_factory=dict)


def synthetic_rows(
    session: Session,
    rubric: Mapping[str, Sequence[tuple[str, Literal["task", "general"]]]],
    *,
    seed: int = 0,
    noise: float = 1.0,
    invalid_rate: float = 0.02,
    tie_margin: float = 0.15,
    skills: Mapping[tuple[str, str, str], float] | None = None,
) -> SyntheticRows:
    """Judge every comparison of a session design synthetically.

    Args:
        session: The design (runs, tasks, candidates, judges, families).
        rubric: Per task, its dimensions as (id, kind) pairs.
        seed: Seed of everything random.
        noise: SD of each rubric score in points.
        invalid_rate: Share of judgments stored as invalid.
        tie_margin: Average gap below which a judgment is a tie.
        skills: Planted skill in [0, 1] per (candidate, task, mode); drawn uniformly from
            [0.2, 0.9] when not given.

    Returns:
        The rows and the planted skills.
    """
    rng = np.random.default_rng(seed)
    comps = all_comparisons(session)
    planted: dict[tuple[str, str, str], float] = dict(skills or {})
    for c in comps:
        for cand in c.candidates:
            planted.setdefault((cand, c.task, c.mode), float(rng.uniform(0.2, 0.9)))
    worker = session.worker.name if session.worker is not None else ""
    outputs: dict[tuple[int, str, str, str], str] = {}
    for c in comps:
        for cand in c.candidates:
            key = (c.run, c.task, c.mode, cand)
            if key not in outputs:
                outputs[key] = output_id(c.run, c.task, c.mode, cand, cand if c.mode == "automation" else worker)
    output_rows = [
        OutputRow(
            run=k[0],
            task=k[1],
            mode=k[2],
            candidate=k[3],
            worker=k[3] if k[2] == "automation" else worker,
            text="",
            assistance_text=None,
            output_id=oid,
            cut_off=False,
        )
        for k, oid in sorted(outputs.items())
    ]
    comparison_rows = [
        ComparisonRecord(
            id=c.id,
            run=c.run,
            task=c.task,
            mode=c.mode,
            candidate_a=c.candidate_a,
            candidate_b=c.candidate_b,
            output_a=outputs[(c.run, c.task, c.mode, c.candidate_a)],
            output_b=outputs[(c.run, c.task, c.mode, c.candidate_b)],
        )
        for c in comps
    ]
    slots = [
        (c, judge, presentation, order)
        for c in comps
        for judge in eligible_judges(session, c)
        for presentation, order in presented_orders(session, c, judge.name)
    ]
    n = len(slots)
    invalid = rng.random(n) < invalid_rate
    judgment_rows: list[JudgmentRow] = []
    score_rows: list[ScoreRow] = []
    for i, (c, judge, presentation, (first, second)) in enumerate(slots, start=1):
        row = JudgmentRow(
            run=c.run,
            task=c.task,
            mode=c.mode,
            comparison_id=c.id,
            judge=judge.name,
            judge_kind="llm",
            judge_family=judge.family,
            option1=first,
            option2=second,
            winner=None,
            option1_mean=None,
            option2_mean=None,
            valid=False,
            invalid_reason=None,
            rationale=None,
            judgment_id=i,
            presentation=presentation,
            revision=0,
            attempts=1,
            seconds=None,
        )
        if invalid[i - 1]:
            judgment_rows.append(
                replace(row, invalid_reason="invalid after 3 attempt(s): reply holds no JSON object", attempts=3)
            )
            continue
        dims = rubric[c.task]
        averages = []
        for cand in (first, second):
            base = 1.0 + 9.0 * planted[(cand, c.task, c.mode)]
            scores = np.clip(np.rint(base + rng.normal(0.0, noise, len(dims))), 1, 10).astype(int)
            averages.append(float(scores.mean()))
            score_rows += [
                ScoreRow(
                    comparison_id=c.id,
                    judge=judge.name,
                    candidate=cand,
                    dimension=d,
                    dimension_kind=kind,
                    score=int(s),
                    judgment_id=i,
                )
                for (d, kind), s in zip(dims, scores, strict=True)
            ]
        gap = averages[0] - averages[1]
        winner = "tie" if abs(gap) < tie_margin else (first if gap > 0 else second)
        judgment_rows.append(
            replace(
                row,
                valid=True,
                winner=winner,
                option1_mean=round(averages[0], 2),
                option2_mean=round(averages[1], 2),
                rationale="Synthetic judgment.",
            )
        )
    return SyntheticRows(judgment_rows, score_rows, output_rows, comparison_rows, planted)


@dataclass
class PPRStudies:
    """S simulated pairwise studies for prediction-powered ranking, with the experts' planted win probabilities.

    Attributes:
        a: (U,) candidate_a index of each comparison (the same round-robin design in every study).
        b: (U,) candidate_b index.
        k: Candidates.
        yhat: (S, U) the LLM panel's points for candidate_a (mean over its judges, ties 0.5).
        y: (S, U) one expert's points for candidate_a on every comparison (read only where labelled).
        labeled: (S, U) the uniformly random subset experts judged (n comparisons per study).
        theta: (k,) the experts' true win probability of each candidate under the design
            (over new outputs too).
        theta_study: (S, k) the experts' expected win probability on each study's own
            comparisons (outputs as drawn): the ranking the experts would give on them.
        quality: (k,) the planted quality of each candidate.
    """

    a: np.ndarray
    b: np.ndarray
    k: int
    yhat: np.ndarray
    y: np.ndarray
    labeled: np.ndarray
    theta: np.ndarray
    theta_study: np.ndarray
    quality: np.ndarray


def _verdict_points(gap: np.ndarray, margin: float) -> np.ndarray:
    return np.where(gap > margin, 1.0, np.where(gap < -margin, 0.0, 0.5))


def ppr_studies(
    studies: int,
    labeled: int,
    *,
    quality: Sequence[float] = (0.30, 0.40, 0.45, 0.52, 0.60, 0.70),
    tournaments: int = 40,
    dimensions: int = 6,
    output_sd: float = 0.08,
    expert_noise: float = 1.5,
    judge_noise: Sequence[float] = (1.0, 1.5, 2.0),
    position_bias: Sequence[float] = (0.8, 0.5, 1.2),
    favourite: int = 1,
    favour: float = 4.0,
    tie_margin: float = 0.15,
    seed: int = 0,
) -> PPRStudies:
    """Simulate `studies` round-robin studies judged by a biased LLM panel and, on a random subset, by experts.

    The judges read outputs as the simulated provider's judge does (`llm.simulation.judge_reply`):
    each option's rubric average is 1 + 9 x its output's quality plus Gaussian noise per
    dimension (SD `judge_noise` points, so SD noise / sqrt(dimensions) on the average), the
    option shown first gets the judge's `position_bias` (orders drawn at random), and a tie
    when the averages differ by less than `tie_margin`. The last judge also adds `favour`
    points to candidate `favourite` (a judge that prefers one candidate). Experts read the
    same outputs with `expert_noise` and no bias. Output quality = candidate quality + a
    per-(tournament, candidate) Gaussian deviation (`output_sd`).

    The experts' true win probability theta_m is exact under this model: the gap between
    two options' averages is Gaussian, so P(win) and P(tie) per pair are normal CDFs, and
    on a round robin theta_m is their mean over m's opponents.

    Args:
        studies: S, the number of independent studies.
        labeled: n, comparisons per study drawn uniformly at random (without replacement) for the experts.

    Returns:
        The studies.
    """
    rng = np.random.default_rng(seed)
    q = np.asarray(quality, dtype=float)
    k = len(q)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    a = np.tile(np.array([p[0] for p in pairs]), tournaments)
    b = np.tile(np.array([p[1] for p in pairs]), tournaments)
    tour = np.repeat(np.arange(tournaments), len(pairs))
    n_units = len(a)
    if not 0 <= labeled <= n_units:
        raise ValueError(f"labeled must be in [0, {n_units}], got {labeled}")
    out = q[None, None, :] + rng.normal(0.0, output_sd, (studies, tournaments, k))
    xa = out[:, tour, a]
    xb = out[:, tour, b]
    base = 9.0 * (xa - xb)
    per_avg = 1.0 / math.sqrt(dimensions)
    e_gap = base + rng.normal(0.0, expert_noise * per_avg * math.sqrt(2.0), (studies, n_units))
    y = _verdict_points(e_gap, tie_margin)
    pts = []
    for j, (noise, bias) in enumerate(zip(judge_noise, position_bias, strict=True)):
        first_a = rng.random((studies, n_units)) < 0.5
        gap = base + np.where(first_a, bias, -bias) + rng.normal(0.0, noise * per_avg * math.sqrt(2.0), base.shape)
        if j == len(judge_noise) - 1 and favour:
            gap = gap + favour * ((a == favourite).astype(float) - (b == favourite).astype(float))
        pts.append(_verdict_points(gap, tie_margin))
    yhat = np.mean(pts, axis=0)
    order = rng.random((studies, n_units)).argsort(axis=1)
    lab = np.zeros((studies, n_units), dtype=bool)
    np.put_along_axis(lab, order[:, :labeled], True, axis=1)
    # True theta: the gap of two options is N(9 (q_i - q_j), 81 * 2 output_sd^2 + 2 expert_noise^2 / D).
    from scipy import stats as _stats

    sd = math.sqrt(81.0 * 2.0 * output_sd**2 + 2.0 * (expert_noise * per_avg) ** 2)
    mu = 9.0 * (q[:, None] - q[None, :])
    win = _stats.norm.sf((tie_margin - mu) / sd)
    tie = _stats.norm.cdf((tie_margin - mu) / sd) - _stats.norm.cdf((-tie_margin - mu) / sd)
    points = win + 0.5 * tie
    np.fill_diagonal(points, np.nan)
    theta = np.nanmean(points, axis=1)
    # Given the outputs, the experts' gap is N(base, 2 expert_noise^2 / D).
    sd_e = expert_noise * per_avg * math.sqrt(2.0)
    p_a = _stats.norm.sf((tie_margin - base) / sd_e) + 0.5 * (
        _stats.norm.cdf((tie_margin - base) / sd_e) - _stats.norm.cdf((-tie_margin - base) / sd_e)
    )
    eye = np.eye(k)
    m = eye[:, a] + eye[:, b]
    theta_study = (np.einsum("ku,su->sk", eye[:, a], p_a) + np.einsum("ku,su->sk", eye[:, b], 1.0 - p_a)) / m.sum(1)
    return PPRStudies(a, b, k, yhat, y, lab, theta, theta_study, q)
