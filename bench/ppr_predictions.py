"""What better predictions could buy the panel estimator at small expert budgets (issue 25's 0.75 target).

On the studies of `bench/ppr_coverage.py` (`stats.ppr_sim.panel_studies`: 12 candidates, 1,980
comparisons, three judges biased in planted ways, 10% ties, one expert per comparison), the
panel estimator (`ppr_panel.panel_estimate`, tuned pooled lambda, step-down max-t rank-sets,
guard 5) run with four sets of predictions, on the same studies:

- verdicts: each judge's points (the report's estimator);
- + scores: also each judge's rubric-average gap, standardised over the study's comparisons
  and squashed, (1 + tanh(gap / sd)) / 2 (a fixed function of what the judge wrote);
- + scores + length: also the two deliverables' length difference, standardised, as
  0.5 + gap / 6 clipped to [0, 1] (the texts are stored: a covariate every study has);
- oracle: the expert's expected points on each comparison (`expected_points`), the best
  prediction any judge could make; an upper bound, not an estimator.

Also the share of the expert verdict's variance each set explains (R^2 of a least-squares fit
on 20 fully labelled studies). Prints coverage (mean rank-set size of 12) per n and alpha, and
each set's size over the experts alone (chatzi, the report's expert-only column).

Then the same judges with their planted biases scaled (1: the bench's world; 0.5; 0: they
differ from the experts by noise alone): how often each judge agrees with the expert, and the
panel's sizes over the experts alone and over today's PPR (the panel's mean, chatzi), at n
50 and 100: how much the judges must know for a quarter off the rank-sets.

    PYTHONPATH=$PWD .venv/bin/python bench/ppr_predictions.py            # 300 studies per cell
    PYTHONPATH=$PWD .venv/bin/python bench/ppr_predictions.py --studies 100

Measured (300 studies per cell): see docs/statistics.md, "What better predictions could buy".
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from centaur_tui.stats import ppr
from centaur_tui.stats import ppr_panel as pp
from centaur_tui.stats.ppr_sim import PanelStudies, panel_studies

SETS = ("verdicts", "+ scores", "+ scores + length", "oracle")


def predictions(st: PanelStudies) -> dict[str, np.ndarray]:
    """(S, P, U) predictions of candidate_a's points per set, every value in [0, 1]."""
    gap = st.judge_gaps / st.judge_gaps.std(-1, keepdims=True)
    scores = (1.0 + np.tanh(gap)) / 2.0
    length = st.length_gap[:, None] / st.length_gap.std(-1, keepdims=True)[:, None]
    length = np.clip(0.5 + length / 6.0, 0.0, 1.0)
    return {
        "verdicts": st.judges,
        "+ scores": np.concatenate([st.judges, scores], 1),
        "+ scores + length": np.concatenate([st.judges, scores, length], 1),
        "oracle": st.expected_points[:, None],
    }


def explained(studies: int = 20, seed: int = 3) -> dict[str, float]:
    """Mean R^2 of the expert's points on each set (least squares with an intercept, every comparison labelled)."""
    st = panel_studies(studies, 1980, seed=seed)
    y = st.expert_mean()
    out = {}
    for name, h in predictions(st).items():
        r2 = []
        for s in range(studies):
            x = np.column_stack([np.ones(h.shape[-1]), h[s].T])
            beta, *_ = np.linalg.lstsq(x, y[s], rcond=None)
            r2.append(1.0 - np.var(y[s] - x @ beta) / np.var(y[s]))
        out[name] = float(np.mean(r2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=300)
    parser.add_argument("--draws", type=int, default=2000, help="normal draws of the max-t critical value")
    args = parser.parse_args()
    started = time.perf_counter()
    warnings.simplefilter("ignore", RuntimeWarning)
    print("R^2 of the expert's points: " + ", ".join(f"{k} {v:.3f}" for k, v in explained().items()))
    print(f"{args.studies} studies per cell; coverage (mean rank-set size of 12); ratio to experts alone (chatzi)")
    for n in (50, 100, 200):
        st = panel_studies(args.studies, n, seed=n)
        truth = ppr.ranks_of(st.truth_half)
        alone = pp.experts_only(st.a, st.b, st.k, st.experts, min_labeled=5)
        for alpha in (0.05, 0.1):
            base = ppr.set_sizes(*ppr.rank_sets(alone.theta, alone.sigma, alpha)).mean()
            cells = []
            for name, h in predictions(st).items():
                est = pp.panel_estimate(st.a, st.b, st.k, h, st.experts, st.labeled, min_labeled=5, continuous=True)
                low, high = pp.rank_sets_maxt(est.theta, est.sigma, alpha, draws=args.draws)
                size = ppr.set_sizes(low, high).mean()
                cells.append(f"{name}: {ppr.covers(low, high, truth).mean():.3f} ({size:.2f}, {size / base:.2f}x)")
            print(f"n {n:>3} alpha {alpha:.2f} experts alone {base:5.2f} | " + " | ".join(cells), flush=True)
    print("judges' planted biases scaled: agreement with the expert per judge; panel size / experts alone, / today")
    for scale in (1.0, 0.5, 0.0):
        for n in (50, 100):
            st = panel_studies(
                args.studies,
                n,
                length_bias=3.0 * scale,
                family_bias=3.0 * scale,
                position_bias=0.8 * scale,
                seed=n + 7,
            )
            lab = st.labeled
            y = st.expert_mean()
            agree = [float(np.mean(st.judges[:, j][lab] == y[lab])) for j in range(st.judges.shape[1])]
            alone = pp.experts_only(st.a, st.b, st.k, st.experts, min_labeled=5)
            est = pp.panel_estimate(st.a, st.b, st.k, st.judges, st.experts, st.labeled, min_labeled=5)
            today = ppr.ppr_estimate(st.a, st.b, st.k, st.judges.mean(1), y, st.labeled, min_labeled=5)
            truth = ppr.ranks_of(st.truth_half)
            cells = []
            for alpha in (0.05, 0.1):
                low, high = pp.rank_sets_maxt(est.theta, est.sigma, alpha, draws=args.draws)
                size = ppr.set_sizes(low, high).mean()
                base = ppr.set_sizes(*ppr.rank_sets(alone.theta, alone.sigma, alpha)).mean()
                old = ppr.set_sizes(*ppr.rank_sets(today.theta, today.sigma, alpha)).mean()
                cov = ppr.covers(low, high, truth).mean()
                cells.append(f"alpha {alpha:.2f}: {cov:.3f} ({size:.2f}) {size / base:.2f}x, {size / old:.2f}x")
            print(
                f"bias x{scale:.1f} n {n:>3} agreement {', '.join(f'{x:.2f}' for x in agree)} | " + " | ".join(cells),
                flush=True,
            )
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
