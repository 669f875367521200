"""What a flagged copy's evidence costs: scoring flagged copies of hard dailies, and the
search for what each quick placement needed, against the pure-Python technique model
asking the same question in the same run.

    python bench/evidence_cost.py [--puzzles 24]

For the first ``--puzzles`` Tough and Diabolical sudoku.org.uk dailies, the simulator's
row, random, block, careful and steady copies (the copies the scoring flags), each
scored as the daemon scores it (``evidence.score_solve``; a flagged solve's evidence
asks what its ten quickest placements without a single needed). Times, CPU of one
process:

* scoring the whole solve;
* the search alone (``signals.techniques_needed``, the compiled ``deduction.needed``);
* as the same-run reference, the pure-Python technique model on the same placements
  (``techniques.technique_needed`` from the board before each, its ladder without
  contradiction forcing);

and prints medians and 75th percentiles, and the reference's median over the search's.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import machine, org_uk_rows

COPIES = ("row", "random", "block", "careful", "steady")


def _cpu_ms(fn) -> tuple[float, object]:
    t0 = time.process_time()
    out = fn()
    return (time.process_time() - t0) * 1000.0, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--puzzles", type=int, default=24)
    args = ap.parse_args()
    from tqdm import tqdm

    from fairgrid.analytics.calibration import complete
    from fairgrid.analytics.deduction import hardest_rung
    from fairgrid.analytics.evidence import score_solve
    from fairgrid.analytics.fill_order import fill_order
    from fairgrid.analytics.signals import PuzzleFacts, replay_solve, techniques_needed
    from fairgrid.analytics.simulate import simulate
    from fairgrid.solvers import parse
    from fairgrid.solvers.propagation import solution_of
    from fairgrid.solvers.techniques import LADDER, forcing, technique_needed

    started = time.perf_counter()
    rows = [r for r in org_uk_rows() if r["level"] in ("Tough", "Diabolical")][:args.puzzles]
    rng = np.random.default_rng(2)
    null = complete({})
    ladder = tuple(t for t in LADDER if t is not forcing)
    cases = []
    for r in rows:
        puzzle = parse(r["puzzle"])
        sol = solution_of(puzzle)
        facts = PuzzleFacts(puzzle.givens, 3, sol, np.full(81, np.nan), float(np.log(900)),
                            0.3, hardest_rung=hardest_rung(puzzle.givens, sol))
        for kind in COPIES:
            s = simulate(puzzle, sol, kind, rng=rng, expected_log_s=float(np.log(900)))
            cases.append((facts, (s.t_ms, s.cell, s.digit, s.note)))
    for facts, log in cases[:len(COPIES)]:  # load the compiled kernels
        score_solve(facts, null, *log)
    score, search, reference, flagged = [], [], [], 0
    for facts, log in tqdm(cases, desc="copies"):
        ms, ev = _cpu_ms(lambda: score_solve(facts, null, *log))
        score.append(ms)
        flagged += ev.flagged
        t_ms, cell, digit, note = log
        fill = fill_order(t_ms, cell, digit, note, facts.givens, facts.solution)
        rep = replay_solve(facts, fill)
        ms, needed = _cpu_ms(lambda: techniques_needed(facts, rep))
        search.append(ms)

        def model():
            values = np.array(facts.givens)
            for k, c in enumerate(rep.cells.tolist()):
                if k in needed:
                    technique_needed(3, values.tolist(), c, facts.solution, ladder=ladder)
                values[c] = facts.solution[c]
        reference.append(_cpu_ms(model)[0])

    def line(name, v):
        return (f"{name:58s} median {np.median(v):7.2f} ms, 75th percentile "
                f"{np.percentile(v, 75):7.2f} ms")
    print(f"{len(cases)} copies of {len(rows)} Tough and Diabolical dailies, "
          f"{flagged} flagged")
    print(line("scoring one copy (evidence included)", score))
    print(line("what the quick placements needed: compiled search", search))
    print(line("the same placements, pure-Python technique model (ref.)", reference))
    print(f"reference / compiled search, medians: {np.median(reference) / np.median(search):.1f}")
    print(f"{time.perf_counter() - started:.0f} s on {machine()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
