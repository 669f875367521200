"""The static metrics of a Nurikabe puzzle (Křivánek 2011, §4.2, Table 4.3, after
Babinčák 2010): properties of the clues alone, no solving.

Babinčák's definitions are not in the thesis; the thesis names the metrics and says of
the best one that its cells "lie in several circles surrounding cells with numbers with
radius of the number". Choices made here:

* ``n_islands``: the number of clues;
* ``island_area``: the sum of the clues (the white cells of the solution), and
  ``island_area_fraction`` the same over the number of cells;
* ``island_distance``: for every clue the Manhattan distance to the nearest other clue,
  averaged (0 for a single clue);
* ``multi_island_cells``: the cells without a clue within Manhattan distance ``k - 1``
  of at least two clues ``k`` — the "circle" of a clue read as the cells an island of
  that size could reach, walls ignored;
* ``cells``: rows × cols, the puzzle size the experiment correlates against.
"""

from __future__ import annotations

import numpy as np

from .model import NurikabePuzzle

STATIC_METRICS = ("cells", "n_islands", "island_area", "island_area_fraction",
                  "island_distance", "multi_island_cells")


def static_metrics(puzzle: NurikabePuzzle) -> dict[str, float]:
    """The static metrics of Table 4.3 (module docstring) as one dict of floats."""
    cells = puzzle.clue_cells
    k = puzzle.clues[cells].astype(np.int64)
    r, c = np.divmod(cells, puzzle.cols)
    if cells.size > 1:
        d = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
        np.fill_diagonal(d, np.iinfo(np.int64).max)
        distance = float(d.min(axis=1).mean())
    else:
        distance = 0.0
    rr, cc = np.divmod(np.arange(puzzle.ncells), puzzle.cols)
    reach = (np.abs(rr[None, :] - r[:, None]) + np.abs(cc[None, :] - c[:, None])
             <= (k - 1)[:, None])
    multi = (reach.sum(axis=0) >= 2) & (puzzle.clues == 0)
    return {"cells": float(puzzle.ncells), "n_islands": float(cells.size),
            "island_area": float(k.sum()),
            "island_area_fraction": float(k.sum()) / puzzle.ncells,
            "island_distance": distance, "multi_island_cells": float(multi.sum())}
