"""The Sudoku model: geometry invariants, parsing, formatting, errors, checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from fairgrid.solvers import (Puzzle, PuzzleError, candidates, format_grid, format_line,
                              format_numbers, geometry, is_valid_solution, load_puzzle,
                              parse, solves)
from fairgrid.solvers.generator import root_solution

from ..fixtures import EASY, EASY_SOLUTION, SA_HARD, puzzles, solutions


@pytest.mark.parametrize("box_size", [2, 3, 4, 5])
def test_geometry_invariants(box_size):
    geo = geometry(box_size)
    size = box_size * box_size
    assert geo.ncells == size ** 2
    assert geo.units.shape == (3 * size, size)
    # every cell is in exactly 3 units, each unit has distinct cells
    counts = np.bincount(geo.units.ravel(), minlength=geo.ncells)
    assert (counts == 3).all()
    # peers: 20 for 9x9; symmetric; never the cell itself
    assert geo.peers.shape[1] == 3 * (size - 1) - 2 * (box_size - 1)
    for c in (0, geo.ncells // 2, geo.ncells - 1):
        assert c not in geo.peers[c]
        for p in geo.peers[c]:
            assert c in geo.peers[p]


def test_nine_by_nine_has_twenty_peers_and_27_units():
    geo = geometry(3)
    assert geo.peers.shape == (81, 20) and geo.units.shape == (27, 9)
    assert list(geo.units[18]) == [0, 1, 2, 9, 10, 11, 18, 19, 20]  # block 1
    assert geo.cell_name(80) == "r9c9" and geo.unit_name(19) == "block 2"


def test_parse_line_with_dots_and_zeros():
    a = parse(EASY)
    b = parse(EASY.replace("0", "."))
    assert a == b and a.box_size == 3
    assert a.givens[2] == 3 and a.givens[0] == 0
    assert format_line(a.givens) == EASY.replace("0", ".")


def test_the_box_size_still_answers_to_order_its_name_before():
    from fairgrid.solvers.techniques import Board

    puzzle = parse(EASY)
    board = Board.of(puzzle)
    assert puzzle.order == puzzle.geometry.order == board.order == puzzle.box_size == 3
    for old in (puzzle, puzzle.geometry, board):
        with pytest.raises(AttributeError):
            old.order = 4  # read-only: the box size is set once, under its name


def test_parse_grid_with_separators():
    text = format_grid(parse(SA_HARD).givens)
    assert "|" in text and "-+-" in text
    assert parse(text) == parse(SA_HARD)
    messy = "\n".join("  " + line.replace(" ", "  ") + "  " for line in text.splitlines())
    assert parse("\n" + messy + "\n\n") == parse(SA_HARD)


@pytest.mark.parametrize("box_size", [2, 4, 5])
def test_big_and_small_box_sizes_round_trip_in_every_format(box_size):
    sol = root_solution(box_size)
    puzzle = Puzzle(box_size, np.where(np.arange(sol.size) % 3 == 0, sol, 0))
    for text in (format_line(puzzle.givens), format_grid(puzzle.givens),
                 format_numbers(puzzle.givens)):
        assert parse(text) == puzzle


def test_sixteen_by_sixteen_letters_are_case_insensitive():
    line = format_line(root_solution(4))
    assert "G" in line
    assert parse(line.lower()) == parse(line)


def test_whitespace_separated_numbers():
    sol = root_solution(4)
    text = "\n".join(" ".join(str(int(d)) for d in sol[r * 16:(r + 1) * 16]) for r in range(16))
    assert parse(text).givens.tolist() == sol.tolist()


def test_wrong_length_names_the_count():
    with pytest.raises(PuzzleError, match="found 80"):
        parse(EASY[:-1])
    with pytest.raises(PuzzleError, match="expected 16, 81, 256 or 625 cells, found 3"):
        parse("1,2,3")


def test_illegal_character_names_character_and_position():
    bad = EASY[:10] + "x" + EASY[11:]
    with pytest.raises(PuzzleError, match=r"illegal character 'x' at position 11 \(cell 10\)"):
        parse(bad)
    with pytest.raises(PuzzleError, match=r"'A' at line 2, column 1 \(cell 9\)"):
        parse(EASY[:9] + "\n" + "A" + EASY[10:18] + "\n" + EASY[18:])


def test_digit_too_big_for_order_is_illegal():
    with pytest.raises(PuzzleError, match=r"illegal character '5'.*1-4"):
        parse("5" + "." * 15)
    with pytest.raises(PuzzleError, match=r"illegal value '17' at cell 0"):
        parse(",".join(["17"] + ["0"] * 255))


def test_clashing_givens_name_both_cells_and_the_unit():
    clash = "11" + "." * 79
    with pytest.raises(PuzzleError, match=r"cells 0 \(r1c1\) and 1 \(r1c2\) both hold 1 in row 1"):
        parse(clash)
    col = "2" + "." * 8 + "2" + "." * 71
    with pytest.raises(PuzzleError, match=r"cells 0 \(r1c1\) and 9 \(r2c1\) both hold 2 in column 1"):
        parse(col)
    blk = "3" + "." * 9 + "3" + "." * 70
    with pytest.raises(PuzzleError, match=r"cells 0 \(r1c1\) and 10 \(r2c2\) .* in block 1"):
        parse(blk)


def test_empty_and_non_text_input():
    with pytest.raises(PuzzleError, match="empty"):
        parse("   \n")
    with pytest.raises(PuzzleError, match="must be text"):
        parse(None)  # type: ignore[arg-type]


def test_from_grid_rejects_out_of_range_digits():
    with pytest.raises(PuzzleError, match=r"cell 3 \(r1c4\) holds 10"):
        Puzzle.from_grid([0, 0, 0, 10] + [0] * 77)


def test_puzzle_is_immutable_and_hashable():
    p = parse(EASY)
    with pytest.raises(ValueError):
        p.givens[0] = 1
    assert hash(p) == hash(parse(EASY)) and p != parse(SA_HARD)


def test_candidates_follow_the_rules():
    p = parse(EASY)
    cands = candidates(p.givens)
    assert cands.shape == (81, 10) and not cands[:, 0].any()
    assert not cands[p.givens != 0].any()
    # cell 0: row 1 has 3,2,6; column 1 has 9,7,8; block 1 has 3,9,1 -> 4, 5
    assert np.flatnonzero(cands[0]).tolist() == [4, 5]
    sol = np.array([int(ch) for ch in EASY_SOLUTION])
    assert all(cands[c, sol[c]] for c in p.empty_cells)


def test_solution_checks():
    p = parse(EASY)
    sol = np.array([int(ch) for ch in EASY_SOLUTION])
    assert is_valid_solution(sol) and solves(p, sol)
    swapped = sol.copy()
    swapped[[0, 1]] = swapped[[1, 0]]  # breaks the columns
    assert not is_valid_solution(swapped)
    other = sol.copy()
    other[sol == 1], other[sol == 2] = 2, 1  # relabelled: valid, but breaks the givens
    assert is_valid_solution(other) and not solves(p, other)
    assert not is_valid_solution(np.zeros(81, int)) and not is_valid_solution([1, 2, 3])


@given(puzzles(box_sizes=(2, 3, 4, 5), p_min=0.0, p_max=1.0))
def test_every_format_round_trips(puzzle):
    for text in (format_line(puzzle.givens), format_grid(puzzle.givens),
                 format_numbers(puzzle.givens), str(puzzle)):
        assert parse(text) == puzzle


@given(solutions())
def test_generated_solutions_are_valid(case):
    box_size, sol = case
    assert is_valid_solution(sol, box_size)


def test_load_puzzle_reads_files_and_names_missing_ones(tmp_path):
    f = tmp_path / "p.txt"
    f.write_text(format_grid(parse(EASY).givens))
    assert load_puzzle(str(f)) == parse(EASY)
    with pytest.raises(PuzzleError, match="no such file"):
        load_puzzle(str(tmp_path / "missing.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(PuzzleError, match="not UTF-8"):
        load_puzzle(str(bad))
    wrong = tmp_path / "wrong.txt"
    wrong.write_text(EASY[:40])
    with pytest.raises(PuzzleError, match=r"wrong.txt: expected .* found 40"):
        load_puzzle(str(wrong))


@pytest.mark.parametrize("first", ["\u00b2", "\u0663", "\uff13"])
def test_numbers_are_ascii_digits_only(first):
    """'²' passes str.isdigit() and int() refuses it; '٣' and '３' int() reads as 3: a
    puzzle the portal did not mean. Each is an illegal value, named."""
    with pytest.raises(PuzzleError, match="illegal value"):
        parse(",".join([first] + ["0"] * 80))
