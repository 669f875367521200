// fairgrid's move recorder: what a portal's page records of a solve, in the shape of the
// solve webhook (`started_at`, `moves`, `client`; daemon/ingest/solve_log.schema.json).
// It holds no secret: the page hands `log()` to the portal's own server, which signs.
// Nothing here throws into the page or waits on anything: every listener is passive,
// storage failures are ignored (the log then lives only as long as the page).

export const CLIENT_VERSION = 1;
export const RECORDER = "fairgrid-recorder/0.1.0";

const PREFIX = "fairgrid-recorder:";
// the schema's maxItems and maxima for the client block (solve_log.schema.json)
const LIMITS = { items: 10_000, digits: 100_000, count: 1_000_000, ms: 1_000_000_000_000 };
// the page's visibility and focus are saved at most this often: each save writes the
// whole log, and a page toggled thousands of times would rewrite it each time. Moves and
// pastes are saved at once; what a kill misses of the rest reads as time away from the
// last save (restore()), and pagehide saves anyway.
const EVENT_SAVE_MS = 1000;
// the most a reload (or the clock moved between two pages) adds to the solve's time:
// fairgrid refuses a log that ends more than a day after its receipt, and a page left
// for longer than this is a solve taken up again, not a think
const MAX_RELOAD_GAP_MS = 12 * 3600 * 1000;
// performance.now() stands still while the computer sleeps (on macOS and Linux), the
// wall clock does not: a hidden page whose wall clock ran this much longer slept
const SLEEP_SLACK_MS = 2000;

function noop() {}

function safeStorage() {
  try {
    return globalThis.sessionStorage || null;
  } catch {
    return null; // a sandboxed frame may refuse even the lookup
  }
}

export class Recorder {
  /**
   * @param {object} [options]
   * @param {string} [options.key] names this solve in session storage (e.g. the puzzle id)
   * @param {number} [options.cells] the grid's cell count (81 for 9x9)
   * @param {number} [options.maxDigit] the largest digit a move may hold: the side of a
   *   square grid (9 for 9x9) unless given; 2 for Nurikabe (1 river, 2 island)
   * @param {string|ArrayLike<number>} [options.givens] the puzzle's givens: its text in
   *   any format fairgrid reads (one line or a grid with ".", "0" or "_" blanks, numbers
   *   between commas, Nurikabe's "ROWSxCOLS:cells"), or a value a cell (non-zero is a
   *   given): a move on a given is not recorded (fairgrid refuses a log that holds one)
   * @param {() => number} [options.clock] monotonic milliseconds (performance.now)
   * @param {() => number} [options.wallClock] epoch milliseconds (Date.now): started_at,
   *   and the time a reload took
   * @param {Storage|null} [options.storage] sessionStorage unless given
   * @param {EventTarget} [options.document] where visibility and input devices are read
   * @param {EventTarget} [options.window] where focus is read
   * @param {(log: object) => void} [options.onChange] called after every move
   */
  constructor(options = {}) {
    this.key = PREFIX + (options.key ?? "solve");
    this.cells = options.cells ?? 81;
    this.maxDigit = options.maxDigit ?? (Number.isInteger(Math.sqrt(this.cells))
      ? Math.sqrt(this.cells) : Infinity);
    this.given = givenCells(options.givens);
    this.clock = options.clock ?? (() => globalThis.performance.now());
    this.wallClock = options.wallClock ?? (() => Date.now());
    this.storage = options.storage === undefined ? safeStorage() : options.storage;
    this.document = options.document ?? globalThis.document ?? null;
    this.window = options.window ?? globalThis.window ?? null;
    this.onChange = options.onChange ?? noop;
    this.device = "api";
    this.listeners = [];
    if (!this.restore()) this.reset();
    this.listen();
  }

  reset() {
    this.startedWall = this.wallClock();
    this.t0 = this.clock();
    this.moves = [];
    this.values = new Array(this.cells).fill(0);
    this.marks = Array.from({ length: this.cells }, () => []); // each cell's notes
    this.done = []; // what undo() reverses: [cell, digit before, kind, marks cleared]
    this.finished = null; // the log finish() froze
    this.client = { version: CLIENT_VERSION, recorder: RECORDER, paste_count: 0,
                     pastes: [], hidden: [], blur: [], input: {} };
    this.hiddenSince = this.document && this.document.hidden ? 0 : null;
    this.hiddenAt = this.hiddenSince === null ? null : [this.clock(), this.wallClock()];
    this.blurSince = null;
    this.lastT = 0;
    this.savedAt = undefined; // nothing of this solve saved yet
  }

  /** Milliseconds since the start, never decreasing. */
  now() {
    const t = Math.max(this.lastT, Math.round(this.clock() - this.t0));
    this.lastT = t;
    return t;
  }

  place(cell, digit) {
    this.move(cell, digit, "place", true);
  }

  erase(cell) {
    this.move(cell, 0, "place", true);
  }

  note(cell, digit) {
    this.move(cell, digit, "note", true);
  }

  /** Reverse the last place, erase or note still standing (a new move in the log: an
   * undo is part of the solve). False when there is nothing to undo. */
  undo() {
    if (this.finished) return false;
    const last = this.done.pop();
    if (!last) return false;
    const [cell, before, kind, cleared] = last;
    if (kind === "note" && before === 0) {
      // a clear of the cell's marks: each mark it took is written again
      for (const mark of cleared ?? []) this.move(cell, mark, "note", false);
      return true;
    }
    // a note toggles its mark, so the same note again takes it back
    this.move(cell, before, kind, false);
    return true;
  }

  move(cell, digit, kind, undoable) {
    if (this.finished || !Number.isInteger(cell) || cell < 0 || cell >= this.cells
        || this.given.has(cell) || !Number.isInteger(digit) || digit < 0
        || digit > this.maxDigit) {
      // a page's bug is not a solve's evidence (and would have the daemon refuse the
      // whole log); nothing to throw into the page; a finished solve takes no more
      return;
    }
    if (undoable) {
      this.done.push(kind === "note"
        ? [cell, digit, kind, digit === 0 ? [...this.marks[cell]] : undefined]
        : [cell, this.values[cell], kind]);
    }
    const move = { t_ms: this.now(), cell, digit };
    if (kind === "note") {
      move.kind = "note";
      const marks = this.marks[cell];
      if (digit === 0) marks.length = 0;
      else if (marks.includes(digit)) marks.splice(marks.indexOf(digit), 1);
      else marks.push(digit);
    } else this.values[cell] = digit;
    this.moves.push(move);
    this.client.input[this.device] = (this.client.input[this.device] ?? 0) + 1;
    this.save();
    try {
      this.onChange(this.log());
    } catch {
      // the portal's callback is its own business
    }
  }

  /** A paste into the grid (attach() reports those it sees itself). */
  pasted(cell, digits) {
    // the paste is evidence whatever the page says of it: a count that is no count is 0,
    // a cell that is none is left out (as the daemon's schema wants them)
    const count = Number.isFinite(digits) ? Math.max(0, Math.floor(digits)) : 0;
    const paste = { t_ms: this.now(), digits: Math.min(count, LIMITS.digits) };
    if (Number.isInteger(cell) && cell >= 0 && cell < this.cells) paste.cell = cell;
    this.client.pastes.push(paste);
    this.client.paste_count += 1;
    this.save();
  }

  /** The solve so far as the webhook carries it: started_at, moves, client; once
   * finish() was called, the log it froze. */
  log() {
    if (this.finished) return structuredClone(this.finished);
    const client = structuredClone(this.client);
    const t = this.now();
    if (this.hiddenSince !== null) client.hidden.push({ t_ms: this.hiddenSince, ms: t - this.hiddenSince });
    if (this.blurSince !== null) client.blur.push({ t_ms: this.blurSince, ms: t - this.blurSince });
    return { started_at: new Date(this.startedWall).toISOString(),
             moves: this.moves.map((m) => ({ ...m })), client: withinLimits(client) };
  }

  /** The solve is over (the player submitted it): its log, frozen. log() gives the
   * same from now on, across reloads, so that posting it again after a lost answer
   * sends the same body, which fairgrid takes as a duplicate; no move is recorded
   * after it. */
  finish() {
    if (!this.finished) {
      this.finished = this.log();
      this.save();
    }
    return structuredClone(this.finished);
  }

  /** Forget the solve (after the portal's server took it). */
  clear() {
    try {
      this.storage?.removeItem(this.key);
    } catch {
      // nothing kept, nothing to clear
    }
    this.reset();
  }

  save() {
    if (!this.storage) return;
    this.savedAt = this.now();
    try {
      this.storage.setItem(this.key, JSON.stringify({
        startedWall: this.startedWall, savedWall: this.wallClock(), t: this.savedAt,
        moves: this.moves, values: this.values, marks: this.marks, done: this.done,
        client: this.client, hiddenSince: this.hiddenSince, blurSince: this.blurSince,
        finished: this.finished }));
    } catch {
      // full or refused storage: the solve goes on, only a reload would lose it
    }
  }

  /** save() after a change of visibility or focus, unless a save came less than
   * EVENT_SAVE_MS ago. */
  saveSoon() {
    if (this.savedAt === undefined || this.now() - this.savedAt >= EVENT_SAVE_MS) this.save();
  }

  /** Take up a solve a reload interrupted: the monotonic clock restarts with the page,
   * so the time the reload took (by the wall clock, never negative, at most
   * MAX_RELOAD_GAP_MS) is added, and is recorded as time the page was hidden. */
  restore() {
    let kept;
    try {
      kept = JSON.parse(this.storage?.getItem(this.key) ?? "null");
    } catch {
      kept = null;
    }
    if (!kept || !Array.isArray(kept.moves) || !kept.client) return false;
    const gap = Math.min(MAX_RELOAD_GAP_MS,
                         Math.max(0, Math.round(this.wallClock() - kept.savedWall)));
    this.startedWall = kept.startedWall;
    this.moves = kept.moves;
    this.values = kept.values;
    this.marks = Array.isArray(kept.marks) ? kept.marks
      : Array.from({ length: this.cells }, () => []);
    this.done = kept.done;
    this.client = kept.client;
    this.finished = kept.finished ?? null;
    this.lastT = kept.t + gap;
    this.t0 = this.clock() - this.lastT;
    // an interval open at the reload ends with the page that saw it begin
    const away = kept.hiddenSince ?? kept.blurSince ?? kept.t;
    this.client.hidden.push({ t_ms: away, ms: this.lastT - away });
    this.hiddenSince = this.document && this.document.hidden ? this.lastT : null;
    this.hiddenAt = this.hiddenSince === null ? null : [this.clock(), this.wallClock()];
    this.blurSince = null;
    this.savedAt = undefined; // this page has saved nothing yet
    return true;
  }

  /** The time the computer slept while the page was hidden (the wall clock ran on,
   * the monotonic one did not), at most MAX_RELOAD_GAP_MS, added to the solve's time as
   * a reload's is: it is time away like any other. */
  addSleep() {
    if (!this.hiddenAt) return;
    const [clockThen, wallThen] = this.hiddenAt;
    this.hiddenAt = null;
    const slept = (this.wallClock() - wallThen) - (this.clock() - clockThen);
    if (slept > SLEEP_SLACK_MS) this.t0 -= Math.min(slept, MAX_RELOAD_GAP_MS);
  }

  on(target, type, handler, passive = true) {
    if (!target || !target.addEventListener) return;
    const safe = (event) => {
      try {
        handler(event);
      } catch {
        // a recorder fault must never become the page's
      }
    };
    target.addEventListener(type, safe, { passive, capture: true });
    this.listeners.push([target, type, safe]);
  }

  listen() {
    const doc = this.document;
    this.on(doc, "visibilitychange", () => {
      if (!doc.hidden && this.hiddenSince !== null) this.addSleep();
      const t = this.now();
      if (doc.hidden && this.hiddenSince === null) {
        this.hiddenSince = t;
        this.hiddenAt = [this.clock(), this.wallClock()];
      } else if (!doc.hidden && this.hiddenSince !== null) {
        this.client.hidden.push({ t_ms: this.hiddenSince, ms: t - this.hiddenSince });
        this.hiddenSince = null;
      }
      this.saveSoon();
    });
    // listening in the capture phase, the window also sees each element's blur and
    // focus: only its own say the page lost or regained focus
    this.on(this.window, "blur", (event) => {
      if (event.target === this.window && this.blurSince === null) this.blurSince = this.now();
    });
    this.on(this.window, "focus", (event) => {
      if (event.target !== this.window || this.blurSince === null) return;
      const t = this.now();
      this.client.blur.push({ t_ms: this.blurSince, ms: t - this.blurSince });
      this.blurSince = null;
      this.saveSoon();
    });
    // the reload gap is measured from the page's last moment
    this.on(this.window, "pagehide", () => this.save());
    this.on(doc, "keydown", () => { this.device = "keyboard"; });
    this.on(doc, "pointerdown", (event) => {
      this.device = event.pointerType === "touch" ? "touch" : "pointer";
    });
  }

  /**
   * Record a grid of <input> elements (row-major; read-only ones are givens): a digit
   * typed places it, an emptied cell erases, a paste is recorded as one and its digits
   * placed (a whole grid's worth from the first cell, else cell after cell).
   * @param {ArrayLike<HTMLInputElement>|ParentNode} grid
   */
  attach(grid) {
    const inputs = Array.from(grid.querySelectorAll ? grid.querySelectorAll("input") : grid);
    inputs.forEach((input, cell) => {
      if (input.readOnly) this.given.add(cell);
      if (this.values[cell]) input.value = String(this.values[cell]);
      this.on(input, "input", () => {
        const digit = Number((input.value.match(/[1-9]/g) ?? []).pop() ?? 0);
        input.value = digit ? String(digit) : "";
        if (digit !== this.values[cell]) this.place(cell, digit);
      });
      this.on(input, "paste", (event) => {
        const text = event.clipboardData?.getData("text") ?? "";
        const digits = Array.from(text.replace(/[^0-9.]/g, ""));
        event.preventDefault(); // the recorder places them, one move a cell
        this.pasted(cell, digits.filter((d) => d >= "1").length);
        const from = digits.length >= inputs.length ? 0 : cell;
        digits.forEach((d, i) => {
          const target = inputs[from + i];
          if (!target || target.readOnly || d < "1" || target.value === d) return;
          target.value = d;
          this.place(from + i, Number(d));
        });
      }, false);
    });
    return this;
  }

  /** Stop listening (the log is kept). */
  detach() {
    for (const [target, type, handler] of this.listeners) {
      target.removeEventListener(type, handler, { capture: true });
    }
    this.listeners = [];
  }
}

const BLANKS = new Set([".", "0", "_"]);
const SEPARATORS = new Set([" ", "\t", "\r", "\n", "|", "+", "-"]);

/** The given cells of a puzzle's text or values (see the constructor's ``givens``),
 * read as fairgrid reads the formats (solvers/grid.py, solvers/nurikabe/model.py). */
function givenCells(givens) {
  const given = new Set();
  if (givens == null) return given;
  if (typeof givens !== "string") {
    Array.from(givens).forEach((value, cell) => { if (value) given.add(cell); });
    return given;
  }
  const header = /^\s*\d+\s*x\s*\d+\s*:/i.exec(givens);
  if (header) { // Nurikabe: a character a cell, "." empty, any other a clue
    Array.from(givens.slice(header[0].length).replace(/\s/g, "")).forEach((ch, cell) => {
      if (ch !== ".") given.add(cell);
    });
    return given;
  }
  const tokens = (givens.match(/[^\s,|]+/g) ?? []).filter((t) => /[^-+]/.test(t));
  const numbers = givens.includes(",") || (tokens.length > 1
    && tokens.every((t) => t.length <= 2) && tokens.some((t) => /^[0-9]{2}$/.test(t)));
  if (numbers) { // a number a cell
    tokens.forEach((t, cell) => { if (!BLANKS.has(t)) given.add(cell); });
    return given;
  }
  let cell = 0; // a symbol a cell, separators and line ends skipped
  for (const ch of givens) {
    if (SEPARATORS.has(ch)) continue;
    if (!BLANKS.has(ch)) given.add(cell);
    cell += 1;
  }
  return given;
}

export function record(options) {
  return new Recorder(options);
}

/** The client block within the schema's limits (solve_log.schema.json), which the
 * daemon refuses a solve beyond: a page toggled or pasted into thousands of times (by
 * accident, or to have the solve refused and so never judged) keeps every total. The
 * intervals past the last one kept add up into it, as do the pastes' digits; counters
 * stop at their maximum. */
function withinLimits(client) {
  for (const key of ["hidden", "blur"]) {
    const list = client[key];
    if (list.length > LIMITS.items) {
      const rest = list.splice(LIMITS.items - 1);
      list.push({ t_ms: rest[0].t_ms, ms: Math.min(LIMITS.ms, rest.reduce((a, x) => a + x.ms, 0)) });
    }
  }
  const pastes = client.pastes;
  if (pastes.length > LIMITS.items) {
    const rest = pastes.splice(LIMITS.items - 1);
    pastes.push({ t_ms: rest[0].t_ms, digits: rest.reduce((a, x) => a + x.digits, 0) });
  }
  for (const paste of pastes) paste.digits = Math.min(paste.digits, LIMITS.digits);
  client.paste_count = Math.min(client.paste_count, LIMITS.count);
  for (const device of Object.keys(client.input)) {
    client.input[device] = Math.min(client.input[device], LIMITS.count);
  }
  return client;
}
