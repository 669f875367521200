// Types of @fairgrid/recorder (src/recorder.js). The log's shape is the solve webhook's
// (daemon/ingest/solve_log.schema.json, shipped as "@fairgrid/recorder/schema").

export declare const CLIENT_VERSION: 1;
export declare const RECORDER: string;

export interface Move {
  /** ms since started_at, on the page's monotonic clock; never decreases */
  t_ms: number;
  /** 0-based, row-major */
  cell: number;
  /** 1..size, 0 erases; for a note, the mark toggled (0 clears the cell's marks) */
  digit: number;
  kind?: "note";
}

export interface Interval {
  /** when it began, ms since started_at */
  t_ms: number;
  /** how long it lasted */
  ms: number;
}

export interface Paste {
  t_ms: number;
  cell?: number;
  /** digits the pasted text held */
  digits: number;
}

export interface ClientSignals {
  version: 1;
  recorder: string;
  paste_count: number;
  pastes: Paste[];
  /** the page was hidden (another tab, minimised, or reloading) */
  hidden: Interval[];
  /** the page was shown but had lost focus */
  blur: Interval[];
  /** moves per input device */
  input: { keyboard?: number; pointer?: number; touch?: number; api?: number };
}

export interface SolveLog {
  /** ISO 8601, UTC */
  started_at: string;
  moves: Move[];
  client: ClientSignals;
}

export interface RecorderOptions {
  /** names this solve in session storage (e.g. the puzzle id); "solve" by default */
  key?: string;
  /** the grid's cell count, 81 by default */
  cells?: number;
  /** the largest digit a move may hold: the side of a square grid unless given (9 for
   * 9x9); 2 for Nurikabe. A move beyond it is not recorded. */
  maxDigit?: number;
  /** the puzzle's givens: its text in any format fairgrid reads (one line or a grid with
   * ".", "0" or "_" blanks, numbers between commas, Nurikabe's "ROWSxCOLS:cells"), or a
   * value a cell (0 blank). A move on a given is not recorded (fairgrid refuses a log
   * with one); attach() takes read-only inputs as givens too. */
  givens?: string | ArrayLike<number>;
  /** monotonic ms, performance.now by default */
  clock?: () => number;
  /** epoch ms, Date.now by default */
  wallClock?: () => number;
  /** sessionStorage by default; null keeps nothing across a reload */
  storage?: Pick<Storage, "getItem" | "setItem" | "removeItem"> | null;
  document?: EventTarget & { hidden?: boolean };
  window?: EventTarget;
  onChange?: (log: SolveLog) => void;
}

export declare class Recorder {
  constructor(options?: RecorderOptions);
  place(cell: number, digit: number): void;
  erase(cell: number): void;
  note(cell: number, digit: number): void;
  /** reverses the last move still standing, as a new move; false when none is left */
  undo(): boolean;
  /** record a paste the portal's own grid handled */
  pasted(cell: number | undefined, digits: number): void;
  /** record a grid of <input> elements (row-major; read-only ones are givens) */
  attach(grid: ArrayLike<HTMLInputElement> | ParentNode): this;
  detach(): void;
  /** the solve so far, as the webhook carries it; after finish(), the log it froze */
  log(): SolveLog;
  /** the solve is over: its log, frozen (log() gives the same from now on, across
   * reloads, so a re-post after a lost answer is the same body) */
  finish(): SolveLog;
  /** forget the solve, after the portal's server took it */
  clear(): void;
  /** ms since the start */
  now(): number;
}

export declare function record(options?: RecorderOptions): Recorder;
