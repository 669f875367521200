"""Pictures for organisers: the predicted fill order as a heatmap (like thesis Fig. 4.1)."""

from __future__ import annotations

import numpy as np

from fairgrid.solvers.order import OrderPrediction


def order_heatmap(pred: OrderPrediction, path: str) -> None:
    """Write a PNG: each free cell coloured by its predicted rank (light = early), its rank
    written in it; givens shown as digits on white; block borders drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    puzzle = pred.puzzle
    size, order = puzzle.size, puzzle.order
    ranks = np.where(puzzle.givens == 0, pred.rank, np.nan).reshape(size, size).astype(float)
    fig, ax = plt.subplots(figsize=(0.55 * size + 1.5, 0.55 * size + 1))
    cmap = matplotlib.colormaps["Blues"].copy()
    cmap.set_bad("#dddddd")  # givens: grey, so early (light) cells stand apart from them
    image = ax.imshow(np.ma.masked_invalid(ranks), cmap=cmap, vmin=1,
                      vmax=max(1, int(np.nanmax(ranks))))
    for r in range(size):
        for c in range(size):
            given = int(puzzle.givens[r * size + c])
            if given:
                ax.text(c, r, str(given), ha="center", va="center", fontsize=11,
                        fontweight="bold", color="black")
            else:
                value = int(ranks[r, c])
                dark = value > 0.6 * np.nanmax(ranks)
                ax.text(c, r, str(value), ha="center", va="center", fontsize=8,
                        color="white" if dark else "#123")
    for k in range(size + 1):
        width = 2.0 if k % order == 0 else 0.4
        ax.axhline(k - 0.5, color="black", linewidth=width)
        ax.axvline(k - 0.5, color="black", linewidth=width)
    ax.set_xticks([])
    ax.set_yticks([])
    lower = " (lower bound)" if pred.capped_runs else ""
    ax.set_title(f"Predicted fill order: median of {pred.basis_runs} SA runs\n"
                 f"SA difficulty {pred.median_steps:,.0f} steps{lower}", fontsize=9)
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label="rank (1 = filled first)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
