"""Provides the report's figures as PNG files (matplotlib, Agg backend): Figures 7-15, 16-17 (experts), 18 (PPR).

Figures are drawn from the report document (plus the rubric-vs-win-rate cells for Figure
13A), with `matplotlib.figure.Figure` and no pyplot state, so drawing is thread-safe and
needs no display. Every figure of simulated data says SIMULATED DATA in its title and in
a footer.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # never a GUI backend: reports run headless

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.layout_engine import ConstrainedLayoutEngine

from centaur_tui.report.document import CriterionRankRow, ModeReport, PanelRankings, PPRRow, ReportDocument
from centaur_tui.stats.report import Report

DPI = 130


def _nan(v: float | None) -> float:
    return math.nan if v is None else float(v)


TITLE_SHARE = 0.96
"""Widest a figure's title may be, as a share of the figure's width (2% margin each side)."""


def _renderer(fig: Figure) -> Any:
    """The figure's Agg renderer, to measure text (a bare `Figure` has a canvas that cannot draw)."""
    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    return canvas.get_renderer()


def _fit_title(fig: Figure, title: str, **style: Any) -> None:
    """The title as `fig.suptitle`, wrapped onto more lines until it fits the figure's width.

    Figure 16 is as wide as its judges need (5.3 inches for four): its 95-character title, 8
    inches at 11 points, was cut at both sides.
    """
    text = fig.suptitle(title, **style)
    renderer = _renderer(fig)
    limit = fig.bbox.width * TITLE_SHARE
    width = len(title)
    while text.get_window_extent(renderer).width > limit and width > 20:
        # shrink by the overshoot (characters are about equally wide), at least one character a step
        ratio = limit / text.get_window_extent(renderer).width
        width = min(width - 1, int(max(len(line) for line in text.get_text().splitlines()) * ratio))
        text.set_text("\n".join(textwrap.wrap(title, max(width, 20))))


def _labels_apart(fig: Figure, labels: list[Any], step_points: float = 2.0, tries: int = 60) -> None:
    """Move point labels (annotations in offset points) down until no two overlap.

    Candidates with the same or close ranks (two at rank 4, as in Figure 17's augmentation
    panel) had their names drawn over each other. Labels are left out of the layout, so moving
    them does not move the axes; each is shifted below the ones already placed, top to bottom.
    """
    if not labels:
        return
    renderer = _renderer(fig)
    fig.draw_without_rendering()  # the final layout, so display positions hold at saving
    to_points = 72.0 / fig.dpi
    placed: list[Any] = []
    for label in sorted(labels, key=lambda a: -a.get_window_extent(renderer).y1):
        for _ in range(tries):
            box = label.get_window_extent(renderer)
            hit = next((p for p in placed if box.overlaps(p)), None)
            if hit is None:
                break
            dx, dy = label.xyann
            label.xyann = (dx, dy - (box.y1 - hit.y0) * to_points - step_points)
        placed.append(label.get_window_extent(renderer))


def _finish(fig: Figure, doc: ReportDocument, title: str, path: Path, labels: Callable[[], None] | None = None) -> Path:
    if doc.simulated:
        title = f"SIMULATED DATA - {title}"
        # Keep the bottom 4% free for the footer (constrained layout ignores fig.text).
        engine = fig.get_layout_engine()
        assert isinstance(engine, ConstrainedLayoutEngine)  # every figure here is made with layout="constrained"
        engine.set(rect=(0, 0.04, 1, 0.96))
        fig.text(
            0.5,
            0.005,
            "SIMULATED DATA: seeded simulated provider, not language models",
            ha="center",
            va="bottom",
            fontsize=8,
            color="crimson",
        )
    _fit_title(fig, title, fontsize=11, color="crimson" if doc.simulated else "black")
    if labels is not None:
        labels()  # after the title, whose lines change the layout
    save(fig, path)
    return path


def save(fig: Figure, path: Path) -> None:
    """Write the PNG (tests replace this to look at the drawn figure).

    No metadata (matplotlib writes its version as `Software` by default): the same document
    draws the same bytes, which the publishable bundle's byte-identical rebuild needs.
    """
    fig.savefig(path, dpi=DPI, metadata={"Software": None})


def _empty(ax: Any, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.set_xticks([])
    ax.set_yticks([])


def rank_heatmap(doc: ReportDocument, mode_doc: ModeReport, path: Path, number: int) -> Path:
    """Figures 7 and 8: rank of ranks by task (rows) and candidate (columns)."""
    tasks, names = mode_doc.tasks, mode_doc.candidates
    grid = np.full((len(tasks), len(names)), np.nan)
    for r in mode_doc.matrix:
        if r.task in tasks and r.candidate in names:
            grid[tasks.index(r.task), names.index(r.candidate)] = _nan(r.rank_of_ranks)
    fig = Figure(figsize=(1.0 + 0.75 * max(len(names), 2), 1.4 + 0.45 * max(len(tasks), 1)), layout="constrained")
    ax = fig.add_subplot()
    if grid.size and np.isfinite(grid).any():
        im = ax.imshow(grid, cmap="viridis_r", aspect="auto", vmin=1, vmax=max(len(names), 2))
        for i in range(len(tasks)):
            for k in range(len(names)):
                if np.isfinite(grid[i, k]):
                    ax.text(
                        k,
                        i,
                        f"{int(grid[i, k])}",
                        ha="center",
                        va="center",
                        fontsize=8,
                        color="white" if grid[i, k] > len(names) / 2 else "black",
                    )
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(len(tasks)), tasks, fontsize=8)
        fig.colorbar(im, ax=ax, label="rank of ranks (1 = best)", shrink=0.8)
    else:
        _empty(ax)
    title = f"Figure {number}: {mode_doc.mode} rank of ranks by task ({mode_doc.runs} runs, n = {mode_doc.n:,})"
    return _finish(fig, doc, title, path)


def cross_mode_scatter(doc: ReportDocument, path: Path) -> Path:
    """Figure 9: reverse overall mean rank, automation (x) vs augmentation (y), assistant models only."""
    by_mode = {m.mode: {r.candidate: _nan(r.mean_rank) for r in m.overall} for m in doc.modes}
    model_row = next((r for r in doc.cross_mode.rows if r.task == "(model level)"), None)
    models = model_row.models if model_row else []
    fig = Figure(figsize=(6, 5.5), layout="constrained")
    ax = fig.add_subplot()
    if models and "automation" in by_mode and "augmentation" in by_mode:
        top = len(models) + 1
        x = np.array([top - by_mode["automation"].get(m, math.nan) for m in models])
        y = np.array([top - by_mode["augmentation"].get(m, math.nan) for m in models])
        ax.scatter(x, y, color="tab:blue")
        for m, a, b in zip(models, x, y, strict=True):
            ax.annotate(m, (a, b), textcoords="offset points", xytext=(4, 3), fontsize=8)
        finite = np.concatenate([x[np.isfinite(x)], y[np.isfinite(y)]])
        if finite.size:
            lo, hi = finite.min() - 0.5, finite.max() + 0.5
            ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--")
        ax.set_xlabel(f"automation reverse rank ({top} - mean rank)")
        ax.set_ylabel(f"augmentation reverse rank ({top} - mean rank)")
        rho = model_row.rho if model_row else None
        p = model_row.p if model_row else None
        ax.set_title(
            f"Spearman rho = {'NaN' if rho is None else f'{rho:.2f}'}, "
            f"p = {'NaN' if p is None else f'{p:.3f}'}, n = {len(models)}",
            fontsize=9,
        )
    else:
        _empty(ax, "needs both modes")
    return _finish(fig, doc, "Figure 9: automation vs augmentation (higher = better)", path)


def mean_rank_panels(doc: ReportDocument, mode_doc: ModeReport, path: Path, number: int) -> Path:
    """Figures 10 and 11: mean rank with SE bars, one panel per task."""
    tasks, names = mode_doc.tasks, mode_doc.candidates
    cols = min(4, max(len(tasks), 1))
    rows = max(1, math.ceil(len(tasks) / cols))
    fig = Figure(figsize=(3.2 * cols, 0.35 * len(names) * rows + 1.5), layout="constrained")
    cell = {(r.task, r.candidate): r for r in mode_doc.matrix}
    if not tasks:
        _empty(fig.add_subplot())
    for i, task in enumerate(tasks):
        ax = fig.add_subplot(rows, cols, i + 1)
        found = [cell.get((task, n)) for n in names]
        means = np.array([_nan(c.mean_rank if c is not None else None) for c in found])
        ses = np.array([_nan(c.se if c is not None else None) for c in found])
        ypos = np.arange(len(names))
        ax.errorbar(means, ypos, xerr=np.nan_to_num(ses), fmt="o", ms=4, capsize=2)
        ax.set_yticks(ypos, names if i % cols == 0 else [], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0.5, len(names) + 0.5)
        ax.set_title(task, fontsize=9)
        ax.grid(axis="x", lw=0.3)
    title = f"Figure {number}: {mode_doc.mode} mean rank ± SE by task ({mode_doc.runs} runs; 1 = best)"
    return _finish(fig, doc, title, path)


def profiles(doc: ReportDocument, path: Path, mode: str = "augmentation") -> Path:
    """Figure 12: mean general-rubric score per dimension and candidate."""
    prof = doc.validity.profiles
    dims = prof.dimensions
    rows = prof.augmentation if mode == "augmentation" else prof.automation if mode == "automation" else []
    fig = Figure(figsize=(9.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    section = doc.mode(mode)
    names = section.candidates if section is not None else []
    by = {(r.candidate, r.dimension): r.mean for r in rows}
    drawn = 0
    for name in names:
        ys = [_nan(by.get((name, d))) for d in dims]
        if all(math.isnan(y) for y in ys):
            continue
        ax.plot(range(len(dims)), ys, marker="o", ms=3, lw=1, label=name)
        drawn += 1
    if drawn:
        ax.set_xticks(range(len(dims)), [d.replace("_", "\n") for d in dims], fontsize=8)
        ax.set_ylabel("mean score (1-10)")
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        _empty(ax)
    return _finish(fig, doc, f"Figure 12: general-rubric profiles ({mode})", path)


def validity_panels(doc: ReportDocument, report: Report, path: Path) -> Path:
    """Figure 13: (A) rubric mean vs win rate per cell; (B) choice-rubric consistency per judge."""
    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax_a, ax_b = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    cells = report.tables.get("cells")
    rw = doc.validity.rubric_vs_win_rate
    if cells is not None and len(cells) and cells["rubric_mean"].notna().any():
        ax_a.scatter(cells["rubric_mean"], cells["win_rate"], s=6, alpha=0.35)
        ax_a.set_xlabel("mean rubric score")
        ax_a.set_ylabel("win rate")
    else:
        _empty(ax_a)
    r = rw.r
    ax_a.set_title(f"A: r = {'NaN' if r is None else f'{r:.2f}'}, n = {rw.n:,} cells", fontsize=9)
    rows = [x for x in doc.validity.choice_rubric.rows if x.judge != "(all judges)"]
    shares = [100 * _nan(x.share) for x in rows]
    if rows:
        ax_b.bar(range(len(rows)), np.nan_to_num(shares), color="tab:green")
        ax_b.set_xticks(range(len(rows)), [x.judge for x in rows], rotation=30, ha="right", fontsize=8)
        for i, (x, s) in enumerate(zip(rows, shares, strict=True)):
            ax_b.text(
                i,
                (0 if math.isnan(s) else s) + 0.5,
                "NaN" if math.isnan(s) else f"{s:.1f}%\nn={x.n:,}",
                ha="center",
                fontsize=7,
            )
        finite = [s for s in shares if not math.isnan(s)]
        ax_b.set_ylim(max(0, min(finite, default=0) - 10), 105)
        ax_b.set_ylabel("% winner has higher rubric average")
    else:
        _empty(ax_b)
    ax_b.set_title("B: choice-rubric consistency by judge", fontsize=9)
    return _finish(fig, doc, "Figure 13: validity of rubric-guided pairwise judging", path)


def reliability_panels(doc: ReportDocument, path: Path) -> Path:
    """Figure 14: (A) raw agreement and alpha overall and per mode; (B) alpha by task and mode."""
    rows = doc.reliability.rows
    fig = Figure(figsize=(11, 4.8), layout="constrained")
    ax_a, ax_b = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    top = [r for r in rows if r.scope in ("overall", "mode")]
    labels = ["overall" if r.scope == "overall" else r.mode or "" for r in top]
    x = np.arange(len(top))
    agree = [_nan(r.raw_agreement) for r in top]
    alpha = [_nan(r.alpha) for r in top]
    ax_a.bar(x - 0.2, np.nan_to_num(agree), 0.4, label="raw agreement")
    ax_a.bar(x + 0.2, np.nan_to_num(alpha), 0.4, label="Krippendorff's alpha (nominal)")
    for i, (g, a, r) in enumerate(zip(agree, alpha, top, strict=True)):
        ax_a.text(
            i - 0.2, (0 if math.isnan(g) else g) + 0.01, "NaN" if math.isnan(g) else f"{g:.1%}", ha="center", fontsize=7
        )
        ax_a.text(
            i + 0.2,
            (0 if math.isnan(a) else max(a, 0)) + 0.01,
            "NaN" if math.isnan(a) else f"{a:.3f}",
            ha="center",
            fontsize=7,
        )
        ax_a.text(i, -0.08, f"{r.units:,} units", ha="center", fontsize=7, transform=ax_a.get_xaxis_transform())
    ax_a.set_xticks(x, labels)
    ax_a.set_ylim(min(0, *[a for a in alpha if not math.isnan(a)], 0) - 0.05, 1.05)
    ax_a.legend(fontsize=7)
    ax_a.set_title("A: agreement overall and by mode", fontsize=9)
    per = [r for r in rows if r.scope == "task x mode"]
    tasks = list(dict.fromkeys(r.task or "" for r in per))
    modes = list(dict.fromkeys(r.mode or "" for r in per))
    if per:
        width = 0.8 / max(len(modes), 1)
        for k, mode in enumerate(modes):
            vals = [next((_nan(r.alpha) for r in per if r.task == t and r.mode == mode), math.nan) for t in tasks]
            ax_b.bar(np.arange(len(tasks)) + (k - (len(modes) - 1) / 2) * width, np.nan_to_num(vals), width, label=mode)
        ax_b.set_xticks(range(len(tasks)), tasks, rotation=30, ha="right", fontsize=8)
        ax_b.set_ylabel("Krippendorff's alpha")
        ax_b.legend(fontsize=7)
    else:
        _empty(ax_b)
    ax_b.set_title("B: alpha by task and mode (NaN drawn as 0)", fontsize=9)
    return _finish(fig, doc, "Figure 14: inter-judge reliability", path)


def criterion_panels(doc: ReportDocument, path: Path) -> Path:
    """Figure 15: mean within-family rank (± SD over task-runs) per judge and family."""
    crit = doc.validity.criterion
    groups: dict[tuple[str, str], list[CriterionRankRow]] = {}
    for r in crit.ranks:
        groups.setdefault((r.judge, r.family), []).append(r)
    shares = {(p.judge, p.family): p for p in crit.pairs}
    n = max(len(groups), 1)
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(4 * cols, 3.2 * rows), layout="constrained")
    if not groups:
        _empty(fig.add_subplot(), "no family with two or more release-ordered models")
    for i, ((judge, family), items) in enumerate(sorted(groups.items())):
        ax = fig.add_subplot(rows, cols, i + 1)
        items = sorted(items, key=lambda r: r.release_order)
        ax.bar(
            range(len(items)),
            [_nan(r.mean_rank) for r in items],
            yerr=np.nan_to_num([_nan(r.sd) for r in items]),
            capsize=3,
            color="tab:purple",
        )
        ax.set_xticks(range(len(items)), [r.candidate for r in items], rotation=30, ha="right", fontsize=7)
        ax.set_ylabel("mean within-family rank", fontsize=8)
        pair = shares.get((judge, family))
        share = pair.share_later if pair is not None else None
        ax.set_title(
            f"{judge} judges {family}: later preferred {'NaN' if share is None else f'{share:.0%}'}", fontsize=8
        )
    return _finish(fig, doc, "Figure 15: criterion validity, release order (automation)", path)


def agreement_matrix(doc: ReportDocument, path: Path) -> Path:
    """Figure 16: raw agreement (with ties) of every pair of judges on the reference set, experts first."""
    ex = doc.experts
    experts = ex.counts.experts if ex.counts is not None else []
    names = experts + (ex.counts.llm_judges if ex.counts is not None else [])
    at = {n: i for i, n in enumerate(names)}
    grid = np.full((len(names), len(names)), np.nan)
    counts = np.zeros((len(names), len(names)), dtype=int)
    for r in ex.agreement.kappa if ex.agreement is not None else []:
        i, k = at.get(r.judge_1), at.get(r.judge_2)
        if i is None or k is None:
            continue
        grid[i, k] = grid[k, i] = _nan(r.agreement)
        counts[i, k] = counts[k, i] = r.n
    size = 1.6 + 0.62 * max(len(names), 2)
    fig = Figure(figsize=(size + 1.2, size), layout="constrained")
    ax = fig.add_subplot()
    if np.isfinite(grid).any():
        im = ax.imshow(grid, cmap="viridis", vmin=0, vmax=1)
        for i in range(len(names)):
            for k in range(len(names)):
                if np.isfinite(grid[i, k]):
                    ax.text(
                        k,
                        i,
                        f"{100 * grid[i, k]:.0f}%\nn={counts[i, k]}",
                        ha="center",
                        va="center",
                        fontsize=6,
                        color="black" if grid[i, k] > 0.6 else "white",
                    )
        split = len(experts) - 0.5
        ax.axhline(split, color="white", lw=2)
        ax.axvline(split, color="white", lw=2)
        # vertical: at 45 degrees the boxes of neighbouring names overlapped (0.62 inch a judge)
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=8)
        ax.set_yticks(range(len(names)), names, fontsize=8)
        # 26 characters: the label of 49 ran past the top and bottom of a figure of four judges
        fig.colorbar(im, ax=ax, label="share with the same verdict", shrink=0.8)
    else:
        _empty(ax, "no pair of judges shares a reference comparison")
    n = ex.counts.reference_comparisons if ex.counts is not None else 0
    return _finish(fig, doc, f"Figure 16: judge agreement, experts (top left) and LLM judges ({n:,} comparisons)", path)


def expert_rank_scatter(doc: ReportDocument, path: Path) -> Path:
    """Figure 17: expert-panel vs LLM-panel Bradley-Terry rank per candidate, one panel per mode."""
    rankings = doc.experts.rankings or PanelRankings(rows=[], candidates=[])
    modes = list(dict.fromkeys(r.mode for r in rankings.rows))
    fig = Figure(figsize=(max(7.0, 5.2 * len(modes)), 5), layout="constrained")
    names: list[Any] = []
    if not modes:
        _empty(fig.add_subplot(), "no reference comparison")
    for i, mode in enumerate(modes):
        ax = fig.add_subplot(1, len(modes), i + 1)
        cands = [r for r in rankings.candidates if r.mode == mode]
        per_task = [r for r in cands if r.task != "(all tasks)"]
        pooled = [r for r in cands if r.task == "(all tasks)"]
        xs = [_nan(r.expert_rank) for r in per_task]
        ys = [_nan(r.llm_rank) for r in per_task]
        ax.scatter(xs, ys, s=12, color="lightgrey", label="per task")
        x = np.array([_nan(r.expert_rank) for r in pooled])
        y = np.array([_nan(r.llm_rank) for r in pooled])
        ax.scatter(x, y, color="tab:blue", label="all tasks pooled")
        top = max([len(pooled), *[v for v in xs + ys if np.isfinite(v)], 2])
        for r, a, b in zip(pooled, x, y, strict=True):
            if np.isfinite(a) and np.isfinite(b):
                # the x axis runs from worst (left) to best: names of the better half go left of their point
                left = a < (top + 1) / 2
                name = ax.annotate(
                    r.candidate,
                    (a, b),
                    textcoords="offset points",
                    xytext=(-4 if left else 4, 3),
                    ha="right" if left else "left",
                    fontsize=7,
                )
                name.set_in_layout(False)
                names.append(name)
        ax.plot([0.5, top + 0.5], [0.5, top + 0.5], color="grey", lw=0.8, ls="--")
        ax.set_xlim(top + 0.5, 0.5)
        ax.set_ylim(top + 0.5, 0.5)
        ax.set_xlabel("expert-panel rank (1 = best)")
        ax.set_ylabel("LLM-panel rank (1 = best)")
        row = next((r for r in rankings.rows if r.mode == mode and r.task == "(all tasks)"), None)
        rho = row.spearman if row is not None else None
        text = "NaN" if rho is None else f"{rho:.2f}"
        if row is not None and row.spearman_ci_low is not None and rho is not None:
            text += f" [{row.spearman_ci_low:.2f}, {row.spearman_ci_high:.2f}]"
        ax.set_title(f"{mode}: Spearman {text}, n = {row.n if row else 0}", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    return _finish(
        fig,
        doc,
        "Figure 17: expert vs LLM-panel ranks (Bradley-Terry, same comparisons)",
        path,
        labels=lambda: _labels_apart(fig, names),
    )


def ppr_rank_sets(doc: ReportDocument, path: Path) -> Path:
    """Figure 18: rank-sets per candidate, prediction-powered beside experts only and LLM only, one panel per mode."""
    modes = (doc.ppr.modes if doc.ppr is not None else None) or []
    fig = Figure(figsize=(max(7.0, 5.6 * len(modes)), 5), layout="constrained")
    if not modes:
        _empty(fig.add_subplot(), "no prediction-powered ranking")
    styles: list[tuple[str, str, float, Callable[[PPRRow], tuple[int, int]]]] = [
        ("prediction-powered", "tab:blue", 0.0, lambda r: (r.ppr_low, r.ppr_high)),
        ("experts only", "tab:green", 0.22, lambda r: (r.expert_low, r.expert_high)),
        ("LLM only", "tab:red", -0.22, lambda r: (r.llm_low, r.llm_high)),
    ]
    for i, m in enumerate(modes):
        ax = fig.add_subplot(1, len(modes), i + 1)
        rows = m.rows
        k = m.candidates
        ys = np.arange(len(rows))
        for label, colour, shift, rank_set in styles:
            low = np.array([rank_set(r)[0] for r in rows], dtype=float)
            high = np.array([rank_set(r)[1] for r in rows], dtype=float)
            wide = label == "prediction-powered"
            ax.hlines(ys + shift, low - 0.3, high + 0.3, color=colour, lw=4 if wide else 2, label=label)
        ax.set_yticks(ys, [r.candidate for r in rows], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(k + 0.7, 0.3)
        ax.set_xticks(range(1, k + 1))
        ax.set_xlabel("rank-set (1 = best)")
        size = m.mean_set_size
        ax.set_title(
            f"{m.mode}: {m.labeled:,} expert / {m.comparisons:,} comparisons; mean size "
            f"{size['ppr']:.2f} (experts {size['expert']:.2f})",
            fontsize=8,
        )
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3, frameon=False)
    alpha = doc.ppr.options.alpha if doc.ppr is not None else 0.1
    return _finish(fig, doc, f"Figure 18: prediction-powered rank-sets ({1 - alpha:.0%}, all candidates at once)", path)


def draw_all(report: Report, out_dir: Path) -> list[Path]:
    """Draw every figure of a report into `out_dir`; returns the files written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = report.document
    written = []
    numbers = {"automation": (7, 10), "augmentation": (8, 11)}
    for m in doc.modes:
        heat, bars = numbers.get(m.mode, (0, 0))
        tag = m.mode
        written.append(rank_heatmap(doc, m, out_dir / f"fig{heat:02d}_{tag}_rank_heatmap.png", heat))
        written.append(mean_rank_panels(doc, m, out_dir / f"fig{bars:02d}_{tag}_mean_ranks.png", bars))
    written.append(cross_mode_scatter(doc, out_dir / "fig09_automation_vs_augmentation.png"))
    written.append(profiles(doc, out_dir / "fig12_general_rubric_profiles.png"))
    written.append(validity_panels(doc, report, out_dir / "fig13_validity.png"))
    written.append(reliability_panels(doc, out_dir / "fig14_reliability.png"))
    written.append(criterion_panels(doc, out_dir / "fig15_criterion_validity.png"))
    counts = doc.experts.counts
    if doc.experts.present and counts is not None and counts.reference_comparisons:
        written.append(agreement_matrix(doc, out_dir / "fig16_expert_llm_agreement.png"))
        written.append(expert_rank_scatter(doc, out_dir / "fig17_expert_vs_llm_ranks.png"))
    if doc.ppr is not None and doc.ppr.modes:
        written.append(ppr_rank_sets(doc, out_dir / "fig18_prediction_powered_rank_sets.png"))
    return sorted(written)
