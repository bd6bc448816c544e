"""Style sheets (issue 33, item 1): ``<style>`` rules are resolved into the baked
document (model/css.py), drawn for real through ThorVG and measured on the frame;
what is not applied is a lint warning (``css-unsupported``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from nanoframes.bake.baker import Baker
from nanoframes.errors import NanoframesError
from nanoframes.frames.film import Film
from nanoframes.lint import lint_file
from nanoframes.model.composition import parse

NS = "http://www.w3.org/2000/svg"
TIMELINE = 'type="application/nanoframes+json"'
RED, GREEN, BLUE = (255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 255)


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def write(project: Path, body: str, name: str = "s.nf.svg", w: int = 100, h: int = 20) -> Path:
    path = project / name
    path.write_text(f'<svg xmlns="{NS}" data-width="{w}" data-height="{h}" data-fps="10" '
                    f'data-duration="1">\n{body}\n</svg>')
    return path


def frame(path: Path, index: int = 0) -> np.ndarray:
    f = Film(parse(path))
    return f.raster(f.document(index)).copy()


def colour(px: np.ndarray, x: int, y: int) -> tuple[int, ...]:
    return tuple(int(c) for c in px[y, x])


def cells(n: int) -> str:
    """``n`` 20x20 rects side by side, ids c0..c{n-1}, unpainted (black by default)."""
    return "".join(f'<rect id="c{i}" x="{20 * i}" width="20" height="20"/>' for i in range(n))


def test_class_type_id_and_grouped_selectors_apply(project: Path) -> None:
    body = ("<style>.fil { fill: #00ff00 } rect { fill: #ff0000 } #c2, #c3 { fill: #0000ff }"
            "</style>"
            '<rect class="fil" x="0" width="20" height="20"/>'
            '<rect x="20" width="20" height="20"/>'
            '<rect id="c2" x="40" width="20" height="20"/>'
            '<rect id="c3" class="fil" x="60" width="20" height="20"/>')
    px = frame(write(project, body))
    assert colour(px, 10, 10) == GREEN   # class beats type
    assert colour(px, 30, 10) == RED     # type
    assert colour(px, 50, 10) == BLUE    # id (grouped)
    assert colour(px, 70, 10) == BLUE    # id beats class (specificity, not order)


def test_cascade_order_inline_attribute_and_important(project: Path) -> None:
    body = ("<style>.a { fill: #ff0000 } .a { fill: #00ff00 }"
            ".b { fill: #00ff00 } .imp { fill: #0000ff !important }</style>"
            '<rect class="a" x="0" width="20" height="20"/>'                     # later wins
            '<rect class="b" x="20" width="20" height="20" fill="#ff0000"/>'     # sheet > attribute
            '<rect class="b" x="40" width="20" height="20" style="fill:#0000ff"/>'  # inline > sheet
            '<rect class="imp" x="60" width="20" height="20" style="fill:#ff0000"/>'
            '<rect class="imp" x="80" width="20" height="20" style="fill:#ff0000 !important"/>')
    px = frame(write(project, body))
    assert colour(px, 10, 10) == GREEN
    assert colour(px, 30, 10) == GREEN
    assert colour(px, 50, 10) == BLUE
    assert colour(px, 70, 10) == BLUE    # !important in the sheet beats plain inline
    assert colour(px, 90, 10) == RED     # ... but not inline !important


def test_hostile_sheets_are_bounded(project: Path) -> None:
    everything = write(project, "<style>" + "* { fill: #ff0000 }\n" * 100 + "</style>\n"
                       + '<rect width="1" height="1"/>' * 12_000, "all.nf.svg")
    deep = write(project, "<style>x * * * * rect { fill: #ff0000 }</style>\n"
                 + "<g>" * 200 + '<rect width="1" height="1"/>' * 40 + "</g>" * 200,
                 "deep.nf.svg")
    for path in (everything, deep):
        with pytest.raises(NanoframesError) as err:
            parse(path)
        assert err.value.code == "style-too-large" and err.value.line == 2
    siblings = write(project, "<style>rect ~ rect, rect + rect { fill: #ff0000 }</style>"
                     + '<rect width="20" height="20"/>' * 2, "sib.nf.svg")
    assert colour(frame(siblings), 10, 10) == (0, 0, 0, 255)  # not applied: linted
    assert len([f for f in lint_file(siblings) if f.code == "css-unsupported"]) == 2


def test_inherited_through_groups_and_descendant_selectors(project: Path) -> None:
    body = ('<style>g.tint { fill: #0000ff } g.tint > rect.hot { fill: #ff0000 }</style>'
            '<g class="tint"><rect x="0" width="20" height="20"/>'
            '<rect class="hot" x="20" width="20" height="20"/></g>'
            '<rect class="hot" x="40" width="20" height="20"/>')
    px = frame(write(project, body))
    assert colour(px, 10, 10) == BLUE    # inherited from the group's rule
    assert colour(px, 30, 10) == RED
    assert colour(px, 50, 10) == (0, 0, 0, 255)  # outside the group: no rule, default black


def test_animation_beats_the_sheet_and_targets_by_class(project: Path) -> None:
    anim = ('{"target": ".box", "keyframes": [{"t": 0, "fill": "#0000ff"}, '
            '{"t": 1, "fill": "#0000ff"}]}')
    body = ('<style>.box { fill: #ff0000; opacity: 0.5 }</style>'
            '<rect class="box" x="0" width="20" height="20"/>'
            f'<script {TIMELINE}>{{"animations": [{anim}]}}</script>')
    px = frame(write(project, body), 3)
    r, g, b, a = colour(px, 10, 10)
    assert (r, g, b) == (0, 0, 255) and abs(a - 128) <= 1  # animated fill, the sheet's opacity


def test_sheet_font_size_and_family_reach_text(project: Path) -> None:
    big = ('<style>.t { font-size: 40px }</style>'
           '<text class="t" x="2" y="45" fill="#ffffff">H</text>')
    small = '<text x="2" y="45" fill="#ffffff">H</text>'

    def ink_height(body: str, name: str) -> int:
        px = frame(write(project, body, name, 60, 60))
        rows = np.nonzero(px[:, :, 3].max(axis=1))[0]
        return int(rows[-1] - rows[0] + 1)

    assert ink_height(big, "big.nf.svg") > 2 * ink_height(small, "small.nf.svg")


def test_font_face_and_unsupported_rules_never_reach_thorvg_and_are_linted(project: Path
                                                                        ) -> None:
    body = ("<style>\n@font-face { font-family: X; src: url(data:font/ttf;base64,AAAA) }\n"
            "rect:hover { fill: #ffff00 }\n@media print { rect { fill: #ffff00 } }\n"
            "rect::before { fill: #ffff00 }\n.ok { fill: #00ff00 }\n</style>\n"
            '<rect class="ok" width="20" height="20"/>')
    path = write(project, body)
    doc = Baker(parse(path)).document(0)
    assert b"<style" not in doc and b"font-face" not in doc and b"ffff00" not in doc
    assert colour(frame(path), 10, 10) == GREEN  # the rest of the sheet applies
    found = [f for f in lint_file(path) if f.code == "css-unsupported"]
    named = sorted(f.message.split(" in the style sheet")[0] for f in found)
    assert named == ["@font-face", "@media", "selector 'rect::before'", "selector 'rect:hover'"]
    assert [f.line for f in sorted(found, key=lambda f: f.line)] == [3, 4, 5, 6]
    assert all(f.severity == "warning" for f in found)


def test_a_bad_selector_in_a_group_skips_only_itself(project: Path) -> None:
    body = ("<style>rect:hover, .ok, svg|rect { fill: #00ff00 }</style>"
            '<rect class="ok" width="20" height="20"/>')
    path = write(project, body)
    assert colour(frame(path), 10, 10) == GREEN
    assert len([f for f in lint_file(path) if f.code == "css-unsupported"]) == 2


def test_geometry_in_a_sheet_is_not_applied(project: Path) -> None:
    """SVG 1.1: ``height`` is no style property; nothing draws from it."""
    body = ("<style>rect { height: 160px; fill: #00ff00 }</style>"
            '<rect x="0" width="20"/>')
    root = etree.fromstring(Baker(parse(write(project, body))).document(0))
    rect = root.find(f"{{{NS}}}rect")
    assert rect.get("height") is None and rect.get("fill") == "#00ff00"


def test_sheets_of_another_type_are_skipped(project: Path) -> None:
    body = ('<style type="text/less">rect { fill: #00ff00 }</style>'
            '<rect width="20" height="20"/>')
    path = write(project, body)
    assert colour(frame(path), 10, 10) == (0, 0, 0, 255)
    assert [f.code for f in lint_file(path)] == ["css-unsupported"]


def test_no_sheet_leaves_the_tree_untouched(project: Path) -> None:
    body = '<rect class="a" width="20" height="20" style="fill:#0000ff"/>'
    comp = parse(write(project, body))
    assert comp.root.find(f"{{{NS}}}rect").get("style") == "fill:#0000ff"


def test_a_design_tool_export_draws_and_animates(project: Path) -> None:
    """Illustrator-style: classes in a sheet under <defs>, an embedded bitmap, a timeline
    that targets an element styled only by its class."""
    import base64
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (4, 2), (255, 0, 0)).save(png, format="PNG")
    uri = "data:image/png;base64," + base64.b64encode(png.getvalue()).decode("ascii")
    body = ('<defs><style>\n  .cls-1 { fill: #1e88e5; }\n'
            '  .cls-2 { fill: none; stroke: #00ff00; stroke-miterlimit: 10; '
            'stroke-width: 4px; }\n  .cls-3 { isolation: isolate; }\n</style></defs>'
            '<g class="cls-3"><rect id="bar" class="cls-1" width="20" height="60"/>'
            '<line class="cls-2" x1="60" y1="0" x2="60" y2="60"/>'
            f'<image width="4" height="2" transform="translate(80 0) scale(10)" href="{uri}"/>'
            '</g>'
            f'<script {TIMELINE}>{{"animations": [{{"target": "#bar", "keyframes": '
            '[{"t": 0, "x": 0}, {"t": 1, "x": 40}]}]}</script>')
    path = write(project, body, "export.nf.svg", 120, 60)
    first, later = frame(path, 0), frame(path, 5)
    assert colour(first, 10, 30) == (0x1e, 0x88, 0xe5, 255)
    assert colour(later, 10, 30)[3] == 0 and colour(later, 30, 30) == (0x1e, 0x88, 0xe5, 255)
    assert colour(first, 60, 30) == GREEN and colour(first, 65, 30)[3] == 0  # 4px stroke
    assert colour(first, 100, 10) == RED and colour(first, 100, 30)[3] == 0
    assert [f.code for f in lint_file(path)] == []
