"""The console's SVG pictures: well-formed, CSP-safe (no style), escaped, and drawn right."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from fairgrid.daemon.console import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(markup: str) -> ET.Element:
    return ET.fromstring(markup)


def with_class(root: ET.Element, cls: str) -> list[ET.Element]:
    return [e for e in root.iter() if cls in e.get("class", "").split()]


def own_text(el: ET.Element, tag: str) -> str:
    return "".join(c.text or "" for c in el if c.tag == NS + tag)


def fill_of(group: ET.Element) -> str:
    return next(c for c in group if c.tag == NS + "rect").get("fill")


def sample_board(box_size: int, *, title: str = "board", id_prefix: str = "b", **kw) -> str:
    """Every third cell given (digit cycling), the rest ranked 1.., every seventh unknown."""
    size = box_size * box_size
    givens, ranks, r = [], [], 0
    for c in range(size * size):
        if c % 3 == 0:
            givens.append(c % size + 1)
            ranks.append(None)
        else:
            givens.append(0)
            if c % 7 == 0:
                ranks.append(None)
            else:
                r += 1
                ranks.append(r)
    return svg.board(box_size, givens, ranks, max_rank=max(r, 1), title=title,
                     id_prefix=id_prefix, **kw)


def counts(box_size: int) -> tuple[int, int, int]:
    cells = box_size**4
    given = sum(1 for c in range(cells) if c % 3 == 0)
    unknown = sum(1 for c in range(cells) if c % 3 and c % 7 == 0)
    return given, cells - given - unknown, unknown


def all_pictures() -> list[str]:
    return [
        sample_board(2), sample_board(3, highlight=4), sample_board(4), sample_board(5),
        svg.legend(1, id_prefix="l1"), svg.legend(300, id_prefix="l2"),
        svg.pace_chart([], hard=[], title="none", id_prefix="p0"),
        svg.pace_chart([0.0, 0.05, 3.0, 4000.0], hard=[False, True, False, True], title="t",
                       id_prefix="p1", switch_at=3, expected=[1.0, 2.0, 3.0, 4.0]),
        svg.pace_chart([1.5] * 256, hard=[i % 5 == 0 for i in range(256)], title="t",
                       id_prefix="p2", switch_at=0),
    ]


@pytest.mark.parametrize("markup", all_pictures())
def test_well_formed_accessible_and_csp_safe(markup: str) -> None:
    root = parse(markup)
    assert root.tag == NS + "svg"
    assert root.get("viewBox") and root.get("width") == "100%" and root.get("role") == "img"
    ids = {e.get("id"): e for e in root.iter() if e.get("id")}
    labelled = root.get("aria-labelledby").split()
    assert [ids[i].tag for i in labelled] == [NS + "title", NS + "desc"]
    assert "style=" not in markup and "<style" not in markup
    assert not any("style" in e.attrib for e in root.iter())


def test_titles_are_escaped() -> None:
    nasty = '<script>alert("x")</script>&"'
    for markup in (sample_board(2, title=nasty),
                   svg.pace_chart([1.0], hard=[True], title=nasty, id_prefix="p"),
                   svg.pace_chart([], hard=[], title=nasty, id_prefix="p")):
        assert "<script" not in markup
        root = parse(markup)
        assert own_text(root, "title") == nasty
        assert not list(root.iter(NS + "script"))


def test_ids_use_the_prefix_and_bad_prefixes_are_refused() -> None:
    a, b = parse(sample_board(2, id_prefix="one")), parse(sample_board(2, id_prefix="two"))
    ids_a = {e.get("id") for e in a.iter() if e.get("id")}
    ids_b = {e.get("id") for e in b.iter() if e.get("id")}
    assert ids_a == {"one-title", "one-desc"} and not ids_a & ids_b
    with pytest.raises(ValueError):
        svg.legend(3, id_prefix='x" onload="alert(1)')


@pytest.mark.parametrize("box_size", [2, 3])
def test_board_draws_every_cell_once(box_size: int) -> None:
    root = parse(sample_board(box_size))
    given, ranked, unknown = counts(box_size)
    assert len(with_class(root, "given")) == given
    assert len(with_class(root, "rank")) == ranked
    assert len(with_class(root, "unknown")) == unknown
    assert len(with_class(root, "cell")) == box_size**4
    for g in with_class(root, "unknown"):
        assert own_text(g, "text") == "\u00b7"
        assert fill_of(g) == "#ffffff"


def test_board_cell_titles_and_rank_text() -> None:
    # 4x4: r1c1 given 3, r1c2 free filled 2nd, the rest unknown
    givens = [3] + [0] * 15
    ranks: list[int | None] = [None, 2] + [None] * 14
    root = parse(svg.board(2, givens, ranks, max_rank=5, title="t", id_prefix="b"))
    cells = with_class(root, "cell")
    assert own_text(cells[0], "title") == "r1c1: given 3"
    assert own_text(cells[0], "text") == "3"
    assert own_text(cells[1], "title") == "r1c2: filled 2nd"
    assert own_text(cells[1], "text") == "2"
    assert fill_of(cells[1]) == svg.rank_colour(2, 5)
    assert own_text(cells[6], "title").startswith("r2c3:")


def test_highlight_is_drawn_only_when_asked() -> None:
    assert len(with_class(parse(sample_board(3, highlight=40)), "highlight")) == 1
    assert not with_class(parse(sample_board(3)), "highlight")
    with pytest.raises(ValueError):
        sample_board(2, highlight=16)


def test_big_digits_are_letters() -> None:
    size = 16
    givens = [c % size + 1 for c in range(size * size)]
    root = parse(svg.board(4, givens, [None] * size * size, max_rank=1, title="t",
                           id_prefix="b"))
    written = [own_text(g, "text") for g in with_class(root, "given")][:size]
    assert written == [str(d) for d in range(1, 10)] + list("ABCDEFG")
    assert own_text(with_class(root, "given")[9], "title") == "r1c10: given A"


def test_colour_scale_is_shared_and_runs_end_to_end() -> None:
    assert svg.rank_colour(1, 40) == "#fff7bc"
    assert svg.rank_colour(40, 40) == "#7f2704"
    assert svg.rank_colour(1, 40) != svg.rank_colour(40, 40)
    assert svg.rank_colour(1, 1) == "#fff7bc"
    assert len({svg.rank_colour(r, 40) for r in range(1, 41)}) == 40
    # two boards with the same max_rank colour the same rank the same
    a = svg.board(2, [0] * 16, [7] + [None] * 15, max_rank=40, title="a", id_prefix="a")
    b = svg.board(2, [1] + [0] * 15, [None, 7] + [None] * 14, max_rank=40, title="b",
                  id_prefix="b")
    assert fill_of(with_class(parse(a), "rank")[0]) == fill_of(with_class(parse(b), "rank")[0])
    with pytest.raises(ValueError):
        svg.rank_colour(41, 40)


def test_rank_text_stays_readable() -> None:
    def luminance(hex_colour: str) -> float:  # WCAG 2 relative luminance
        lin = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in lin]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    def contrast(a: str, b: str) -> float:
        hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    root = parse(svg.board(3, [0] * 81, list(range(1, 82)), max_rank=81, title="t",
                           id_prefix="b"))
    for g in with_class(root, "rank"):
        ink = next(c for c in g if c.tag == NS + "text").get("fill")
        assert contrast(fill_of(g), ink) >= 4.0
    inks = {next(c for c in g if c.tag == NS + "text").get("fill")
            for g in with_class(root, "rank")}
    assert len(inks) == 2  # dark on the light end, white on the dark end


def test_legend_ends() -> None:
    root = parse(svg.legend(81, id_prefix="leg"))
    texts = [t.text for t in root.iter(NS + "text")]
    assert texts == ["fill order", "first", "last (81)"]
    assert own_text(root, "title") == "fill order"
    swatches = [e.get("fill") for e in with_class(root, "swatch")]
    assert swatches[0] == svg.rank_colour(1, 81) and swatches[-1] == svg.rank_colour(81, 81)


def bars(root: ET.Element) -> list[ET.Element]:
    return with_class(root, "bar")


@pytest.mark.parametrize("n", [1, 7, 60, 256])
def test_one_bar_per_placement_inside_a_fixed_viewbox(n: int) -> None:
    hard = [i % 4 == 1 for i in range(n)]
    root = parse(svg.pace_chart([float(i % 9 + 1) for i in range(n)], hard=hard, title="t",
                                id_prefix="p"))
    assert root.get("viewBox") == "0 0 640 220"
    drawn = bars(root)
    assert len(drawn) == n
    assert [("hard" in b.get("class").split()) for b in drawn] == hard
    assert all(("easy" in b.get("class").split()) != h for b, h in zip(drawn, hard))
    assert len(with_class(root, "marker")) == sum(hard)
    for b in drawn:
        x, w = float(b.get("x")), float(b.get("width"))
        assert 0 < w and 0 <= x and x + w <= 640


def test_bar_titles() -> None:
    root = parse(svg.pace_chart([2.0, 4.3], hard=[False, True], title="t", id_prefix="p"))
    assert [own_text(b, "title") for b in bars(root)] == [
        "placement 1: 2.0 s", "placement 2: 4.3 s (hard step)"]


def test_log_scale_heights() -> None:
    secs = [1.0, 10.0, 100.0, 0.01, 0.1]
    root = parse(svg.pace_chart(secs, hard=[False] * 5, title="t", id_prefix="p"))
    h = [float(b.get("height")) for b in bars(root)]
    assert h[2] > h[1] > h[0] > 0
    assert h[2] - h[1] == pytest.approx(h[1] - h[0], abs=0.02)  # equal steps per decade
    assert h[3] == h[4] and h[3] < h[0]  # clamped to 0.1 s, still visible
    bottoms = {round(float(b.get("y")) + float(b.get("height")), 2) for b in bars(root)}
    assert len(bottoms) == 1
    ticks = [t.text for t in root.iter(NS + "text")]
    assert {"0.1", "1", "10", "100"} <= set(ticks) and "1000" not in ticks
    assert "seconds (log scale)" in ticks and "placement" in ticks


def test_switch_line_only_when_asked() -> None:
    secs, hard = [1.0, 2.0, 30.0, 40.0], [False, False, True, True]
    root = parse(svg.pace_chart(secs, hard=hard, title="t", id_prefix="p", switch_at=2))
    (switch,) = with_class(root, "switch")
    assert "pace changes here" in "".join(switch.itertext())
    line = next(switch.iter(NS + "line"))
    assert line.get("stroke-dasharray")
    b1, b2 = bars(root)[1:3]  # the line lies between bars 2 and 3
    assert float(b1.get("x")) + float(b1.get("width")) < float(line.get("x1")) < float(b2.get("x"))
    plain = svg.pace_chart(secs, hard=hard, title="t", id_prefix="p")
    assert not with_class(parse(plain), "switch") and "pace changes here" not in plain
    with pytest.raises(ValueError):
        svg.pace_chart(secs, hard=hard, title="t", id_prefix="p", switch_at=4)


def test_expected_line() -> None:
    root = parse(svg.pace_chart([1.0, 5.0, 9.0], hard=[False] * 3, title="t", id_prefix="p",
                                expected=[2.0, 2.0, 20.0]))
    (line,) = with_class(root, "expected")
    assert len(line.get("points").split()) == 3
    assert "expected for this player" in "".join(root.itertext())
    plain = svg.pace_chart([1.0], hard=[False], title="t", id_prefix="p")
    assert "expected" not in plain


def test_no_placements() -> None:
    markup = svg.pace_chart([], hard=[], title="t", id_prefix="p")
    root = parse(markup)
    assert not bars(root)
    assert "no placements" in "".join(root.itertext())


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError):
        svg.pace_chart([1.0, 2.0], hard=[True], title="t", id_prefix="p")
    with pytest.raises(ValueError):
        svg.board(2, [0] * 15, [None] * 16, max_rank=1, title="t", id_prefix="b")


def test_numbers_are_short() -> None:
    markup = svg.pace_chart([1.234567] * 13, hard=[True] * 13, title="t", id_prefix="p",
                            expected=[3.3333333] * 13)
    assert not re.search(r"\d\.\d{3,}", markup)


def test_a_board_without_blocks_has_its_own_shape_and_clue_numbers():
    # a 3x4 Nurikabe: clues 10 and 1, the rest ranked
    givens = [10] + [0] * 10 + [1]
    ranks = [None] + list(range(1, 11)) + [None]
    root = parse(svg.board(0, givens, ranks, max_rank=10, title="t", id_prefix="nk",
                           shape=(3, 4)))
    assert root.get("viewBox") == "0 0 164 124"
    assert own_text(root, "desc").startswith("3 by 4 grid: 2 clue cells")
    clues = [own_text(g, "text") for g in with_class(root, "given")]
    assert clues == ["10", "1"]  # numbers, not Sudoku's base-36 digits
    assert [own_text(g, "text") for g in with_class(root, "rank")] == [
        str(r) for r in range(1, 11)]
    # the border is the only thick line; thin ones part every row and column
    assert with_class(root, "grid-block")[0].get("d") == "M2 2H162V122H2Z"
    assert with_class(root, "grid-thin")[0].get("d").count("M") == 3 + 2
    with pytest.raises(ValueError, match="need 12 givens"):
        svg.board(0, givens[:11], ranks, max_rank=10, title="t", id_prefix="nk",
                  shape=(3, 4))
    with pytest.raises(ValueError, match="outside 1..12"):
        svg.board(0, [13] + givens[1:], ranks, max_rank=10, title="t", id_prefix="nk",
                  shape=(3, 4))


def test_evidence_marks_are_drawn_and_named_in_the_legend() -> None:
    marks = ["", "nothing forced it", "", "nothing forced it, nothing proved it"]
    markup = svg.pace_chart([1.0, 2.0, 3.0, 4.0], hard=[False, False, True, False],
                            title="t", id_prefix="p", marks=marks)
    root = parse(markup)
    drawn = with_class(root, "evidence-mark")
    assert len(drawn) == 2
    assert [own_text(m, "title") for m in drawn] == [
        "placement 2: nothing forced it", "placement 4: nothing forced it, nothing proved it"]
    legend = " ".join(t.text or "" for t in root.iter() if t.tag.endswith("text"))
    assert "nothing forced it" in legend and "hard step (top quarter by difficulty)" in legend
    with pytest.raises(ValueError):
        svg.pace_chart([1.0], hard=[False], title="t", id_prefix="p", marks=["", ""])
