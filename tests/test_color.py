"""Colour parsing, formatting and interpolation (docs/compositions.md, "Colours")."""

from __future__ import annotations

import pytest
from PIL import ImageColor

from nanoframes.model.color import SVG_COLOR_KEYWORDS, format_color, lerp, lerp_color, parse_color


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#f80", (255.0, 136.0, 0.0, 1.0)),
        ("#F80", (255.0, 136.0, 0.0, 1.0)),
        ("#f808", (255.0, 136.0, 0.0, 136 / 255)),
        ("#ff8800", (255.0, 136.0, 0.0, 1.0)),
        ("  #FF8800\n", (255.0, 136.0, 0.0, 1.0)),
        ("#ff880080", (255.0, 136.0, 0.0, 128 / 255)),
        ("#00000000", (0.0, 0.0, 0.0, 0.0)),
    ],
)
def test_hex_forms(text, expected):
    assert parse_color(text) == expected


def test_all_svg_keywords_against_an_independent_table():
    # Pillow (a dependency) ships the CSS table; SVG 1.1's 147 plus rebeccapurple.
    assert len(SVG_COLOR_KEYWORDS) == 148
    assert set(SVG_COLOR_KEYWORDS) == set(ImageColor.colormap)
    for name in SVG_COLOR_KEYWORDS:
        r, g, b = ImageColor.getrgb(name)[:3]
        assert parse_color(name) == (float(r), float(g), float(b), 1.0), name


def test_keywords_are_case_insensitive_and_whitespace_tolerant():
    assert parse_color(" CornflowerBlue ") == (100.0, 149.0, 237.0, 1.0)
    assert parse_color("GREY") == parse_color("gray")


def test_transparent():
    assert parse_color("transparent") == (0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rgb(255, 136, 0)", (255.0, 136.0, 0.0, 1.0)),
        ("RGB(255,136,0)", (255.0, 136.0, 0.0, 1.0)),
        ("rgba(255, 136, 0, 0.5)", (255.0, 136.0, 0.0, 0.5)),
        ("rgba( 10 , 20 , 30 , .25 )", (10.0, 20.0, 30.0, 0.25)),
        ("rgba(10, 20, 30, 50%)", (10.0, 20.0, 30.0, 0.5)),
        ("rgb(100%, 50%, 0%)", (255.0, 127.5, 0.0, 1.0)),
        ("rgb(10 20 30 / 0.5)", (10.0, 20.0, 30.0, 0.5)),  # CSS 4 syntax
        ("rgb(300, -5, 12.5)", (255.0, 0.0, 12.5, 1.0)),  # clamped, as CSS does
        ("rgba(0, 0, 0, 2)", (0.0, 0.0, 0.0, 1.0)),
    ],
)
def test_functional_forms(text, expected):
    assert parse_color(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "none", "None", "currentColor", "url(#grad)", "", "#", "#12", "#12345", "#1234567",
        "#ggg", "bluish", "rgb(1, 2)", "rgb(1, 2, 3, 4, 5)", "rgb(10%, 20, 30)",
        "hsl(0, 100%, 50%)", "rgb(1e999, 0, 0)",
    ],
)
def test_not_colours(text):
    assert parse_color(text) is None


def test_non_strings_are_not_colours():
    assert parse_color(None) is None  # type: ignore[arg-type]
    assert parse_color(255) is None  # type: ignore[arg-type]


def test_format_color_rounds_and_clamps():
    assert format_color((255.0, 136.0, 0.0, 1.0)) == ("#ff8800", 1.0)
    assert format_color((127.5, 0.49, 254.6, 0.5)) == ("#8000ff", 0.5)
    # Overshoot from easings leaves the range; formatting brings it back.
    assert format_color((300.0, -20.0, 12.0, 1.3)) == ("#ff000c", 1.0)
    assert format_color((0.0, 0.0, 0.0, -0.2)) == ("#000000", 0.0)


def test_format_round_trips_hex():
    for text in ("#000000", "#ffffff", "#123abc", "#ff8800"):
        rgba = parse_color(text)
        assert rgba is not None
        assert format_color(rgba) == (text, 1.0)
    rgba = parse_color("#11223380")
    assert rgba is not None
    assert format_color(rgba) == ("#112233", 128 / 255)


def test_lerp_color():
    a = (0.0, 100.0, 200.0, 0.2)
    b = (255.0, 100.0, 0.0, 0.7)
    assert lerp_color(a, b, 0.0) == a
    assert lerp_color(a, b, 1.0) == b  # exact, not a + (b - a)
    assert lerp_color(a, b, 0.5) == (127.5, 100.0, 100.0, pytest.approx(0.45))
    over = lerp_color(a, b, 1.2)  # overshoot is not clamped here
    assert over[0] == pytest.approx(306.0) and over[2] == pytest.approx(-40.0)


def test_lerp_exact_ends_and_constant():
    assert lerp(0.1, 0.7, 1.0) == 0.7
    assert lerp(0.1, 0.7, 0.0) == 0.1
    assert lerp(0.3, 0.3, 0.123456789) == 0.3
