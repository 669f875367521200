"""Nurikabe: expected solve time before any human data (pure).

No public per-puzzle human times exist for Nurikabe (sudoku.org.uk's have no Nurikabe
twin), so nothing here is fitted. The prior: a person decides each cell without a clue in
about :data:`SECONDS_PER_CELL`, and each stall of the human-like propagation model, where
the model has to be shown a cell, costs about :data:`SECONDS_PER_STALL` of harder
reasoning. Its spread :data:`PRIOR_SD_LOG` is
wide on purpose (a factor of e either way is one sd): a portal's nightly job replaces it
with difficulties fitted to its own players, as it does for Sudoku.
"""

from __future__ import annotations

import math
from typing import Mapping

SECONDS_PER_CELL = 3.0
SECONDS_PER_STALL = 30.0
PRIOR_SD_LOG = 1.0


def expected_log_time(metrics: Mapping[str, float]) -> float:
    """Prior expected log solve time (seconds) from ``rate_nurikabe``'s metrics."""
    free = float(metrics["cells"]) - float(metrics["n_islands"])  # every clue is a cell
    seconds = SECONDS_PER_CELL * max(free, 1.0) + SECONDS_PER_STALL * float(metrics["prop_hints"])
    return math.log(seconds)
