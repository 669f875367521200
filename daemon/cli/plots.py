"""Pictures for organisers: fill orders as heatmaps (like thesis Fig. 4.1)."""

from __future__ import annotations

import numpy as np

from fairgrid.solvers.fill_order import FillOrderPrediction


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return matplotlib, plt


def draw_ranks(ax, ranks: np.ndarray, givens: np.ndarray, box_size: int, title: str,
               shape: tuple[int, int] | None = None):
    """One grid: each free cell coloured by its rank (light = early) with the rank written
    in it; givens as digits on grey; block borders (Sudoku, block side ``box_size``) or the
    ``shape`` (rows, cols) of a type without blocks. ``ranks`` is flat, NaN for no rank."""
    matplotlib, _ = _pyplot()
    rows, cols = shape or (box_size * box_size, box_size * box_size)
    grid = np.asarray(ranks, dtype=float).reshape(rows, cols)
    # givens grey, so that early (light) cells stand apart from them
    cmap = matplotlib.colormaps["Blues"].with_extremes(bad="#dddddd")
    top = max(1.0, float(np.nanmax(grid))) if np.isfinite(grid).any() else 1.0
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=1, vmax=top)
    for r in range(rows):
        for c in range(cols):
            given = int(givens[r * cols + c])
            if given:
                ax.text(c, r, str(given), ha="center", va="center", fontsize=11,
                        fontweight="bold", color="black")
            elif np.isfinite(grid[r, c]):
                value = int(grid[r, c])
                ax.text(c, r, str(value), ha="center", va="center", fontsize=8,
                        color="white" if value > 0.6 * top else "#123")
    block = box_size if shape is None else max(rows, cols)
    for k in range(rows + 1):
        ax.axhline(k - 0.5, color="black", linewidth=2.0 if k % block == 0 or k == rows
                   else 0.4)
    for k in range(cols + 1):
        ax.axvline(k - 0.5, color="black", linewidth=2.0 if k % block == 0 or k == cols
                   else 0.4)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title, fontsize=9)
    return image


def order_heatmap(pred: FillOrderPrediction, path: str) -> None:
    """Write a PNG of a fill-order prediction."""
    _, plt = _pyplot()
    puzzle = pred.puzzle
    size = puzzle.size
    ranks = np.where(puzzle.givens == 0, pred.rank, np.nan)
    fig, ax = plt.subplots(figsize=(0.55 * size + 1.5, 0.55 * size + 1))
    lower = " (lower bound)" if pred.capped_runs else ""
    image = draw_ranks(ax, ranks, puzzle.givens, puzzle.box_size,
                       f"Predicted fill order: median of {pred.basis_runs} SA runs\n"
                       f"SA difficulty {pred.median_steps:,.0f} steps{lower}")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="rank (1 = filled first)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def orders_side_by_side(predicted, actual, givens, box_size: int, title: str, path: str,
                        shape: tuple[int, int] | None = None) -> None:
    """Write a PNG with the predicted and the player's fill order next to each other
    (``shape``: the rows and cols of a type without blocks)."""
    _, plt = _pyplot()
    rows, cols = shape or (box_size * box_size, box_size * box_size)
    fig, axes = plt.subplots(1, 2, figsize=(1.1 * cols + 2.5, 0.55 * rows + 1.3))
    draw_ranks(axes[0], predicted, givens, box_size, "predicted (SA median rank)" if shape is None
               else "predicted (propagation model)", shape)
    image = draw_ranks(axes[1], actual, givens, box_size, "this solve (fill rank)", shape)
    fig.colorbar(image, ax=axes, fraction=0.025, pad=0.02, label="rank (1 = filled first)")
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
