"""Text along a curve (issue 13, item 1), rendered for real through ThorVG."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from nanoframes.bake.baker import Baker
from nanoframes.cli.measure import measure_runs
from nanoframes.errors import NanoframesError
from nanoframes.frames.film import Film
from nanoframes.model.composition import parse
from nanoframes.model.path import atan2, circle, path_curve, sin_cos

SVG = 'xmlns="http://www.w3.org/2000/svg"'


def write(tmp_path: Path, body: str, extra: str = "", name: str = "c.nf.svg") -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / name
    path.write_text(f'<svg {SVG} data-width="480" data-height="240" data-fps="10" '
                    f'data-duration="2"><rect width="480" height="240" fill="#000"/>'
                    f'{body}{extra}</svg>')
    return path


def ink(frame: np.ndarray) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1) of pixels brighter than the black background."""
    ys, xs = np.nonzero(frame[..., 0] > 40)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def render(path: Path, index: int = 0) -> np.ndarray:
    film = Film.open(path)
    return film.raster(film.document(index)).copy()


# --- sampling ---------------------------------------------------------------------

def test_trig_is_close_to_libm_and_exact_at_quadrants() -> None:
    for k in range(-400, 400):
        x = k * 0.0731
        s, c = sin_cos(x)
        assert abs(s - math.sin(x)) < 1e-13 and abs(c - math.cos(x)) < 1e-13
        assert abs(atan2(s, c) - math.atan2(s, c)) < 1e-13
    assert sin_cos(0.0) == (0.0, 1.0)


def test_arc_length_of_lines_arcs_and_circles() -> None:
    assert path_curve("M0 0 L30 40 l 0 10").length == 60.0
    assert path_curve("M0 0 H 10 V 10 z").length == pytest.approx(10 + 10 + math.sqrt(200))
    half = path_curve("M0 0 A50 50 0 0 1 100 0")  # sweep 1: over the top in y-down
    assert half.length == pytest.approx(50 * math.pi, rel=1e-3)
    x, y, tx, ty = half.at(half.length / 2)
    assert (x, y) == pytest.approx((50, -50), abs=0.05)
    assert (tx, ty) == pytest.approx((1, 0), abs=0.03)
    ring = circle(0, 0, 100, 90)  # starts at 6 o'clock and goes clockwise (to 9 o'clock)
    assert ring.length == pytest.approx(200 * math.pi, rel=1e-3)
    assert ring.at(0)[:2] == pytest.approx((0, 100), abs=1e-9)
    assert ring.at(ring.length / 4)[:2] == pytest.approx((-100, 0), abs=0.05)
    # a second subpath spends no length on the jump
    assert path_curve("M0 0 L10 0 M 50 0 L 60 0").length == 20.0


def test_sampling_is_a_pure_function_of_the_path() -> None:
    d = "M10,80 C40,10 65,10 95,80 S150,150 180,80 Q 200 20 240 80 T 300 80 A 30 20 45 1 0 350 90"
    a, b = path_curve(d), path_curve(d)
    assert a == b and len(a.points) > 200
    assert a.at(123.456) == b.at(123.456)


@pytest.mark.parametrize("bad", ["L 10 10", "M 0 0 C 1 2 3", "M 0 0 L 1e12 0"])
def test_bad_path_data_is_one_error(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path, f'<text data-curve-d="{bad}">Hi</text>')
    with pytest.raises(NanoframesError) as err:
        Baker(parse(path))
    assert err.value.code == "attr-invalid"


@pytest.mark.parametrize("bad", ["1,2", "1,2,0", "a,b,c", "1,2,3,4,5"])
def test_bad_circle_is_one_error(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path, f'<text data-curve-circle="{bad}">Hi</text>')
    with pytest.raises(NanoframesError) as err:
        Baker(parse(path))
    assert err.value.code == "attr-invalid"


# --- placement, rendered --------------------------------------------------------------

def test_a_straight_curve_draws_like_plain_text(tmp_path: Path) -> None:
    plain = render(write(tmp_path, '<text x="40" y="120" font-size="32" fill="#fff">'
                                   "Wavy label, AV Wa</text>", name="a.nf.svg"))
    along = render(write(tmp_path, '<text font-size="32" fill="#fff" '
                                   'data-curve-d="M40 120 L 460 120">Wavy label, AV Wa</text>',
                         name="b.nf.svg"))
    p, q = ink(plain), ink(along)
    assert all(abs(u - v) <= 2 for u, v in zip(p, q)), (p, q)


def test_characters_turn_with_the_tangent(tmp_path: Path) -> None:
    # downwards: glyph tops face +x (the tangent (0, 1) turned by the text's up vector)
    frame = render(write(tmp_path, '<text font-size="30" fill="#fff" '
                                   'data-curve-d="M 200 10 L 200 230">HELLO</text>'))
    x0, y0, x1, y1 = ink(frame)
    assert y1 - y0 > 3 * (x1 - x0)
    assert x0 >= 195 and x1 >= 215  # baseline on the line, ink to the right of it


def test_circle_text_starts_at_the_start_angle(tmp_path: Path) -> None:
    doc = Baker(parse(write(tmp_path, '<text font-size="20" fill="#fff" '
                                      'data-curve-circle="240,120,80,-90">ABC</text>'))).document(0)
    first = etree.fromstring(doc).find(".//{http://www.w3.org/2000/svg}text")
    m = [float(v) for v in first.get("transform")[7:-1].split(",")]
    assert m[4] > 240 and abs(m[5] - 40) < 2  # just clockwise of 12 o'clock
    assert m[0] > 0.99  # tangent pointing right at the top


def test_measure_reports_each_character(tmp_path: Path) -> None:
    path = write(tmp_path, '<text id="c" font-size="24" fill="#fff" '
                           'data-curve-circle="240,120,70">ab c</text>')
    runs = measure_runs(path, 0)
    assert [r.text for r in runs] == ["a", "b", "c"]
    frame = render(path)
    x0, y0, x1, y1 = ink(frame)
    boxes = [r.canvas for r in runs]
    assert min(b[0] for b in boxes) == pytest.approx(x0, abs=1.5)
    assert max(b[0] + b[2] for b in boxes) == pytest.approx(x1, abs=1.5)
    assert min(b[1] for b in boxes) == pytest.approx(y0, abs=1.5)


def test_fill_fade_presence_and_animation_apply(tmp_path: Path) -> None:
    script = ('<script type="application/nanoframes+json">{"animations": [{"target": "#c", '
              '"keyframes": [{"t": 0, "fill": "#ff0000"}, {"t": 1, "fill": "#0000ff"}]}]}'
              "</script>")
    path = write(tmp_path, '<text id="c" font-size="30" fill="#fff" data-start="0.5" '
                           'data-fade="0.5" data-curve-d="M 40 120 Q 240 0 440 120">Curve'
                           "</text>", script)
    baker = Baker(parse(path))
    assert b"Curve" not in baker.document(0) and b"<g" not in baker.document(4)[-40:]
    doc = etree.fromstring(baker.document(7))  # t = 0.7: fading in, fill on its way to blue
    group = doc.find(".//{http://www.w3.org/2000/svg}g")
    assert group.get("id") == "c" and float(group.get("opacity")) == pytest.approx(0.4)
    fills = {t.get("fill") for t in group}
    assert fills == {"#4d00b3"}
    faded, full = render(path, 7), render(path, 10)
    assert 0 < faded[..., 2].max() < full[..., 2].max()


def test_anchor_middle_centres_the_run(tmp_path: Path) -> None:
    frame = render(write(tmp_path, '<text font-size="30" fill="#fff" text-anchor="middle" '
                                   'data-curve-d="M 40 120 L 440 120">Centre</text>'))
    x0, _, x1, _ = ink(frame)
    assert abs((x0 + x1) / 2 - 240) <= 2


def test_deterministic_document_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, '<text font-size="18" fill="#fff" data-curve-d="M10,200 C40,10 '
                           '65,10 95,80 S150,150 180,80 A 60 40 30 1 0 420 120">The quick brown '
                           "fox jumps</text>")
    assert Baker(parse(path)).document(0) == Baker(parse(path)).document(0)
