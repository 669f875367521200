"""The per-level honest nulls of several portals: each portal's own, and every portal's
together with no portal counting more than all the others."""

from __future__ import annotations

import numpy as np

from fairgrid.analytics.recalibration import pool_level_values


def _values(rng, n, centre):
    return list(rng.normal(centre, 0.3, n))


def test_a_portal_counts_no_more_than_every_other_portal_together():
    rng = np.random.default_rng(0)
    by_portal = {"big": {"3": {"pace_variation": _values(rng, 900, 2.0)}},
                 "a": {"3": {"pace_variation": _values(rng, 150, 0.5)}},
                 "b": {"3": {"pace_variation": _values(rng, 100, 0.5)},
                       "4": {"switch": _values(rng, 120, 1.0)}}}
    pooled = pool_level_values(by_portal)
    band = pooled["3"]["pace_variation"]
    # big keeps its first 250 values (as many as a and b together), a and b all theirs
    assert len(band) == 500
    assert band[:150] == by_portal["a"]["3"]["pace_variation"]
    assert band[250:] == by_portal["big"]["3"]["pace_variation"][:250]
    # a level's signal that one portal alone has counts whole
    assert pooled["4"]["switch"] == by_portal["b"]["4"]["switch"]
    alone = {"3": {k: list(v) for k, v in by_portal["big"]["3"].items()}}
    assert pool_level_values({"big": alone}) == alone   # one portal: as it was
