import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

import { Recorder, CLIENT_VERSION } from "../src/recorder.js";
import { problems, SCHEMA_PATH } from "../testing/schema.mjs";
import { Input, setUp } from "../testing/helpers.mjs";

const cells = (log) => log.moves.map((m) => [m.t_ms, m.cell, m.digit, m.kind ?? "place"]);

test("moves are timed on the monotonic clock from the start, started_at on the wall clock", () => {
  const { clock, wall, recorder } = setUp();
  wall.tick(3_600_000); // the wall clock jumping (NTP, the user) changes nothing
  clock.tick(1234.4);
  recorder.place(0, 5);
  clock.tick(800.6);
  recorder.note(1, 3);
  const log = recorder.log();
  assert.equal(log.started_at, "2026-11-27T10:00:00.000Z");
  assert.deepEqual(cells(log), [[1234, 0, 5, "place"], [2035, 1, 3, "note"]]);
});

test("time never runs backwards in the log, whatever the clock does", () => {
  const { clock, recorder } = setUp();
  clock.tick(500);
  recorder.place(0, 1);
  clock.tick(-200);
  recorder.place(1, 2);
  assert.deepEqual(recorder.log().moves.map((m) => m.t_ms), [500, 500]);
});

test("undo reverses place, overwrite, erase and note as new moves, newest first", () => {
  const { clock, recorder } = setUp();
  for (const step of [() => recorder.place(4, 7), () => recorder.place(4, 9),
                      () => recorder.erase(4), () => recorder.note(5, 2)]) {
    clock.tick(100);
    step();
  }
  for (let i = 0; i < 4; i++) {
    clock.tick(100);
    assert.equal(recorder.undo(), true);
  }
  assert.equal(recorder.undo(), false);
  assert.deepEqual(cells(recorder.log()).map(([, c, d, k]) => [c, d, k]), [
    [4, 7, "place"], [4, 9, "place"], [4, 0, "place"], [5, 2, "note"],
    [5, 2, "note"], [4, 9, "place"], [4, 7, "place"], [4, 0, "place"]]);
});

test("a reload mid-solve carries on: same moves, the clock resumes past the reload", () => {
  const { clock, wall, storage, window, make, recorder } = setUp({ key: "easy" });
  clock.tick(2000);
  recorder.place(0, 5);
  clock.tick(1000);
  wall.tick(3000);
  window.dispatchEvent(new Event("pagehide"));
  // the new page: performance.now restarts, 1.5 s of wall time went by
  clock.ms = 40;
  wall.tick(1500);
  const again = make({ key: "easy" });
  clock.tick(500);
  again.place(1, 3);
  const log = again.log();
  assert.equal(log.started_at, recorder.log().started_at);
  assert.deepEqual(cells(log), [[2000, 0, 5, "place"], [5000, 1, 3, "place"]]);
  assert.deepEqual(log.client.hidden, [{ t_ms: 3000, ms: 1500 }]);
  assert.equal(again.undo(), true); // what was done before the reload can be undone
  assert.deepEqual(again.log().moves.at(-1), { t_ms: 5000, cell: 1, digit: 0 });
  again.clear();
  assert.equal(storage.getItem("fairgrid-recorder:easy"), null);
  assert.deepEqual(make({ key: "easy" }).log().moves, []);
});

test("another solve's key does not pick up this one", () => {
  const { recorder, make } = setUp({ key: "a" });
  recorder.place(0, 1);
  assert.deepEqual(make({ key: "b" }).log().moves, []);
});

test("hidden and blur intervals say when and how long", () => {
  const { clock, document, window, recorder } = setUp();
  clock.tick(1000);
  window.dispatchEvent(new Event("blur"));
  clock.tick(300);
  window.dispatchEvent(new Event("focus"));
  clock.tick(700);
  document.setHidden(true);
  clock.tick(8000);
  document.setHidden(false);
  clock.tick(100);
  document.setHidden(true); // still away when the log is taken: counted up to now
  clock.tick(50);
  const { client } = recorder.log();
  assert.deepEqual(client.blur, [{ t_ms: 1000, ms: 300 }]);
  assert.deepEqual(client.hidden, [{ t_ms: 2000, ms: 8000 }, { t_ms: 10100, ms: 50 }]);
});

test("a page toggled or pasted into past the schema's limits still sends a valid log", () => {
  // the daemon refuses a client block beyond its limits, and with it the whole solve:
  // a cheater must not be able to have a solve refused by switching tabs 10,001 times
  // (no storage: what is saved is another test's, and saving the whole log at each of
  // 10,001 pastes is most of the time such a run takes)
  const { clock, document, recorder } = setUp({ cells: 4, storage: null });
  let away = 0;
  for (let i = 0; i < 10_005; i++) {
    clock.tick(10);
    document.setHidden(true);
    clock.tick(3);
    away += 3;
    document.setHidden(false);
  }
  recorder.pasted(0, 250_000);
  for (let i = 0; i < 10_001; i++) recorder.pasted(1, 1);
  const log = recorder.log();
  assert.deepEqual(problems(log), []);
  assert.equal(log.client.hidden.length, 10_000);
  assert.equal(log.client.hidden.reduce((a, x) => a + x.ms, 0), away); // no time lost
  assert.equal(log.client.pastes.length, 10_000);
  assert.equal(log.client.pastes[0].digits, 100_000);
  assert.equal(log.client.pastes.at(-1).digits, 3); // the last three pastes, summed
  assert.equal(log.client.paste_count, 10_002);
});

test("a storm of page events is saved about once a second, and a kill loses no time away", () => {
  // each save writes the whole log: saved at every toggle, 10,000 toggles cost minutes
  const { clock, wall, storage, document, make, recorder } = setUp({ key: "storm" });
  const step = (ms) => { clock.tick(ms); wall.tick(ms); };
  let writes = 0;
  const setItem = storage.setItem.bind(storage);
  storage.setItem = (k, v) => { writes += 1; setItem(k, v); };
  step(500);
  recorder.place(0, 5); // a move is saved at once
  assert.equal(writes, 1);
  for (let i = 0; i < 1000; i++) { // 1,000 toggles over 10 s, 3 s away in all
    step(7);
    document.setHidden(true);
    step(3);
    document.setHidden(false);
  }
  assert.ok(writes >= 10 && writes <= 12, `${writes} writes`);
  // hidden again, then the page is killed (no pagehide) 4 s later
  step(200);
  document.setHidden(true);
  wall.tick(4000);
  clock.ms = 10;
  recorder.detach(); // the killed page hears nothing more
  const again = make({ key: "storm" });
  const away = again.log().client.hidden.reduce((a, x) => a + x.ms, 0);
  // 7 s away in truth; what the last save missed reads as away from that save: a
  // second at most more
  assert.ok(away >= 7000 && away <= 8000, `${away} ms away`);
  assert.deepEqual(again.log().moves.map((m) => [m.cell, m.digit]), [[0, 5]]);
  // the restored page saves its first page event at once, and a paste always
  const before = writes;
  document.setHidden(false);
  again.pasted(3, 81);
  again.pasted(4, 1);
  assert.equal(writes, before + 3);
  const kept = JSON.parse(storage.getItem("fairgrid-recorder:storm"));
  assert.equal(kept.client.paste_count, 2);
});

test("the input device of each move is counted", () => {
  const { document, recorder } = setUp();
  recorder.place(0, 1); // no event seen: the portal's own code called
  document.dispatchEvent(new Event("keydown"));
  recorder.place(1, 2);
  recorder.place(2, 3);
  document.dispatchEvent(Object.assign(new Event("pointerdown"), { pointerType: "mouse" }));
  recorder.place(3, 4);
  document.dispatchEvent(Object.assign(new Event("pointerdown"), { pointerType: "touch" }));
  recorder.erase(3);
  assert.deepEqual(recorder.log().client.input, { api: 1, keyboard: 2, pointer: 1, touch: 1 });
});

test("an attached grid records typing, erasing and pastes", () => {
  const { clock, recorder } = setUp({ cells: 4, maxDigit: 4 });
  const inputs = [new Input("1", true), new Input(), new Input(), new Input()];
  recorder.attach(inputs);
  clock.tick(100);
  inputs[1].type("2");
  inputs[1].type("3"); // a second digit typed into a cell replaces the first
  assert.equal(inputs[1].value, "3");
  inputs[1].value = "";
  inputs[1].dispatchEvent(new Event("input"));
  clock.tick(100);
  const event = inputs[2].paste("1 2 3 4");
  assert.equal(event.defaultPrevented, true);
  const log = recorder.log();
  assert.deepEqual(cells(log).map(([, c, d]) => [c, d]), [[1, 2], [1, 3], [1, 0], [1, 2], [2, 3], [3, 4]]);
  assert.deepEqual(inputs.map((i) => i.value), ["1", "2", "3", "4"]);
  assert.deepEqual(log.client.pastes, [{ t_ms: 200, cell: 2, digits: 4 }]);
  assert.equal(log.client.paste_count, 1);
});

test("the log follows the schema the daemon validates, and the package ships that file", () => {
  const { clock, document, recorder } = setUp({ cells: 4 });
  const inputs = [new Input(), new Input(), new Input(), new Input()];
  recorder.attach(inputs);
  clock.tick(10);
  inputs[0].type("4");
  recorder.note(2, 3);
  inputs[3].paste("1");
  document.setHidden(true);
  clock.tick(5000);
  document.setHidden(false);
  recorder.undo();
  const log = recorder.log();
  assert.equal(log.client.version, CLIENT_VERSION);
  assert.deepEqual(problems(log), []);
  assert.deepEqual(problems({ ...log, client: { ...log.client, hidden: [{ t_ms: 1 }] } }),
                   ["$.client.hidden[0].ms: required"]);
  execFileSync(process.execPath, ["build.mjs"], { cwd: new URL("..", import.meta.url) });
  assert.equal(readFileSync(new URL("../dist/solve_log.schema.json", import.meta.url), "utf8"),
               readFileSync(SCHEMA_PATH, "utf8"));
});

test("nothing the recorder meets throws into the page", () => {
  const broken = { getItem() { throw new Error("denied"); }, setItem() { throw new Error("full"); },
                   removeItem() { throw new Error("denied"); } };
  const { clock, recorder } = setUp({ storage: broken, onChange: () => { throw new Error("portal bug"); } });
  clock.tick(5);
  recorder.place(0, 1);
  recorder.place(99, 1); // not a cell
  recorder.place(1, -2);
  recorder.place(1, 12); // no digit of a 9x9 grid
  recorder.clear();
  assert.deepEqual(recorder.log().moves, []);
});

test("a page's odd calls leave a log the daemon takes", () => {
  const { clock, recorder } = setUp();
  clock.tick(5);
  recorder.place(2, 10);
  recorder.place(3, 9);
  for (const [cell, digits] of [[-1, 3], [4, 2.5], [undefined, -2], [7, NaN], [81, 1e9]]) {
    recorder.pasted(cell, digits);
  }
  const log = recorder.log();
  assert.deepEqual(problems(log), []);
  assert.deepEqual(cells(log), [[5, 3, 9, "place"]]);
  assert.deepEqual(log.client.pastes.map((p) => [p.cell, p.digits]),
                   [[undefined, 3], [4, 2], [undefined, 0], [7, 0], [undefined, 100_000]]);
  // a 16x16 grid takes 16; Nurikabe says its own largest
  const big = setUp({ cells: 256 }).recorder;
  big.place(0, 16);
  big.place(1, 17);
  assert.deepEqual(big.log().moves.map((m) => m.digit), [16]);
  const islands = setUp({ cells: 100, maxDigit: 2 }).recorder;
  islands.place(0, 2);
  islands.place(1, 3);
  assert.deepEqual(islands.log().moves.map((m) => m.digit), [2]);
});

test("a move on a given is not recorded: fairgrid would refuse the whole log", () => {
  const givens = "3" + "0".repeat(79) + "9";
  for (const options of [{ givens }, { givens: Array.from(givens, Number) },
                         { givens: givens.replaceAll("0", ".") }]) {
    const { clock, recorder } = setUp(options);
    clock.tick(5);
    recorder.place(0, 4);
    recorder.note(80, 1);
    recorder.erase(0);
    recorder.place(1, 2);
    assert.deepEqual(cells(recorder.log()), [[5, 1, 2, "place"]]);
  }
});

test("the plain-script build offers the module's API on one global", () => {
  execFileSync(process.execPath, ["build.mjs"], { cwd: new URL("..", import.meta.url) });
  const code = readFileSync(new URL("../dist/recorder.global.js", import.meta.url), "utf8");
  const root = {};
  new Function("globalThis", code)(root);
  assert.deepEqual(Object.keys(root.FairgridRecorder).sort(), ["CLIENT_VERSION", "RECORDER", "Recorder", "record"]);
  const r = new root.FairgridRecorder.Recorder({ storage: null, clock: () => 7, document: new EventTarget() });
  r.place(0, 1);
  assert.equal(r.log().moves[0].t_ms, 0);
  assert.ok(r instanceof Object && !(r instanceof Recorder)); // its own copy, not an import
});
