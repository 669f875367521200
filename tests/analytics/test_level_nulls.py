"""The per-level honest nulls of several portals: each portal's own, and every portal's
together with no portal counting more than all the others."""

from __future__ import annotations

import numpy as np

from fairgrid.analytics.recalibration import LEVEL_NULL_MIN, POOL_FLOOR, pool_level_values


def _values(rng, n, centre):
    return list(rng.normal(centre, 0.3, n))


def test_a_portal_counts_no_more_than_every_other_portal_together_beyond_a_floor():
    rng = np.random.default_rng(0)
    by_portal = {"big": {"3": {"pace_variation": _values(rng, 900, 2.0)}},
                 "a": {"3": {"pace_variation": _values(rng, 150, 0.5)}},
                 "b": {"3": {"pace_variation": _values(rng, 100, 0.5)},
                       "4": {"switch": _values(rng, 120, 1.0)}}}
    pooled = pool_level_values(by_portal, floor=0)
    band = pooled["3"]["pace_variation"]
    # big keeps its first 250 values (as many as a and b together), a and b all theirs
    assert len(band) == 500
    assert band[:150] == by_portal["a"]["3"]["pace_variation"]
    assert band[250:] == by_portal["big"]["3"]["pace_variation"][:250]
    # a level's signal that one portal alone has counts whole
    assert pooled["4"]["switch"] == by_portal["b"]["4"]["switch"]
    # beyond the floor: big keeps 400 of its 900
    assert len(pool_level_values(by_portal, floor=400)["3"]["pace_variation"]) == 650
    alone = {"3": {k: list(v) for k, v in by_portal["big"]["3"].items()}}
    assert pool_level_values({"big": alone}) == alone   # one portal: as it was


def test_one_value_of_another_portal_does_not_cut_a_level_below_a_null():
    rng = np.random.default_rng(2)
    by_portal = {"demo": {"1": {"switch": _values(rng, 1300, 1.0)}},
                 "rogue": {"1": {"switch": _values(rng, 1, 1.0)}}}
    band = pool_level_values(by_portal)["1"]["switch"]
    assert len(band) == 1 + POOL_FLOOR and len(band) >= LEVEL_NULL_MIN


def test_a_small_portal_does_not_become_half_of_every_portals_null():
    """A big portal's 2,000 values of a level's signal and a small (or hostile)
    portal's 100 of its own far from them: pooled whole, the small portal is 5 % of the
    null every portal without its own is judged by; capping the big one at as many as
    the others together makes the small portal's 100 half of it, and the null's centre
    moves half-way to them."""
    from fairgrid.analytics.recalibration import fit_level_nulls

    rng = np.random.default_rng(1)
    by_portal = {"big": {"3": {"pace_variation": _values(rng, 2000, 0.0)}},
                 "small": {"3": {"pace_variation": _values(rng, 100, 3.0)}}}
    pooled = pool_level_values(by_portal)
    share = sum(v >= 1.5 for v in pooled["3"]["pace_variation"]) / len(
        pooled["3"]["pace_variation"])
    assert share < 0.2, f"the small portal's 100 values are {share:.0%} of the pooled null"
    centre = fit_level_nulls(pooled)["3"]["pace_variation"][0]
    assert centre < 0.5, f"the pooled null's centre moved to {centre:.2f} (big's: 0)"
