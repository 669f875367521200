"""An honest-player model built on pencilmark, a grader this project did not write.

A simulated honest human solves a randomly transformed but equivalent copy of the puzzle
(digit relabelling, row / column / band / stack permutations, transpose) the way pencilmark's
human route does, easiest technique first; the transform changes pencilmark's scan order, so
seeds give different, equally human-like fill orders. Each placement's think time grows with
the work since the previous one (exp(0.8 * band) per step, eliminations included), with gamma
noise, an opening read and rare slips. pencilmark (PyPI, MIT licence) is used only here in
bench/ and in the test extras, never by the fairgrid service.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
import pencilmark

BAND_K = 0.8            # step weight exp(BAND_K * band): a single costs 1, an Extreme step ~55
GUESS_COST = 150.0      # a guessed placement (no logic left): more work than any technique step
N_ORDERS = 32           # pencilmark_solve draws one of this many transforms per puzzle (cache hits)
FIELDS = ["steps", "time", "band"]
_PLACE = re.compile(r"r(\d+)c(\d+)=(\d+)")


def _norm(puzzle: str) -> str:
    p = puzzle.strip().replace(".", "0")
    if len(p) != 81 or not p.isdigit():
        raise ValueError(f"not an 81-cell classic sudoku: {puzzle!r}")
    return p


def _transform(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(src, relabel): transformed cell i holds original cell src[i]; digit d becomes relabel[d]."""
    if seed == 0:
        return np.arange(81), np.arange(10)
    rng = np.random.default_rng(seed)
    rows = np.concatenate([3 * b + rng.permutation(3) for b in rng.permutation(3)])
    cols = np.concatenate([3 * s + rng.permutation(3) for s in rng.permutation(3)])
    src = rows[:, None] * 9 + cols[None, :]
    if rng.random() < 0.5:
        src = src.T
    return src.ravel(), np.concatenate([[0], 1 + rng.permutation(9)])


def _steps_of(p: str) -> tuple[list[dict], float | None]:
    """pencilmark's steps to a full grid (plus its time in minutes, None if it had none).
    Default mode proves stuck points by full search (Trial and error, band 5); if that fails
    or says Unknown, guess: logic with allow_guessing=True until stuck, then place the
    solution digit in the most constrained empty cell and rate again from there."""
    try:
        card = pencilmark.rate(p, fields=FIELDS)
        if card["band"] != "Unknown":
            return card["steps"], card["time"]
    except (pencilmark.NotUnique, pencilmark.NoSolution):
        raise
    except Exception:   # e.g. Undecided: fall through to the guessing route
        pass
    sol = pencilmark.solve(p)
    grid, steps, minutes = [int(ch) for ch in p], [], None
    while 0 in grid:
        card = pencilmark.rate("".join(map(str, grid)), fields=FIELDS, allow_guessing=True)
        minutes = card["time"] if minutes is None else minutes
        for st in card["steps"]:
            steps.append(st)
            if "placement" in st:
                r, c, d = map(int, _PLACE.fullmatch(st["placement"]).groups())
                grid[9 * (r - 1) + c - 1] = d
        if 0 in grid:   # stuck: guess (luckily) where the fewest digits are still possible
            g = np.array(grid).reshape(9, 9)
            def n_free(i):
                r, c = divmod(i, 9)
                box = g[r // 3 * 3:r // 3 * 3 + 3, c // 3 * 3:c // 3 * 3 + 3]
                return 9 - len((set(g[r]) | set(g[:, c]) | set(box.ravel())) - {0})
            i = min((i for i in range(81) if grid[i] == 0), key=n_free)
            grid[i] = sol[i]
            steps.append({"technique": "Guess", "code": "GUESS", "band": None, "guess": True,
                          "placement": f"r{i // 9 + 1}c{i % 9 + 1}={sol[i]}"})
    return steps, minutes


@lru_cache(maxsize=4096)
def _route(puzzle: str, transform_seed: int):
    """(cells, digits, step_cost, band, minutes) in ORIGINAL coordinates; band -1 = a guess."""
    src, relabel = _transform(transform_seed)
    g = np.array([int(ch) for ch in puzzle])
    steps, minutes = _steps_of("".join(map(str, relabel[g[src]])))
    back = np.argsort(relabel)          # inverse digit map (0 stays 0)
    cells, digits, costs, bands, acc = [], [], [], [], 0.0
    for st in steps:
        guess = st.get("guess", False)
        band = 5 if st.get("band") is None else int(st["band"])
        acc += GUESS_COST if guess else math.exp(BAND_K * band)
        if "placement" in st:
            r, c, d = map(int, _PLACE.fullmatch(st["placement"]).groups())
            cells.append(src[9 * (r - 1) + c - 1])
            digits.append(back[d])
            costs.append(acc)
            bands.append(-1 if guess else band)
            acc = 0.0
    out = [np.array(x, dtype=t) for x, t in ((cells, np.int64), (digits, np.int64),
                                              (costs, float), (bands, np.int64))]
    for a in out:
        a.flags.writeable = False       # cached: callers must not change them
    return (*out, minutes)


def pencilmark_time_s(puzzle: str) -> float:
    """pencilmark's own estimate of a human's solve time, in seconds."""
    minutes = _route(_norm(puzzle), 0)[4]
    if minutes is None:
        raise ValueError("pencilmark gives no time estimate for this puzzle")
    return 60.0 * float(minutes)        # pencilmark's card "time" is in minutes


def pencilmark_steps(puzzle: str, transform_seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cells, digits, step_cost) of the placements in pencilmark's order on the copy
    transformed by transform_seed (0 = identity), mapped back to the original puzzle."""
    cells, digits, costs = _route(_norm(puzzle), int(transform_seed))[:3]
    return cells.copy(), digits.copy(), costs.copy()


def pencilmark_solve(puzzle: str, solution: np.ndarray, rng: np.random.Generator, *,
                     total_s: float, transform_seed: int | None = None,
                     mistake_rate: float = 0.02, notes: bool = False
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One honest solve as a move log (t_ms, cell, digit, note) lasting about total_s seconds.

    ``notes``: first write every candidate as a pencil mark (a tap of 0.3–1.5 s each, at
    most half of total_s), and after each placement strike its digit from the peers'
    marks (bench/players.py's rules: a note toggles a mark)."""
    p = _norm(puzzle)
    sol = np.array([int(ch) for ch in solution] if isinstance(solution, str) else solution, np.int64)
    if transform_seed is None:
        transform_seed = int(rng.integers(N_ORDERS))
    cells, digits, cost = pencilmark_steps(p, transform_seed)
    if not np.array_equal(sol[cells], digits):
        raise ValueError("the solution does not match pencilmark's placements")
    n = len(cells)
    # think time ~ work since the last placement, times per-step gamma(2) noise (mean 1)
    w = cost * rng.gamma(2.0, 0.5, n)
    read = total_s * float(np.clip(0.05 * rng.gamma(4.0, 0.25), 0.01, 0.15))
    marks = _candidates(p) if notes else {}
    if notes:
        taps = rng.uniform(0.3, 1.5) * rng.gamma(4.0, 0.25, sum(map(len, marks.values())))
        taps *= min(1.0, 0.5 * total_s / taps.sum())
        read += taps.sum()
    think = w / w.sum() * (total_s - read)
    t = read + np.cumsum(think)
    ev_t, ev_c, ev_d = list(t), list(cells), list(digits)
    ev_n = [False] * len(ev_t)
    if notes:
        for (c, d), at in zip(((c, d) for c in sorted(marks) for d in marks[c]),
                              np.cumsum(taps) - taps):
            ev_t.append(at), ev_c.append(c), ev_d.append(d), ev_n.append(True)
        for k, (c, d) in enumerate(zip(cells.tolist(), digits.tolist())):
            struck = [q for q in _PEERS[c] if q != c and d in marks.get(q, ())]
            window = 0.4 * think[k + 1] if k + 1 < n else 1.0
            gaps = rng.uniform(0.2, 0.6, len(struck))
            gaps *= min(1.0, window / gaps.sum()) if struck else 1.0
            for q, at in zip(struck, t[k] + np.cumsum(gaps)):
                marks[q].discard(d)
                ev_t.append(at), ev_c.append(q), ev_d.append(d), ev_n.append(True)
            marks.pop(c, None)
    board = np.array([int(ch) for ch in p]).reshape(9, 9)
    for k in np.flatnonzero(rng.random(n) < mistake_rate):
        # a slip: a digit not visibly excluded (if any), overwritten once the player sees why
        r, c = divmod(int(cells[k]), 9)
        b = board.copy()
        b.flat[cells[:k]] = digits[:k]
        box = b[r // 3 * 3:r // 3 * 3 + 3, c // 3 * 3:c // 3 * 3 + 3]
        seen = set(b[r]) | set(b[:, c]) | set(box.ravel())
        pool = [d for d in range(1, 10) if d not in seen and d != sol[cells[k]]] \
            or [d for d in range(1, 10) if d != sol[cells[k]]]
        ev_t.append(t[k] - min(rng.uniform(1.0, 6.0), 0.5 * think[k]))
        ev_c.append(cells[k])
        ev_d.append(int(rng.choice(pool)))
        ev_n.append(False)
    order = np.argsort(ev_t, kind="stable")
    t_ms = np.round(np.asarray(ev_t)[order] * 1000).astype(np.int64)
    ar = np.arange(len(t_ms))
    t_ms = np.maximum.accumulate(t_ms - ar) + ar    # strictly increasing milliseconds
    return (t_ms, np.asarray(ev_c, np.int64)[order], np.asarray(ev_d, np.int64)[order],
            np.asarray(ev_n, bool)[order])


_PEERS = [sorted({r * 9 + k for k in range(9)} | {k * 9 + c for k in range(9)}
                 | {(r // 3 * 3 + i) * 9 + c // 3 * 3 + j for i in range(3) for j in range(3)})
          for r, c in (divmod(x, 9) for x in range(81))]


def _candidates(p: str) -> dict[int, set[int]]:
    """The digits no peer holds, per empty cell of the puzzle text ``p``."""
    g = [int(ch) for ch in p]
    return {c: set(range(1, 10)) - {g[q] for q in _PEERS[c]}
            for c in range(81) if not g[c]}


def _ranks(x):
    """average ranks (ties share), for a Spearman correlation without scipy"""
    x = np.asarray(x, float)
    r = np.empty(len(x))
    r[np.argsort(x, kind="stable")] = np.arange(len(x))
    return np.array([r[x == v].mean() for v in x])


if __name__ == "__main__":
    import time
    from _common import org_uk_rows

    rows = org_uk_rows()
    pick = [r for lvl in ("Gentle", "Moderate", "Tough", "Diabolical")
            for r in [r for r in rows if r["level"] == lvl][:5]]
    n_place, band0, rate_s, est, site = [], [], {}, [], []
    rng = np.random.default_rng(0)
    for row in pick:
        p, sol = _norm(row["puzzle"]), np.array([int(ch) for ch in row["solution"]])
        for seed in (0, 1, 2):
            t0 = time.perf_counter()
            cells, digits, cost = pencilmark_steps(p, seed)
            rate_s.setdefault(row["level"], []).append(time.perf_counter() - t0)
            grid = np.array([int(ch) for ch in p])
            empty = np.flatnonzero(grid == 0)
            assert sorted(cells) == list(empty), "each empty cell placed exactly once"
            grid[cells] = digits
            assert np.array_equal(grid, sol), "mapped placements rebuild the solution"
            n_place.append(len(cells))
            band0.append(np.mean(_route(p, seed)[3] == 0))
        t, c, d, note = pencilmark_solve(p, sol, rng, total_s=600.0, mistake_rate=0.1)
        last = {int(ci): int(di) for ci, di in zip(c, d)}   # the final digit in each cell
        assert np.all(np.diff(t) > 0) and not note.any() and abs(t[-1] / 1000 - 600) < 1
        assert all(sol[ci] == di for ci, di in last.items()) and len(last) == len(empty)
        est.append(pencilmark_time_s(p) / 60)
        site.append(float(row["mean_time_min"]))
    print(f"{len(pick)} puzzles x 3 transform seeds: mapping back OK, move logs OK")
    print(f"mean placements {np.mean(n_place):.1f}; share of placements from band-0 steps "
          f"{np.mean(band0):.3f}")
    for lvl, s in rate_s.items():
        print(f"pencilmark.rate per puzzle, {lvl:10s}: mean {np.mean(s):.3f} s, max {max(s):.3f} s")
    rho = np.corrcoef(_ranks(est), _ranks(site))[0, 1]
    print(f"pencilmark time (min) vs site mean_time_min: Spearman {rho:.2f}; "
          f"means {np.mean(est):.1f} vs {np.mean(site):.1f} min")
    orders = [pencilmark_steps(pick[-1]["puzzle"], s)[0] for s in (0, 1, 2)]
    print("seeds 0/1/2 give different orders on the last puzzle:",
          not np.array_equal(orders[0], orders[1]) and not np.array_equal(orders[1], orders[2]))
