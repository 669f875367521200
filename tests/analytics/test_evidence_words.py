"""Evidence in words stays on its own scale, and signal names read as words."""

from __future__ import annotations

from fairgrid.analytics.evidence import NAMES, explain, signal_name


def test_agreement_is_never_said_to_pass_the_top_of_its_scale():
    # Nurikabe's null centres its order agreement past 1 (the scale's end)
    for name in ("order_sa", "order_consensus"):
        words = explain(name, 0.41, 1.02, None, {"filled": 30})
        assert "agrees at 1.00" in words and "1.02" not in words


def test_signal_names_in_words():
    assert all(signal_name(n) == NAMES[n] for n in NAMES)
    assert signal_name("unforced", "nurikabe") != "unforced"
    assert signal_name("something new") == "something new"


def test_an_even_pace_cleared_by_its_speed_says_so():
    import math

    from fairgrid.analytics.calibration import complete, judge
    from fairgrid.analytics.evidence import verdict_line

    null = complete({"pace_variation": (math.log(0.6), 0.2)})
    held = judge({"pace_variation": 0.21}, null, pace_allowance=6 ** 0.12)
    line = verdict_line(held, {})
    assert not held.flagged and "people solving as fast keep paces that even" in line
    assert "a second kind of evidence would have to agree" in line
    # at the expected pace the same evenness flags on its own
    assert verdict_line(judge({"pace_variation": 0.21}, null), {}).startswith(
        "Flagged for review")
