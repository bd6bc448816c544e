"""Pixels at known coordinates, rendered for real through ThorVG.

Frames are straight (unpremultiplied) RGBA: a fully covered pixel carries the exact
paint colour, and its alpha the product of the opacities."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from nanoframes.engine.raster import get_rasterizer
from nanoframes.frames.film import Film
from nanoframes.model.composition import parse

NS = "http://www.w3.org/2000/svg"
TIMELINE = 'type="application/nanoframes+json"'
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def film(project: Path, body: str, w: int = 40, h: int = 40, fps: str = "10",
         duration: str = "1", name: str = "p.nf.svg") -> Film:
    path = project / name
    path.write_text(f'<svg xmlns="{NS}" data-width="{w}" data-height="{h}" data-fps="{fps}" '
                    f'data-duration="{duration}">\n{body}\n</svg>')
    return Film(parse(path))


def frame(f: Film, index: int) -> np.ndarray:
    return f.raster(f.document(index)).copy()


def timeline(*animations: str) -> str:
    return f'<script {TIMELINE}>{{"animations": [{", ".join(animations)}]}}</script>'


def covered(px: np.ndarray) -> bool:
    return int(px[3]) > 0


# --- colour and opacity ------------------------------------------------------------

@pytest.mark.parametrize(("index", "p"), [(0, 0.0), (1, 0.25), (2, 0.5), (3, 0.75), (4, 1.0),
                                          (7, 1.0)])
def test_rect_colour_at_t(project: Path, index: int, p: float) -> None:
    f = film(project, '<rect id="r" width="40" height="40" fill="red"/>' + timeline(
        '{"target": "#r", "keyframes": [{"t": 0, "fill": "#ff0000"}, '
        '{"t": 0.4, "fill": "#0000ff"}]}'))
    px = frame(f, index)[20, 20]
    assert px.tolist() == [round(255 * (1 - p)), 0, round(255 * p), 255]


def test_eased_colour(project: Path) -> None:
    f = film(project, '<rect id="r" width="40" height="40"/>' + timeline(
        '{"target": "#r", "keyframes": [{"t": 0, "fill": "#000000"}, '
        '{"t": 0.4, "fill": "#ffffff", "ease": "ease-in"}]}'))
    # t = 0.2: progress 0.5, eased t² = 0.25
    assert frame(f, 2)[5, 5].tolist() == [64, 64, 64, 255]


@pytest.mark.parametrize(("index", "factor"), [
    (0, 0.0), (1, 0.25), (2, 0.5), (3, 0.75), (4, 1.0), (5, 1.0), (7, 0.75), (9, 0.25)])
def test_fading_element_alpha(project: Path, index: int, factor: float) -> None:
    # present on [0, 1.0), fade 0.4 in and out; authored opacity 0.5
    f = film(project, '<rect width="40" height="40" fill="#00ff00" opacity="0.5" '
                      'data-fade="0.4"/>')
    px = frame(f, index)[20, 20]
    expected = 255 * 0.5 * factor
    assert abs(int(px[3]) - expected) <= 1, (px, expected)
    if px[3]:
        assert px[:3].tolist() == [0, 255, 0]


def test_fade_of_a_group_reaches_its_children(project: Path) -> None:
    f = film(project, '<g data-start="0.2" data-fade="0.4"><rect width="40" height="40" '
                      'fill="blue" fill-opacity="0.5"/></g>')
    assert frame(f, 1)[0, 0, 3] == 0  # before the group's start: absent
    assert abs(int(frame(f, 4)[0, 0, 3]) - 255 * 0.5 * 0.5) <= 1  # fade 0.5 × fill 0.5


def test_alpha_colour_draws_translucent_not_black(project: Path) -> None:
    f = film(project, '<rect width="20" height="40" fill="#ff000080"/>'
                      '<rect x="20" width="20" height="40" style="fill: rgba(0, 0, 255, 0.25)"/>')
    img = frame(f, 0)
    left, right = img[20, 5], img[20, 30]
    assert left[:3].tolist() == [255, 0, 0] and abs(int(left[3]) - 128) <= 1
    assert right[:3].tolist() == [0, 0, 255] and abs(int(right[3]) - 64) <= 1


def test_end_to_end_clips_one_drawn_at_the_boundary(project: Path) -> None:
    f = film(project, '<rect width="40" height="40" fill="red" data-duration="0.5"/>'
                      '<rect width="40" height="40" fill="blue" data-start="0.5" '
                      'data-duration="0.5" fill-opacity="0.5"/>')
    assert frame(f, 4)[9, 9].tolist() == [255, 0, 0, 255]
    at = frame(f, 5)[9, 9]  # t = 0.5: blue alone (a red under it would show through)
    assert at[:3].tolist() == [0, 0, 255] and abs(int(at[3]) - 128) <= 1


def test_check_only_attributes_do_not_draw(project: Path) -> None:
    body = '<rect x="1" y="1" width="30" height="30" fill="#123456"/><text x="0" y="38">edge</text>'
    plain = film(project, body)
    checked = project / "checked.nf.svg"
    checked.write_text(f'<svg xmlns="{NS}" data-width="40" data-height="40" data-fps="10" '
                       f'data-duration="1" data-safe-margin="12" data-palette-budget="1" '
                       f'data-composition-id="other">{body}</svg>')
    assert np.array_equal(frame(Film(parse(checked)), 0), frame(plain, 0))


# --- transforms -------------------------------------------------------------------

def test_rotation_pivoted_on_auto_center(project: Path) -> None:
    body = ('<rect id="r" x="10" y="15" width="20" height="10" fill="#ff00ff"/>' + timeline(
        '{"target": "#r", "keyframes": [{"t": 0, "transform": {"rotate": 0, "center": "auto"}},'
        ' {"t": 0.4, "transform": {"rotate": 90, "center": "auto"}}]}'))
    f = film(project, body)
    still, turned = frame(f, 0), frame(f, 4)
    # the centre (20, 20) stays put
    assert still[20, 20].tolist() == turned[20, 20].tolist() == [255, 0, 255, 255]
    # a 20×10 bar becomes a 10×20 bar around the same centre: x 15..25, y 10..30
    assert covered(still[17, 11]) and not covered(turned[17, 11])  # near the left end
    assert not covered(still[11, 20]) and covered(turned[11, 20])  # above: now covered
    ys, xs = np.nonzero(turned[..., 3] > 127)
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == (15, 24, 10, 29)
    # without center the same rotate would swing about the origin, off the canvas
    plain = film(project, body.replace(', "center": "auto"', ""), name="plain.nf.svg")
    assert not frame(plain, 4)[..., 3].any()


# --- text ---------------------------------------------------------------------------

def _text_frame(project: Path, family: str | None, text: str = "Hamburg 0123",
                extra: str = "", name: str = "t.nf.svg") -> np.ndarray:
    fam = f' font-family="{family}"' if family is not None else ""
    f = film(project, f'<text x="4" y="30" font-size="24"{fam}{extra}>{text}</text>', w=200,
             h=40, name=name)
    return frame(f, 0)


def test_fallback_equals_naming_the_default(project: Path) -> None:
    noto = _text_frame(project, "Noto Sans")
    assert noto[..., 3].any()
    for i, family in enumerate(["Unknown Brand", "sans-serif", None, "'No Such', serif"]):
        assert np.array_equal(_text_frame(project, family, name=f"f{i}.nf.svg"), noto), family


@pytest.mark.skipif(not DEJAVU.is_file(), reason="host has no DejaVu Sans")
def test_resolved_host_face_differs_from_fallback(project: Path) -> None:
    dejavu = _text_frame(project, "DejaVu Sans")
    listed = _text_frame(project, "&quot;Brand&quot;, DejaVu Sans, sans-serif",
                         name="l.nf.svg")
    fallback = _text_frame(project, "Unknown Brand", name="u.nf.svg")
    assert dejavu[..., 3].any() and not np.array_equal(dejavu, fallback)
    assert np.array_equal(listed, dejavu)


def test_bold_draws_the_bold_face(project: Path) -> None:
    regular = _text_frame(project, "Noto Sans")
    bold = _text_frame(project, "Noto Sans", extra=' font-weight="bold"', name="b.nf.svg")
    assert bold[..., 3].astype(int).sum() > regular[..., 3].astype(int).sum() * 1.15


def test_font_size_default_is_16px(project: Path) -> None:
    f16 = film(project, '<text x="4" y="30" font-size="16">Hamburg</text>', w=120, h=40)
    implicit = film(project, '<text x="4" y="30">Hamburg</text>', w=120, h=40,
                    name="i.nf.svg")
    assert np.array_equal(frame(f16, 0), frame(implicit, 0))


def test_entities_draw_as_characters(project: Path) -> None:
    f = film(project, '<text x="4" y="30" font-size="20">A &amp; B &lt; C</text>', w=160,
             h=40)
    baked = frame(f, 0)
    rast = get_rasterizer()

    def direct(cdata: str) -> np.ndarray:
        doc = (f'<svg xmlns="{NS}" width="160" height="40" viewBox="0 0 160 40"><text x="4" '
               f'y="30" font-family="NotoSans-Regular" font-size="20"><![CDATA[{cdata}]]>'
               "</text></svg>").encode()
        return rast.render(doc, 160, 40).copy()

    assert np.array_equal(baked, direct("A & B < C"))
    assert not np.array_equal(baked, direct("A &amp; B &lt; C"))  # what ThorVG would draw


def test_text_opacity_reaches_the_picture(project: Path) -> None:
    solid = _text_frame(project, "Noto Sans", text="HHHH")
    half = _text_frame(project, "Noto Sans", text="HHHH", extra=' opacity="0.5"',
                       name="h.nf.svg")
    assert solid[..., 3].max() == 255
    assert abs(int(half[..., 3].max()) - 128) <= 1
    faded = film(project, '<text x="4" y="30" font-size="24" data-fade="0.4">HHHH</text>',
                 w=200, h=40, name="fade.nf.svg")
    assert abs(int(frame(faded, 1)[..., 3].max()) - 64) <= 1  # factor 0.25


# --- images -----------------------------------------------------------------------

@pytest.fixture()
def wide(project: Path) -> Path:
    img = Image.new("RGBA", (4, 2), (0, 200, 0, 255))
    img.save(project / "wide.png")
    return project / "wide.png"


def test_image_stretch_contain_cover(project: Path, wide: Path) -> None:
    def draw(aspect: str) -> np.ndarray:
        f = film(project, f'<image href="wide.png" x="10" y="0" width="20" height="20" '
                          f'data-aspect="{aspect}"/>', w=40, h=20, name=f"{aspect}.nf.svg")
        return frame(f, 0)

    green = [0, 200, 0, 255]
    stretch, contain, cover = draw("stretch"), draw("contain"), draw("cover")
    assert stretch[2, 20].tolist() == stretch[17, 20].tolist() == green
    assert not covered(stretch[10, 5]) and not covered(stretch[10, 35])
    # contain: 20×10 centred vertically in the box
    assert contain[10, 20].tolist() == green
    assert not covered(contain[2, 20]) and not covered(contain[17, 20])
    # cover: 40×20 centred on the box, clipped to it
    assert cover[2, 11].tolist() == cover[17, 28].tolist() == green
    assert not covered(cover[10, 5]) and not covered(cover[10, 35])


# --- known bake bugs (nanoframes/bake.py; reported, not ours to fix) ----------------------

def test_text_opacity_multiplies_inherited_fill_opacity(project: Path) -> None:
    f = film(project, '<g fill-opacity="0.5"><text x="4" y="30" font-size="24" opacity="0.5">'
                      'HHHH</text></g>', w=200, h=40)
    assert abs(int(frame(f, 0)[..., 3].max()) - 64) <= 1  # 0.5 × 0.5; drawn at 128


def test_inherited_alpha_colour_multiplies_own_fill_opacity(project: Path) -> None:
    f = film(project, '<g fill="#ff000080"><rect width="40" height="40" fill-opacity="0.5"/>'
                      '</g>')
    px = frame(f, 0)[20, 20]
    assert px[:3].tolist() == [255, 0, 0] and abs(int(px[3]) - 64) <= 1  # drawn at 128


@pytest.mark.parametrize(("index", "factor"), [(0, 0.0), (2, 0.5), (4, 1.0), (7, 0.75)])
def test_images_fade_and_honour_their_opacity(project: Path, index: int, factor: float) -> None:
    # ThorVG draws an <image> at full opacity whatever its opacity says; bake wraps it.
    Image.new("RGBA", (4, 4), (255, 0, 0, 255)).save(project / "red.png")
    f = film(project, '<image href="red.png" width="40" height="40" opacity="0.5" '
                      'data-fade="0.4"/>')
    px = frame(f, index)[20, 20]
    expected = 255 * 0.5 * factor
    assert abs(int(px[3]) - expected) <= 1, (px, expected)
    if px[3]:
        assert px[:3].tolist() == [255, 0, 0]


def test_the_diff_image_shows_how_far_each_pixel_moved(project: Path) -> None:
    """Issue 43, item 8: a drift of a few levels and a recolour never look alike (the
    diff is not a mask), and the page lays the three pictures out in one row however
    wide the canvas is."""
    from nanoframes.evidence.html import page
    from nanoframes.frames.compare import amplify_diff

    expected = frame(film(project, '<rect width="40" height="40" fill="#808080"/>'), 0)
    actual = expected.copy()
    for x, delta in ((0, 1), (1, 3), (2, 16), (3, 127)):
        actual[0, x, 0] = int(expected[0, x, 0]) + delta
    diff = amplify_diff(expected, actual)
    one, three, sixteen, recolour = (tuple(int(c) for c in diff[0, x, :3]) for x in range(4))
    assert one[2] > one[0] and recolour[0] > recolour[2]  # blue for ±1, red for a recolour
    assert len({one, three, sixteen, recolour}) == 4
    assert tuple(diff[0, 10, :3]) == tuple(diff[1, 10, :3])  # unmoved: the dimmed frame
    assert diff[0, 10, 0] == diff[0, 10, 1] == diff[0, 10, 2] < expected[0, 10, 0]
    html = page([], "", "t")
    assert ".pictures{display:grid;grid-template-columns:repeat(3,minmax(0,1fr))" in html
