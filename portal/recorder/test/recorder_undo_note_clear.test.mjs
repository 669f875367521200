// Undoing note(cell, 0), which clears the cell's pencil marks, writes each mark again:
// the log's marks are what the daemon reads as the player's own notes (a note (cell, d)
// toggles d, (cell, 0) clears them), proof in the `unproven` evidence. A second clear,
// as before, left the log with no marks where the page showed them.
import { test } from "node:test";
import assert from "node:assert/strict";

import { setUp } from "../testing/helpers.mjs";

// the marks a log leaves in each cell, read by the webhook's rules
function marks(log) {
  const out = new Map();
  for (const m of log.moves) {
    if (m.kind !== "note") continue;
    const set = out.get(m.cell) ?? new Set();
    if (m.digit === 0) set.clear();
    else if (set.has(m.digit)) set.delete(m.digit);
    else set.add(m.digit);
    out.set(m.cell, set);
  }
  return out;
}

test("undo of clearing a cell's notes puts the notes back in the log", () => {
  const { clock, recorder } = setUp();
  for (const step of [() => recorder.note(5, 3), () => recorder.note(5, 7),
                      () => recorder.note(5, 0)]) {
    clock.tick(100);
    step();
  }
  assert.deepEqual([...marks(recorder.log()).get(5)], []);
  clock.tick(100);
  assert.equal(recorder.undo(), true);
  assert.deepEqual([...marks(recorder.log()).get(5)].sort(), [3, 7]);
});
