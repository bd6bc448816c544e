"""Bake (docs/compositions.md, docs/thorvg.md): one rule per test, on the document the rasterizer
receives. Every output is parsed back as XML, so each test also checks well-formedness."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image

from nanoframes.bake.baker import Baker
from nanoframes.model.composition import parse
from nanoframes.model.geometry import apply, parse_transform

NS = "http://www.w3.org/2000/svg"
TIMELINE = 'type="application/nanoframes+json"'
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path


def composition(project: Path, body: str, attrs: str = "", name: str = "c.nf.svg",
                fps: str = "10", duration: str = "1"):
    path = project / name
    path.write_text(
        f'<svg xmlns="{NS}" xmlns:xlink="http://www.w3.org/1999/xlink" data-width="40" '
        f'data-height="20" data-fps="{fps}" data-duration="{duration}" {attrs}>\n{body}\n</svg>')
    return parse(path)


def bake(project: Path, body: str, frame: int = 0, **kw) -> etree._Element:
    doc = Baker(composition(project, body, **kw)).document(frame)
    return etree.fromstring(doc)  # raises unless well-formed


def by_id(root: etree._Element, ident: str) -> etree._Element | None:
    found = root.xpath("//*[@id=$i]", i=ident)
    return found[0] if found else None


def timeline(*animations: str) -> str:
    return f'<script {TIMELINE}>{{"animations": [{", ".join(animations)}]}}</script>'


# --- the canvas --------------------------------------------------------------------

def test_viewport_pinned(project: Path) -> None:
    root = bake(project, '<rect width="5" height="5"/>', attrs='width="100%" height="auto"')
    assert root.get("width") == "40" and root.get("height") == "20"
    assert root.get("viewBox") == "0 0 40 20"


def test_author_viewbox_kept(project: Path) -> None:
    root = bake(project, '<rect width="5" height="5"/>', attrs='viewBox="-10 -10 80 40"')
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == ("40", "20",
                                                                          "-10 -10 80 40")


def test_no_script_style_comment_or_directive(project: Path) -> None:
    doc = Baker(composition(project, (
        '<style>@font-face { font-family: X; src: url(data:font/ttf;base64,AAAA) }</style>'
        '<!-- note --><?pi x?><metadata>m</metadata>'
        '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>'
        '<rect id="r" data-start="0" data-anything="1" width="4" height="4"/>'
        + timeline('{"target": "#r", "keyframes": [{"t": 0, "x": 1}]}')),
        attrs='data-safe-margin="2" data-palette-budget="3" data-composition-id="z"')
    ).document(0)
    root = etree.fromstring(doc)
    tags = {etree.QName(el).localname for el in root.iter(etree.Element)}
    assert tags == {"svg", "rect"}
    assert b"<script" not in doc and b"<style" not in doc and b"<!--" not in doc
    assert b"<?pi" not in doc and b"@font-face" not in doc
    for el in root.iter(etree.Element):
        assert not [a for a in el.attrib if a.startswith("data-")], el.attrib
    assert by_id(root, "r").get("x") == "1"


def test_external_references_dropped(project: Path) -> None:
    root = bake(project, '<a href="https://example.com"><rect id="a" width="2" height="2"/></a>'
                         '<use id="u" href="#a"/><a id="l" xlink:href="../x.svg"/>')
    assert by_id(root, "l").get("{http://www.w3.org/1999/xlink}href") is None
    a = root.find(f"{{{NS}}}a")
    assert a.get("href") is None
    assert by_id(root, "u").get("href") == "#a"


# --- presence ------------------------------------------------------------------------

def test_presence_half_open_end_to_end(project: Path) -> None:
    comp = composition(project, '<rect id="a" data-duration="0.5" width="1" height="1"/>'
                                '<rect id="b" data-start="0.5" data-duration="0.5" width="1" '
                                'height="1"/>')
    baker = Baker(comp)
    shown = []
    for i in range(comp.frame_count):
        root = etree.fromstring(baker.document(i))
        present = [k for k in "ab" if by_id(root, k) is not None]
        assert len(present) == 1, (i, present)
        shown.append(present[0])
    assert "".join(shown) == "aaaaabbbbb"  # frame 5 is t = 0.5: b, never both


def test_absent_outside_window_and_tail_kept(project: Path) -> None:
    comp = composition(project, '<g id="g">x<rect id="r" data-start="0.3" data-duration="0.2"/>'
                                'tail</g>')
    baker = Baker(comp)
    assert by_id(etree.fromstring(baker.document(2)), "r") is None
    assert by_id(etree.fromstring(baker.document(3)), "r") is not None
    assert by_id(etree.fromstring(baker.document(5)), "r") is None
    g = by_id(etree.fromstring(baker.document(0)), "g")
    assert "".join(g.itertext()) == "xtail"


def test_presence_nests(project: Path) -> None:
    comp = composition(project, '<g id="g" data-start="0.5"><rect id="child" width="2" '
                                'height="2"/><g id="inner"><rect id="deep" data-start="0" '
                                'width="1" height="1"/></g></g>')
    baker = Baker(comp)
    early = etree.fromstring(baker.document(2))
    assert [by_id(early, k) for k in ("g", "child", "inner", "deep")] == [None] * 4
    late = etree.fromstring(baker.document(6))
    assert all(by_id(late, k) is not None for k in ("g", "child", "inner", "deep"))


@pytest.mark.parametrize(("frame", "opacity"), [
    (1, 0.125), (2, 0.25), (4, 0.5), (5, 0.5), (6, 0.5), (8, 0.25), (9, 0.125)])
def test_fade_multiplies_authored_opacity(project: Path, frame: int, opacity: float) -> None:
    # start 0, end 1.0, fade 0.4: factor min(1, t/0.4, (1-t)/0.4), × authored 0.5
    root = bake(project, '<rect id="r" opacity="0.5" data-fade="0.4" width="4" height="4"/>',
                frame=frame)
    assert float(by_id(root, "r").get("opacity")) == pytest.approx(opacity, abs=1e-6)


def test_fade_multiplies_style_and_animated_opacity(project: Path) -> None:
    body = ('<rect id="s" style="opacity: 0.5" data-start="0" data-duration="1" data-fade="0.5"/>'
            '<rect id="a" opacity="1" data-fade="0.5"/>'
            + timeline('{"target": "#a", "keyframes": [{"t": 0, "opacity": 0.2}, '
                       '{"t": 0.4, "opacity": 0.6}]}'))
    root = bake(project, body, frame=2)  # t = 0.2: fade 0.4; animated opacity 0.4
    assert float(by_id(root, "s").get("opacity")) == pytest.approx(0.2, abs=1e-6)
    assert float(by_id(root, "a").get("opacity")) == pytest.approx(0.16, abs=1e-6)


# --- colours with alpha ------------------------------------------------------------

@pytest.mark.parametrize(("attrs", "fill", "opacity"), [
    ('fill="rgba(255, 0, 0, 0.5)"', "#ff0000", 0.5),
    ('fill="#00ff0080"', "#00ff00", 128 / 255),
    ('fill="#0000ff80" fill-opacity="0.5"', "#0000ff", 0.5 * 128 / 255),
    ('style="fill: rgba(0,0,255,0.25)"', "#0000ff", 0.25),
    ('style="fill:#ff000040; fill-opacity: 0.5" fill="blue"', "#ff0000", 0.5 * 64 / 255),
    ('fill="rgba(10, 20, 30, 1)"', "#0a141e", None),
    ('fill="#abc"', "#abc", None),
])
def test_colour_alpha_becomes_opacity(project: Path, attrs: str, fill: str,
                                      opacity: float | None) -> None:
    rect = by_id(bake(project, f'<rect id="r" {attrs} width="4" height="4"/>'), "r")
    assert rect.get("fill").lower() == fill
    assert rect.get("style") is None
    if opacity is None:
        assert rect.get("fill-opacity") is None
    else:
        assert float(rect.get("fill-opacity")) == pytest.approx(opacity, abs=1e-5)


def test_stroke_alpha_becomes_stroke_opacity(project: Path) -> None:
    rect = by_id(bake(project, '<rect id="r" stroke="#ff000080" width="4" height="4"/>'), "r")
    assert rect.get("stroke") == "#ff0000"
    assert float(rect.get("stroke-opacity")) == pytest.approx(128 / 255, abs=1e-5)


def test_animated_colour_alpha(project: Path) -> None:
    body = ('<rect id="r" fill="black" width="4" height="4"/>'
            + timeline('{"target": "#r", "keyframes": [{"t": 0, "fill": "#ff000000"}, '
                       '{"t": 1, "fill": "#0000ffff"}]}'))
    root = bake(project, body, frame=5)  # t = 0.5
    rect = by_id(root, "r")
    assert rect.get("fill") == "#800080"
    assert float(rect.get("fill-opacity")) == pytest.approx(0.5, abs=1e-6)
    start = by_id(bake(project, body, frame=0, name="c2.nf.svg"), "r")
    assert start.get("fill") == "#ff0000" and float(start.get("fill-opacity")) == 0


def test_no_alpha_colour_reaches_the_rasterizer(project: Path) -> None:
    body = ('<g fill="rgba(0,0,0,0.5)"><rect id="r" stroke="rgb(1,2,3)" '
            'style="stroke: rgba(1,2,3,0.5)"/></g><linearGradient><stop stop-color="#11223380"/>'
            '</linearGradient>')
    doc = Baker(composition(project, body)).document(0).decode()
    assert "rgba" not in doc and "#11223380" not in doc
    assert 'stop-color="#112233"' in doc and "stop-opacity=" in doc


# --- text ----------------------------------------------------------------------------

def _text(project: Path, attrs: str, wrap: str = "", content: str = "Hi") -> etree._Element:
    body = f'<text id="t" {attrs}>{content}</text>'
    if wrap:
        body = f"<g {wrap}>{body}</g>"
    return by_id(bake(project, body), "t")


@pytest.mark.parametrize(("attrs", "wrap", "face"), [
    ("", "", "NotoSans-Regular"),
    ('font-family="Nope"', "", "NotoSans-Regular"),
    ('font-family="sans-serif"', "", "NotoSans-Regular"),
    ('font-family="Noto Sans"', "", "NotoSans-Regular"),
    ('font-family="&quot;Brand Sans&quot;, \'Noto Sans\', Arial"', "", "NotoSans-Regular"),
    ('font-family="Noto Sans" font-weight="bold"', "", "NotoSans-Bold"),
    ('font-weight="700"', "", "NotoSans-Bold"),
    ("", 'font-weight="bold"', "NotoSans-Bold"),
    ('style="font-weight: 700"', "", "NotoSans-Bold"),
    ('font-family="Noto Serif Display" font-weight="bold"', "", "NotoSerifDisplay-Bold"),
    ("", 'style="font-family: \'Noto Serif Display\', serif"', "NotoSerifDisplay-Bold"),
])
def test_font_family_is_exact_face_name(project: Path, attrs: str, wrap: str,
                                        face: str) -> None:
    text = _text(project, attrs, wrap)
    assert text.get("font-family") == face
    assert text.get("font-weight") is None and text.get("font-style") is None
    assert text.get("style") is None


@pytest.mark.skipif(not DEJAVU.is_file(), reason="host has no DejaVu Sans")
@pytest.mark.parametrize(("attrs", "wrap"), [
    ('font-family="DejaVu Sans"', ""),
    ('font-family="\'DejaVu Sans\', sans-serif"', ""),
    ('font-family="Brand, DejaVu Sans"', ""),
    ("", 'font-family="DejaVu Sans"'),
    ('style="font-family: DejaVu Sans"', 'font-family="Noto Sans"'),
    ('font-family="Noto Sans" style="font-family:\'DejaVu Sans\'"', ""),
])
def test_family_list_inheritance_and_style(project: Path, attrs: str, wrap: str) -> None:
    assert _text(project, attrs, wrap).get("font-family") == "DejaVuSans"


@pytest.mark.parametrize(("attrs", "wrap", "size"), [
    ("", "", "16"),
    ('font-size="40"', "", "40"),
    ('font-size="30px"', "", "30"),
    ('style="font-size: 12pt"', "", "16"),
    ("", 'font-size="24"', "24"),
    ('font-size="150%"', 'font-size="20"', "30"),
])
def test_font_size_always_explicit(project: Path, attrs: str, wrap: str, size: str) -> None:
    assert _text(project, attrs, wrap).get("font-size") == size


def test_entities_are_literal_characters_in_cdata(project: Path) -> None:
    doc = Baker(composition(project, '<text id="t" x="1" y="15">A &amp; B &lt;C&gt; '
                                     '&#x263A; &quot;q&quot;</text>')).document(0)
    assert b'<![CDATA[A & B <C> \xe2\x98\xba "q"]]>' in doc
    assert b"&amp;" not in doc and b"&lt;" not in doc
    assert "".join(by_id(etree.fromstring(doc), "t").itertext()) == 'A & B <C> \u263a "q"'


def test_text_cdata_terminator_survives(project: Path) -> None:
    root = bake(project, '<text id="t">a]]&gt;b</text>')
    assert "".join(by_id(root, "t").itertext()) == "a]]>b"


def test_text_children_flattened_whitespace_collapsed(project: Path) -> None:
    text = _text(project, "", content="\n  Hello <tspan>big</tspan>\n   world  ")
    assert list(text) == [] and text.text == "Hello big world"


def test_text_opacity_folded_into_fill_opacity(project: Path) -> None:
    text = _text(project, 'opacity="0.5" fill-opacity="0.8" fill="#ff000080"')
    assert text.get("opacity") is None
    assert text.get("fill") == "#ff0000"
    assert float(text.get("fill-opacity")) == pytest.approx(0.5 * 0.8 * 128 / 255, abs=1e-5)


def test_text_fade_folded_into_fill_opacity(project: Path) -> None:
    root = bake(project, '<text id="t" opacity="0.5" data-fade="0.4">Hi</text>', frame=2)
    text = by_id(root, "t")
    assert text.get("opacity") is None
    assert float(text.get("fill-opacity")) == pytest.approx(0.25, abs=1e-6)


# --- images ------------------------------------------------------------------------

@pytest.fixture()
def image(project: Path) -> Path:
    path = project / "assets" / "wide.png"
    path.parent.mkdir()
    Image.new("RGBA", (4, 2), (0, 200, 0, 255)).save(path)
    return path


def _data(el: etree._Element) -> bytes:
    href = el.get("href")
    prefix = "data:image/png;base64,"
    assert href.startswith(prefix)
    return base64.b64decode(href[len(prefix):])


def test_image_embedded_as_data_uri(project: Path, image: Path) -> None:
    root = bake(project, '<image id="a" href="assets/wide.png" width="8" height="8"/>'
                         '<image id="b" xlink:href="assets/wide.png"/>')
    for ident in "ab":
        el = by_id(root, ident)
        assert _data(el) == image.read_bytes()
        assert el.get("{http://www.w3.org/1999/xlink}href") is None
        assert el.get("preserveAspectRatio") == "none"
    a, b = by_id(root, "a"), by_id(root, "b")
    assert [a.get(k) for k in ("x", "y", "width", "height")] == ["0", "0", "8", "8"]  # stretch
    assert [b.get(k) for k in ("width", "height")] == ["4", "2"]  # intrinsic size


def test_image_independent_of_working_directory(project: Path, image: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                tmp_path_factory) -> None:
    comp = composition(project, '<image id="a" href="assets/wide.png"/>')
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert _data(by_id(etree.fromstring(Baker(comp).document(0)), "a")) == image.read_bytes()


def test_image_contain(project: Path, image: Path) -> None:
    el = by_id(bake(project, '<image id="a" href="assets/wide.png" x="2" y="2" width="20" '
                             'height="20" data-aspect="contain"/>'), "a")
    assert [el.get(k) for k in ("x", "y", "width", "height")] == ["2", "7", "20", "10"]
    assert el.get("clip-path") is None


def test_image_cover_adds_clip(project: Path, image: Path) -> None:
    root = bake(project, '<image id="a" href="assets/wide.png" x="2" y="2" width="20" '
                         'height="20" data-aspect="cover"/>')
    el = by_id(root, "a")
    assert [el.get(k) for k in ("x", "y", "width", "height")] == ["-8", "2", "40", "20"]
    clip_ref = el.get("clip-path")
    assert clip_ref.startswith("url(#") and clip_ref.endswith(")")
    clip = by_id(root, clip_ref[5:-1])
    assert etree.QName(clip).localname == "clipPath"
    (rect,) = list(clip)
    assert [rect.get(k) for k in ("x", "y", "width", "height")] == ["2", "2", "20", "20"]


# --- transforms ------------------------------------------------------------------

def test_center_auto_pivots_on_own_box(project: Path) -> None:
    body = ('<rect id="r" x="10" y="4" width="20" height="10" transform="translate(1,1)"/>'
            + timeline('{"target": "#r", "keyframes": [{"t": 0, "transform": '
                       '{"rotate": 90, "center": "auto"}}]}'))
    rect = by_id(bake(project, body), "r")
    m = parse_transform(rect.get("transform"))
    assert rect.get("transform").startswith("translate(1,1) ")  # layered after its own
    cx, cy = apply(m, 20, 9)
    assert (cx, cy) == pytest.approx((21, 10))
    # the 20×10 box turns into 10×20 about its centre: top-left → top-right (+ own shift)
    assert apply(m, 10, 4) == pytest.approx((26, 0))
    assert apply(m, 30, 14) == pytest.approx((16, 20))


# --- determinism and well-formedness ------------------------------------------------

def test_every_frame_well_formed_and_repeatable(project: Path, image: Path) -> None:
    body = ('<rect id="r" fill="#ff000080" width="4" height="4" data-fade="0.3"/>'
            '<text id="t" x="2" y="12" font-family="x, y">a &amp; b</text>'
            '<image href="assets/wide.png" width="9" height="9" data-aspect="cover"/>'
            + timeline('{"target": "#r, #t", "keyframes": [{"t": 0, "transform": '
                       '{"translate": [0, 0], "scale": 1, "center": "auto"}}, {"t": 1, '
                       '"transform": {"translate": [5, 2], "scale": 2, "center": "auto"}, '
                       '"ease": "ease-in-out"}]}'))
    comp = composition(project, body)
    first = [Baker(comp).document(i) for i in range(comp.frame_count)]
    again = Baker(comp)
    for i, doc in enumerate(first):
        root = etree.fromstring(doc)
        assert etree.QName(root).localname == "svg"
        assert again.document(i) == doc
    assert len(set(first)) == comp.frame_count  # every frame moved


def test_absent_tspan_does_not_draw(project: Path) -> None:
    root = bake(project, '<text id="t">a<tspan data-start="0.5">b</tspan>c</text>', frame=1)
    assert "".join(by_id(root, "t").itertext()) == "ac"  # baked as "abc"


def test_jpeg_embedded_with_its_mime(project: Path) -> None:
    Image.new("RGB", (6, 4), (250, 10, 10)).save(project / "photo.jpg", quality=95)
    el = by_id(bake(project, '<image id="j" href="photo.jpg"/>'), "j")
    prefix = "data:image/jpeg;base64,"
    assert el.get("href").startswith(prefix)
    assert base64.b64decode(el.get("href")[len(prefix):]) == (project / "photo.jpg").read_bytes()
    assert (el.get("width"), el.get("height")) == ("6", "4")


def test_bake_never_mutates_the_composition(project: Path, image: Path) -> None:
    import dataclasses

    comp = composition(project, '<rect id="r" style="fill: #ff000080" data-fade="0.5"/>'
                                '<text x="1" y="9" opacity="0.5">a &amp; b</text>'
                                '<image href="assets/wide.png" data-aspect="cover" width="9" '
                                'height="9"/>' + timeline('{"target": "#r", "keyframes": '
                                                          '[{"t": 0, "x": 0}, {"t": 1, "x": 9}]}'))
    before = etree.tostring(comp.root)
    baker = Baker(comp)
    docs = [baker.document(i) for i in (0, 5, 9, 5)]
    assert etree.tostring(comp.root) == before
    assert docs[1] == docs[3]
    with pytest.raises(dataclasses.FrozenInstanceError):
        comp.width = 1  # type: ignore[misc]


def test_malformed_path_data_does_not_crash_auto_center(tmp_path):
    """A broken `d` is bounded by what could be read; bake never raises on it."""
    from nanoframes.bake.baker import Baker
    from nanoframes.model.composition import parse

    (tmp_path / "pyproject.toml").write_text("")
    comp = tmp_path / "p.nf.svg"
    comp.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="40">'
        '<path id="p" d="M 10 10 L z q" stroke="red"/>'
        '<script type="application/nanoframes+json">{"animations": [{"target": "#p",'
        ' "keyframes": [{"t": 0, "transform": {"rotate": 0, "center": "auto"}},'
        ' {"t": 1, "transform": {"rotate": 90, "center": "auto"}}]}]}</script></svg>'
    )
    doc = Baker(parse(comp)).document(10)
    assert b"rotate(" in doc


def _bake_one(tmp_path, body: str) -> bytes:
    from nanoframes.bake.baker import Baker
    from nanoframes.model.composition import parse

    (tmp_path / "pyproject.toml").write_text("")
    comp = tmp_path / "c.nf.svg"
    comp.write_text('<svg xmlns="http://www.w3.org/2000/svg" data-width="60" data-height="40">'
                    + body + "</svg>")
    return Baker(parse(comp)).document(0)


def test_no_unresolved_family_list_reaches_the_document(tmp_path):
    doc = _bake_one(tmp_path, "<g font-family=\"'Noto Sans', serif\" font-weight=\"bold\" "
                    "style=\"font-size: 20px\"><text x=\"5\" y=\"30\">Hi</text></g>")
    assert b"serif" not in doc
    assert b'<g>' in doc
    assert b'font-family="NotoSans-Bold"' in doc and b'font-size="20"' in doc


def test_references_outside_the_document_are_dropped(tmp_path):
    doc = _bake_one(tmp_path, '<defs><linearGradient id="g"/></defs>'
                    '<rect width="10" height="10" fill="url(#g)" mask="url(http://x/m.svg#m)" '
                    'filter="url( other.svg#f )"/>')
    assert b'fill="url(#g)"' in doc
    assert b"mask=" not in doc and b"filter=" not in doc


def test_auto_pivot_of_a_group_uses_its_laid_out_text(tmp_path):
    """A static anchored text inside an animated group is laid out once; the group's
    "center": "auto" must measure it where it is drawn, not shift it a second time."""
    import re

    doc = _bake_one(tmp_path, '<g id="spin"><text x="160" y="100" font-size="40" '
                    'text-anchor="middle">MIDDLE</text></g>'
                    '<text id="self" x="160" y="150" font-size="40" text-anchor="middle">'
                    'MIDDLE</text><script type="application/nanoframes+json">'
                    '{"animations":[{"target":"#spin, #self","keyframes":[{"t":0,'
                    '"transform":{"rotate":10,"center":"auto"}}]}]}</script>')
    pivots = re.findall(rb'transform="translate\(([-\d.]+),', doc)
    assert len(pivots) == 2
    assert abs(float(pivots[0]) - 160) < 0.5 and abs(float(pivots[1]) - 160) < 0.5


@pytest.mark.parametrize("attr", ['data-aspect="fill"', 'data-start="1_5"'])
def test_bad_image_directives_are_errors(tmp_path, attr):
    import base64

    from nanoframes.errors import NanoframesError

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8"
                           "DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
    (tmp_path / "a.png").write_bytes(png)
    with pytest.raises(NanoframesError) as err:
        _bake_one(tmp_path, f'<image href="a.png" width="10" height="10" {attr}/>')
    assert err.value.code == "attr-invalid" and err.value.line == 1


def test_animated_colour_alpha_multiplies_an_animated_opacity_in_any_order(tmp_path):
    doc = _bake_one(tmp_path, '<rect id="r" width="10" height="10"/>'
                    '<script type="application/nanoframes+json">{"animations":[{"target":"#r",'
                    '"keyframes":[{"t":0,"fill":"#ff000080","fill-opacity":0.5}]}]}</script>')
    assert b'fill="#ff0000"' in doc and b'fill-opacity="0.25098"' in doc


def test_auto_pivot_follows_animated_geometry(tmp_path):
    import re

    doc_of = []
    from nanoframes.bake.baker import Baker
    from nanoframes.model.composition import parse

    (tmp_path / "pyproject.toml").write_text("")
    comp = tmp_path / "g.nf.svg"
    comp.write_text('<svg xmlns="http://www.w3.org/2000/svg" data-width="100" data-height="100"'
                    ' data-fps="2" data-duration="1"><rect id="r" x="0" y="0" width="10" '
                    'height="10"/><script type="application/nanoframes+json">{"animations":[{'
                    '"target":"#r","keyframes":[{"t":0,"x":0,"transform":{"rotate":5,'
                    '"center":"auto"}},{"t":0.5,"x":40,"transform":{"rotate":5,'
                    '"center":"auto"}}]}]}</script></svg>')
    baker = Baker(parse(comp))
    for i in range(2):
        doc_of.append(baker.document(i))
    pivots = [float(re.search(rb'translate\(([-\d.]+),', d).group(1)) for d in doc_of]
    assert pivots == [5.0, 45.0]
