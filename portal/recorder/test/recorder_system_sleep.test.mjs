// performance.now() stands still while the computer sleeps (macOS, Linux), the wall clock
// does not: time the computer slept with the page hidden is time away, and the solve's
// clock moves on by it, as across a reload. Measured on the monotonic clock alone, a lid
// closed for ten minutes read as half a second away.
import { test } from "node:test";
import assert from "node:assert/strict";

import { setUp } from "../testing/helpers.mjs";

test("time the computer slept while the page was hidden counts as time away", () => {
  const { clock, wall, document, recorder } = setUp({ storage: null });
  const step = (ms) => { clock.tick(ms); wall.tick(ms); };
  step(5000);
  recorder.place(0, 4);
  step(1000);
  document.setHidden(true); // the lid closes
  wall.tick(600_000);       // ten minutes asleep: the wall clock runs, performance.now does not
  step(500);
  document.setHidden(false); // the lid opens
  step(2000);
  recorder.place(1, 5);
  const log = recorder.log();
  const away = log.client.hidden.reduce((a, x) => a + x.ms, 0);
  assert.equal(away, 600_500);
  assert.equal(log.moves[1].t_ms - log.moves[0].t_ms, 1000 + 600_500 + 2000);
});

test("a page hidden without sleep, or a wall clock set back, adds nothing", () => {
  const { clock, wall, document, recorder } = setUp({ storage: null });
  clock.tick(1000); wall.tick(1000);
  document.setHidden(true);
  clock.tick(4000); wall.tick(4000 - 3_600_000);  // the clock corrected an hour back
  document.setHidden(false);
  assert.deepEqual(recorder.log().client.hidden, [{ t_ms: 1000, ms: 4000 }]);
});
