"""Provides the worker-panel and professional-bar sections (issue 28): assistants per worker, humans as the bar.

- Worker panel: each worker's augmentation tournament (mode `augmentation` for the primary worker,
  `augmentation@<worker>` for the others, `human_augmentation` for the experts as workers) ranks the
  assistants and plain. Per worker: the assistants' mean within-run rank per task and overall, the
  best assistant, and each assistant's gain over that worker's own plain baseline (head-to-head
  wins plus half the ties against plain, and plain's mean rank minus the assistant's). Across
  workers: Spearman and Kendall tau-b between two workers' rankings of the assistants they share,
  with percentile intervals from resampling runs (each replicate re-averages the ranks over the
  drawn runs).
- Professional bar (GDPval's headline): per task and mode, each candidate's share of judgments won
  or tied against a deliverable of a candidate marked `professional = true` (or, in the human-worker
  arm, the experts' unaided `plain` deliverable), with a Wilson interval whose n is the number of
  comparisons, not judgments: the judges of one comparison are not independent, and counting each
  comparison once is conservative (measured coverage in docs/statistics.md).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats as sps

from centaur_tui.domain.plan import WORKER_MODE_PREFIX
from centaur_tui.report.document import (
    ProfessionalRow,
    ProfessionalSection,
    WorkerGainRow,
    WorkerRankRow,
    WorkersSection,
    WorkerStabilityRow,
)
from centaur_tui.stats.frames import Frames
from centaur_tui.stats.proportions import wilson

HUMAN_MODE = "human_augmentation"
HUMAN_WORKERS = "human workers (experts)"
"""The worker label of the human-worker arm's tournaments."""


def worker_of(mode: str, primary: str | None) -> str | None:
    """The worker label of a tournament mode, or None when the mode is not a worker's augmentation tournament."""
    if mode == "augmentation":
        return primary or "worker"
    if mode.startswith(WORKER_MODE_PREFIX):
        return mode[len(WORKER_MODE_PREFIX) :]
    if mode == HUMAN_MODE:
        return HUMAN_WORKERS
    return None


def has_panel(modes: list[str]) -> bool:
    """Whether the session has a worker panel (a further worker's tournament): the section is then present."""
    return any(m.startswith(WORKER_MODE_PREFIX) for m in modes)


def _mean_ranks(ranks: pd.DataFrame) -> pd.Series:
    """Mean rank per (mode, candidate) over runs and tasks (NaN ranks left out)."""
    return ranks.groupby(["mode", "candidate"], observed=True)["rank"].mean()


def _correlations(x: list[float], y: list[float]) -> tuple[float | None, float | None]:
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    rho = float(sps.spearmanr(x, y).statistic)
    tau = float(sps.kendalltau(x, y).statistic)
    return rho, tau


def workers_section(
    frames: Frames, ranks: pd.DataFrame, bootstrap: int = 200, seed: int = 0, confidence: float = 0.95
) -> WorkersSection | None:
    """The worker-panel section, or None when the session has one worker model (no `[[workers]]` panel).

    Args:
        frames: The tidy frames.
        ranks: `within_run_ranks` of every tournament.
        bootstrap: Replicates of the run resampling behind the stability intervals (0: none).
        seed: Seed of the resampling.
        confidence: Level of the intervals.
    """
    modes = frames.modes()
    if not has_panel(modes):
        return None
    design = frames.design
    plain = design.plain
    worker_modes = [m for m in modes if worker_of(m, design.worker) is not None]
    label = {m: str(worker_of(m, design.worker)) for m in worker_modes}
    r = ranks[ranks["mode"].astype(str).isin(worker_modes)].copy()
    r["mode"] = r["mode"].astype(str)
    r["candidate"] = r["candidate"].astype(str)
    rank_rows: list[WorkerRankRow] = []
    gains: list[WorkerGainRow] = []
    best: dict[str, str | None] = {}
    means_all = _mean_ranks(r)
    long = frames.long
    long = long[long["mode"].astype(str).isin(worker_modes)]
    for mode in worker_modes:
        rm = r[r["mode"] == mode]
        names = frames.candidate_names(mode)
        assistants = [c for c in names if c != plain]
        by_cand = rm.groupby("candidate")["rank"]
        overall = {c: float(by_cand.mean().get(c, np.nan)) for c in names}
        order = sorted((v, c) for c, v in overall.items() if c != plain and not math.isnan(v))
        # Two assistants sharing the lowest mean rank: no best (a name would break the tie silently).
        tied = len(order) > 1 and order[0][0] == order[1][0]
        best[mode] = order[0][1] if order and not tied else None
        overall_rank = pd.Series(overall).rank(method="min")
        for c in names:
            cells = rm[rm["candidate"] == c]
            rank_rows.append(
                WorkerRankRow(
                    worker=label[mode],
                    mode=mode,
                    candidate=c,
                    mean_rank=None if math.isnan(overall[c]) else overall[c],
                    overall_rank=None if math.isnan(overall[c]) else int(overall_rank[c]),
                    cells=int(cells["rank"].notna().sum()),
                    missing_cells=int(cells["rank"].isna().sum()),
                    best=c == best[mode],
                )
            )
        lm = long[long["mode"].astype(str) == mode]
        plain_mean = overall.get(plain, math.nan)
        for a in assistants:
            h2h = lm[(lm["candidate"].astype(str) == a) & (lm["opponent"].astype(str) == plain)]
            n, units = len(h2h), int(h2h["unit"].nunique())
            points = float(h2h["points"].sum())
            low, high = wilson(points / n * units, units) if n else (None, None)
            gain = plain_mean - overall[a] if not (math.isnan(plain_mean) or math.isnan(overall[a])) else None
            gains.append(
                WorkerGainRow(
                    worker=label[mode],
                    assistant=a,
                    win_rate_vs_plain=points / n if n else None,
                    ci_low=low,
                    ci_high=high,
                    judgments=n,
                    comparisons=units,
                    rank_gain=gain,
                )
            )
    stability = _stability(r, worker_modes, label, plain, means_all, bootstrap, seed, confidence)
    return WorkersSection(
        workers=[label[m] for m in worker_modes],
        ranks=rank_rows,
        best={label[m]: b for m, b in best.items()},
        gains=gains,
        stability=stability,
        runs=len(frames.runs),
        bootstrap=bootstrap,
    )


def _stability(
    r: pd.DataFrame,
    modes: list[str],
    label: dict[str, str],
    plain: str,
    means: pd.Series,
    bootstrap: int,
    seed: int,
    confidence: float,
) -> list[WorkerStabilityRow]:
    runs = sorted(r["run"].unique().tolist())
    rng = np.random.default_rng(seed)
    draws = [rng.choice(runs, size=len(runs), replace=True) for _ in range(bootstrap if len(runs) > 1 else 0)]
    by_run = {run: g for run, g in r.groupby("run")}
    out = []
    for i, m1 in enumerate(modes):
        for m2 in modes[i + 1 :]:
            a1 = {str(c) for (m, c) in means.index if m == m1 and c != plain}
            a2 = {str(c) for (m, c) in means.index if m == m2 and c != plain}
            shared = sorted(a1 & a2)
            shared = [c for c in shared if not (math.isnan(means[(m1, c)]) or math.isnan(means[(m2, c)]))]
            rho, tau = _correlations([means[(m1, c)] for c in shared], [means[(m2, c)] for c in shared])
            reps_rho, reps_tau = [], []
            for draw in draws:
                sample = pd.concat([by_run[x] for x in draw], ignore_index=True)
                mm = _mean_ranks(sample)
                x = [mm.get((m1, c), np.nan) for c in shared]
                y = [mm.get((m2, c), np.nan) for c in shared]
                if any(math.isnan(v) for v in (*x, *y)):
                    continue
                br, bt = _correlations(x, y)
                if br is not None and bt is not None:
                    reps_rho.append(br)
                    reps_tau.append(bt)
            rho_ci, tau_ci = _interval(reps_rho, confidence), _interval(reps_tau, confidence)
            reason = None
            if len(shared) < 2:
                reason = "fewer than 2 assistants ranked by both workers"
            elif rho is None:
                reason = "a worker ranks every shared assistant alike"
            elif rho_ci[0] is None:
                reason = "no interval: fewer than 2 runs or 20 usable replicates"
            out.append(
                WorkerStabilityRow(
                    worker_a=label[m1],
                    worker_b=label[m2],
                    assistants=len(shared),
                    spearman=rho,
                    spearman_low=rho_ci[0],
                    spearman_high=rho_ci[1],
                    kendall=tau,
                    kendall_low=tau_ci[0],
                    kendall_high=tau_ci[1],
                    replicates=len(reps_rho),
                    reason=reason,
                )
            )
    return out


def _interval(reps: list[float], confidence: float) -> tuple[float | None, float | None]:
    """Percentile interval of bootstrap replicates (None, None below 20 usable replicates)."""
    if len(reps) < 20:
        return None, None
    lo, hi = np.quantile(reps, ((1 - confidence) / 2, 1 - (1 - confidence) / 2))
    return float(lo), float(hi)


def professional_section(frames: Frames) -> ProfessionalSection | None:
    """Each candidate's wins plus ties against the human professional's deliverable, per task and mode.

    None when the session declares no professional deliverable (no candidate marked
    `professional` and no human-worker arm judged); a section with a note when it declares one but
    no comparison against it is judged yet.
    """
    design = frames.design
    pros = set(design.professional)
    modes = frames.modes()
    human = HUMAN_MODE in modes
    if not pros and not human:
        return None
    long = frames.long
    mode_col = long["mode"].astype(str)
    cand, opp = long["candidate"].astype(str), long["opponent"].astype(str)
    against = opp.isin(pros) & ~cand.isin(pros)
    if human:  # the experts' unaided deliverable is the human professional's, in the human-worker arm
        against = against | ((mode_col == HUMAN_MODE) & (opp == design.plain) & (cand != design.plain))
    sel = long[against.to_numpy()].assign(
        mode=mode_col[against].to_numpy(),
        candidate=cand[against].to_numpy(),
        professional=opp[against].to_numpy(),
        win_or_tie=(long.loc[against, "points"] > 0).to_numpy(),
    )
    rows: list[ProfessionalRow] = []
    tasks = frames.tasks()
    for (mode, task, candidate, professional), g in sel.groupby(["mode", "task", "candidate", "professional"]):
        rows.append(_pro_row(str(mode), str(task), str(candidate), str(professional), g))
    for (mode, candidate, professional), g in sel.groupby(["mode", "candidate", "professional"]):
        rows.append(_pro_row(str(mode), "all tasks", str(candidate), str(professional), g))
    order = {t: i for i, t in enumerate([*tasks, "all tasks"])}
    rows.sort(key=lambda x: (x.mode, order.get(x.task, len(order)), x.candidate))
    note = None if rows else "no judged comparison against a professional deliverable yet"
    return ProfessionalSection(
        professionals=sorted(pros) + ([f"{design.plain} ({HUMAN_WORKERS})"] if human else []),
        rows=rows,
        note=note,
    )


def _pro_row(mode: str, task: str, candidate: str, professional: str, g: pd.DataFrame) -> ProfessionalRow:
    n, units = len(g), int(g["unit"].nunique())
    k = int(g["win_or_tie"].sum())
    rate = k / n
    low, high = wilson(rate * units, units)
    return ProfessionalRow(
        mode=mode,
        task=task,
        candidate=candidate,
        professional=professional,
        wins_or_ties=k,
        judgments=n,
        comparisons=units,
        rate=rate,
        ci_low=low,
        ci_high=high,
    )
