"""The writer's dedupe filter: never a false negative, few false positives, grows."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from fairgrid.daemon.store.keyfilter import KeyFilter


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=300), st.integers(1, 5000))
def test_every_added_key_is_maybe_seen(keys, capacity):
    f = KeyFilter(capacity=capacity)
    for lo in range(0, len(keys), 17):  # in batches, like the writer
        f.add(keys[lo:lo + 17])
    assert f.maybe(keys).all()
    assert len(f) == len(keys)
from ..helpers import query, record


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


def test_writer_dedupes_the_same_before_and_after_its_filter_is_built(tmp_path, monkeypatch):
    import threading

    from fairgrid.daemon.store import Store
    from fairgrid.daemon.store.dedupe import Dedupe

    path = str(tmp_path / "k.duckdb")
    store = Store(path)
    assert store.writer.submit(record("a", "h-a")).result(30).outcome == "accepted"
    store.close()

    gate = threading.Event()
    load = Dedupe._load

    def held(self, below):  # the filter is built only when the test says so
        gate.wait(30)
        load(self, below)

    monkeypatch.setattr(Dedupe, "_load", held)
    store = Store(path)
    try:
        def outcome(rec):
            return store.writer.submit(rec).result(30).outcome

        # filter not built: every key is checked in the database
        assert outcome(record("a", "h-a")) == "duplicate"        # stored before the start
        assert outcome(record("a", "h-x", "p-2")) == "conflict"  # same id, other content
        assert outcome(record("b", "h-b")) == "accepted"         # written meanwhile
        assert not store.writer.filter_ready()
        gate.set()
        deadline = __import__("time").monotonic() + 30
        while not store.writer.filter_ready():  # the switch happens on the next batch
            assert outcome(record("b", "h-b")) == "duplicate"
            assert __import__("time").monotonic() < deadline
        for sid, hook in (("a", "h-a"), ("b", "h-b")):
            assert outcome(record(sid, hook)) == "duplicate"
        # "c": another submission under a used webhook-id is refused, not dropped
        assert outcome(record("c", "h-b")) == "hook_conflict"
        assert outcome(record("c", "h-c")) == "accepted"
        assert query(store, "SELECT count(*) FROM submissions") == [(3,)]
    finally:
        store.close()
