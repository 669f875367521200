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
