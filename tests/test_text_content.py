"""Text keeps what the file says (issue 33, item 3): positioned spans, hidden spans,
``xml:space="preserve"``, ``ex`` and the ``font`` shorthand. Each case is a
composition rendered through ThorVG; where its ink lands is measured from the
RGBA, against the renderer's own measurements or a reference composition."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fontTools.ttLib import TTFont

from nanoframes.bake.baker import Baker
from nanoframes.engine.raster import get_rasterizer
from nanoframes.model.composition import parse
from nanoframes.text.content import NBSP, collect
from nanoframes.text.faces import face_x_height
from nanoframes.text.fonts import FontBook
from nanoframes.text.measure import Measurer
from nanoframes.text.runs import advance
from nanoframes.text.style import expand_font, font_request

W, H = 400, 200
SVG = 'xmlns="http://www.w3.org/2000/svg"'


@pytest.fixture(scope="module")
def book() -> FontBook:
    return FontBook(host_dirs=())  # bundled faces only: the same on every machine


def render(tmp_path: Path, book: FontBook, body: str, name: str = "t") -> np.ndarray:
    path = tmp_path / f"{name}.nf.svg"
    path.write_text(f'<svg {SVG} data-width="{W}" data-height="{H}" data-fps="10" '
                    f'data-duration="1">{body}</svg>', encoding="utf-8")
    baker = Baker(parse(path, tmp_path), book)
    return get_rasterizer().render(baker.document(0), W, H).copy()


def box(alpha: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(alpha > 0)
    assert xs.size, "nothing drawn"
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def band(pixels: np.ndarray, y0: int, y1: int) -> tuple[int, int, int, int]:
    """The ink box of the rows y0..y1 only (one line of text)."""
    alpha = np.zeros(pixels.shape[:2], np.uint8)
    alpha[y0:y1] = pixels[y0:y1, :, 3]
    return box(alpha)


def expected(book: FontBook, size: float, text: str, x: float, y: float):
    ink = Measurer().ink(book.default, size, text).moved(x, y)
    return ink.x, ink.y, ink.x + ink.w, ink.y + ink.h


def near(drawn, measured, tol: float = 1.0) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(drawn, measured))


def ink_measure(book: FontBook, size: float):
    m = Measurer()
    return lambda s: m.ink(book.default, size, s)


# --- positioned spans ---------------------------------------------------------------


def test_positioned_tspans_are_lines_where_the_file_puts_them(tmp_path, book) -> None:
    drawn = render(tmp_path, book, '<text x="20" y="50" font-size="24">First'
                   '<tspan x="40" dy="40">Second</tspan><tspan x="60" y="150">Third</tspan></text>')
    for (text, x, y), (y0, y1) in zip((("First", 20, 50), ("Second", 40, 90),
                                       ("Third", 60, 150)), ((0, 60), (60, 100), (110, 200))):
        assert near(band(drawn, y0, y1), expected(book, 24, text, x, y)), text


def test_end_anchor_puts_each_positioned_line_on_x(tmp_path, book) -> None:
    drawn = render(tmp_path, book, '<text x="380" y="60" font-size="24" text-anchor="end">'
                   'Alpha wide<tspan x="380" dy="60">Be</tspan></text>')
    first, second = band(drawn, 0, 75), band(drawn, 75, 200)
    assert abs(first[2] - 380) <= 1 and abs(second[2] - 380) <= 1  # right ink edges on x
    assert first[0] < second[0] - 50  # two lines, not one run off the canvas
    assert first[0] > 0


def test_dx_moves_the_pen_after_the_text_before_it(tmp_path, book) -> None:
    drawn = render(tmp_path, book, '<text x="20" y="60" font-size="30">AB'
                   '<tspan dx="50">CD</tspan></text>')
    pen = 20 + advance(ink_measure(book, 30), "AB") + 50
    cd = expected(book, 30, "CD", pen, 60)
    ab = expected(book, 30, "AB", 20, 60)
    assert near(box(drawn[..., 3]), (ab[0], min(ab[1], cd[1]), cd[2], max(ab[3], cd[3])))
    columns = np.nonzero(drawn[..., 3].max(axis=0))[0]
    gap = np.diff(columns).max()  # the widest run of empty columns: the dx gap
    assert gap > 45


def test_the_measured_advance_is_the_pen_movement(book) -> None:
    """What positioned spans rely on: a piece after "AB" starts where "AB" ended."""
    measure = ink_measure(book, 30)
    joined, c = measure("ABC"), measure("C")
    assert abs((joined.x + joined.w) - (advance(measure, "AB") + c.x + c.w)) < 0.01


def test_a_tspan_keeps_its_own_fill(tmp_path, book) -> None:
    drawn = render(tmp_path, book, '<text x="20" y="60" font-size="30" fill="#ff0000">A'
                   '<tspan x="200" fill="#0000ff">B</tspan></text>')
    left, right = drawn[:, :150], drawn[:, 150:]
    assert left[..., 0].max() == 255 and left[..., 2].max() == 0
    assert right[..., 2].max() == 255 and right[..., 0].max() == 0


# --- hidden spans, spaces -----------------------------------------------------------


def test_display_none_on_a_tspan_hides_it(tmp_path, book) -> None:
    hidden = render(tmp_path, book, '<text x="20" y="60" font-size="30">AB<tspan '
                    'display="none">XYZ</tspan>CD<tspan style="display: none">Q</tspan></text>',
                    "a")
    plain = render(tmp_path, book, '<text x="20" y="60" font-size="30">ABCD</text>', "b")
    assert np.array_equal(hidden, plain)
    assert near(box(hidden[..., 3]), expected(book, 30, "ABCD", 20, 60))


def test_xml_space_preserve_keeps_every_space(tmp_path, book) -> None:
    body = '<text {} x="20" y="60" font-size="30">  A    B  </text>'
    kept = render(tmp_path, book, body.format('xml:space="preserve"'), "a")
    collapsed = render(tmp_path, book, body.format(""), "b")
    space = advance(ink_measure(book, 30), " ")
    assert space > 5
    kx0, _, kx1, _ = box(kept[..., 3])
    cx0, _, cx1, _ = box(collapsed[..., 3])
    assert abs(kx0 - (cx0 + 2 * space)) <= 1  # the two leading spaces are kept
    assert abs((kx1 - kx0) - (cx1 - cx0 + 3 * space)) <= 1  # and the run of four


def test_preserve_is_inherited_and_collapse_is_the_default() -> None:
    from lxml import etree

    root = etree.fromstring(f'<svg {SVG} xml:space="preserve"><text>a\n b</text>'
                            '<text xml:space="default"> a   b </text></svg>')
    first, second = root
    assert collect(first).text == "a " + NBSP + "b"
    assert collect(second).text == "a b"


# --- ex and the font shorthand --------------------------------------------------------


def test_ex_is_the_parent_faces_x_height(tmp_path, book) -> None:
    face = book.default
    font = TTFont(str(face.path))
    ratio = font["OS/2"].sxHeight / font["head"].unitsPerEm
    assert face_x_height(face) == ratio and 0.4 < ratio < 0.6  # Noto Sans: 0.536
    ex = render(tmp_path, book, '<g font-size="48"><text x="20" y="80" font-size="1ex">'
                'Hex</text></g>', "a")
    size = 48 * ratio
    px = render(tmp_path, book, f'<text x="20" y="80" font-size="{size!r}">Hex</text>', "b")
    assert np.array_equal(ex, px)
    assert near(box(ex[..., 3]), expected(book, size, "Hex", 20, 80))
    # a dy in ex moves the line by the text's own x-height
    moved = render(tmp_path, book, '<text x="20" y="40" font-size="40">A<tspan x="20" '
                   'dy="2ex">B</tspan></text>', "c")
    assert near(band(moved, 48, 200), expected(book, 40, "B", 20, 40 + 80 * ratio))


def test_font_shorthand_sets_size_weight_and_family(tmp_path, book) -> None:
    short = render(tmp_path, book, '<text x="20" y="120" font-size="200" '
                   'style="font: bold 50px \'Noto Sans\'">Hg</text>', "a")
    longhand = render(tmp_path, book, '<text x="20" y="120" font-size="50" font-weight="700" '
                      'font-family="Noto Sans">Hg</text>', "b")
    assert np.array_equal(short, longhand)
    x0, y0, x1, y1 = box(short[..., 3])
    assert 40 < y1 - y0 < 60  # 50 px glyphs, not 200


def test_font_shorthand_parsing() -> None:
    assert expand_font("italic 600 12px/1.5 'A B', serif") == {
        "font-style": "italic", "font-weight": "600", "font-size": "12px",
        "font-family": "'A B', serif"}
    assert expand_font("caption") is None and expand_font("bold 12px") is None
    from lxml import etree

    el = etree.fromstring(f'<text {SVG} style="font: 20px A; font-weight: 300"/>')
    req = font_request(el)
    assert (req.size_px, req.weight, req.family) == (20.0, 300, "A")
