"""The lane pool: a free process takes the most urgent task waiting."""

from __future__ import annotations

import os
import time
from concurrent.futures.process import BrokenProcessPool

import pytest

from fairgrid.daemon.testing import killed_while_sending_result
from fairgrid.daemon.testing import wait_for_file as hold
from fairgrid.daemon.work.pool import Lane, LanePool

# tasks run in spawned processes: they must be importable there (not from tests/)
echo, boom = str, int


def wait_until(predicate, timeout=300.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def pool():
    p = LanePool(1)
    yield p
    p.shutdown()


def test_the_most_urgent_lane_goes_first_and_one_lane_keeps_its_order(pool, tmp_path):
    gate = tmp_path / "open"
    blocker = pool.submit(Lane.LARGE_PUZZLES, hold, str(gate))
    wait_until(blocker.running)  # the only process is busy from here
    done = []
    futures = {name: pool.lane(lane).submit(echo, name) for name, lane in [
        ("large-1", Lane.LARGE_PUZZLES), ("large-2", Lane.LARGE_PUZZLES),
        ("nightly", Lane.NIGHTLY), ("small", Lane.SMALL_PUZZLES),
        ("score", Lane.SCORING), ("large-3", Lane.LARGE_PUZZLES)]}
    for fut in futures.values():
        fut.add_done_callback(lambda f: done.append(f.result()))
    assert pool.waiting()[Lane.LARGE_PUZZLES] == 3 and pool.waiting()[Lane.SCORING] == 1
    futures["large-2"].cancel()  # a queued task can still be cancelled
    gate.touch()
    assert blocker.result(timeout=300) == "held"
    for name, fut in futures.items():
        if name != "large-2":
            assert fut.result(timeout=300) == name
    assert futures["large-2"].cancelled()
    assert done == ["score", "small", "nightly", "large-1", "large-3"]


def test_errors_reach_the_caller_and_shutdown_cancels_what_waits(tmp_path):
    pool = LanePool(1)
    with pytest.raises(ValueError, match="boom"):
        pool.lane(Lane.SCORING).submit(boom, "boom").result(timeout=300)
    blocker = pool.submit(Lane.NIGHTLY, hold, str(tmp_path / "never"))
    wait_until(blocker.running)
    queued = pool.submit(Lane.SCORING, echo, 1)
    pool.shutdown()
    assert queued.cancelled()
    with pytest.raises(RuntimeError, match="shutdown"):
        pool.submit(Lane.SCORING, echo, 2)


def test_a_process_that_dies_fails_what_was_in_flight_and_the_pool_is_renewed(tmp_path):
    pool = LanePool(2)
    try:
        gate = tmp_path / "open"
        beside = pool.submit(Lane.LARGE_PUZZLES, hold, str(gate))
        wait_until(beside.running)
        # os._exit stands for the OOM killer: the process ends without a word to the pool
        dying = pool.submit(Lane.SCORING, os._exit, 3)
        time.sleep(1.0)
        gate.write_text("")
        with pytest.raises(BrokenProcessPool):
            dying.result(timeout=300)
        # what ran beside it ends either way: done, or failed with the pool (CPython
        # fails what it had not yet heard back from)
        assert beside.exception(timeout=300) is None or isinstance(beside.exception(),
                                                                   BrokenProcessPool)
        # a ProcessPoolExecutor refuses everything once broken; the lane pool goes on
        assert pool.submit(Lane.SCORING, echo, "after").result(timeout=300) == "after"
        assert pool.lane(Lane.NIGHTLY).submit(echo, "n").result(timeout=300) == "n"
        assert pool.renewed == 1
        # a task that raises the class itself is its own failure: the pool is kept
        raised = pool.submit(Lane.SCORING, exec, "from concurrent.futures.process import "
                             "BrokenProcessPool as B; raise B('not a death')")
        with pytest.raises(BrokenProcessPool, match="not a death"):
            raised.result(timeout=300)
        assert pool.submit(Lane.SCORING, echo, "kept").result(timeout=300) == "kept"
        assert pool.renewed == 1
    finally:
        pool.shutdown()


def test_a_process_killed_while_it_writes_its_result_does_not_stall_the_pool():
    """The executor's manager thread waits for the rest of that result for good and
    never sees the death: the pool notices the dead process itself, fails the task
    (BrokenProcessPool, which callers retry) and runs the next on a new pool."""
    from concurrent.futures import wait

    pool = LanePool(1)
    try:
        lane = pool.lane(Lane.SCORING)
        assert lane.submit(pow, 3, 2).result(timeout=120) == 9
        dying = lane.submit(killed_while_sending_result)
        after = lane.submit(pow, 4, 2)
        done, _ = wait([dying, after], timeout=120)
        assert dying in done, "the pool never noticed its process died: every task waits"
        assert isinstance(dying.exception(), BrokenProcessPool)
        assert after.result(timeout=120) == 16
        assert pool.renewed == 1
    finally:
        pool.shutdown()

