// A reload adds the time it took (by the wall clock) to the solve, at most 12 hours: a
// clock set days ahead between two pages would put the last move days after
// started_at, and fairgrid refuses a log that ends more than a day after its receipt.
import { test } from "node:test";
import assert from "node:assert/strict";

import { setUp } from "../testing/helpers.mjs";

const DAY = 86_400_000;

test("a clock set days ahead during a reload leaves a log fairgrid takes", () => {
  const { clock, wall, window, make, recorder } = setUp({ key: "jump" });
  const trueStart = wall.ms;
  clock.tick(2000);
  wall.tick(2000);
  recorder.place(0, 4);
  window.dispatchEvent(new Event("pagehide"));
  // the player moves the clock two days ahead and reloads: 1 s of real time
  wall.tick(2 * DAY + 1000);
  clock.ms = 30;
  const again = make({ key: "jump" });
  clock.tick(3000);
  again.place(1, 5);
  const log = again.log();
  const received = trueStart + 6000; // fairgrid's (right) clock when the relay sends it
  const last = log.moves.at(-1).t_ms;
  // daemon/web/webhook.py: started_at + last t_ms must be within a day of the receipt
  assert.ok(Date.parse(log.started_at) + last <= received + DAY,
            `started_at ${log.started_at} + t_ms ${last} is ${((Date.parse(log.started_at) + last - received) / DAY).toFixed(2)} days after the receipt: 422`);
});
