"""The writer's dedupe filter: never a false negative, few false positives, grows."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from fairgrid.daemon.keyfilter import KeyFilter


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=300), st.integers(1, 5000))
def test_every_added_key_is_maybe_seen(keys, capacity):
    f = KeyFilter(capacity=capacity)
    for lo in range(0, len(keys), 17):  # in batches, like the writer
        f.add(keys[lo:lo + 17])
    assert f.maybe(keys).all()
    assert len(f) == len(keys)


def test_layers_keep_the_false_positive_rate_low():
    f = KeyFilter(capacity=1000)  # forced to grow: 1000, 2000, 4000, ... keys per layer
    added = [f"s\x1fdemo\x1fs-{i}" for i in range(60_000)]
    for lo in range(0, len(added), 64):
        f.add(added[lo:lo + 64])
    assert len(f._layers) > 5 and f.maybe(added).all()
    others = [f"s\x1fdemo\x1fx-{i}" for i in range(100_000)]
    assert f.maybe(others).mean() < 2e-3  # ~1e-4 per layer
    assert not KeyFilter().maybe(others[:1000]).any()
    assert KeyFilter().maybe([]).shape == (0,)
