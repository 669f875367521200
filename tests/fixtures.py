"""Small puzzle fixtures (the tests never read ../shared)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from fairgrid.daemon.testing import EASY, EASY_SOLUTION  # noqa: F401 - one spelling, shared
from fairgrid.solvers.generator import random_puzzle, random_solution

def analysed(text: str, seed: int, runs: int, budget_s: float = 5):
    """(puzzle, solution, scoring inputs) of a 9×9 puzzle analysed as the daemon
    analyses it: its fill order predicted by ``runs`` SA runs from ``seed`` on one
    worker, its model built with the same seed."""
    from fairgrid.analytics.puzzle_model import build, scoring_inputs
    from fairgrid.solvers import parse
    from fairgrid.solvers.fill_order import predict_fill_order
    from fairgrid.solvers.propagation import solution_of

    puzzle = parse(text)
    solution = solution_of(puzzle)
    sol_text = "".join(str(d) for d in solution)
    pred = predict_fill_order(puzzle, seed=seed, runs=runs, budget_s=budget_s, workers=1)
    median = [None if np.isnan(v) else float(v) for v in pred.median_rank]
    return puzzle, solution, scoring_inputs(text, 3, sol_text, median,
                                            build(text, sol_text, median, seed))


# The foundation issue's test puzzles (Sudoku Explainer ratings in brackets; EASY, 1.2,
# is daemon.testing's).
MEDIUM = "000000907000420180000705026100904000050000040000507009920108000034059000507000000"  # 2.0
SA_HARD = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"  # 2.6
HUMAN_HARD = "800000000003600000070090200050007000000045700000100030001000068008500010090000400"  # 10.7

# Sixteen puzzles of the public-domain Sudoku Exchange puzzle bank (grantm/
# sudoku-exchange-puzzle-bank; Sudoku Explainer ratings 5.2-8.8), picked so that the
# technique model with the deduction ladder uses every technique of it on some of them.
DEDUCTION_HARD = (
    "001000000470003800903050074000109308000000000608502000810070906006300087000000500",
    "004720800000009200210004006045000008100050009800000530400200085001400000003096400",
    "080000310400010002200800000000607800050090070002304000000005006500040008097000040",
    "006090100010065090800700006080000500640000071001000080900006008030870060008040200",
    "800020007002000800006401900000763000008040200500000003009304700305000109070000020",
    "056100200000600009700035001001060072002901500560070100600420005200006000005008920",
    "070005030500021009008700100380506700020000050005204013003007500800650007050300080",
    "700009053590000010004500900800463700000702000002985004008004200030000045460200009",
    "000406000400830600530000100000600020007000900020007000005000071001025008000904000",
    "000036400012004306000080002000007030700010009030400000800070000307800620004650000",
    "010050080900307005002000600000030000600204001520609043030905060000000000070080090",
    "000100007700003002050004300605300000010706020000009103009600080200800006500001000",
    "908000102050070060007000900800403001000000000502080603200108006005206400090000020",
    "030090070006873900800000001700030009901704302000060000050000010607000403200000008",
    "002000800000703000000261000003526400000010000500304006709000108450000027208000604",
    "670000039004102500000000000009814600000020000001309400006205900300000002200040006",
)



@st.composite
def puzzles(draw, box_sizes=(2, 3), p_min=0.3, p_max=0.9):
    """A Lewis instance (random solution, cells kept with probability p) of a given box size."""
    box_size = draw(st.sampled_from(box_sizes))
    p = draw(st.floats(p_min, p_max))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return random_puzzle(box_size, p, rng=np.random.default_rng(seed))


@st.composite
def solutions(draw, box_sizes=(2, 3, 4)):
    box_size = draw(st.sampled_from(box_sizes))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    return box_size, random_solution(box_size, rng=np.random.default_rng(seed))


@st.composite
def unique_puzzles(draw, box_sizes=(2, 3)):
    """A puzzle with exactly one solution (cells removed while it stays unique), and it."""
    from fairgrid.solvers.generator import tournament_puzzle
    box_size = draw(st.sampled_from(box_sizes))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    min_givens = draw(st.integers(0, box_size ** 4 // 2))
    return tournament_puzzle(box_size, rng=np.random.default_rng(seed), min_givens=min_givens)

# A 16x16 puzzle with 105 givens: the counter proves it unique in milliseconds, the
# thesis' fixed-order brute force does not solve it in 50 M steps.
SIXTEEN = (".9725.8..4CFG1DBF.6.B1D.8.3529.....GF..47.....8..3....72..........E17A...9.D3F....."
           "3D..9E...CA27.A.C.......69.GD.BG9......A......E...2.6.7......3.5.......E.6..CC2F.."
           "....8.37GA....7.4..F62...B1.......B3..4.D.....A4635C.7.........G...1.8.F7.2E81.2."
           "...A.G5..4")

# an 8x8 Nurikabe with one solution (generated, seed 5), for the daemon's end-to-end tests
NURIKABE_8 = "8x8:.1...3....2......1.....1..1.2...1.....1..3..1......1.1.1........"
