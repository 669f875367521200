// A page's pieces for node: a clock the test moves, session storage, a document whose
// visibility the test sets, inputs; all real EventTargets, so the recorder's own
// listeners run.
import { Recorder } from "../src/recorder.js";

export class Clock {
  constructor(ms = 1000) { this.ms = ms; }
  now = () => this.ms;
  tick(ms) { this.ms += ms; }
}

export class MemoryStorage {
  map = new Map();
  getItem(k) { return this.map.has(k) ? this.map.get(k) : null; }
  setItem(k, v) { this.map.set(k, String(v)); }
  removeItem(k) { this.map.delete(k); }
}

export class Page extends EventTarget {
  hidden = false;
  setHidden(hidden) {
    this.hidden = hidden;
    this.dispatchEvent(new Event("visibilitychange"));
  }
}

export class Input extends EventTarget {
  constructor(value = "", readOnly = false) { super(); this.value = value; this.readOnly = readOnly; }
  type(text) {
    this.value += text;
    this.dispatchEvent(new Event("input"));
  }
  paste(text) {
    const event = new Event("paste", { cancelable: true });
    event.clipboardData = { getData: () => text };
    this.dispatchEvent(event);
    return event;
  }
}

export function setUp(extra = {}) {
  const clock = new Clock(), wall = new Clock(Date.UTC(2026, 10, 27, 10, 0, 0));
  const storage = new MemoryStorage(), document = new Page(), window = new EventTarget();
  const make = (more = {}) => new Recorder({ clock: clock.now, wallClock: wall.now, storage,
                                              document, window, ...extra, ...more });
  return { clock, wall, storage, document, window, make, recorder: make() };
}
