// The recorder reads `givens` in every format fairgrid reads (docs/puzzles.md): one line
// with ".", "0" or "_" blanks, a grid with separators, numbers between commas, and
// Nurikabe's "ROWSxCOLS:cells". Read a character a cell, free cells were taken for
// givens and the player's moves on them dropped.
import { test } from "node:test";
import assert from "node:assert/strict";

import { setUp } from "../testing/helpers.mjs";

const LINE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300";
const cellsOf = (log) => log.moves.map((m) => [m.cell, m.digit]);

function grid(line) { // docs/puzzles.md's "grid" format, as format_grid writes it
  const rows = [];
  for (let r = 0; r < 9; r++) {
    const row = line.slice(r * 9, r * 9 + 9).replaceAll("0", ".").split("");
    rows.push([row.slice(0, 3), row.slice(3, 6), row.slice(6, 9)].map((b) => b.join(" ")).join(" | "));
    if (r === 2 || r === 5) rows.push("------+-------+------");
  }
  return rows.join("\n");
}

for (const [name, givens] of [
  ["one line, `_` blanks", LINE.replaceAll("0", "_")],
  ["grid with separators", grid(LINE)],
  ["comma-separated numbers", Array.from(LINE).join(",")],
]) {
  test(`Sudoku givens as ${name}: a move on a free cell is recorded`, () => {
    const { clock, recorder } = setUp({ givens });
    clock.tick(5);
    recorder.place(0, 4); // cell 0 is free in this puzzle (its text starts "00 3")
    recorder.place(1, 5); // cell 1 too
    recorder.place(2, 9); // cell 2 holds the given 3: not recorded
    assert.deepEqual(cellsOf(recorder.log()), [[0, 4], [1, 5]]);
  });
}

test("Nurikabe givens as ROWSxCOLS:cells: a move on a free cell is recorded", () => {
  // docs/puzzles.md's own example: clues at cells 1 (2), 8 (2), 15 (1), 17 (1)
  const { clock, recorder } = setUp({ cells: 20, maxDigit: 2, givens: "4x5:.2......2......1.1.." });
  clock.tick(5);
  recorder.place(0, 1);  // free: shade it
  recorder.place(12, 2); // free: dot it
  recorder.place(8, 1);  // the clue "2": not recorded
  assert.deepEqual(cellsOf(recorder.log()), [[0, 1], [12, 2]]);
});
