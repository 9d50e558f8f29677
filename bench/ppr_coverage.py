"""Prediction-powered rank-sets on studies with planted judge biases: coverage and size, every cell.

Studies from `stats.ppr_sim.panel_studies` (12 candidates, 30 round robins = 1,980 comparisons,
three judges biased in planted ways: length, family, position + noise; experts on a uniformly
random subset of n comparisons, e experts each). Per cell (n, e, tie share, judges), on the
same studies, at alpha 0.05 and 0.1:

- panel/half, panel/drop: `stats.ppr_panel.panel_estimate` (every judge a prediction, pooled
  tuned lambda, the study's comparisons as target) with step-down max-t rank-sets; ties 0.5
  each (truth: the experts' points share) or dropped (truth: share of wins among decisive);
- today: `stats.ppr.ppr_estimate` on the panel's mean points, chatzi ellipsoid (the report's
  estimator before this bench);
- experts/chatzi, experts/maxt: the experts alone (the report's expert-only column; and with
  the step-down max-t rank-sets);
- paper code: the PPR paper's released arithmetic (`ppr_panel.paper_code_estimate`: one judge,
  the length-biased one; ties a loss; covariances over N^2) with its chatzi rank-sets (truth:
  the share of wins);
- LLM only: the panel's own ranking (chatzi);
- oracle: the panel estimator with the expert's expected points on each comparison as its one
  prediction (`expected_points`), max-t: the best any judge could give, an upper bound on
  what better predictions could buy (not an estimator a study can run).

Every estimator runs with the report's guard (`--ppr-min-labeled`, `MIN_LABELED`). Prints
coverage (mean rank-set size) and the size ratios panel/half : today and : experts/chatzi.

    PYTHONPATH=$PWD .venv/bin/python bench/ppr_coverage.py           # 15 cells x 500 studies
    PYTHONPATH=$PWD .venv/bin/python bench/ppr_coverage.py --full    # 48 cells (the factorial)
    PYTHONPATH=$PWD .venv/bin/python bench/ppr_coverage.py --quick   # 4 cells x 200 studies
    ... --full --shard 0/2 & ... --full --shard 1/2                   # one process a core

Measured (--full, 48 cells x 500 studies, two shards of 1,220 s each; every row in
docs/statistics.md): worst coverage minus (1 - alpha) +0.010 panel/half, +0.006 panel/drop,
-0.004 today, +0.004 experts/maxt, -0.926 paper code, -0.946 LLM only; panel/half sets at most
0.75 x both today's and experts/chatzi in 55 of 90 biased-judge cells (every cell from n = 400,
16 of 18 at 200, 3 of 18 at 100, none at 50: 0.83-0.93 / 0.76-0.89 there).
"""

from __future__ import annotations

import argparse
import itertools
import time
import warnings
from collections.abc import Iterator

import numpy as np

from centaur_tui.stats import ppr
from centaur_tui.stats import ppr_panel as pp
from centaur_tui.stats.ppr_sim import panel_studies

ALPHAS = (0.05, 0.1)
METHODS = ("panel/half", "panel/drop", "today", "experts/chatzi", "experts/maxt", "paper code", "LLM only", "oracle")
MAXT = ("panel/half", "panel/drop", "experts", "oracle")  # the estimators whose rank-sets are step-down max-t


def cell(
    studies: int, n: int, experts: int, ties: float, judges: str, *, seed: int, min_labeled: int, draws: int = 2000
) -> dict[tuple[str, float], tuple[float, float]]:
    """(method, alpha) -> (coverage, mean rank-set size) over `studies` studies of one cell."""
    out: dict[tuple[str, float], list[np.ndarray]] = {}
    chunk = 100
    for c0 in range(0, studies, chunk):
        st = panel_studies(
            min(chunk, studies - c0), n, experts_per=experts, tie_share=ties, judges=judges, seed=seed * 1000 + c0
        )
        a, b, k = st.a, st.b, st.k
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            y_mean = np.nanmean(st.experts, axis=1)
        truths = {"half": ppr.ranks_of(st.truth_half), "drop": ppr.ranks_of(st.truth_drop)}
        ests = {
            "panel/half": (
                pp.panel_estimate(a, b, k, st.judges, st.experts, st.labeled, min_labeled=min_labeled),
                "half",
            ),
            "panel/drop": (
                pp.panel_estimate(a, b, k, st.judges, st.experts, st.labeled, ties="drop", min_labeled=min_labeled),
                "drop",
            ),
            "today": (
                ppr.ppr_estimate(a, b, k, st.judges.mean(1), y_mean, st.labeled, min_labeled=min_labeled),
                "half",
            ),
            "experts": (pp.experts_only(a, b, k, st.experts, min_labeled=min_labeled), "half"),
            "paper code": (pp.paper_code_estimate(a, b, k, st.judges[:, 0], y_mean, st.labeled), "win"),
            "LLM only": (ppr.mean_estimate(a, b, k, st.judges.mean(1), np.ones_like(st.labeled)), "half"),
            "oracle": (
                pp.panel_estimate(
                    a, b, k, st.expected_points[:, None], st.experts, st.labeled, min_labeled=min_labeled,
                    continuous=True,
                ),
                "half",
            ),
        }  # fmt: skip
        truths["win"] = ppr.ranks_of(st.truth_win)
        for alpha in ALPHAS:
            for name, (est, truth) in ests.items():
                runs = []
                if name in MAXT:
                    runs.append(
                        (
                            name if name != "experts" else "experts/maxt",
                            pp.rank_sets_maxt(est.theta, est.sigma, alpha, draws=draws),
                        )
                    )
                if name not in MAXT or name == "experts":
                    runs.append(
                        (name if name != "experts" else "experts/chatzi", ppr.rank_sets(est.theta, est.sigma, alpha))
                    )
                for label, (low, high) in runs:
                    got = out.setdefault((label, alpha), [np.empty(0), np.empty(0)])
                    got[0] = np.append(got[0], ppr.covers(low, high, truths[truth]))
                    got[1] = np.append(got[1], ppr.set_sizes(low, high))
    return {key: (float(v[0].mean()), float(v[1].mean())) for key, v in out.items()}


def cells(grid: str) -> Iterator[tuple[int, int, float, str]]:
    """quick: 4 cells; default: one factor at a time around (n, 1 expert, 10% ties); full: the factorial."""
    if grid == "quick":
        yield from ((n, 1, 0.1, "biased") for n in (50, 200, 800))
        yield (200, 1, 0.1, "noise")
        return
    if grid == "full":
        for e, ties, n in itertools.product((1, 2, 3), (0.0, 0.1, 0.3), (50, 100, 200, 400, 800)):
            yield n, e, ties, "biased"
        for n in (50, 200, 800):
            yield n, 1, 0.1, "noise"
        return
    yield from ((n, 1, 0.1, "biased") for n in (50, 100, 200, 400, 800))
    yield from ((n, e, 0.1, "biased") for e in (2, 3) for n in (50, 800))
    yield from ((n, 1, t, "biased") for t in (0.0, 0.3) for n in (50, 800))
    yield from ((n, 1, 0.1, "noise") for n in (50, 800))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 cells, 200 studies each")
    parser.add_argument("--full", action="store_true", help="the full factorial (48 cells)")
    parser.add_argument("--studies", type=int, default=None)
    parser.add_argument(
        "--shard",
        default="0/1",
        help="K/N: only the cells whose index is K modulo N (each cell keeps its seed, so N shards run in "
        "N processes print the rows one process would)",
    )
    args = parser.parse_args()
    try:
        shard, shards = (int(x) for x in args.shard.split("/"))
        if not 0 <= shard < shards:
            raise ValueError
    except ValueError:
        parser.error(f"--shard {args.shard!r}: expected K/N with 0 <= K < N, e.g. 0/2")
    studies = args.studies or (200 if args.quick else 500)
    started = time.perf_counter()
    floor = ppr.MIN_LABELED_FLOOR
    print(f"{studies} studies per cell; min_labeled {floor}; coverage (mean rank-set size of 12)")
    worst: dict[str, float] = {}
    head = f"{'judges':>6} {'n':>4} {'e':>2} {'ties':>5} {'alpha':>5} " + " ".join(f"{m:>15}" for m in METHODS)
    print(head + f" {'half/today':>10} {'half/exp':>9} {'oracle/exp':>10}")
    grid = "quick" if args.quick else "full" if args.full else "default"
    for i, (n, e, ties, judges) in enumerate(cells(grid)):
        if i % shards != shard:
            continue
        res = cell(studies, n, e, ties, judges, seed=i + 1, min_labeled=floor)
        for alpha in ALPHAS:
            row = [res[(m, alpha)] for m in METHODS]
            for m, (cov, _) in zip(METHODS, row, strict=True):
                worst[m] = min(worst.get(m, 1.0), cov - (1 - alpha))
            half = res[("panel/half", alpha)][1]
            print(
                f"{judges:>6} {n:>4} {e:>2} {ties:>5.2f} {alpha:>5.2f} "
                + " ".join(f"{c:>7.3f} ({s:>5.2f})" for c, s in row)
                + f" {half / res[('today', alpha)][1]:>10.2f} {half / res[('experts/chatzi', alpha)][1]:>9.2f}"
                + f" {res[('oracle', alpha)][1] / res[('experts/chatzi', alpha)][1]:>10.2f}",
                flush=True,
            )
    print("worst coverage - (1 - alpha) per method: " + ", ".join(f"{m} {v:+.3f}" for m, v in worst.items()))
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
