"""bench/players.py: the benchmark's player models write valid move logs with the
behaviour each model's docstring promises (quick samples on the test puzzles)."""

from __future__ import annotations


import numpy as np
import pytest
from scipy.stats import spearmanr

from fairgrid.analytics.fill_order import fill_order
from fairgrid.solvers import parse
from fairgrid.solvers.propagation import NOT_DEDUCIBLE, replay, solution_of
from fairgrid.solvers.techniques import WEIGHT, Board, solve_with_techniques

from ..daemon.helpers import bench_players
from ..fixtures import EASY, MEDIUM, SA_HARD

P = bench_players()
PUZZLES = {"easy": EASY, "medium": MEDIUM, "sa-hard": SA_HARD}
SOLUTIONS = {k: solution_of(parse(t)) for k, t in PUZZLES.items()}
MODELS = {**P.HONEST, **P.HIDING_CHEATS}


def _run(name, puzzle, seed, total_s=600.0, **kw):
    return MODELS[name](PUZZLES[puzzle], SOLUTIONS[puzzle], np.random.default_rng(seed),
                        total_s, **kw)


def _bare(puzzle, log):
    """Per placement in fill order: (cell, bare-board technique, singles on offer)."""
    givens, sol = parse(PUZZLES[puzzle]).givens, SOLUTIONS[puzzle]
    cells = fill_order(*log.arrays, givens, sol).cells
    tech, options, _ = replay(givens, 3, cells, sol)
    return cells, tech, options


# pencilmark takes seconds to rate the SA-hard puzzle: easy and medium cover that model
@pytest.mark.parametrize("name,puzzle", [(m, p) for m in sorted(MODELS) for p in PUZZLES
                                         if (m, p) != ("pencilmark", "sa-hard")])
def test_every_log_replays_to_the_solution(name, puzzle):
    givens = parse(PUZZLES[puzzle]).givens
    for seed in (1, 2):
        log = _run(name, puzzle, seed)
        value, _ = P.screen(PUZZLES[puzzle], *log.arrays)   # raises on a given or time going back
        assert np.array_equal(value, SOLUTIONS[puzzle])
        assert not (givens[log.cell] != 0).any()
        assert (np.diff(log.t_ms) >= 0).all() and log.t_ms[0] >= 0
        assert log.cheated.size == log.t_ms.size and not log.cheated[~log.placed].any()
        if name in P.HONEST:
            assert not log.cheated.any()
        elif name in ("partial", "assisted", "human_order_copier", "difficulty_copier"):
            assert log.cheated.any()   # (the stuck copier copies only where it stalls)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_seeded(name):
    a, b, c = (_run(name, "medium", s) for s in (5, 5, 6))
    for x, y in zip((a.t_ms, a.cell, a.digit, a.note, a.cheated),
                    (b.t_ms, b.cell, b.digit, b.note, b.cheated)):
        assert np.array_equal(x, y)
    assert not (np.array_equal(a.t_ms, c.t_ms) and np.array_equal(a.cell, c.cell))


def test_think_is_scaled_to_the_total_and_pauses_come_on_top():
    for seed in range(3):
        assert abs(_run("ladder", "medium", seed, total_s=900.0).t_ms[-1] - 900_000) <= 1
        for name in ("pencil_marker", "auto_notes", "sweeper"):
            assert _run(name, "medium", seed, total_s=900.0).t_ms[-1] >= 900_000 - 1


def test_screen_rules():
    cell = EASY.index("0")
    t = np.arange(7)
    c = np.full(7, cell)
    d = np.array([5, 7, 5, 3, 0, 4, 0])
    note = np.array([True, True, True, True, True, False, False])
    value, marks = P.screen(EASY, t, c, d, note)
    assert value[cell] == 0 and marks[cell] == 0     # toggled 5 twice, then cleared
    value, marks = P.screen(EASY, t[:6], c[:6], np.array([5, 7, 5, 3, 2, 4]), note[:6])
    assert value[cell] == 4 and marks[cell] == 1 << 6 | 1 << 2 | 1 << 1   # hidden, kept
    given = EASY.index("3")
    with pytest.raises(ValueError, match="given cell"):
        P.screen(EASY, [0], [given], [3], [True])
    with pytest.raises(ValueError, match="runs back"):
        P.screen(EASY, [5, 4], [cell, cell], [1, 2], [True, True])


def test_pencil_marker_notes_every_candidate_before_placing():
    for puzzle in ("easy", "sa-hard"):
        log = _run("pencil_marker", puzzle, 3)
        first = int(np.flatnonzero(log.placed)[0])
        _, marks = P.screen(PUZZLES[puzzle], *(a[:first] for a in log.arrays))
        assert marks == Board.of(parse(PUZZLES[puzzle])).cand
        assert log.note[:first].all() and log.t_ms[first - 1] > 30_000   # tapped, not instant


def test_pencil_marker_places_what_its_marks_show_before_a_bare_single():
    # the habit that fooled the old detector: a digit its own eliminations made a single,
    # placed while the bare board offered a single elsewhere
    unforced = []
    for puzzle in ("easy", "medium"):
        for seed in range(6):
            _, tech, options = _bare(puzzle, _run("pencil_marker", puzzle, seed, tidy=0.9))
            unforced.append(int(np.sum((tech == NOT_DEDUCIBLE) & (options > 0))))
    assert sum(u > 0 for u in unforced) >= 6
    # a player who never tidies with singles on offer places bare singles only here
    for seed in range(3):
        _, tech, _ = _bare("easy", _run("pencil_marker", "easy", seed, tidy=0.0))
        assert (tech != NOT_DEDUCIBLE).all()


def test_auto_notes_fills_marks_at_once_and_strikes_peers_at_each_placement():
    text = PUZZLES["medium"]
    log = _run("auto_notes", "medium", 4)
    assert np.sum(log.note & (log.t_ms == 0)) >= 100
    assert not log.placed[log.t_ms == 0].any()
    peers = Board.of(parse(text)).peers
    struck = 0
    for i in np.flatnonzero(log.placed):
        same = np.flatnonzero(log.t_ms == log.t_ms[i])
        end = int(same[-1]) + 1
        value, marks = P.screen(text, *(a[:end] for a in log.arrays))
        bit = 1 << (int(log.digit[i]) - 1)
        assert not any(marks[p] & bit for p in peers[int(log.cell[i])] if not value[p])
        struck += int(np.sum(log.note[same] & (log.digit[same] == log.digit[i])))
    assert struck > 50


@pytest.mark.parametrize("base", ["pencil_marker", "sweeper"])
def test_hint_at_stall_hints_where_no_bare_single_is_on_offer(base):
    kw = {"slip_rate": 0.0} if base == "sweeper" else {}
    bursts = 0
    for seed in range(4):
        log = _run("hint_at_stall", "sa-hard", seed, base=base, **kw)
        assert log.base == base
        cells, _, options = _bare("sa-hard", log)
        rank = {int(c): k for k, c in enumerate(cells)}
        placed = np.flatnonzero(log.placed)
        for j, i in enumerate(placed):
            if log.cheated[i] and not (j and log.cheated[placed[j - 1]]):   # a burst's first
                assert options[rank[int(log.cell[i])]] == 0
                bursts += 1
        gaps = np.diff(log.t_ms[placed])[log.cheated[placed][1:] & log.cheated[placed][:-1]]
        assert (gaps >= 3000).all()
    assert bursts >= 4


@pytest.mark.parametrize("base", ["pencil_marker", "sweeper"])
def test_hint_at_hardest_hints_once_at_a_stall(base):
    # a pencil marker whose eliminations keep singles coming never stalls: no hint then
    kw = {"slip_rate": 0.0} if base == "sweeper" else {}
    hinted = 0
    for seed in range(6):
        log = _run("hint_at_hardest", "sa-hard", seed, base=base, **kw)
        assert log.cheated_moves.size <= 1
        if log.cheated_moves.size:
            hinted += 1
            cells, _, options = _bare("sa-hard", log)
            assert options[list(cells).index(int(log.cell[log.cheated_moves[0]]))] == 0
    assert hinted >= 3
    assert _run("hint_at_hardest", "easy", 0).cheated_moves.size == 0   # no stall, no hint


def test_partial_copies_cheat_after_the_honest_part():
    n_empty = int((parse(MEDIUM).givens == 0).sum())
    for name in ("partial", "assisted"):
        for seed in range(3):
            log = _run(name, "medium", seed)
            placed = np.flatnonzero(log.placed)
            cheat = log.cheated[placed]
            assert cheat[-1] and not cheat[0] and (np.diff(cheat.astype(int)) >= 0).all()
            share = 1 - cheat.sum() / n_empty
            assert 0.39 <= share <= 0.71 if name == "partial" else abs(share - 0.6) < 0.02
    log = _run("human_order_copier", "medium", 0)
    assert log.cheated.all() and log.t_ms[-1] < 600_000 / 2.5


@pytest.mark.parametrize("base", ["pencil_marker", "sweeper"])
def test_the_stuck_copier_copies_the_rest_from_its_first_stall(base):
    copied = 0
    for seed in range(6):
        log = _run("stuck_copier", "sa-hard", seed, base=base)
        # the honest solve it cuts short, from the same person and draws
        again, plan = P.stuck_copier_and_plan(SA_HARD, SOLUTIONS["sa-hard"],
                                              np.random.default_rng(seed), 600.0, base=base)
        assert np.array_equal(again.t_ms, log.t_ms)
        cheat = np.flatnonzero(log.cheated)
        if not cheat.size:
            assert not plan.rest and np.array_equal(log.t_ms, plan.full.t_ms)
            continue
        copied += 1
        start = int(cheat[0])
        assert start == plan.end and np.array_equal(log.t_ms[:start], plan.full.t_ms[:start])
        assert np.array_equal(cheat, np.arange(start, log.t_ms.size))   # to the end
        assert not log.note[start:].any()
        assert log.t_ms[start] - log.t_ms[start - 1] >= 15_000   # gave up after a think
        # the rest of the solution in the technique model's order from there
        assert [int(c) for c, _, _ in plan.rest] == [int(c) for c in log.cell[start:]]
    assert copied >= 4
    easy = _run("stuck_copier", "easy", 0)
    assert not easy.cheated.any()   # singles all the way: it never got stuck


def test_copier_delays_follow_step_weight_only_for_the_difficulty_copier():
    puzzle = parse(SA_HARD)
    weight = {c: WEIGHT[t] for c, _, t in
              solve_with_techniques(puzzle, SOLUTIONS["sa-hard"]).placements()}

    def rho(name):
        delays, weights = [], []
        for seed in range(10):
            log = _run(name, "sa-hard", seed)
            delays.extend(np.diff(log.t_ms, prepend=0))
            weights.extend(weight[int(c)] for c in log.cell)
        return spearmanr(delays, weights).statistic

    assert abs(rho("human_order_copier")) < 0.12
    assert rho("difficulty_copier") > 0.25


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="does not complete the givens"):
        P.pencil_marker(EASY, np.ones(81, int), np.random.default_rng(0), 600.0)
    with pytest.raises(ValueError, match="no habit 'tidy'"):
        P.sweeper(EASY, SOLUTIONS["easy"], np.random.default_rng(0), 600.0, tidy=0.5)
    with pytest.raises(ValueError, match="base must be one of"):
        P.partial(EASY, SOLUTIONS["easy"], np.random.default_rng(0), 600.0, base="ladder")


def test_pencilmark_model_can_write_notes_first():
    text, sol = PUZZLES["easy"], SOLUTIONS["easy"]
    plain = P.pencilmark_player(text, sol, np.random.default_rng(8), 600.0)
    log = P.pencilmark_player(text, sol, np.random.default_rng(8), 600.0, notes=True)
    assert not plain.note.any()
    first = int(np.flatnonzero(log.placed)[0])
    _, marks = P.screen(text, *(a[:first] for a in log.arrays))
    assert marks == Board.of(parse(text)).cand and log.note[:first].all()
    value, marks = P.screen(text, *log.arrays)
    assert np.array_equal(value, sol)
    # each placement's digit is struck from its peers' marks before the next placement
    peers = Board.of(parse(text)).peers
    placed = np.flatnonzero(log.placed)
    for i, j in zip(placed, placed[1:]):
        value, marks = P.screen(text, *(a[:j] for a in log.arrays))
        bit = 1 << (int(log.digit[i]) - 1)
        if log.digit[i] == sol[log.cell[i]]:
            assert not any(marks[p] & bit for p in peers[int(log.cell[i])] if not value[p])


def test_a_hint_button_gives_the_cells_with_the_fewest_candidates():
    """``pick="fewest"``: the first hint of each stall is a cell with the fewest
    candidates of the empty cells on the board (a hint button's cell); random hints
    often are not."""
    from fairgrid.solvers import candidates

    def fewest_share(pick):
        hits = total = 0
        for seed in range(4):
            log = _run("hint_at_stall", "sa-hard", seed, base="sweeper", slip_rate=0.0,
                       pick=pick)
            grid = parse(PUZZLES["sa-hard"]).givens.astype(int).copy()
            placed = np.flatnonzero(log.placed)
            for j, i in enumerate(placed):
                c = int(log.cell[i])
                if log.cheated[i] and not (j and log.cheated[placed[j - 1]]):
                    counts = candidates(grid, 3).sum(axis=1)   # a burst's first hint
                    hits += counts[c] == counts[grid == 0].min()
                    total += 1
                grid[c] = int(log.digit[i])
        return hits / total
    assert fewest_share("fewest") == 1.0 and fewest_share("random") < 0.8
