"""Puzzle analysis on a Dask cluster (``compute.scheduler``), behind the executor
interface the daemon uses for its local pool.

Unset, analysis runs on the local process pool and no other server is needed. Set to a
Dask scheduler's address, the SA runs of each prediction (one task per batch of runs,
seeded per run, so the prediction is the same whatever the backend, the number of
workers or the order tasks finish in) and the puzzle model go to the cluster; scoring
and the nightly fit stay local, where a result is milliseconds away.

Faults:
- **A worker dies mid-task.** Dask runs its tasks again elsewhere, and the prediction
  comes out the same.
- **The scheduler cannot be reached.** The daemon keeps ingesting and scoring; puzzles
  stay ``pending``. Their status says why, and ``fairgrid_compute_up`` is 0. They are
  analysed once the scheduler answers again.
- **A worker runs other code.** Results must come from the same solvers and analytics as
  the daemon's. Each worker's fingerprint of that code is checked before each analysis;
  a cluster with a stranger is refused with an error naming it. A stranger that joins
  during an analysis finds out at its first task, which refuses to run there: the
  analysis waits as for a lost cluster, and the next check names the worker.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
from concurrent.futures import CancelledError, Executor, Future
from importlib import resources

log = logging.getLogger("fairgrid.compute")

# Dask runs higher priorities first; the local pool's lanes, in the same order
PRIORITY = {1: 10, 3: 0}  # Lane.SMALL_PUZZLES, Lane.LARGE_PUZZLES


class ComputeUnavailable(RuntimeError):
    """The cluster cannot take work now (unreachable, or refused)."""


def fingerprint() -> str:
    """A digest of the code whose results the daemon stores: fairgrid.solvers and
    fairgrid.analytics (sources and shipped data). Runs on the workers too."""
    digest = hashlib.sha256()
    for package in ("fairgrid.solvers", "fairgrid.analytics"):
        root = resources.files(package)
        for entry in sorted(_files(root), key=lambda e: str(e)):
            digest.update(str(entry).rsplit(package.split(".")[-1], 1)[-1].encode())
            digest.update(entry.read_bytes())
    return digest.hexdigest()[:16]


def _files(root):
    for entry in root.iterdir():
        if entry.is_dir():
            if entry.name != "__pycache__":
                yield from _files(entry)
        elif entry.name.endswith((".py", ".json")):
            yield entry


class StrangerWorker(RuntimeError):
    """A task reached a worker whose code is not the daemon's (it joined after the
    check): its result would not be the daemon's."""


@functools.lru_cache(maxsize=1)
def _worker_fingerprint() -> str:
    return fingerprint()    # once per worker process: the code does not change under it


def _on_our_code(ours: str, fn, /, *args, **kwargs):
    """``fn(*args, **kwargs)``, run on a worker only where its code is ``ours``."""
    got = _worker_fingerprint()
    if got != ours:
        raise StrangerWorker(f"a worker with other fairgrid code (fingerprint {got}, the "
                             f"daemon's {ours}) took a task")
    return fn(*args, **kwargs)


def strangers(prints: dict[str, str], ours: str) -> list[str]:
    """Workers whose code fingerprint is not ``ours``."""
    return sorted(w for w, fp in prints.items() if fp != ours)


class Cluster:
    """A connection to a Dask scheduler, made on first use and made again after a loss."""

    def __init__(self, address: str, timeout_s: float = 10.0):
        self.address = address
        self._timeout_s = timeout_s
        self._client = None
        self._lock = threading.Lock()
        self.ours = fingerprint()   # the code fingerprint results must come from
        # (worker address, its scratch folder) -> its code's fingerprint: a worker
        # restarted on the same address (other code, maybe) has a new scratch folder
        self._checked: dict[tuple[str, str], str] = {}
        self.problem: str | None = None  # why it cannot take work now, for the status

    def client(self):
        """The connected client, checked; ComputeUnavailable when it cannot be had."""
        try:
            from distributed import Client
        except ImportError:     # the [cluster] extra is not installed here
            self._fail(f"compute.scheduler is {self.address}, but the 'distributed' package "
                       "is not installed: pip install 'fairgrid[cluster]'")
        with self._lock:
            failure = None
            try:
                # a client reconnecting after its scheduler went away is no connection
                if self._client is None or self._client.status != "running":
                    lost, self._client = self._client, None
                    if lost is not None:
                        try:
                            lost.close(timeout=2)
                        except Exception:  # noqa: BLE001 - closing a lost connection
                            pass
                    self._client = Client(self.address, timeout=self._timeout_s,
                                          set_as_default=False)
                # ask only workers not seen before: a worker busy in an SA run answers
                # only when the run ends (the kernel holds the GIL)
                info = self._client.scheduler_info().get("workers", {})
                key = {w: (w, str(i.get("local_directory"))) for w, i in info.items()}
                new = [w for w in info if key[w] not in self._checked]
                if new:
                    got = self._client.run(fingerprint, workers=new)
                    self._checked.update({key[w]: fp for w, fp in got.items() if w in key})
                prints = {w: self._checked[key[w]] for w in info if key[w] in self._checked}
            except (OSError, TimeoutError) as exc:
                failure = (f"the compute cluster at {self.address} cannot be reached "
                           f"({type(exc).__name__})")
            except Exception as exc:  # noqa: BLE001 - a scheduler gone mid-call
                failure = (f"the compute cluster at {self.address} failed: "
                           f"{type(exc).__name__}: {exc}"[:300])
            if failure is not None:
                # raised out here, the failed call's frames (a half-made Client among
                # them) are freed now, not at exit, where its __del__ waits out its
                # timeout and prints a traceback
                import gc
                gc.collect()
                self._fail(failure)
            if not prints:
                self._fail(f"the compute cluster at {self.address} has no workers")
            odd = strangers(prints, self.ours)
            if odd:
                self._fail(f"worker {odd[0]} of {self.address} runs other fairgrid code "
                           f"(fingerprint {prints[odd[0]]}, the daemon's {self.ours}): "
                           "install the daemon's version there")
            if self.problem is not None:
                log.info("compute cluster at %s is back", self.address)
            self.problem = None
            return self._client

    def _fail(self, message: str):
        raise self.unavailable(message)

    def unavailable(self, message: str) -> ComputeUnavailable:
        """Note why the cluster cannot take work (``problem``, which a puzzle's
        ``waiting_for`` shows until a connection succeeds again); the error to raise."""
        if message != self.problem:
            log.warning("%s; puzzles wait", message)
        self.problem = message
        return ComputeUnavailable(message)

    @staticmethod
    def lost(exc: BaseException) -> bool:
        """Whether a task failed because the cluster did (not because of the puzzle)."""
        from concurrent.futures import CancelledError

        names = {"KilledWorker", "CommClosedError", "FutureCancelledError", "StrangerWorker"}
        return isinstance(exc, (CancelledError, OSError, TimeoutError)) or \
            type(exc).__name__ in names

    def lane(self, priority: int) -> "ClusterLane":
        return ClusterLane(self, priority)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                try:
                    self._client.close(timeout=5)
                except Exception:  # noqa: BLE001 - closing a lost connection
                    pass
                self._client = None


class ClusterLane(Executor):
    """One kind of work on the cluster, as a ``concurrent.futures.Executor``."""

    def __init__(self, cluster: Cluster, priority: int):
        self.cluster = cluster
        self._priority = priority
        self._executor = None
        self.workers = 1

    def connect(self) -> "ClusterLane":
        """Connect (or check the connection) now; ComputeUnavailable when it fails."""
        client = self.cluster.client()
        try:
            self._executor = _priority_executor(client, self._priority)
            self.workers = max(1, sum(client.nthreads().values()))
        except Exception as exc:  # noqa: BLE001 - the scheduler gone since the check
            if not Cluster.lost(exc):
                raise
            message = (f"the compute cluster at {self.cluster.address} was lost "
                       f"({type(exc).__name__})")
        else:
            return self
        raise self.cluster.unavailable(message)

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self._executor is None:
            self.connect()
        inner = self._executor.submit(_on_our_code, self.cluster.ours, fn, *args, **kwargs)
        return _Checked(inner, self.cluster)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """The cluster is shared: a lane does not stop it."""


class _Checked(Future):
    """A cluster task's future, whose StrangerWorker is ComputeUnavailable (the cluster
    cannot take the work now, as for a lost one); cancelling it cancels the task."""

    def __init__(self, inner: Future, cluster: Cluster):
        super().__init__()
        self._inner = inner
        self.set_running_or_notify_cancel()
        inner.add_done_callback(lambda f: self._settle(f, cluster))

    def _settle(self, inner: Future, cluster: Cluster) -> None:
        if self.done():
            return
        if inner.cancelled():
            self.set_exception(CancelledError())
            return
        exc = inner.exception()
        if isinstance(exc, StrangerWorker):
            exc = cluster.unavailable(str(exc))
        if exc is not None:
            self.set_exception(exc)
        else:
            self.set_result(inner.result())

    def cancel(self) -> bool:
        return self._inner.cancel()


def _priority_executor(client, priority: int) -> Executor:
    """Dask's concurrent.futures executor, passing a task priority through (its own
    accepts no priority)."""
    from distributed.cfexecutor import ClientExecutor

    class PriorityExecutor(ClientExecutor):
        _allowed_kwargs = ClientExecutor._allowed_kwargs | {"priority"}

    return PriorityExecutor(client, pure=False, priority=priority)


def client_executor(address: str):
    """(client, executor) for a command line tool on a cluster; CliError-ready message
    in ComputeUnavailable when it cannot connect or the workers run other code."""
    cluster = Cluster(address)
    lane = cluster.lane(PRIORITY[1]).connect()
    return cluster, lane
