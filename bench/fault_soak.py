"""Fault soak: kill the daemon during backups, nightly runs and scoring while one portal
sends ordinary solves and another hostile bodies; restart it on the same DuckDB file;
check that nothing acknowledged was lost, every ordinary solve was scored and every
backup restores.

    python bench/fault_soak.py [--cycles 8] [--seconds 90] [--seed 0]

A real ``fairgrid serve`` on a real DuckDB file, with two portals:

- **ordinary** sends simulated solves (honest players and cheaters,
  ``analytics.simulate``, as ``fairgrid simulate`` does) of two puzzles from two threads,
  ``--rate`` a second, each retried until 2xx like a real portal;
- **hostile** sends, ``--hostile-rate`` a second, the bodies of
  ``fairgrid.daemon.testing.HOSTILE`` (nesting past the 32-level bound in its ``client``
  block or in a move, bidi and control characters in ids, a year-1 ``started_at``, and
  bodies taken by design: nesting at the bound, a right-to-left script, a 10,000-move
  log), all correctly signed, and some valid solves of its own; each answer is compared
  with the one docs/openapi.yaml gives.

``--cycles`` cycles are spread over ``--seconds`` of sending. Each triggers a backup
(``POST /v1/backups``; the signal comes at a random moment of the copy, once its file
appears), a nightly run (``POST /v1/nightly-runs``; while the run's row says
``running``) or nothing more than the scoring load (after a random delay), then sends the
daemon SIGKILL (every third cycle of each kind SIGTERM, timed to the exit) and starts it
again.
After a SIGKILL during a backup, ``fairgrid restore`` must refuse the ``.partial`` file
left, and the restart must remove it. At the end the portals stop, the daemon catches
up (every acknowledged ordinary solve ``scored``, read through the API), takes one more
backup and stops; then the file and every backup made are checked, each backup by a
``fairgrid restore`` into a new file (exit 0, the rows the backup's answer named, every
solve acknowledged before the backup began).

Prints the report as JSON, then a short table; exits 1 when an invariant fails.
docs/reliability.md records the latest figures.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import orjson
from tqdm import tqdm

from _common import PUZZLES, machine
from fairgrid.daemon.testing import (CMD, HOSTILE, SECRET_A, SECRET_OTHER, call,
                                     check_portals, deliver, free_port, hostile_body,
                                     moves_recovered, outliving, solve_body, start,
                                     worker_pids, write_config)

ORDINARY, HOSTILE_PORTAL = "ordinary", "hostile"
ORDINARY_PUZZLES = ("easy", "medium")
PLAYERS = 24
ACTIONS = ("backup", "nightly", "scoring")


def simulator(seed: int):
    """make(puzzle name, behaviour, rng) -> moves of a simulated solve, as ``fairgrid
    simulate`` makes them (the calibrated expected time of each puzzle)."""
    from fairgrid.analytics.expected_time import load_default
    from fairgrid.analytics.simulate import simulate
    from fairgrid.solvers import load_puzzle
    from fairgrid.solvers.propagation import solution_of
    from fairgrid.solvers.rate import families_for, rate

    cal = load_default()
    made = {}
    for name in ORDINARY_PUZZLES:
        puzzle = load_puzzle(PUZZLES[name])
        metrics = rate(puzzle, rng=seed, only=families_for(cal.metrics_needed)).metrics
        made[name] = (puzzle, solution_of(puzzle), float(np.log(cal.expected_time_s(metrics))))

    def make(name: str, behaviour: str, rng) -> list[dict]:
        puzzle, solution, expected = made[name]
        return simulate(puzzle, solution, behaviour, rng=rng, expected_log_s=expected,
                        sd_log=cal.residual_sd).moves()
    return make


def hours_ago(hours: float) -> str:
    return (datetime.now(timezone.utc) - timedelta(hours=hours)).strftime("%Y-%m-%dT%H:%M:%SZ")


class Soak:
    """The daemon, the two portals and everything they saw."""

    def __init__(self, tmp: Path, seed: int, rate: float, hostile_rate: float):
        self.tmp, self.seed = tmp, seed
        self.rng = np.random.default_rng(seed)
        self.rate, self.hostile_rate = rate, hostile_rate
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.db, self.cfg, self.log = tmp / "soak.duckdb", tmp / "soak.toml", tmp / "daemon.log"
        self.backups = tmp / "backups"  # storage.backup_dir's default, beside the database
        write_config(self.cfg, self.port, self.db,
                     {ORDINARY: SECRET_A, HOSTILE_PORTAL: SECRET_OTHER})
        self.lock = threading.Lock()
        self.no_more = threading.Event()   # portals start no new submission
        self.give_up = threading.Event()   # portals stop retrying (only past the deadline)
        self.answers: Counter = Counter()  # "route status" of every answer
        self.server_errors: list = []      # 5xx other than 503: (route, status, body)
        self.no_retry_after = 0            # 503s without Retry-After
        self.acked = {ORDINARY: {}, HOSTILE_PORTAL: {}}  # sid -> status of the 2xx
        self.ordinary_refused: list = []   # (sid, status, body): an ordinary solve refused
        self.hostile: list = []            # (hostile body, sid, status, field)
        self.cycles: list = []
        self.stops: list = []              # (signal name, seconds to exit, exit status)
        self.outlived = 0                  # workers still running after the daemon died
        self.partials_refused, self.partials_taken, self.partials_left = 0, 0, 0
        self.backups_made: dict = {}       # path -> {"rows", "acked_before"}
        self.nightly_runs: list = []
        self.copy_s, self.nightly_s = 0.2, 2.0  # how long the last whole ones took
        self.proc = None

    # ----------------------------------------------------------------------- answers

    def note(self, route: str):
        def hear(status, headers, body=None):
            with self.lock:
                self.answers[f"{route} {status or 'no answer'}"] += 1
                if status is None:
                    return
                if status == 503 and "Retry-After" not in headers:
                    self.no_retry_after += 1
                elif status >= 500 and status != 503:
                    self.server_errors.append((route, status, body))
        return hear

    def api(self, method: str, path: str, body=None, token: str = "adm"):
        """(status, JSON) of an API call, its answer noted; OSError when none came."""
        status, doc, headers = call(self.base, method, path, body, token)
        self.note(re.sub(r"/[^/]*\d[^/]*$", "/{id}", path))(status, headers, doc)
        return status, doc

    def acked_now(self) -> dict[str, set[str]]:
        with self.lock:
            return {p: set(ids) for p, ids in self.acked.items()}

    # ----------------------------------------------------------------------- portals

    def ordinary(self, k: int, senders: int, make) -> None:
        """One of the ordinary portal's senders: simulated solves, each until 2xx."""
        rng = np.random.default_rng([self.seed, k])
        note = self.note("webhook")
        step, due, n = senders / self.rate, time.monotonic(), 0
        while not self.no_more.is_set():
            due = max(due + step, time.monotonic() - step)
            time.sleep(max(0.0, due - time.monotonic()))
            name = ORDINARY_PUZZLES[int(rng.integers(len(ORDINARY_PUZZLES)))]
            behaviour = "honest" if rng.random() < 0.8 else str(rng.choice(
                ("row", "random", "block", "careful", "partial", "steady", "assisted")))
            sid, n = f"a{k}-{n:05d}", n + 1
            body = solve_body(sid, portal=ORDINARY, puzzle_id=name, givens=PUZZLES[name],
                              moves=make(name, behaviour, rng), started_at=hours_ago(6),
                              tournament_id="t-ordinary",
                              player_id=f"a-p-{int(rng.integers(PLAYERS)):02d}")
            answer = deliver(self.base, json.dumps(body).encode(), SECRET_A, f"msg-{sid}",
                             self.give_up, note)
            if answer is None:
                return
            with self.lock:
                if answer[0] < 300:
                    self.acked[ORDINARY][sid] = answer[0]
                else:
                    self.ordinary_refused.append((sid, *answer))

    def hostile_portal(self) -> None:
        """The hostile portal: every body of HOSTILE in turn, shuffled, and valid solves."""
        rng = np.random.default_rng([self.seed, 99])
        note = self.note("webhook")
        names = [*HOSTILE, "valid", "valid", "valid"]
        step, due, n = 1 / self.hostile_rate, time.monotonic(), 0
        while not self.no_more.is_set():
            for name in rng.permutation(names):
                if self.no_more.is_set():
                    return
                due = max(due + step, time.monotonic() - step)
                time.sleep(max(0.0, due - time.monotonic()))
                sid, n = f"b-{n:05d}", n + 1
                raw = (json.dumps(solve_body(sid, portal=HOSTILE_PORTAL,
                                             started_at=hours_ago(6))).encode()
                       if name == "valid" else
                       hostile_body(name, sid, HOSTILE_PORTAL, hours_ago(6)))
                answer = deliver(self.base, raw, SECRET_OTHER, f"msg-{sid}", self.give_up,
                                 note)
                if answer is None:
                    return
                status, doc = answer
                with self.lock:
                    self.hostile.append((str(name), sid, status, (doc or {}).get("field")))
                    if status < 300:  # under the id the body holds (a hostile one, even)
                        self.acked[HOSTILE_PORTAL][orjson.loads(raw)["submission_id"]] = status

    # ------------------------------------------------------------------------ daemon

    def start(self) -> None:
        self.proc = start(self.cfg, self.base, timeout=120, log=self.log)

    def stop(self, sig: signal.Signals) -> float:
        """Send ``sig`` and wait for the exit; seconds it took. The pool's workers must
        not outlive the daemon."""
        workers = worker_pids(self.proc)
        t0 = time.perf_counter()
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        took = time.perf_counter() - t0
        self.stops.append((sig.name, round(took, 3), rc))
        self.outlived += len(outliving(workers))
        return took

    # ------------------------------------------------------------------------ cycles

    def cycle(self, action: str, sig: signal.Signals) -> dict:
        """One fault: ``action`` under way, then ``sig``, then a restart."""
        record = {"action": action, "signal": sig.name}
        if action == "backup":
            record.update(self.backup_cycle(sig))
        elif action == "nightly":
            record.update(self.nightly_cycle(sig))
        else:
            time.sleep(float(self.rng.uniform(0.5, 4.0)))  # the portals keep scoring busy
            self.stop(sig)
            self.start()
        self.cycles.append(record)
        return record

    def backup_cycle(self, sig: signal.Signals) -> dict:
        """A backup, stopped at a random moment of its copy (once a new file appears in
        the backup folder); every file it leaves under a backup's name is one of the
        run's backups, which must hold every solve acknowledged before it began."""
        before = self.acked_now()
        existing = self.backup_files()
        got: dict = {}

        def post():
            try:
                got["answer"] = self.api("POST", "/v1/backups", {})
            except OSError:
                got["answer"] = None
            got["ended"] = time.monotonic()

        thread = threading.Thread(target=post)
        thread.start()
        deadline = time.monotonic() + 120
        while (thread.is_alive() and time.monotonic() < deadline
               and not (set(self.backups.glob("fairgrid-*")) - existing)):
            time.sleep(0.002)
        copying = time.monotonic()
        if thread.is_alive():  # the copy is under way: stop it at a random moment
            time.sleep(float(self.rng.uniform(0, 1.2 * self.copy_s)))
        mid_copy = thread.is_alive()
        self.stop(sig)
        thread.join(60)
        left = sorted(self.backups.glob("*.partial"))
        if left:
            self.refuse_check(left[0])
        answer = got.get("answer")
        named = answer[1]["path"] if answer and answer[0] == 201 else None
        for path in self.backup_files() - existing:
            self.backups_made[str(path)] = {
                "rows": answer[1]["rows"] if str(path) == named else None,
                "acked_before": before}
        self.start()
        self.partials_left += len(list(self.backups.glob("*.partial*")))
        if named:
            self.copy_s = max(got["ended"] - copying, 0.01)
        return {"mid_copy": mid_copy, "answer": answer and answer[0],
                "partial_left_by_stop": len(left)}

    def backup_files(self) -> set[Path]:
        """The files in the backup folder under a backup's name."""
        return set(self.backups.glob("fairgrid-*.duckdb"))

    def refuse_check(self, partial: Path) -> None:
        """``fairgrid restore`` must refuse what a stopped backup left."""
        out = subprocess.run([*CMD, "restore", str(partial), "--to",
                              str(self.tmp / "from-partial.duckdb")],
                             capture_output=True, text=True)
        if out.returncode == 2 and not (self.tmp / "from-partial.duckdb").exists():
            self.partials_refused += 1
        else:
            self.partials_taken += 1

    def nightly_cycle(self, sig: signal.Signals) -> dict:
        status, doc = self.api("POST", "/v1/nightly-runs")
        if status != 202:
            self.stop(sig)
            self.start()
            return {"answer": status}
        run_id, began = doc["run_id"], time.monotonic()
        deadline = began + float(self.rng.uniform(0, 1.1 * self.nightly_s))
        seen = "running"
        while seen == "running" and time.monotonic() < deadline:
            time.sleep(0.02)
            status, doc = self.api("GET", f"/v1/nightly-runs/{run_id}")
            seen = doc["status"] if status == 200 else "vanished"
        if seen == "success":  # the next run is stopped within about as long
            self.nightly_s = time.monotonic() - began
        self.stop(sig)
        self.start()
        status, doc = self.api("GET", f"/v1/nightly-runs/{run_id}")
        after = doc["status"] if status == 200 else "vanished"
        self.nightly_runs.append({"run_id": run_id, "at_signal": seen, "after": after,
                                  "signal": sig.name})
        return {"run": run_id, "at_signal": seen, "after": after}

    # --------------------------------------------------------------------------- end

    def catch_up(self, timeout: float) -> dict:
        """Wait until every acknowledged ordinary solve is scored (through the API);
        what each one's status was in the end."""
        acked = self.acked_now()[ORDINARY]
        deadline = time.monotonic() + timeout
        while True:
            status = {}
            for k in range(PLAYERS):
                code, doc = self.api("GET", f"/v1/players/{ORDINARY}/a-p-{k:02d}", token="org")
                if code == 200:
                    status.update((s["submission_id"], s["status"]) for s in doc["submissions"])
            waiting = [sid for sid in acked if status.get(sid) not in ("scored", "unscorable")]
            if not waiting or time.monotonic() > deadline:
                return {sid: status.get(sid, "missing") for sid in acked}
            time.sleep(1.0)

    def last_backup(self) -> None:
        """A backup of the caught-up daemon, left to finish."""
        before = self.acked_now()
        status, doc = self.api("POST", "/v1/backups", {})
        if status == 201:
            self.backups_made[doc["path"]] = {"rows": doc["rows"], "acked_before": before}

    def restore_all(self) -> list[dict]:
        """Every backup file of the run through ``fairgrid restore`` into a new file."""
        from fairgrid.daemon.store.repository.ingest import stored_solves
        from fairgrid.daemon.store.repository.lifecycle import table_counts
        import duckdb

        out = []
        for k, path in enumerate(sorted(self.backups.glob("fairgrid-*.duckdb"))):
            target = self.tmp / "restored" / f"r{k}.duckdb"
            target.parent.mkdir(exist_ok=True)
            run = subprocess.run([*CMD, "restore", str(path), "--to", str(target)],
                                 capture_output=True, text=True)
            item = {"path": path.name, "exit": run.returncode,
                    "said": (run.stdout or run.stderr).strip()[-300:]}
            made = self.backups_made.get(str(path), {})
            if run.returncode == 0:
                try:
                    con = duckdb.connect(str(target), read_only=True)
                    try:
                        counts, held = table_counts(con), stored_solves(con)
                    finally:
                        con.close()
                except duckdb.Error as exc:  # restored, but not a fairgrid database
                    counts, held = {}, {}
                    item["unreadable"] = str(exc).splitlines()[0]
                item["submissions"] = counts.get("submissions")
                if made.get("rows") is not None:
                    item["rows_match"] = all(counts.get(t) == n for t, n in made["rows"].items())
                if "acked_before" in made:
                    item["missing_acked_before"] = sum(
                        1 for portal, ids in made["acked_before"].items() for sid in ids
                        if (portal, sid) not in held)
                target.unlink()
            item["known"] = "acked_before" in made
            out.append(item)
        return out


def run(args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="fairgrid-fault-soak-"))
    t0 = time.perf_counter()
    make = simulator(args.seed)
    soak = Soak(tmp, args.seed, args.rate, args.hostile_rate)
    soak.start()
    senders = [threading.Thread(target=soak.ordinary, args=(k, 2, make)) for k in range(2)]
    senders.append(threading.Thread(target=soak.hostile_portal))
    for t in senders:
        t.start()
    plan = [str(a) for _ in range(args.cycles // 3 + 1) for a in soak.rng.permutation(ACTIONS)]
    bar = tqdm(total=args.cycles, desc="fault cycles", unit="cycle", file=sys.stderr,
               disable=None)
    start = time.monotonic()
    try:
        for k in range(args.cycles):
            time.sleep(max(0.0, start + (k + 1) * args.seconds / (args.cycles + 1)
                           - time.monotonic()))
            action = str(plan[k])  # every third of each kind stopped with SIGTERM
            sig = signal.SIGTERM if plan[:k].count(action) % 3 == 2 else signal.SIGKILL
            done = soak.cycle(action, sig)
            bar.update()
            with soak.lock:
                bar.set_postfix_str(f"{done['action']} {sig.name}; ordinary "
                                    f"{len(soak.acked[ORDINARY]):,} acked, hostile "
                                    f"{len(soak.hostile):,} answered")
        time.sleep(max(0.0, start + args.seconds - time.monotonic()))
        soak.no_more.set()
        deadline = time.monotonic() + 300
        for t in senders:
            t.join(max(0.0, deadline - time.monotonic()))
        soak.give_up.set()
        for t in senders:
            t.join()
        bar.set_postfix_str("catching up")
        final = soak.catch_up(args.catch_up_s)
        soak.last_backup()
        soak.stop(signal.SIGTERM)
    finally:
        bar.close()
        soak.no_more.set()
        soak.give_up.set()
        if soak.proc is not None and soak.proc.poll() is None:
            soak.proc.kill()
            soak.proc.wait()
    return report(soak, final, time.perf_counter() - t0, args)


def report(soak: Soak, final: dict, seconds: float, args) -> dict:
    stored = check_portals(soak.db, soak.acked_now())
    restores = soak.restore_all()
    log = soak.log.read_text()
    a, b = (stored["portals"].get(p, {}) for p in (ORDINARY, HOSTILE_PORTAL))
    final_status = Counter(final.values())
    hostile = {}
    unexpected = []
    for name, sid, status, field in soak.hostile:
        want = HOSTILE.get(name, (202, None))
        ok = (status in (200, 202)) if want[0] == 202 else (status, field) == want
        hostile.setdefault(name, Counter())[f"{status} {field or ''}".strip()] += 1
        if not ok:
            unexpected.append((name, sid, status, field))
    runs = soak.nightly_runs
    killed = [r for r in runs if r["at_signal"] == "running"]
    terms = [s for s in soak.stops if s[0] == "SIGTERM"]
    rep = {
        "machine": machine(), "seed": args.seed, "seconds": round(seconds, 1),
        "cycles": Counter(f"{c['action']} {c['signal']}" for c in soak.cycles),
        "ordinary": {**a, "scored": final_status.get("scored", 0),
                     "unscorable": final_status.get("unscorable", 0),
                     "not_scored": sum(n for s, n in final_status.items()
                                       if s not in ("scored", "unscorable")),
                     "refused": len(soak.ordinary_refused)},
        "hostile": {**b, "sent": len(soak.hostile),
                    "refused": sum(1 for h in soak.hostile if h[2] >= 400),
                    "answers": {k: dict(v) for k, v in sorted(hostile.items())},
                    "unexpected": unexpected[:20], "unexpected_count": len(unexpected)},
        "half_written": stored["partial"], "orphan_moves": stored["orphan_moves"],
        "duplicate_keys": stored["duplicate_keys"],
        "moves_re_derived": moves_recovered(log),
        "backups": {
            "made": len(restores),
            "restorable": sum(1 for r in restores if r["exit"] == 0),
            "rows_match": sum(1 for r in restores if r.get("rows_match")),
            "answered": sum(1 for r in restores if "rows_match" in r),
            "missing_acked_before": sum(r.get("missing_acked_before", 0) for r in restores),
            "killed_mid_copy": sum(1 for c in soak.cycles if c.get("mid_copy")),
            "partials_refused_by_restore": soak.partials_refused,
            "partials_taken_by_restore": soak.partials_taken,
            "partials_left_after_restart": soak.partials_left,
            "partials_at_end": len(list(soak.backups.glob("*.partial*"))),
            "unaccounted": sum(1 for r in restores if not r["known"]),
            "unreadable_after_restore": sum(1 for r in restores if "unreadable" in r),
            "failed": [r for r in restores if r["exit"] != 0 or r.get("rows_match") is False
                       or r.get("missing_acked_before") or "unreadable" in r]},
        "nightly": {"runs": len(runs),
                    "succeeded": sum(1 for r in runs if r["after"] == "success"),
                    "abandoned": sum(1 for r in runs if r["after"] == "abandoned"),
                    "killed_while_running": len(killed),
                    "killed_not_abandoned": sum(1 for r in killed
                                                if r["after"] not in ("abandoned", "success")),
                    "failed": sum(1 for r in runs if r["after"] == "failed"),
                    "vanished": sum(1 for r in runs if r["after"] == "vanished")},
        "answers": dict(sorted(soak.answers.items())),
        "server_errors": len(soak.server_errors),
        "server_error_samples": soak.server_errors[:5],
        "503_without_retry_after": soak.no_retry_after,
        "sigterm_stops": len(terms),
        "clean_stop_max_s": max((s[1] for s in terms), default=None),
        "unclean_exits_on_sigterm": sum(1 for s in terms if s[2] != 0),
        "workers_outliving_daemon": soak.outlived,
        "log_errors": [line[:300] for line in log.splitlines() if " ERROR " in line][:10],
        "log_could_not_be_scored": log.count("could not be scored"),
        "cycle_log": soak.cycles,
        "data": str(soak.tmp),
    }
    rep["failures"] = failures(rep)
    return rep


def failures(r: dict) -> list[str]:
    """The invariants that did not hold."""
    a, b, bk, nt = r["ordinary"], r["hostile"], r["backups"], r["nightly"]
    checks = {
        "ordinary solves lost": a.get("lost", 0), "hostile solves lost": b.get("lost", 0),
        "duplicated": a.get("duplicated", 0) + b.get("duplicated", 0),
        "stored, never acknowledged": a.get("unacknowledged", 0) + b.get("unacknowledged", 0),
        "half-written": r["half_written"], "orphan moves": r["orphan_moves"],
        "repeated keys": r["duplicate_keys"],
        "ordinary solves not scored": a["acked"] - a["scored"] if "acked" in a else 1,
        "ordinary solves refused": a["refused"],
        "hostile answers not as documented": b["unexpected_count"],
        "hostile solves taken but unscorable": b.get("status", {}).get("unscorable", 0),
        "backups not restorable": bk["made"] - bk["restorable"],
        "backups unreadable once restored": bk["unreadable_after_restore"],
        "backups not as answered": bk["answered"] - bk["rows_match"],
        "backups no cycle made": bk["unaccounted"],
        "acknowledged solves missing from a later backup": bk["missing_acked_before"],
        "no backup made": int(bk["made"] == 0),
        ".partial taken by restore": bk["partials_taken_by_restore"],
        ".partial left after a restart": bk["partials_left_after_restart"] + bk["partials_at_end"],
        "killed nightly runs not abandoned": nt["killed_not_abandoned"],
        "nightly runs failed": nt["failed"], "nightly runs vanished": nt["vanished"],
        "5xx other than 503": r["server_errors"],
        "503 without Retry-After": r["503_without_retry_after"],
        "SIGTERM exits not clean": r["unclean_exits_on_sigterm"],
        "workers outliving the daemon": r["workers_outliving_daemon"],
        "errors in the daemon's log": len(r["log_errors"]),
    }
    return [name for name, n in checks.items() if n]


def table(r: dict) -> str:
    a, b, bk, nt = r["ordinary"], r["hostile"], r["backups"], r["nightly"]
    lines = [f"fault soak, seed {r['seed']}: "
             + ", ".join(f"{n} {k}" for k, n in sorted(r["cycles"].items()))
             + f"; {r['seconds']:.0f} s",
             f"{'portal':<9} {'acked':>7} {'stored':>7} {'lost':>5} {'dup':>4} "
             f"{'unacked':>8} {'scored':>7} {'unscorable':>10}"]
    for name, p in (("ordinary", a), ("hostile", b)):
        scored = p.get("scored", p.get("status", {}).get("scored", 0))
        unscorable = p.get("unscorable", p.get("status", {}).get("unscorable", 0))
        lines.append(f"{name:<9} {p.get('acked', 0):>7,} {p.get('stored', 0):>7,} "
                     f"{p.get('lost', 0):>5} {p.get('duplicated', 0):>4} "
                     f"{p.get('unacknowledged', 0):>8} {scored:>7,} {unscorable:>10}")
    lines += [
        f"half-written {r['half_written']}, orphan moves {r['orphan_moves']}; moves "
        f"re-derived at restarts: {r['moves_re_derived']}",
        f"hostile bodies: {b['sent']:,} sent, {b['refused']:,} refused, "
        f"{b['unexpected_count']} answered otherwise than documented",
        f"backups: {bk['made']} made, {bk['restorable']} restorable, {bk['rows_match']} of "
        f"{bk['answered']} answered hold the rows named and every solve acknowledged before "
        f"them; {bk['killed_mid_copy']} stopped mid-copy, {bk['partials_refused_by_restore']} "
        f".partial refused by restore, {bk['partials_left_after_restart']} left after a "
        f"restart",
        f"nightly runs: {nt['runs']}: {nt['succeeded']} succeeded, {nt['abandoned']} "
        f"abandoned ({nt['killed_while_running']} stopped while running), {nt['failed']} "
        f"failed, {nt['vanished']} vanished",
        f"5xx other than 503: {r['server_errors']}; 503 without Retry-After: "
        f"{r['503_without_retry_after']}; SIGTERM stops: {r['sigterm_stops']}, longest "
        f"{r['clean_stop_max_s']} s; workers outliving the daemon: "
        f"{r['workers_outliving_daemon']}",
        "PASS" if not r["failures"] else "FAIL: " + "; ".join(r["failures"])]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=8, help="faults (default 8)")
    ap.add_argument("--seconds", type=float, default=90,
                    help="how long the portals send (default 90)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rate", type=float, default=8,
                    help="ordinary solves a second (default 8)")
    ap.add_argument("--hostile-rate", type=float, default=4,
                    help="hostile portal's bodies a second (default 4)")
    ap.add_argument("--catch-up-s", type=float, default=600,
                    help="the longest wait for scoring to catch up at the end")
    args = ap.parse_args()
    rep = run(args)
    print(json.dumps(rep, indent=2, default=str))
    print(table(rep))
    return 1 if rep["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
