"""Helpers shared by the benchmark scripts: test puzzles, C references, timing."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
BUILD = BENCH / "_build"
SHARED_DATA = BENCH.parent.parent / "shared" / "data"

# The test puzzles, with their Sudoku Explainer ratings.
PUZZLES = {
    "easy": "003020600900305001001806400008102900700000008006708200002609500800203009005010300",
    "medium": "000000907000420180000705026100904000050000040000507009920108000034059000507000000",
    "sa-hard": "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......",
    "human-hard": "800000000003600000070090200050007000000045700000100030001000068008500010090000400",
}


def compile_c(name: str) -> Path:
    """Compile ``bench/<name>.c`` with the machine's ``cc -O2`` into bench/_build."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("no C compiler (cc) on PATH: the benchmark needs one for its reference")
    BUILD.mkdir(exist_ok=True)
    src, exe = BENCH / f"{name}.c", BUILD / name
    if not exe.exists() or exe.stat().st_mtime < src.stat().st_mtime:
        subprocess.run([cc, "-O2", "-o", str(exe), str(src), "-lm"], check=True)
    return exe


def machine() -> str:
    """One line describing this machine, for the benchmark record."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds``."""

    def __enter__(self):
        self._t = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t


class Phases:
    """A bar on stderr, when it is a terminal, for a bench that runs for minutes: how many
    of its phases are done, the one running now and a note on the last result."""

    def __init__(self, total: int):
        from tqdm import tqdm
        self._bar = tqdm(total=total, unit="phase", file=sys.stderr, disable=None,
                         bar_format="{n_fmt}/{total_fmt} phases {bar:20} {desc} {postfix}")

    def start(self, name: str) -> None:
        self._bar.set_description_str(name)

    def done(self, note: str | None = None) -> None:
        self._bar.update()
        if note:
            self._bar.set_postfix_str(note)

    def close(self) -> None:
        self._bar.close()


DOCS_IMG = BENCH.parent / "docs" / "img"


def parse_with_data(ap):
    """Parse the command line with ``--data`` (the folder of the reference data, default
    ../shared/data) added, and read the data from there."""
    global SHARED_DATA
    ap.add_argument("--data", help="folder of sudoku_org_uk_times_train.tsv "
                                   "(default: ../shared/data)")
    args = ap.parse_args()
    if args.data:
        SHARED_DATA = Path(args.data)
    return args


def org_uk_rows() -> list[dict]:
    """sudoku.org.uk daily puzzles with mean human time (minutes) and solver counts."""
    import csv

    path = SHARED_DATA / "sudoku_org_uk_times_train.tsv"
    if not path.is_file():
        raise SystemExit(f"error: the reference data {path} is missing")
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def auc(pos, neg) -> float:
    """ROC AUC by the Mann-Whitney statistic (ties count half)."""
    import numpy as np
    from scipy.stats import rankdata
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    if not pos.size or not neg.size:
        return float("nan")
    r = rankdata(np.concatenate([pos, neg]))
    return float((r[:pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def _first_flagged(chunk):
    """For each (season, null): the number of solves after which the player is first
    flagged (None: never), the season's final verdict (p, the kind that flagged) and the
    least p at any point of it; every prefix of the season judged once, as the daemon
    judges after each scoring batch."""
    from fairgrid.analytics.player_verdict import judge
    out = []
    for season, null in chunk:
        until, final, least = None, None, 1.0
        for n in range(1, len(season) + 1):
            final = judge(season[:n], null)
            least = min(least, final.p_value)
            if final.flagged and until is None:
                until = n
        if final is None:
            final = judge([], null)
        out.append((until, final.p_value,
                    final.findings[0].kind if final.flagged else None, least))
    return out


def seasons_in_play_order(solves, facts) -> dict:
    """{player: their solves' ``facts``, in the order they played them}: ``solves`` are
    dicts with ``player`` and ``at`` (the puzzle's place in the player's season),
    ``facts`` the ``SolveFacts`` of each, in the same order."""
    seasons = {}
    for k in sorted(range(len(solves)), key=lambda k: solves[k]["at"]):
        seasons.setdefault(solves[k]["player"], []).append(facts[k])
    return seasons


def judge_seasons(seasons: dict, null, pool=None) -> dict:
    """Players' season verdicts as the service judges them (``analytics.player_verdict``):
    {player: (solves until first flagged or None, final p, the kind that flagged, least
    p over the season)}; ``seasons`` maps each player to their ``SolveFacts``, oldest
    first. ``pool`` (an executor) judges chunks of 25 players in parallel."""
    ids = sorted(seasons)
    chunks = [[(seasons[i], null) for i in ids[k:k + 25]] for k in range(0, len(ids), 25)]
    got = [v for out in (pool.map(_first_flagged, chunks) if pool is not None
                         else map(_first_flagged, chunks)) for v in out]
    return dict(zip(ids, got))


def portal_player_null(seasons: dict, cold: dict, cold_null):
    """The player null the nightly job learns from a portal's players, cheaters among
    them as on a real portal, with the shipped offsets: here the players the cold verdict
    never flagged, as the daemon does: it learns from players whose state is clear or
    cleared, and a flagged player stays flagged until a person decides)."""
    from fairgrid.analytics import player_verdict as pv
    return pv.learn_null([seasons[pid] for pid, v in cold.items() if v[0] is None],
                         "this portal's players", cold_null.llr_offset, screen=cold_null)
