"""The text (and optional PNG) of ``fairgrid report``: verdict, signals with their
explanations, and the predicted and actual fill orders side by side."""

from __future__ import annotations

from fairgrid.analytics.evidence import Evidence
from fairgrid.solvers.puzzle_types import puzzle_type

from ..text import shown


def _rank_text(grid_rows, cell_width: int, blocks: bool = True) -> list[str]:
    """A rank grid as text lines: ranks 1-based, givens as '·'; Sudoku's blocks apart."""
    size = len(grid_rows)
    if not blocks:
        return [" ".join("·".rjust(cell_width) if v is None else str(v).rjust(cell_width)
                         for v in row) for row in grid_rows]
    box = int(round(size ** 0.5))
    lines = []
    for r, row in enumerate(grid_rows):
        if r and r % box == 0:
            lines.append("-+-".join(["-" * ((cell_width + 1) * box - 1)] * box))
        cells = ["·".rjust(cell_width) if v is None else str(v).rjust(cell_width)
                 for v in row]
        blocks = [" ".join(cells[b * box:(b + 1) * box]) for b in range(box)]
        lines.append(" | ".join(blocks))
    return lines

def print_report(doc: dict, png: str | None = None) -> None:
    """Print a submission document (``documents.submission``); draw both orders to
    ``png`` as well when given."""
    score = doc.get("score")
    print(f"{shown(doc['portal'])}/{shown(doc['submission_id'])}  player "
          f"{shown(doc['player_id'])}  puzzle {shown(doc['puzzle_id'])}  tournament "
          f"{shown(doc.get('tournament_id'))}  status {doc['status']}")
    if doc.get("score_error"):
        print(shown(doc["score_error"])
              + ("" if score is None else "; its last score follows"))
    if score is None:
        if not doc.get("score_error"):
            print("not scored yet (its puzzle is still being analysed)")
        return
    ev = Evidence.from_json(score)
    verdict = "FLAGGED for review" if ev.flagged else "not flagged"
    print(ev.verdict or verdict)
    print(f"anomaly {ev.anomaly:.2f}; a solve at least this unusual: {ev.unusual}")
    counts = ev.counts
    print(f"{counts.filled} cells filled, {counts.mistakes} mistakes, "
          f"{counts.erasures} erasures, {counts.overwrites} overwrites\n")
    for s in sorted(ev.signals, key=lambda s: -s.contribution):
        print(f"  {s.what}: {s.unusual} (against {s.population})\n      {s.explanation}")
    pred, actual = ev.predicted_order, ev.actual_order
    width = max(2, len(str(len(ev.timeline))))
    ptype = puzzle_type(ev.puzzle_type)
    left, right = (_rank_text(pred, width, ptype.blocks),
                   _rank_text(actual, width, ptype.blocks))
    pad = max(len(x) for x in left)
    model = ptype.words.model
    print(f"\n{f'predicted order ({model}), 1 = first':<{pad}}    this solve")
    for a, b in zip(left, right):
        print(f"{a:<{pad}}    {b}")
    if png:
        import numpy as np

        from .plots import orders_side_by_side

        flat_p = [np.nan if v is None else v for row in pred for v in row]
        flat_a = [np.nan if v is None else v for row in actual for v in row]
        givens = np.array(ev.givens)
        rows, cols = len(actual), len(actual[0])
        orders_side_by_side(np.array(flat_p, dtype=float), np.array(flat_a, dtype=float),
                            givens, int(round(rows ** 0.5)) if ptype.blocks else 0,
                            f"{shown(doc['portal'])}/{shown(doc['submission_id'])}: "
                            f"{verdict}, "
                            f"anomaly {ev.anomaly:.1f}", png,
                            None if ptype.blocks else (rows, cols))


def print_case(verdict: dict) -> None:
    """A player's verdict as a case: the verdict, what it rests on, each finding with
    the solves behind it, and the decisions so far; for a flagged player whose evidence
    has since been diluted, what flagged them first."""
    then = verdict.get("flagging")
    receded = then and verdict["state"] == "flagged" and not verdict["flagged"]
    if receded:
        print(f"Season verdict: FLAGGED — when flagged ({(verdict['flagged_at'] or '')[:19]}, over "
              f"{then['solves']} solves): {then['summary']}")
        _print_findings(then["findings"])
        print(f"  By itself the season of {verdict['solves']} solves no longer flags the "
              f"player; the case waits for a person: {verdict['summary']}")
    else:
        print(f"Season verdict: {verdict['state'].upper()} — {verdict['summary']}")
    print(f"  {verdict['rests_on']}")
    print(f"  Judged at {verdict['judged_at']} (review-player --judged-at takes it: the "
          f"decision is refused if the verdict is judged again first).")
    _print_findings(verdict["findings"])
    for h in verdict["history"]:
        print(f"  {history_entry(h)}")


def history_entry(h: dict) -> str:
    """One decision of a flag's or a player's history as a line: its note and actor are
    free text other people wrote, shown escaped (no escape sequence or bidi control
    reaches the reader's terminal)."""
    return (f"{h['changed_at'][:19]} {h['state']} by {shown(h['actor'])}"
            + (f" ({shown(h['note'])})" if h["note"] else ""))


def _print_findings(findings: list[dict]) -> None:
    """The findings below 0.05, each with the solves behind it."""
    for f in findings:
        if f["p"] >= 0.05:
            continue
        print(f"  - {f['sentence']}")
        if f["solves"]:
            print(f"    solves: {', '.join(shown(s) for s in f['solves'])}")
