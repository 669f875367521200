"""The puzzle tools with ``--type nurikabe`` (subprocesses, as a user runs them)."""

from __future__ import annotations

import json

from fairgrid.solvers.nurikabe import check, parse_nurikabe, parse_solution
from ..helpers import assert_clean_usage_error, run_cli


SMALL = "4x5:.2......2......1.1.."  # unique; the propagation model solves it alone
TWO = "2x2:2..."                    # two solutions: the island bends either way


def test_solve_each_method_gives_a_solution_that_keeps_the_rules():
    puzzle = parse_nurikabe(SMALL)
    for method in ("sa", "bf", "hs"):
        proc = run_cli("solve", "--type", "nurikabe", "--method", method, SMALL, "--json")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["solved"] and doc["method"] == method
        assert check(puzzle, parse_solution(doc["solution"])) == []
    again = run_cli("solve", "--type", "nurikabe", SMALL, "--json", "--seed", "0")
    assert json.loads(again.stdout)["steps"] == json.loads(
        run_cli("solve", "--type", "nurikabe", SMALL, "--json").stdout)["steps"]
    text = run_cli("solve", "--type", "nurikabe", SMALL).stdout
    assert "solved: True" in text and "#" in text


def test_count_says_unique_or_not_with_the_exit_status(tmp_path):
    assert run_cli("count", "--type", "nurikabe", SMALL).returncode == 0
    proc = run_cli("count", "--type", "nurikabe", TWO, "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["solutions"] == 2
    file = tmp_path / "p.txt"
    file.write_text(f"# a bank\njanko-x {SMALL}\n")
    assert "1 solution (unique)" in run_cli("count", "--type", "nurikabe", str(file)).stdout


def test_rate_predict_order_and_generate():
    doc = json.loads(run_cli("rate", "--type", "nurikabe", SMALL, "--json").stdout)
    assert doc["type"] == "nurikabe" and doc["level"] is None
    assert doc["metrics"]["prop_hints"] == 0 and doc["metrics"]["n_islands"] == 4
    # the prior: 3 s for each of the 16 cells without a clue, no stall
    assert doc["expected_time_s"] == 48.0
    order = json.loads(run_cli("predict-order", "--type", "nurikabe", SMALL, "--json").stdout)
    ranks = [r for r in order["rank"] if r is not None]
    assert sorted(ranks) == list(range(1, 17)) and order["hints"] == 0
    made = run_cli("generate", "--type", "nurikabe", "--rows", "5", "--cols", "6", "--count",
               "2", "--seed", "4").stdout.split()
    assert len(made) == 2 and all(m.startswith("5x6:") for m in made)
    assert made == run_cli("generate", "--type", "nurikabe", "--rows", "5", "--cols", "6",
                       "--count", "2", "--seed", "4").stdout.split()
    for text in made:
        assert run_cli("count", "--type", "nurikabe", text).returncode == 0


def test_bad_nurikabe_input_is_one_line_and_exit_2(tmp_path):
    assert_clean_usage_error(run_cli("solve", "--type", "nurikabe", "3x3:1..."), "9 cells")
    assert_clean_usage_error(run_cli("rate", "--type", "nurikabe", TWO), "unique")
    assert_clean_usage_error(run_cli("count", "--type", "nurikabe", "3x3:1.?......"))
    empty = tmp_path / "none.txt"
    empty.write_text("# nothing here\n")
    assert_clean_usage_error(run_cli("count", "--type", "nurikabe", str(empty)), "no Nurikabe")
    assert_clean_usage_error(run_cli("solve", "--method", "hs", "." * 81), "Nurikabe")
