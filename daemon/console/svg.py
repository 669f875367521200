"""SVG pictures for the organiser console: fill-order boards, their legend and pace charts.

The console is served under ``Content-Security-Policy: style-src 'self'``, which blocks
``style="..."`` attributes and ``<style>`` elements in inline SVG. So everything here is
drawn with SVG presentation attributes (``fill``, ``stroke``, ``font-size``,
``text-anchor`` ...) plus ``class`` hooks for the console's own stylesheet. Every SVG has
a ``viewBox`` and ``width="100%"`` (it scales on a phone), ``role="img"`` and an
``aria-labelledby`` naming its ``<title>`` and ``<desc>``. All text is XML-escaped.

Pure functions returning strings: standard library only, no I/O.
"""

from __future__ import annotations

import html
import math
import re

__all__ = ["board", "legend", "pace_chart", "rank_colour"]

_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
# light yellow -> orange -> dark red-brown (ColorBrewer YlOrBr stops)
_SCALE = ("#fff7bc", "#fec44f", "#ec7014", "#7f2704")
_DARK_TEXT, _LIGHT_TEXT = "#1a1a1a", "#ffffff"
_GIVEN_FILL = "#e3e3e3"
_FONT = 'font-family="system-ui, sans-serif"'


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _n(x: float) -> str:
    """A coordinate, short: 12.5 not 12.500000001."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def _open(id_prefix: str, width: float, height: float, title: str, desc: str, cls: str) -> str:
    if not _ID.match(id_prefix):
        raise ValueError(f"id_prefix must match {_ID.pattern!r}, got {id_prefix!r}")
    t, d = f"{id_prefix}-title", f"{id_prefix}-desc"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}"'
        f' viewBox="0 0 {_n(width)} {_n(height)}" width="100%" role="img"'
        f' aria-labelledby="{t} {d}" {_FONT}>'
        f'<title id="{t}">{_esc(title)}</title><desc id="{d}">{_esc(desc)}</desc>'
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _symbol(digit: int) -> str:
    """1..9 as digits, 10.. as letters (A = 10), as on boards bigger than 9x9."""
    return str(digit) if digit <= 9 else chr(ord("A") + digit - 10)


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def _luminance(hex_colour: str) -> float:
    """WCAG relative luminance."""
    def lin(c: int) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(lin, _rgb(hex_colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _text_colour(fill: str) -> str:
    """Dark or white text, whichever contrasts more with ``fill``."""
    lum = _luminance(fill)
    dark = (lum + 0.05) / (_luminance(_DARK_TEXT) + 0.05)
    light = 1.05 / (lum + 0.05)  # white has luminance 1
    return _DARK_TEXT if dark >= light else _LIGHT_TEXT


def rank_colour(rank: int, max_rank: int) -> str:
    """The fill colour of fill-order ``rank`` (1-based) on the scale 1..``max_rank``."""
    if max_rank < 1 or not 1 <= rank <= max_rank:
        raise ValueError(f"rank {rank} is outside 1..{max_rank}")
    t = (rank - 1) / (max_rank - 1) if max_rank > 1 else 0.0
    pos = t * (len(_SCALE) - 1)
    i = min(int(pos), len(_SCALE) - 2)
    f = pos - i
    lo, hi = _rgb(_SCALE[i]), _rgb(_SCALE[i + 1])
    return "#" + "".join(f"{round(a + (b - a) * f):02x}" for a, b in zip(lo, hi))


def board(
    box_size: int,
    givens: list[int],
    ranks: list[int | None],
    *,
    max_rank: int,
    title: str,
    id_prefix: str,
    highlight: int | None = None,
    shape: tuple[int, int] | None = None,
) -> str:
    """A puzzle grid: givens in grey, free cells coloured and numbered by fill order.
    A Sudoku grid of block side ``box_size`` has its blocks drawn; a grid of another type
    (``box_size`` 0) names its ``shape`` (rows, cols), and its givens are clue numbers."""
    if shape is None:
        if not 2 <= box_size <= 5:
            raise ValueError(f"box_size must be 2..5, got {box_size}")
        rows = cols = box_size * box_size
    else:
        rows, cols = shape
        if rows < 1 or cols < 1:
            raise ValueError(f"shape must be at least 1x1, got {rows}x{cols}")
    cells = rows * cols
    top = box_size * box_size if shape is None else cells  # the largest given
    if len(givens) != cells or len(ranks) != cells:
        raise ValueError(f"need {cells} givens and ranks, got {len(givens)} and {len(ranks)}")
    if highlight is not None and not 0 <= highlight < cells:
        raise ValueError(f"highlight {highlight} is not a cell of a {rows}x{cols} grid")

    cell, pad = 40, 2  # pad: half the thick border stays inside the viewBox
    width, height = cols * cell + 2 * pad, rows * cell + 2 * pad
    n_given = sum(1 for g in givens if g)
    n_ranked = sum(1 for g, r in zip(givens, ranks) if not g and r is not None)
    fixed = "given" if shape is None else "clue"
    desc = (
        f"{rows} by {cols} grid: {n_given} {fixed} cells in grey, {n_ranked} free cells "
        f"coloured and numbered by fill order (1 to {max_rank}), light to dark."
    )
    out = [_open(id_prefix, width, height, title, desc, "board")]
    for c, (given, rank) in enumerate(zip(givens, ranks)):
        row, col = divmod(c, cols)
        x, y = pad + col * cell, pad + row * cell
        name = f"r{row + 1}c{col + 1}"
        if given:
            if not 1 <= given <= top:
                raise ValueError(f"{name}: given {given} is outside 1..{top}")
            text = _symbol(given) if shape is None else str(given)
            cls, fill, ink, font = "given", _GIVEN_FILL, "#000000", 22 if given < 100 else 15
            tip = f"{name}: {fixed} {text}"
        elif rank is not None:
            fill = rank_colour(rank, max_rank)
            cls, ink, text, font = "rank", _text_colour(fill), str(rank), 15 if rank < 100 else 12
            tip = f"{name}: filled {_ordinal(rank)}"
        else:
            cls, fill, ink, text, font = "unknown", "#ffffff", "#888888", "\u00b7", 22
            tip = f"{name}: fill order unknown"
        out.append(
            f'<g class="cell {cls}"><title>{_esc(tip)}</title>'
            f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}"/>'
            f'<text x="{x + cell / 2:g}" y="{y + cell / 2:g}" fill="{ink}" font-size="{font}"'
            f' text-anchor="middle" dominant-baseline="central">{_esc(text)}</text></g>'
        )

    right, bottom = pad + cols * cell, pad + rows * cell
    if shape is None:  # thin lines inside blocks, thick ones around them
        thin = "".join(f"M{pad + i * cell} {pad}V{bottom}M{pad} {pad + i * cell}H{right}"
                       for i in range(1, rows) if i % box_size)
        thick = "".join(f"M{pad + i * cell} {pad}V{bottom}M{pad} {pad + i * cell}H{right}"
                        for i in range(0, rows + 1, box_size))
    else:  # no blocks: thin lines inside, the border thick
        thin = "".join(f"M{pad + i * cell} {pad}V{bottom}" for i in range(1, cols))
        thin += "".join(f"M{pad} {pad + i * cell}H{right}" for i in range(1, rows))
        thick = f"M{pad} {pad}H{right}V{bottom}H{pad}Z"
    out.append(
        f'<path class="grid-thin" d="{thin}" stroke="#9a9a9a" stroke-width="1" fill="none"/>'
        f'<path class="grid-block" d="{thick}" stroke="#222222" stroke-width="3"'
        ' fill="none" stroke-linecap="square"/>'
    )
    if highlight is not None:
        row, col = divmod(highlight, cols)
        out.append(
            f'<rect class="highlight" x="{pad + col * cell + 2}" y="{pad + row * cell + 2}"'
            f' width="{cell - 4}" height="{cell - 4}" fill="none"'
            ' stroke="#1f5fd1" stroke-width="4"/>'
        )
    out.append("</svg>")
    return "".join(out)


def legend(max_rank: int, *, id_prefix: str) -> str:
    """The colour bar for :func:`board`'s fill-order scale, ``first`` to ``last (max_rank)``."""
    if max_rank < 1:
        raise ValueError(f"max_rank must be >= 1, got {max_rank}")
    width, height, x0, x1, top, bar_h = 320, 56, 8, 312, 20, 14
    desc = f"Colour scale from light (filled first) to dark (filled last, {_ordinal(max_rank)})."
    out = [_open(id_prefix, width, height, "fill order", desc, "legend")]
    out.append(f'<text x="{x0}" y="14" font-size="12" fill="#222222">fill order</text>')
    steps = min(max_rank, 64)
    seg = (x1 - x0) / steps
    for i in range(steps):
        rank = 1 + round(i * (max_rank - 1) / (steps - 1)) if steps > 1 else 1
        # +0.5 overlap: no hairline gaps between antialiased segments
        out.append(
            f'<rect class="swatch" x="{_n(x0 + i * seg)}" y="{top}" width="{_n(seg + 0.5)}"'
            f' height="{bar_h}" fill="{rank_colour(rank, max_rank)}"/>'
        )
    out.append(
        f'<rect x="{x0}" y="{top}" width="{x1 - x0}" height="{bar_h}"'
        ' fill="none" stroke="#999999"/>'
        f'<text x="{x0}" y="50" font-size="12" fill="#222222">first</text>'
        f'<text x="{x1}" y="50" font-size="12" fill="#222222" text-anchor="end">'
        f"last ({max_rank})</text></svg>"
    )
    return "".join(out)


def _clamp(s: float) -> float:
    return max(s, 0.1)  # a log scale needs a floor; 0.1 s is the chart's baseline


def _fmt_seconds(s: float) -> str:
    return f"{s:.2f}" if s < 0.1 else f"{s:.1f}" if s < 100 else f"{s:.0f}"


def pace_chart(
    seconds: list[float],
    *,
    hard: list[bool],
    title: str,
    id_prefix: str,
    switch_at: int | None = None,
    expected: list[float] | None = None,
    marks: list[str] | None = None,
) -> str:
    """Seconds per placement as bars on a log scale; hard steps marked, pace switch dashed.
    ``marks`` names, per placement, what the evidence says of it ("" for nothing), e.g.
    "nothing forced it": such bars get a red triangle, labelled in the legend."""
    n = len(seconds)
    marks = marks if marks is not None else [""] * n
    if len(hard) != n or len(marks) != n or (expected is not None and len(expected) != n):
        raise ValueError("hard, marks and expected need one entry per placement")
    if switch_at is not None and not 0 <= switch_at < n:
        raise ValueError(f"switch_at {switch_at} is not a placement index (0..{n - 1})")
    if not all(math.isfinite(s) for s in [*seconds, *(expected or [])]):
        raise ValueError("seconds must be finite")

    width, height = 640, 220
    x0, x1, top, bottom = 56, 628, 34, 180  # plot area
    n_hard = sum(map(bool, hard))
    desc = (
        f"{n} placements, {n_hard} of them hard steps. Bar height is the seconds spent on "
        "each placement, on a log scale."
        + (f" The pace changes before placement {switch_at + 1}." if switch_at is not None else "")
        + (" A line shows the time expected for this player." if expected is not None else "")
    )
    out = [_open(id_prefix, width, height, title, desc, "pace")]
    if n == 0:
        out.append(
            f'<text class="empty" x="{width // 2}" y="{height // 2}" font-size="14" fill="#555555"'
            ' text-anchor="middle">no placements</text></svg>'
        )
        return "".join(out)

    # log10 scale from 0.1 s (the baseline) up to the next power of ten, at least 10 s
    top_decade = max(1, math.ceil(math.log10(max(map(_clamp, [*seconds, *(expected or [])])))))
    span = top_decade + 1

    def y_of(s: float) -> float:
        return bottom - (math.log10(_clamp(s)) + 1) / span * (bottom - top)

    for k in range(-1, top_decade + 1):
        y = _n(y_of(10.0**k))
        label = "0.1" if k < 0 else str(10**k)
        out.append(
            f'<line class="grid" x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#e0e0e0"/>'
            f'<text x="{x0 - 4}" y="{y}" font-size="10" fill="#444444" text-anchor="end"'
            f' dominant-baseline="central">{label}</text>'
        )
    mid = (top + bottom) / 2
    out.append(
        f'<text x="14" y="{_n(mid)}" font-size="10" fill="#444444" text-anchor="middle"'
        f' transform="rotate(-90 14 {_n(mid)})">seconds (log scale)</text>'
        f'<text x="{(x0 + x1) // 2}" y="{height - 4}" font-size="10" fill="#444444"'
        ' text-anchor="middle">placement</text>'
    )

    slot = (x1 - x0) / n
    bar_w = min(slot * 0.8, 24)
    centre = [x0 + (i + 0.5) * slot for i in range(n)]
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100) if n / s <= 12)
    for p in sorted({1, *range(step, n + 1, step)}):
        cx = _n(centre[p - 1])
        out.append(
            f'<line x1="{cx}" y1="{bottom}" x2="{cx}" y2="{bottom + 3}" stroke="#444444"/>'
            f'<text x="{cx}" y="{bottom + 13}" font-size="10" fill="#444444"'
            f' text-anchor="middle">{p}</text>'
        )

    for i, (s, is_hard, mark) in enumerate(zip(seconds, hard, marks)):
        y = y_of(s)
        h = max(bottom - y, 1.0)  # a 0.1 s bar still shows
        cls, fill = ("hard", "#d95f02") if is_hard else ("easy", "#7b9cc4")
        tip = (f"placement {i + 1}: {_fmt_seconds(s)} s" + (" (hard step)" if is_hard else "")
               + (f"; {mark}" if mark else ""))
        out.append(
            f'<rect class="bar {cls}" x="{_n(centre[i] - bar_w / 2)}" y="{_n(bottom - h)}"'
            f' width="{_n(bar_w)}" height="{_n(h)}" fill="{fill}"><title>{_esc(tip)}</title></rect>'
        )
        if is_hard:  # a shape as well as a colour, for colour-blind readers
            out.append(
                f'<circle class="marker" cx="{_n(centre[i])}" cy="{_n(bottom - h - 4)}"'
                f' r="{_n(min(2.5, max(slot / 2, 1.2)))}" fill="#d95f02"/>'
            )
        if mark:  # below the axis, so it never hides a hard step's dot
            cx, r = centre[i], min(4.0, max(slot / 2, 1.5))
            out.append(
                f'<path class="evidence-mark" d="M{_n(cx)},{bottom + 16} l{_n(r)},{_n(2 * r)} '
                f'l{_n(-2 * r)},0 z" fill="#a50e0e"><title>{_esc(f"placement {i + 1}: {mark}")}'
                '</title></path>'
            )
    out.append(
        f'<line class="axis" x1="{x0}" y1="{bottom}" x2="{x1}" y2="{bottom}" stroke="#444444"/>'
    )

    if switch_at is not None:
        x = x0 + switch_at * slot
        anchor, dx = ("end", -3) if x > (x0 + x1) / 2 else ("start", 3)
        out.append(
            f'<g class="switch"><line x1="{_n(x)}" y1="{top - 14}" x2="{_n(x)}" y2="{bottom}"'
            ' stroke="#222222" stroke-width="1.5" stroke-dasharray="5 3"/>'
            f'<text x="{_n(x + dx)}" y="{top - 8}" font-size="10" fill="#222222"'
            f' text-anchor="{anchor}">pace changes here</text></g>'
        )

    legend_x = x1  # legend entries are right-aligned at the top, laid out leftwards
    if expected is not None:
        points = " ".join(f"{_n(cx)},{_n(y_of(e))}" for cx, e in zip(centre, expected))
        out.append(
            f'<polyline class="expected" points="{points}" fill="none" stroke="#1b1b1b"'
            ' stroke-width="1.5"><title>expected for this player</title></polyline>'
            f'<g class="legend-entry"><line x1="{legend_x - 158}" y1="8" x2="{legend_x - 142}"'
            ' y2="8" stroke="#1b1b1b" stroke-width="1.5"/>'
            f'<text x="{legend_x}" y="8" font-size="10" fill="#222222" text-anchor="end"'
            ' dominant-baseline="central">expected for this player</text></g>'
        )
        legend_x -= 170
    if n_hard:
        label = "hard step (top quarter by difficulty)"
        out.append(
            f'<g class="legend-entry"><circle cx="{_n(legend_x - 5.2 * len(label) - 8)}" cy="8"'
            f' r="3" fill="#d95f02"/><text x="{legend_x}" y="8" font-size="10" fill="#222222"'
            f' text-anchor="end" dominant-baseline="central">{label}</text></g>'
        )
        legend_x -= 5.2 * len(label) + 20
    for label in dict.fromkeys(m for m in marks if m):
        out.append(
            f'<g class="legend-entry evidence"><path d="M{_n(legend_x - 5.2 * len(label) - 11)},4'
            ' l3,6 l-6,0 z" fill="#a50e0e"/>'
            f'<text x="{_n(legend_x)}" y="8" font-size="10" fill="#222222" text-anchor="end"'
            f' dominant-baseline="central">{_esc(label)}</text></g>'
        )
        legend_x -= 5.2 * len(label) + 22
    out.append("</svg>")
    return "".join(out)
