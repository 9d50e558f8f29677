"""Figures 16 and 17 drawn, then measured: the title inside the figure, no two tick labels or point labels overlap."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from centaur_tui.report.document import (
    ExpertAgreement,
    ExpertCounts,
    ExpertsSection,
    KappaRow,
    PanelCandidateRow,
    PanelRankingRow,
    PanelRankings,
    ReportDocument,
)
from centaur_tui.stats import figures


def experts_doc(
    n_experts: int, n_llms: int, candidates: list[str], ranks: list[float], simulated: bool
) -> ReportDocument:
    """A document holding only what Figures 16 and 17 read (`model_construct`: the rest is beside the point)."""
    names = [f"expert_{i}" for i in range(n_experts)] + [f"judge-model-{i}" for i in range(n_llms)]
    kappa = [
        KappaRow.model_construct(judge_1=a, judge_2=b, agreement=(i + k) % 10 / 10, n=7 + i + k)
        for (i, a), (k, b) in itertools.combinations(enumerate(names), 2)
    ]
    rows, cells = [], []
    for mode in ("automation", "augmentation"):
        rows.append(
            PanelRankingRow.model_construct(
                mode=mode,
                task="(all tasks)",
                spearman=0.8,
                spearman_ci_low=0.5,
                spearman_ci_high=0.95,
                n=len(candidates),
            )
        )
        for task in ("(all tasks)", "t1"):
            for c, r in zip(candidates, ranks, strict=True):
                cells.append(
                    PanelCandidateRow.model_construct(mode=mode, task=task, candidate=c, expert_rank=r, llm_rank=r)
                )
    experts = ExpertsSection.model_construct(
        present=True,
        counts=ExpertCounts.model_construct(
            experts=names[:n_experts], llm_judges=names[n_experts:], reference_comparisons=12345
        ),
        agreement=ExpertAgreement.model_construct(kappa=kappa),
        rankings=PanelRankings.model_construct(rows=rows, candidates=cells),
    )
    return ReportDocument.model_construct(simulated=simulated, experts=experts)


def drawn(monkeypatch, draw: Any, doc: ReportDocument, path: Path) -> Figure:
    shown: list[Figure] = []
    real = figures.save

    def keep(fig: Figure, out: Path) -> None:
        shown.append(fig)
        real(fig, out)

    monkeypatch.setattr(figures, "save", keep)
    draw(doc, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = shown[0]
    fig.draw_without_rendering()
    return fig


def boxes(fig: Figure, texts: list[Any]) -> list[Any]:
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    return [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()]


def assert_apart(found: list[Any], what: str) -> None:
    for a, b in itertools.combinations(found, 2):
        assert not a.overlaps(b), f"{what} overlap: {a} and {b}"


def assert_inside(fig: Figure, found: list[Any], what: str) -> None:
    whole = fig.bbox
    for box in found:
        assert whole.x0 <= box.x0 and box.x1 <= whole.x1 and whole.y0 <= box.y0 and box.y1 <= whole.y1, (what, box)


@pytest.mark.parametrize("judges", [(1, 1), (2, 2), (5, 6), (12, 12)])
@pytest.mark.parametrize("simulated", [True, False])
def test_figure_16_title_and_labels_fit(monkeypatch, tmp_path: Path, judges: tuple[int, int], simulated: bool) -> None:
    fig = drawn(
        monkeypatch,
        figures.agreement_matrix,
        experts_doc(*judges, ["A", "B"], [1.0, 2.0], simulated),
        tmp_path / "f.png",
    )
    assert fig._suptitle is not None and "Figure 16" in fig._suptitle.get_text()
    assert_inside(fig, boxes(fig, [fig._suptitle]), "the title")
    for ax in fig.axes:
        assert_inside(fig, boxes(fig, [ax.yaxis.label, ax.xaxis.label]), "an axis label")
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            assert_apart(boxes(fig, list(ticks)), "tick labels")


@pytest.mark.parametrize(
    "ranks",
    [
        [float(i + 1) for i in range(10)],  # the paper's ten candidates, one apart
        [4.0] * 6,  # six candidates tied at one rank: every name on one point
        [1.0, 1.5, 2.0, 2.0, 9.0, 9.0, 9.5],
    ],
)
def test_figure_17_point_labels_and_ticks_do_not_overlap(monkeypatch, tmp_path: Path, ranks: list[float]) -> None:
    candidates = [f"candidate-model-with-a-long-name-{i}" for i in range(len(ranks))]
    fig = drawn(
        monkeypatch, figures.expert_rank_scatter, experts_doc(2, 2, candidates, ranks, True), tmp_path / "f.png"
    )
    assert_inside(fig, boxes(fig, [fig._suptitle]), "the title")
    for ax in fig.axes:
        names = [t for t in ax.texts if t.get_text() in candidates]
        assert len(names) == len(candidates)
        assert_apart(boxes(fig, names), "candidate names")
        for ticks in (ax.get_xticklabels(), ax.get_yticklabels()):
            assert_apart(boxes(fig, list(ticks)), "tick labels")
        assert_inside(fig, boxes(fig, [ax.title, ax.xaxis.label, ax.yaxis.label]), "a panel's title or axis label")
