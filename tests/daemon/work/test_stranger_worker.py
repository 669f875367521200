"""A worker running other fairgrid code that joins the cluster while a prediction is in
flight gets none of its runs: each task checks, on its worker, that the code there is
the daemon's, and refuses otherwise; the prediction then waits as for a lost cluster
(ComputeUnavailable), or ends as the local one does where the stranger took nothing.

The stranger's ``_run_batch`` adds one to every run's step count (a stand-in for "other
solver code"), so a merged result would not match the local prediction.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest

from fairgrid.daemon.work.compute import Cluster, ComputeUnavailable
from fairgrid.solvers import parse
from fairgrid.solvers.fill_order import predict_fill_order

from ...fixtures import SA_HARD

pytestmark = pytest.mark.slow

OTHER_CODE = """
import fairgrid.daemon.work.compute as compute
import fairgrid.solvers.fill_order as fo
compute.fingerprint = lambda: "0123456789abcdef"
if not hasattr(fo, "_ours_run_batch"):  # a preload may be imported twice
    fo._ours_run_batch = fo._run_batch
    def _run_batch(*args, **kwargs):
        lasts, settled, steps, solved = fo._ours_run_batch(*args, **kwargs)
        return lasts, settled, steps + 1, solved
    fo._run_batch = _run_batch
"""

RUNS, STEPS = 8, 400_000


def test_a_stranger_joining_mid_prediction_gets_none_of_its_runs(tmp_path):
    from distributed import Client, LocalCluster

    puzzle = parse(SA_HARD)
    local = predict_fill_order(puzzle, seed=5, runs=RUNS, max_steps=STEPS, workers=1)
    script = tmp_path / "other_code.py"
    script.write_text(OTHER_CODE)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=40) as cluster:
        remote = Cluster(cluster.scheduler_address)
        stranger = None
        watcher = Client(cluster.scheduler_address, set_as_default=False)
        try:
            lane = remote.lane(10).connect()  # the one worker is checked: ours
            ours = next(iter(watcher.run(os.getpid).values()))
            started, result = threading.Event(), {}

            def run():
                try:
                    result["pred"] = predict_fill_order(
                        puzzle, seed=5, runs=RUNS, max_steps=STEPS, executor=lane, batch=1,
                        progress=lambda n: started.set())
                except BaseException as exc:  # noqa: BLE001
                    result["error"] = exc
            thread = threading.Thread(target=run)
            thread.start()
            assert started.wait(120), "no run finished"
            # our worker pauses (a long run, say) while a stranger joins; then it goes on
            os.kill(ours, signal.SIGSTOP)
            try:
                stranger = subprocess.Popen(
                    [sys.executable, "-m", "distributed.cli.dask_worker",
                     cluster.scheduler_address, "--nthreads", "1", "--no-nanny",
                     "--preload", str(script)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                watcher.wait_for_workers(2, timeout=60)
            finally:
                os.kill(ours, signal.SIGCONT)
            thread.join(240)
            assert not thread.is_alive()
            if isinstance(result.get("error"), ComputeUnavailable):
                return  # refusing the stranger mid-analysis is a fix too
            assert "error" not in result, result.get("error")
            pred = result["pred"]
            assert np.array_equal(pred.steps, local.steps), \
                f"runs done by the stranger were merged: {pred.steps - local.steps}"
            assert np.array_equal(pred.rank, local.rank)
        finally:
            watcher.close()
            remote.close()
            if stranger is not None:
                stranger.terminate()
                stranger.wait(30)
