"""The ``fairgrid`` console script, run as a real subprocess."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from fairgrid.solvers import format_grid, parse

from ...fixtures import EASY, EASY_SOLUTION, HUMAN_HARD, MEDIUM, SA_HARD
from ..helpers import assert_clean_usage_error, run_cli

FAIRGRID = shutil.which("fairgrid")


def test_solve_sa_prints_the_solution_and_figures():
    proc = run_cli("solve", EASY, "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert parse(proc.stdout.split("\n\n")[0]).givens.tolist() == [int(c) for c in EASY_SOLUTION]
    assert "solved: True" in proc.stdout and "steps:" in proc.stdout


@pytest.mark.parametrize("method", ["sa", "bf"])
def test_solve_json_is_reproducible(method):
    a = json.loads(run_cli("solve", EASY, "--method", method, "--seed", "5", "--json").stdout)
    b = json.loads(run_cli("solve", EASY, "--method", method, "--seed", "5", "--json").stdout)
    assert a == b and a["solved"] and a["solution"] == EASY_SOLUTION
    assert a["method"] == method and a["steps"] > 0


def test_solve_reads_a_grid_file(tmp_path):
    f = tmp_path / "puzzle.txt"
    f.write_text(format_grid(parse(EASY).givens) + "\n")
    proc = run_cli("solve", str(f), "--method", "bf", "--json")
    assert json.loads(proc.stdout)["solution"] == EASY_SOLUTION


def test_solve_that_hits_the_cap_exits_1_with_a_message():
    proc = run_cli("solve", SA_HARD, "--max-steps", "1000", "--json")
    out = json.loads(proc.stdout)
    assert proc.returncode == 1 and not out["solved"] and "step cap" in out["message"]


def test_predict_order_json():
    proc = run_cli("predict-order", EASY, "--runs", "8", "--seed", "2", "--workers", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["runs"] == 8 and out["seed"] == 2 and out["capped_runs"] == 0
    ranks = [r for row in out["rank"] for r in row if r is not None]
    assert sorted(ranks) == list(range(1, 50))  # EASY has 49 free cells
    one = json.loads(run_cli("predict-order", EASY, "--runs", "8", "--seed", "2", "--jobs", "1",
                         "--json").stdout)  # --jobs: --workers' old name
    assert one["rank"] == out["rank"]


def test_predict_order_grid_output():
    proc = run_cli("predict-order", EASY, "--runs", "4", "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    assert "[3]" in proc.stdout and "runs: 4" in proc.stdout and "SA difficulty" in proc.stdout


def test_predict_order_draws_a_heatmap(tmp_path):
    png = tmp_path / "order.png"
    proc = run_cli("predict-order", EASY, "--runs", "4", "--workers", "1", "--png", str(png))
    assert proc.returncode == 0, proc.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_predict_order_budget_sets_the_cap():
    proc = run_cli("predict-order", SA_HARD, "--runs", "4", "--budget", "0.002", "--workers", "1",
               "--json")
    out = json.loads(proc.stdout)
    assert out["max_steps"] == 20_000 and out["capped_runs"] == 4 and out["basis_runs"] == 4
    assert out["median_steps_is_lower_bound"] is True


def test_output_into_a_closed_pipe_is_not_an_error():
    cmd = FAIRGRID or f"{sys.executable} -m fairgrid.daemon.cli"
    proc = subprocess.run(f"{cmd} solve {EASY} | head -1", shell=True, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout.count("\n") == 1


def test_count():
    assert run_cli("count", EASY).stdout.strip() == "1 solution (unique)"
    proc = run_cli("count", "." * 81, "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["unique"] is False


@pytest.mark.parametrize("args,words", [
    (("solve", EASY[:80]), ("found 80",)),
    (("solve", EASY[:5] + "x" + EASY[6:]), ("illegal character 'x'", "position 6")),
    (("solve", "11" + "." * 79), ("givens clash", "r1c1", "r1c2")),
    (("predict-order", "no/such/file.txt"), ("no such file",)),
    (("predict-order", EASY, "--runs", "0"), ("--runs", "from 1 to")),
    (("predict-order", EASY, "--budget", "-1"), ("--budget", "positive")),
    (("predict-order", EASY, "--budget", "inf"), ("--budget", "positive")),
    (("solve", EASY, "--seed", "x"), ("--seed",)),
    (("solve", EASY, "--method", "magic"), ("--method",)),
    (("frobnicate",), ("invalid choice",)),
])
def test_bad_input_exits_2_with_one_line(args, words):
    assert_clean_usage_error(run_cli(*args), *words)


# ------------------------------------------------------------------------ rate, generate

def test_rate_one_puzzle_json_and_text():
    proc = run_cli("rate", MEDIUM, "--json", "--runs", "0.3", "--budget", "0.2")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["puzzle"] == MEDIUM.replace("0", ".")
    assert 1 <= doc["level"] <= 5 and doc["level_name"] and doc["expected_time_s"] > 0
    assert {"serate", "refutation_sum", "sa_steps", "backtrack_steps", "harmony_cost",
            "hill_iterations", "relaxation_count", "slis_level"} <= set(doc["metrics"])
    text = run_cli("rate", MEDIUM, "--runs", "0.3", "--budget", "0.2")
    assert text.returncode == 0 and "expected solve time" in text.stdout


def test_rate_quick_runs_only_what_the_expected_time_reads(tmp_path):
    bank = tmp_path / "bank.txt"
    bank.write_text(f"{MEDIUM}\n{HUMAN_HARD}\n")
    proc = run_cli("rate", str(bank), "--json", "--quick", "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    doc = lines[1]
    assert "sa_steps" not in doc["metrics"] and "tq_hardest" in doc["metrics"]
    assert doc["hardest_technique"] in ("forcing", "guess")
    assert sum(doc["techniques"].values()) > 0 and doc["techniques"]["forcing"] > 0
    assert doc["level"] == 5
    assert lines[0]["expected_time_s"] < lines[1]["expected_time_s"]
    # a quick rating does not depend on the puzzle's place in a file (nor does a full
    # one: test_rate_depends_on_the_puzzle_and_seed_not_on_its_place_in_a_file)
    alone = json.loads(run_cli("rate", MEDIUM, "--json", "--quick").stdout)
    assert alone["metrics"] == lines[0]["metrics"]
    assert alone["expected_time_s"] == lines[0]["expected_time_s"]
    text = run_cli("rate", HUMAN_HARD, "--quick").stdout
    assert f"hardest step: {doc['hardest_technique']}" in text and "tq_scan" in text


def test_rate_a_file_keeps_input_order_and_reports_bad_lines(tmp_path):
    bank = tmp_path / "bank.txt"
    bank.write_text(f"# a puzzle bank\nid1 {MEDIUM} x\nid2 {EASY} y\nid3 {'.' * 81} z\n")
    proc = run_cli("rate", str(bank), "--json", "--runs", "0.2", "--budget", "0.1",
               "--workers", "2")
    assert proc.returncode == 2
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [x["puzzle"] for x in lines] == [MEDIUM, EASY, "." * 81]
    assert "error" in lines[2] and lines[2]["line"] == 4
    assert "1 of 3 puzzles could not be rated (lines 4)" in proc.stderr
    easy, medium = lines[1], lines[0]
    assert easy["expected_time_s"] <= medium["expected_time_s"]


def test_generate_lewis_and_unique_puzzles():
    from fairgrid.solvers import parse
    from fairgrid.solvers.backtracking import count_solutions
    proc = run_cli("generate", "--box-size", "3", "--p", "0.4", "--count", "3", "--seed", "1")
    assert proc.returncode == 0
    lines = proc.stdout.split()
    assert len(lines) == 3 and all(len(x) == 81 for x in lines)
    assert run_cli("generate", "--order", "3", "--p", "0.4", "--count", "3",  # the old name
               "--seed", "1").stdout == proc.stdout
    proc = run_cli("generate", "--unique", "--count", "2", "--p", "0.3", "--seed", "2")
    for text in proc.stdout.split():
        assert count_solutions(parse(text)) == 1
    bad = run_cli("generate", "--p", "1.5")
    assert bad.returncode == 2 and "--p" in bad.stderr


def test_serve_runs_on_uvloop_unless_told_not_to():
    import asyncio

    import uvloop

    from fairgrid.daemon.cli.service import _event_loop

    for wanted, loop_type in ((True, uvloop.Loop), (False, asyncio.AbstractEventLoop)):
        loop = _event_loop(wanted)
        try:
            assert isinstance(loop, loop_type)
            assert wanted or not isinstance(loop, uvloop.Loop)
        finally:
            loop.close()


def test_report_of_evidence_stored_before_version_2_shows_1_based_orders(capsys):
    from fairgrid.daemon.cli.render import print_report

    grid = [[None] * 9 for _ in range(9)]
    old_actual = [row[:] for row in grid]
    old_actual[0][0], old_actual[0][1] = 0, 1          # 0-based, as stored then
    new_actual = [row[:] for row in grid]
    new_actual[0][0], new_actual[0][1] = 1, 2
    score = {"flagged": False, "anomaly": 0.5, "p_value": 0.3, "signals": [],
             "predicted_order": grid, "actual_order": old_actual,
             "timeline": [{"t_ms": 1000, "cell": 0}, {"t_ms": 2000, "cell": 1}],
             "givens": [0] * 81,
             "counts": {"filled": 2, "mistakes": 0, "erasures": 0, "overwrites": 0}}
    doc = {"portal": "demo", "submission_id": "s", "player_id": "p", "puzzle_id": "x",
           "status": "scored", "score": score}
    print_report(doc)
    old = capsys.readouterr().out
    print_report({**doc, "score": {**score, "actual_order": new_actual, "version": 2}})
    assert capsys.readouterr().out == old
    lines = old.splitlines()
    first_row = lines[next(i for i, x in enumerate(lines) if "predicted order" in x) + 1]
    assert first_row.split("    ")[-1].startswith(" 1  2  ·")


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_serve_says_where_it_listens_and_keeps_secrets_out_of_its_output(tmp_path, host):
    import os
    import socket
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "FAIRGRID_SERVER_PORT": str(port), "FAIRGRID_SERVER_HOST": host}
    env.pop("FAIRGRID_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-m", "fairgrid.daemon.cli", "serve"],
                            cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "listening on" in line:
                break
    finally:
        proc.terminate()
        rest = proc.communicate(timeout=60)[1]
    out = "".join(lines) + rest
    assert f"fairgrid: listening on http://{host}:{port}" in out
    # reachable from elsewhere without a metrics token: the operator is told
    assert ("/metrics is open to whoever reaches" in out) == (host == "0.0.0.0")
    secrets = (tmp_path / "fairgrid.secrets.toml").read_text()
    assert "whsec_" in secrets and "whsec_" not in out
    assert "fairgrid.secrets.toml" in out  # the path, for the operator to read


def test_rate_depends_on_the_puzzle_and_seed_not_on_its_place_in_a_file(tmp_path):
    alone = json.loads(run_cli("rate", MEDIUM, "--runs", "0.2", "--budget", "0.2", "--json",
                           "--workers", "1").stdout)
    bank = tmp_path / "bank.txt"
    bank.write_text(f"{EASY}\n{MEDIUM}\n")
    second = [json.loads(x) for x in run_cli("rate", str(bank), "--runs", "0.2", "--budget",
                                         "0.2", "--json", "--workers", "1").stdout.splitlines()]
    bank.write_text(f"{MEDIUM}\n{EASY}\n")
    first = [json.loads(x) for x in run_cli("rate", str(bank), "--runs", "0.2", "--budget",
                                        "0.2", "--json", "--jobs", "2").stdout.splitlines()]
    assert alone["metrics"] == second[1]["metrics"] == first[0]["metrics"]
    assert alone["expected_time_s"] == second[1]["expected_time_s"]


def test_rate_names_the_bad_line_of_a_file_and_takes_long_puzzle_text(tmp_path):
    bank = tmp_path / "bank.txt"
    bank.write_text(f"{EASY}\n{MEDIUM}\nthis line is garbage\n")
    assert_clean_usage_error(run_cli("rate", str(bank)), "line 3")
    # one grid over several lines, bands separated, is one puzzle (not a bad line)
    rows = [MEDIUM[9 * r:9 * r + 9] for r in range(9)]
    grid = tmp_path / "grid.txt"
    grid.write_text("\n".join(rows[:3] + ["---------"] + rows[3:6] + ["---------"]
                              + rows[6:]) + "\n")
    proc = run_cli("rate", str(grid), "--runs", "0.2", "--budget", "0.2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["puzzle"].replace(".", "0") == MEDIUM
    # text longer than a file name may be is puzzle text, not a file to open
    proc = run_cli("rate", "1" * 256)
    assert proc.returncode == 2 and "File name too long" not in proc.stderr
    assert "Traceback" not in proc.stderr


class _Recorder:
    """A stand-in for a daemon on another host: it accepts webhooks, says every solve is
    scored, and keeps each request's method, path and Authorization header."""

    def __init__(self):
        import http.server
        import threading

        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self, status, doc):
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                seen.append(("POST", self.path, self.headers.get("Authorization")))
                self._answer(202, {"status": "accepted"})

            def do_GET(self):
                seen.append(("GET", self.path, self.headers.get("Authorization")))
                self._answer(200, {"status": "scored", "score": {"flagged": False}})

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def test_simulate_sends_the_configs_token_only_to_the_configs_daemon(tmp_path):
    import os

    from ..helpers import SECRET_A

    other = _Recorder()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAIRGRID_")}
    cmd = [FAIRGRID] if FAIRGRID else [sys.executable, "-m", "fairgrid.daemon.cli"]

    def simulate(port, *args):
        cfg = tmp_path / "fairgrid.toml"
        cfg.write_text(f'[server]\nport = {port}\n[storage]\npath = "{tmp_path / "x.duckdb"}"\n'
                       f'[portals.demo]\nsecrets = ["{SECRET_A}"]\n'
                       '[auth]\norganiser_tokens = ["config-token"]\n')
        return subprocess.run([*cmd, "simulate", EASY, "--secret", SECRET_A, "--players", "1",
                               "--cheaters", "0", "--wait", "30", "--config", str(cfg),
                               *args], capture_output=True, text=True, timeout=300, env=env)
    try:
        # --url elsewhere: the solves go there, the config's token does not
        out = simulate(1, "--url", f"http://127.0.0.1:{other.port}")
        assert out.returncode == 0, out.stderr
        assert [m for m, _, _ in other.seen] == ["POST"]
        assert all(auth is None for _, _, auth in other.seen)
        assert "not waiting for the scores" in out.stderr and "--token" in out.stderr
        # with an explicit token it waits there
        other.seen.clear()
        out = simulate(1, "--url", f"http://127.0.0.1:{other.port}", "--token", "given")
        assert out.returncode == 0 and "flagged: honest 0 of 1" in out.stderr, out.stderr
        assert {auth for m, _, auth in other.seen if m == "GET"} == {"Bearer given"}
        # no --url: the config's own address, its port included, and its token
        other.seen.clear()
        out = simulate(other.port)
        assert out.returncode == 0, out.stderr
        assert other.seen[0][:2] == ("POST", "/v1/webhooks/solves")
        assert {auth for m, _, auth in other.seen if m == "GET"} == {"Bearer config-token"}
        assert "flagged: honest 0 of 1" in out.stderr
    finally:
        other.server.shutdown()
