"""Measured text layout (docs/text.md), rendered for real through ThorVG.

Pixel tests compare what the rasterizer draws with what the layout measured:
chips around the measured ink, wrapped line widths, fitted sizes, anchors and
escaping. Edges are compared within 1 px (antialiasing touches the next pixel).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from nanoframes.bake.baker import Baker
from nanoframes.engine.raster import get_rasterizer
from nanoframes.errors import NanoframesError
from nanoframes.model.composition import parse
from nanoframes.text.fonts import FontBook
from nanoframes.text.layout import (
    LINE_PITCH,
    break_units,
    check_template,
    fit_size,
    frame_values,
    wrap_lines,
)
from nanoframes.text.measure import Measurer

W, H = 640, 360
SVG_NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def book() -> FontBook:
    return FontBook(host_dirs=())  # bundled faces only: the same on every machine


@pytest.fixture(scope="module")
def face(book: FontBook):
    return book.default


@pytest.fixture(scope="module")
def measurer() -> Measurer:
    return Measurer()


def compose(tmp_path: Path, body: str, timeline: str = "", duration: str = "2") -> Path:
    script = (f'<script type="application/nanoframes+json">{timeline}</script>'
              if timeline else "")
    path = tmp_path / "t.nf.svg"
    path.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" data-width="{W}" '
                    f'data-height="{H}" data-fps="10" data-duration="{duration}">'
                    f"{body}{script}</svg>", encoding="utf-8")
    return path


def baker_for(path: Path, book: FontBook) -> Baker:
    return Baker(parse(path, path.parent), book)


def draw(baker: Baker, frame: int = 0) -> tuple[np.ndarray, etree._Element]:
    doc = baker.document(frame)
    pixels = get_rasterizer().render(doc, W, H).copy()
    return pixels, etree.fromstring(doc)


def box_where(mask: np.ndarray) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of the True pixels, x1/y1 exclusive."""
    ys, xs = np.nonzero(mask)
    assert xs.size, "nothing drawn"
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def near(drawn: tuple, measured: tuple, tol: float = 1.0) -> bool:
    return all(abs(a - b) <= tol for a, b in zip(drawn, measured))


def texts(root: etree._Element) -> list[etree._Element]:
    return list(root.iter(f"{SVG_NS}text"))


# --- pure rules ---------------------------------------------------------------------


def test_break_units_spaces_wide_characters_and_marks() -> None:
    assert break_units("one two  three") == [("one", False), ("two", True), ("three", True)]
    # Each wide character is its own unit; no space is invented between them.
    assert break_units("日本 語abc") == [("日", False), ("本", False), ("語", True),
                                         ("abc", False)]
    assert break_units("Ａ！") == [("Ａ", False), ("！", False)]  # fullwidth forms ('F')
    assert break_units("e\u0301te") == [("e\u0301te", False)]
    assert break_units("") == []


def test_wrap_lines_fit_the_width_and_keep_every_word(face, measurer: Measurer) -> None:
    text = "Renderer exact measurement keeps every wrapped line inside its box"

    def width(s: str) -> float:
        return measurer.width(face, 24, s)

    lines = wrap_lines(text, width, 220)
    assert len(lines) > 2
    assert all(width(line) <= 220 for line in lines)
    assert " ".join(lines) == text
    # Greedy: the next line's first word would not have fit on the line before.
    for a, b in zip(lines, lines[1:]):
        assert width(a + " " + b.split(" ")[0]) > 220


def test_wrap_breaks_a_long_word_between_characters(face, measurer: Measurer) -> None:
    def width(s: str) -> float:
        return measurer.width(face, 20, s)

    lines = wrap_lines("a Pneumonoultramicroscopicsilicovolcanoconiosis b", width, 120)
    assert lines[0] == "a" and len(lines) >= 4
    # The pieces of the word join back without spaces; " b" follows its tail.
    assert "".join(lines[1:]) == "Pneumonoultramicroscopicsilicovolcanoconiosis b"
    assert all(width(line) <= 120 for line in lines)


def test_wrap_breaks_between_wide_characters(face, measurer: Measurer) -> None:
    # The bundled face has no CJK glyphs; ThorVG draws (and measures) a box per
    # character, which is enough to check the break positions.
    def width(s: str) -> float:
        return measurer.width(face, 20, s)

    one = width("漢")
    lines = wrap_lines("漢字漢字漢字漢字", width, one * 3.5)
    assert all(1 <= len(line) <= 3 for line in lines)
    assert "".join(lines) == "漢字漢字漢字漢字"


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyzWM漢字,.é", min_size=1,
                              max_size=18), min_size=1, max_size=12),
       limit=st.floats(min_value=20, max_value=300))
def test_wrap_properties(words: list[str], limit: float) -> None:
    """Every line fits, or is a single character too wide to break; no character is
    lost or invented, whatever the words and the width."""
    face = FontBook(host_dirs=()).default
    measurer = Measurer()

    def width(s: str) -> float:
        return measurer.width(face, 18, s)

    text = " ".join(words)
    lines = wrap_lines(text, width, limit)
    assert all(width(line) <= limit or len(line) == 1 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(line == line.strip() and line for line in lines)


def test_fit_size_is_the_largest_grid_size_that_fits(face, measurer: Measurer) -> None:
    text = "A headline that is far too long"

    def width_at(s: float) -> float:
        return measurer.width(face, s, text)

    size = fit_size(width_at, 48.0, 300.0, 9.0)
    assert size < 48 and width_at(size) <= 300
    assert width_at(size + 0.5) > 300
    assert (48.0 - size) % 0.5 == 0
    assert fit_size(width_at, 48.0, 300.0, 9.0) == size  # deterministic
    assert fit_size(width_at, 48.0, 5.0, 9.0) == 9.0  # never below the minimum
    assert fit_size(width_at, 12.0, 5000.0, 9.0) == 12.0  # never grows


def test_frame_values() -> None:
    from fractions import Fraction

    v = frame_values(7 / 30, Fraction(30), 60, Fraction(2))
    assert v["frame"] == 7 and v["frames"] == 60 and v["second"] == v["time"] == 7 / 30
    assert v["fps"] == 30.0 and v["duration"] == 2.0


@pytest.mark.parametrize("template, why", [
    ("{frame.real}", "attribute access"),
    ("{frame[0]}", "indexing"),
    ("{nope}", "unknown field"),
    ("{}", "unknown field"),
    ("{0}", "unknown field"),
    ("{second:d}", "Unknown format code"),
    ("{frame:{frames}}", "nested"),
    ("{frame", "expected"),
])
def test_bad_templates_are_errors(template: str, why: str) -> None:
    with pytest.raises(NanoframesError) as err:
        check_template(template, "c.nf.svg", 3)
    assert err.value.code == "frame-text" and err.value.line == 3
    assert why in str(err.value)


# --- in a composition, by pixels ---------------------------------------------------


def test_frame_text_per_frame_with_format_specs(tmp_path: Path, book: FontBook) -> None:
    path = compose(tmp_path, '<text x="10" y="40" data-frame-text="f{frame:03d}/{frames} '
                   't={second:.2f}s {fps:g}fps {duration}s">placeholder</text>')
    baker = baker_for(path, book)
    for frame in (0, 7, 19):
        _, root = draw(baker, frame)
        assert "".join(texts(root)[0].itertext()) == \
            f"f{frame:03d}/20 t={frame / 10:.2f}s 10fps 2.0s"


def test_bad_frame_text_fails_at_construction_with_file_and_line(
        tmp_path: Path, book: FontBook) -> None:
    path = compose(tmp_path, '\n\n<text data-frame-text="{frame.__class__}">x</text>')
    comp = parse(path, tmp_path)
    with pytest.raises(NanoframesError) as err:
        Baker(comp, book)
    assert err.value.code == "frame-text"
    assert err.value.file == str(path) and err.value.line == 3


def test_chip_surrounds_the_measured_ink(tmp_path: Path, book: FontBook, face,
                                         measurer: Measurer) -> None:
    path = compose(tmp_path, '<text x="100" y="120" font-size="40" fill="#ffffff" '
                   'data-bg="#ff0000" data-bg-pad-x="14" data-bg-pad-y="6" data-bg-rx="0">'
                   'Chip test</text>')
    pixels, root = draw(baker_for(path, book))
    ink = measurer.ink(face, 40, "Chip test").moved(100, 120)
    red = (pixels[..., 0] > 200) & (pixels[..., 1] < 60) & (pixels[..., 3] > 200)
    assert near(box_where(red), (ink.x - 14, ink.y - 6, ink.x + ink.w + 14, ink.y + ink.h + 6))
    white = (pixels[..., 1] > 200) & (pixels[..., 3] > 0)
    assert near(box_where(white), (ink.x, ink.y, ink.x + ink.w, ink.y + ink.h))
    group = root.find(f"{SVG_NS}g")
    assert [local(c) for c in group] == ["rect", "text"]  # chip first: behind the text


def local(el) -> str:
    return el.tag.rsplit("}", 1)[-1]


def test_chip_moves_and_fades_with_its_text(tmp_path: Path, book: FontBook, face,
                                            measurer: Measurer) -> None:
    timeline = ('{"animations": [{"target": "#t", "keyframes": ['
                '{"t": 0, "transform": {"translate": [0, 0]}},'
                '{"t": 1, "transform": {"translate": [200, 100]}}]}]}')
    path = compose(tmp_path, '<text id="t" x="50" y="80" font-size="30" fill="#ffffff" '
                   'transform="translate(10 0)" data-bg="#0000ff" data-fade="0.5">Move</text>',
                   timeline)
    baker = baker_for(path, book)
    ink = measurer.ink(face, 30, "Move").moved(50 + 10, 80)
    pad_x, pad_y = 12, 8  # the defaults
    blue = lambda px: (px[..., 2] > 100) & (px[..., 0] < 80) & (px[..., 3] > 0)  # noqa: E731
    # frame 10 = 1.0 s: moved by (200, 100), fully faded in
    pixels, root = draw(baker, 10)
    assert near(box_where(blue(pixels)), (ink.x + 200 - pad_x, ink.y + 100 - pad_y,
                                          ink.x + ink.w + 200 + pad_x,
                                          ink.y + ink.h + 100 + pad_y))
    assert pixels[..., 3].max() == 255
    # frame 2 = 0.2 s: fading in (0.4), both chip and text at the group's opacity
    pixels, root = draw(baker, 2)
    group = root.find(f"{SVG_NS}g")
    assert group.get("opacity") == "0.4" and group.get("id") == "t"
    assert "transform" in group.attrib and "transform" not in texts(root)[0].attrib
    chip_alpha = pixels[..., 3][blue(pixels)]
    assert abs(int(np.median(chip_alpha)) - 102) <= 2  # 0.4 × 255


def test_wrapped_lines_are_drawn_no_wider_than_the_limit(tmp_path: Path, book: FontBook,
                                                         face, measurer: Measurer) -> None:
    text = "Wrapped lines are measured before they are drawn, one text per line"
    path = compose(tmp_path, f'<text x="40" y="60" font-size="24" fill="#ffffff" '
                   f'data-wrap="250">{text}</text>')
    pixels, root = draw(baker_for(path, book))
    lines = texts(root)
    assert len(lines) >= 3
    assert " ".join("".join(t.itertext()) for t in lines) == text
    for k, line in enumerate(lines):
        assert float(line.get("y")) == pytest.approx(60 + k * LINE_PITCH * 24)
        chars = "".join(line.itertext())
        ink = measurer.ink(face, 24, chars).moved(40, 60 + k * LINE_PITCH * 24)
        # The rows of this line only (pitch 28.8 px leaves no overlap at 24 px).
        top, bottom = int(ink.y) - 1, int(ink.y + ink.h) + 2
        band = np.zeros(pixels.shape[:2], bool)
        band[top:bottom] = pixels[top:bottom, :, 3] > 0
        x0, _, x1, _ = box_where(band)
        assert x1 - x0 <= 250 + 1
        assert near((x0, x1), (ink.x, ink.x + ink.w))


def test_fitted_size_is_drawn_within_the_width(tmp_path: Path, book: FontBook, face,
                                              measurer: Measurer) -> None:
    path = compose(tmp_path, '<text x="20" y="100" font-size="60" fill="#ffffff" '
                   'data-fit="320" data-fit-min="12">Fit this long headline</text>'
                   '<text x="20" y="200" font-size="60" fill="#ffffff" '
                   'data-fit="40">Clamped at the minimum</text>')
    pixels, root = draw(baker_for(path, book))
    first, second = texts(root)
    size = float(first.get("font-size"))
    assert 12 <= size < 60
    assert measurer.width(face, size, "Fit this long headline") <= 320
    assert measurer.width(face, size + 0.5, "Fit this long headline") > 320
    x0, _, x1, _ = box_where(pixels[:150, :, 3] > 0)
    assert x1 - x0 <= 320 + 1
    assert float(second.get("font-size")) == 9.0


@pytest.mark.parametrize("anchor", ["start", "middle", "end"])
def test_anchor_places_the_ink(tmp_path: Path, book: FontBook, face, measurer: Measurer,
                               anchor: str) -> None:
    path = compose(tmp_path, f'<g style="text-anchor: {anchor}"><text x="320" y="100" '
                   f'font-size="36" fill="#ffffff">Anchored</text></g>')
    pixels, root = draw(baker_for(path, book))
    x0, _, x1, _ = box_where(pixels[..., 3] > 0)
    ink = measurer.ink(face, 36, "Anchored")
    if anchor == "start":  # the pen stays at x, as the rasterizer draws it
        assert near((x0, x1), (320 + ink.x, 320 + ink.x + ink.w))
    elif anchor == "middle":
        assert abs((x0 + x1) / 2 - 320) <= 1
    else:
        assert abs(x1 - 320) <= 1
    assert b"text-anchor" not in etree.tostring(root)


def test_wrapped_lines_anchor_one_by_one(tmp_path: Path, book: FontBook) -> None:
    path = compose(tmp_path, '<text x="320" y="60" font-size="24" fill="#ffffff" '
                   'text-anchor="middle" data-wrap="200">centred lines of different '
                   'widths wrap here</text>')
    pixels, root = draw(baker_for(path, book))
    for k in range(len(texts(root))):
        top = int(60 + k * LINE_PITCH * 24) - 22
        band = np.zeros(pixels.shape[:2], bool)
        band[top:top + 28] = pixels[top:top + 28, :, 3] > 0
        x0, _, x1, _ = box_where(band)
        assert abs((x0 + x1) / 2 - 320) <= 1


@pytest.mark.parametrize("markup, chars", [
    ("A &amp; B &lt; C", "A & B < C"),
    ("say &quot;hi&quot; &amp; 'bye'", "say \"hi\" & 'bye'"),
    ("x ]]&gt; y", "x ]]> y"),
    ("<![CDATA[a < b && c]]>", "a < b && c"),
])
def test_escaping_draws_exactly_the_characters(tmp_path: Path, book: FontBook, face,
                                               measurer: Measurer, markup: str,
                                               chars: str) -> None:
    path = compose(tmp_path, f'<text x="30" y="100" font-size="32" fill="#ffffff" '
                   f'data-bg="#202020">{markup}</text>')
    pixels, root = draw(baker_for(path, book))
    assert "".join(texts(root)[0].itertext()) == chars
    ink = measurer.ink(face, 32, chars).moved(30, 100)
    white = pixels[..., 0] > 128
    assert near(box_where(white), (ink.x, ink.y, ink.x + ink.w, ink.y + ink.h))
    # Sanity: the entity spelling, had it reached ThorVG, would measure differently.
    if "&" in markup:
        assert abs(measurer.width(face, 32, markup) - ink.w) > 5


def test_plain_text_keeps_a_single_element(tmp_path: Path, book: FontBook) -> None:
    path = compose(tmp_path, '<text id="p" x="10" y="30" opacity="0.5" '
                   'fill="#ffffff">Plain</text>')
    _, root = draw(baker_for(path, book))
    (text,) = texts(root)
    assert text.getparent().tag == f"{SVG_NS}svg" and text.get("id") == "p"
    assert text.get("x") == "10" and text.get("fill-opacity") == "0.5"
    assert text.get("font-size") == "16"
    assert not [k for el in root.iter() for k in el.attrib if k.startswith("data-")]


def test_bad_chip_colour_is_an_error(tmp_path: Path, book: FontBook) -> None:
    path = compose(tmp_path, '<text data-bg="not-a-colour">x</text>')
    with pytest.raises(NanoframesError) as err:
        baker_for(path, book)
    assert err.value.code == "attr-invalid"
