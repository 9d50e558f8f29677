"""Provides the automation-vs-augmentation scatter drawn with characters (the paper's Figure 9)."""

from __future__ import annotations

from collections.abc import Sequence

MARKS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def scatter_lines(
    points: Sequence[tuple[str, float, float]], width: int = 44, height: int = 14, top: float | None = None
) -> list[str]:
    """Plot (label, x, y) as marked characters on a grid with axes; mean ranks, so 1 (best) is at the top right.

    Both axes run from `top` (the number of candidates, worst) to 1 (best), reversed as in
    Figure 9, so the best models sit at the top right. Points on the same character share it
    ("*"). A legend maps each mark to its label.

    Args:
        points: Label, automation mean rank, augmentation mean rank.
        width: Plot columns (without the axis labels).
        height: Plot rows.
        top: Worst rank on both axes (defaults to the largest value plotted).

    Returns:
        The lines of the plot followed by the legend.
    """
    if not points:
        return ["No model has an overall mean rank in both modes."]
    worst = max(top or 1.0, *(max(x, y) for _, x, y in points), 1.0 + 1e-9)
    grid = [[" "] * width for _ in range(height)]

    def col(x: float) -> int:  # rank 1 on the right
        return round((worst - x) / (worst - 1) * (width - 1))

    def row(y: float) -> int:  # rank 1 at the top
        return round((y - 1) / (worst - 1) * (height - 1))

    legend = []
    for i, (label, x, y) in enumerate(points):
        mark = MARKS[i % len(MARKS)]
        r, c = row(y), col(x)
        grid[r][c] = mark if grid[r][c] == " " else "*"
        legend.append(f"{mark} {label} ({x:.2f}, {y:.2f})")
    lines = []
    for r, cells in enumerate(grid):
        label = "1" if r == 0 else (f"{worst:g}" if r == height - 1 else "")
        lines.append(f"{label:>5} |" + "".join(cells))
    lines.append("      +" + "-" * width)
    left, right = f"{worst:g}", "1"
    lines.append("       " + left + " " * (width - len(left) - len(right)) + right)
    lines.append("       automation mean rank (x) vs augmentation mean rank (y); best at top right")
    return [*lines, "", *legend]
