"""Nested compositions (docs/compositions.md), rendered for real through ThorVG."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from nanoframes.bake.baker import Baker
from nanoframes.bake.nested import MAX_NESTING, child_time, children
from nanoframes.bake.timing import Timing
from nanoframes.determinism.reading import source_extras
from nanoframes.errors import NanoframesError
from nanoframes.frames.film import Film
from nanoframes.model.composition import parse

SVG = 'xmlns="http://www.w3.org/2000/svg"'
# A 100x50 child: blue canvas-filling background, a red 10x10 square whose x runs
# 0 -> 90 over the child's 1 s (10 fps, so its last frame is at 0.9 s).
CHILD = f"""<svg {SVG} data-width="100" data-height="50" data-fps="10" data-duration="1">
  <defs><linearGradient id="g"><stop offset="0" stop-color="#0000ff"/>
    <stop offset="1" stop-color="#0000ff"/></linearGradient></defs>
  <rect id="bg" width="100" height="50" fill="url(#g)"/>
  <rect id="mover" x="0" y="0" width="10" height="10" fill="#ff0000"/>
  <script type="application/nanoframes+json">{{"animations": [{{"target": "#mover",
    "keyframes": [{{"t": 0, "x": 0}}, {{"t": 1, "x": 90}}]}}]}}</script>
</svg>"""


def parent(images: str, extra: str = "", size: int = 200) -> str:
    return (f'<svg {SVG} data-width="{size}" data-height="{size}" data-fps="10" '
            f'data-duration="2">{extra}{images}</svg>')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "child.nf.svg").write_text(CHILD)
    return tmp_path


def write(project: Path, name: str, text: str) -> Path:
    path = project / name
    path.write_text(text)
    return path


def mask_box(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(mask)
    if not xs.size:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def colour_boxes(path: Path, t: float) -> dict[str, tuple[int, int, int, int] | None]:
    film = Film.open(path)
    px = film.raster(film.baker.document(None, t)).astype(int)
    r, g, b, a = px[..., 0], px[..., 1], px[..., 2], px[..., 3]
    return {
        "blue": mask_box((b > 200) & (r < 60) & (g < 60) & (a > 200)),
        "red": mask_box((r > 200) & (b < 60) & (g < 60) & (a > 200)),
        "green": mask_box((g > 200) & (r < 60) & (b < 60) & (a > 200)),
    }


def mover_x(path: Path, t: float) -> float:
    doc = Baker(parse(path)).document(None, t).decode()
    m = re.search(r'<rect id="nfc\d+-mover" x="([^"]+)"', doc)
    assert m, doc
    return float(m.group(1))


@pytest.mark.parametrize("aspect, blue", [
    ("stretch", (20, 30, 120, 130)),   # 100x50 stretched to 100x100
    ("contain", (20, 55, 120, 105)),   # 100x50, centred vertically
    ("cover", (20, 30, 120, 130)),     # 200x100 centred, clipped to the box
])
def test_child_is_scaled_into_its_box(project: Path, aspect: str, blue) -> None:
    path = write(project, "p.nf.svg", parent(
        f'<image href="parts/child.nf.svg" x="20" y="30" width="100" height="100" '
        f'data-aspect="{aspect}"/>'))
    boxes = colour_boxes(path, 0.0)
    assert boxes["blue"] == blue
    red = {"stretch": (20, 30, 30, 50), "contain": (20, 55, 30, 65),
           "cover": (20, 30, 20 + 10, 30 + 20)}[aspect]
    if aspect == "cover":  # scale 2, 50 px cropped off the left: the red square is cut off
        assert boxes["red"] is None
    else:
        assert boxes["red"] == red


def test_child_geometry_outside_its_canvas_is_clipped(project: Path) -> None:
    write(project, "parts/wide.nf.svg", CHILD.replace(
        'width="10" height="10" fill="#ff0000"', 'width="400" height="10" fill="#ff0000"'))
    path = write(project, "p.nf.svg", parent(
        '<image href="parts/wide.nf.svg" x="20" y="30" width="100" height="50"/>'))
    assert colour_boxes(path, 0.0)["red"] == (20, 30, 120, 40)


@pytest.mark.parametrize("attrs, t, x", [
    ("", 0.5, 45.0),                                   # child_t = t
    ('data-speed="0.5"', 1.0, 45.0),                   # half speed
    ('data-in="0.2"', 0.3, 45.0),                      # starts 0.2 s in
    ('data-speed="2"', 0.9, 81.0),                     # clamped to the last frame (0.9 s)
    ('data-speed="2" data-loop="true"', 0.7, 36.0),    # 1.4 wraps to 0.4
    ('data-start="0.5" data-duration="1.5"', 1.0, 45.0),  # the clock starts with the image
])
def test_time_mapping(project: Path, attrs: str, t: float, x: float) -> None:
    path = write(project, "p.nf.svg", parent(
        f'<image href="parts/child.nf.svg" x="0" y="0" width="100" height="50" {attrs}/>'))
    assert mover_x(path, t) == pytest.approx(x)


def test_child_time_wraps_and_clamps() -> None:
    child = parse_child()
    assert child_time(child, 5.0, Timing()) == pytest.approx(0.9)
    assert child_time(child, -1.0, Timing()) == 0.0
    assert child_time(child, 2.25, Timing(loop=True)) == pytest.approx(0.25)
    assert child_time(child, -0.25, Timing(loop=True)) == pytest.approx(0.75)


def parse_child():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d, "c.nf.svg")
        p.write_text(CHILD)
        return parse(p, Path(d))


def test_presence_of_the_image_still_applies(project: Path) -> None:
    path = write(project, "p.nf.svg", parent(
        '<image href="parts/child.nf.svg" x="0" y="0" width="100" height="50" '
        'data-start="1"/>'))
    assert colour_boxes(path, 0.5)["blue"] is None
    assert colour_boxes(path, 1.0)["blue"] == (0, 0, 100, 50)


def test_ids_do_not_collide_between_parent_and_instances(project: Path) -> None:
    # The parent's own gradient is also called "g" (green); both must draw their own.
    extra = ('<defs><linearGradient id="g"><stop offset="0" stop-color="#00ff00"/>'
             '<stop offset="1" stop-color="#00ff00"/></linearGradient></defs>'
             '<rect x="0" y="180" width="200" height="20" fill="url(#g)"/>')
    path = write(project, "p.nf.svg", parent(
        '<image href="parts/child.nf.svg" x="0" y="0" width="100" height="50"/>'
        '<image href="parts/child.nf.svg" x="100" y="60" width="100" height="50"/>', extra))
    boxes = colour_boxes(path, 0.0)
    assert boxes["green"] == (0, 180, 200, 200)
    assert boxes["blue"] == (0, 0, 200, 110)
    doc = Baker(parse(path)).document(0).decode()
    ids = re.findall(r' id="([^"]+)"', doc)
    assert len(ids) == len(set(ids))


def test_child_fonts_are_registered_by_the_parent(project: Path) -> None:
    write(project, "parts/label.nf.svg",
          f'<svg {SVG} data-width="100" data-height="50"><text x="5" y="35" '
          'font-family="Noto Serif Display" font-weight="bold" font-size="30" '
          'fill="#ff0000">Ag</text></svg>')
    path = write(project, "p.nf.svg", parent(
        '<image href="parts/label.nf.svg" x="0" y="0" width="100" height="50"/>'))
    names = [f.family for f in Baker(parse(path)).faces()]
    assert "Noto Serif Display" in names
    red = colour_boxes(path, 0.0)["red"]
    assert red is not None and red[2] <= 100 and red[3] <= 50


def test_cycles_are_errors(project: Path) -> None:
    write(project, "a.nf.svg", parent('<image href="b.nf.svg" width="10" height="10"/>'))
    write(project, "b.nf.svg", parent('<image href="a.nf.svg" width="10" height="10"/>'))
    with pytest.raises(NanoframesError) as err:
        Baker(parse(project / "a.nf.svg"))
    assert err.value.code == "nested-cycle"
    assert "a.nf.svg -> b.nf.svg -> a.nf.svg" in err.value.message


def test_self_inclusion_is_a_cycle(project: Path) -> None:
    path = write(project, "self.nf.svg", parent('<image href="self.nf.svg"/>'))
    with pytest.raises(NanoframesError, match="nested-cycle"):
        Baker(parse(path))


def test_depth_is_limited(project: Path) -> None:
    for k in range(MAX_NESTING + 2):
        write(project, f"n{k}.nf.svg", parent(f'<image href="n{k + 1}.nf.svg"/>'))
    write(project, f"n{MAX_NESTING + 2}.nf.svg", CHILD)
    with pytest.raises(NanoframesError) as err:
        Baker(parse(project / "n0.nf.svg"))
    assert err.value.code == "nested-too-deep"
    Baker(parse(project / f"n{3}.nf.svg"))  # a shallower chain is fine


def test_depth_counts_through_a_child_seen_before(project: Path) -> None:
    # d1 is reached first at level 1 (7 levels below it: deepest level 8, fine), then
    # again through top -> mid -> d0 -> d1 (deepest level 10): the second visit must
    # not skip the depth check because d1 was seen before.
    for k in range(MAX_NESTING):
        write(project, f"d{k}.nf.svg", parent(f'<image href="d{k + 1}.nf.svg"/>'))
    write(project, f"d{MAX_NESTING}.nf.svg", CHILD)  # d0 nests MAX_NESTING levels
    write(project, "mid.nf.svg", parent('<image href="d0.nf.svg"/>'))
    path = write(project, "top.nf.svg", parent('<image href="d1.nf.svg"/>'
                                               '<image href="mid.nf.svg"/>'))
    Baker(parse(project / "d0.nf.svg"))  # exactly the limit
    with pytest.raises(NanoframesError) as err:
        Baker(parse(path))
    assert err.value.code == "nested-too-deep"


def test_fan_out_bombs_are_refused(project: Path) -> None:
    rects = '<rect width="1" height="1"/>' * 40
    write(project, "f2.nf.svg", parent(rects))
    write(project, "f1.nf.svg", parent('<image href="f2.nf.svg"/>' * 40))
    path = write(project, "f0.nf.svg", parent('<image href="f1.nf.svg"/>' * 40))
    with pytest.raises(NanoframesError) as err:
        Baker(parse(path))
    assert err.value.code == "nested-bomb"
    Baker(parse(project / "f1.nf.svg"))  # 40 x 42 elements is fine


@pytest.mark.parametrize("href, code", [
    ("../outside.nf.svg", "image-outside"),
    ("parts/nope.nf.svg", "image-missing"),
])
def test_child_references_are_sandboxed(project: Path, href: str, code: str) -> None:
    (project.parent / "outside.nf.svg").write_text(CHILD)
    path = write(project, "p.nf.svg", parent(f'<image href="{href}"/>'))
    with pytest.raises(NanoframesError) as err:
        Baker(parse(path))
    assert err.value.code == code


def test_children_lists_every_nested_composition_once(project: Path) -> None:
    write(project, "mid.nf.svg", parent('<image href="parts/child.nf.svg"/>'
                                        '<image href="parts/child.nf.svg" x="50"/>'))
    path = write(project, "top.nf.svg", parent('<image href="mid.nf.svg"/>'
                                               '<image href="parts/child.nf.svg"/>'))
    top = parse(path)
    assert children(top) == [project / "mid.nf.svg", project / "parts" / "child.nf.svg"]
    assert [name for name, _ in source_extras(top)] == ["mid.nf.svg", "parts/child.nf.svg"]


def test_editing_the_child_moves_the_parents_source(project: Path) -> None:
    reading = pytest.importorskip("nanoframes.determinism.reading",
                                  reason="reading is not built yet")
    identity_of = getattr(reading, "composition_identity", None)
    if identity_of is None:
        pytest.skip("nanoframes.determinism.reading.composition_identity is not built yet")
    path = write(project, "p.nf.svg", parent('<image href="parts/child.nf.svg"/>'))

    def identity():
        comp = parse(path)
        return identity_of(comp, Baker(comp))

    before = identity()
    child = project / "parts" / "child.nf.svg"
    child.write_text(CHILD.replace("#ff0000", "#ff8800"))
    after = identity()
    assert after.source != before.source
    assert after.toolchain == before.toolchain


@pytest.mark.parametrize("attrs", ['data-speed="fast"', 'data-in="2s"', 'data-aspect="fill"'])
def test_bad_mapping_numbers_are_errors_not_defaults(project: Path, attrs: str) -> None:
    path = write(project, "p.nf.svg", parent(
        f'<image href="parts/child.nf.svg" width="100" height="50" {attrs}/>'))
    with pytest.raises(NanoframesError) as err:
        Baker(parse(path))
    assert err.value.code == "attr-invalid"
