"""A bounded fuzz of parse and bake (issue 6, item 1).

Hypothesis builds compositions from random elements, attributes (hostile numbers
included), timelines (NaN-free JSON, but huge, negative, mistyped and nested
values) and splices random junk bytes into some. Each one either raises
:class:`NanoframesError` from parse or bake, or bakes to a well-formed document
that holds no ``<script>``, no ``<style>`` and no reference that is not to the
document itself or an embedded ``data:`` image. The rasterizer is never called
here: what it receives is checked, not drawn.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import hostile_gen
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from launched import launched
from lxml import etree

from nanoframes.bake.baker import Baker
from nanoframes.errors import NanoframesError
from nanoframes.model.composition import parse

SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"

# Mostly plausible numbers, so that most examples get through parse into bake; the
# hostile ones are rare per attribute but common per document.
PLAIN = ["0", "1", "-1", "10", "64", "0.5", "-0.5", "12px", "50%", "1e3", ".5", "+3", "007"]
HOSTILE = ["1e9", "1e10", "-1e10", "1e999", "1e-999", "nan", "NaN", "inf", "-Infinity", "",
           " ", "abc", "1" * 30, "0x10", "1,2"]
NUMBERS = st.sampled_from(PLAIN * 12 + HOSTILE)
ATTRS = st.sampled_from([
    "x", "y", "width", "height", "cx", "cy", "r", "rx", "ry", "opacity", "fill-opacity",
    "stroke-width", "font-size", "data-start", "data-duration", "data-fade", "data-aspect",
    "transform", "fill", "stroke", "id", "class", "style", "font-family", "href",
    f"{{{XLINK}}}href", "viewBox", "clip-path", "mask", "filter",
])
NUMERIC = frozenset("x y width height cx cy r rx ry opacity fill-opacity stroke-width "
                    "font-size data-start data-duration data-fade".split())
STRINGS = st.sampled_from([
    "#f00", "red", "rgba(1,2,3,0.5)", "#ff000080", "none", "url(#a)", "url(#nope)",
    "scale(2)", "rotate(45 5 5)", "matrix(nan 0 0 1 0 0)", "translate(1e300)",
    "fill: #0f0; opacity: 0.5", "a", "b", "ok.png", "../outside/secret.png", "/etc/passwd",
    "file:///etc/passwd", "http://x/y.png", "#a", "data:image/png;base64,AAAA",
    "contain", "cover", "Brand Sans, serif", "'DejaVu Sans'", "0 0 10 10", "\u00e9\u4e2d",
    "]]>", "&amp;", "<", "{frame}",
])
XML_CHARS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Co"),
                          exclude_characters="\ufffe\uffff")
TAGS = st.sampled_from(["rect", "circle", "ellipse", "line", "g", "text", "image", "use",
                        "path", "defs", "clipPath", "linearGradient", "stop", "style",
                        "script", "foreignObject", "tspan", "svg"])
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
              STRINGS),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["translate", "rotate", "scale", "center", "x", "t"]), inner,
        max_size=3),
    max_leaves=12)
PROPS = st.sampled_from(["x", "y", "opacity", "fill", "stroke", "transform", "width", "r",
                         "stroke-width", "href", "d", "unknown"])


@st.composite
def elements(draw, depth: int = 0):
    tag = draw(TAGS)
    attrs = {name: draw(NUMBERS if name in NUMERIC else STRINGS)
             for name in draw(st.lists(ATTRS, max_size=5, unique=True))}
    el = etree.Element(f"{{{SVG}}}{tag}")
    for name, value in attrs.items():
        el.set(name, value)
    if tag in ("text", "tspan", "style", "script") and draw(st.booleans()):
        el.text = draw(st.text(XML_CHARS, max_size=20) | STRINGS)
    if depth < 3:
        for child in draw(st.lists(elements(depth + 1), max_size=3)):
            el.append(child)
    return el


@st.composite
def keyframes(draw):
    kf = {}
    if draw(st.integers(0, 9)) != 3:  # mostly a time, sometimes not
        kf["t"] = draw(st.floats(-2, 3, allow_nan=False) | st.sampled_from([0, 1, "x", None]))
    for prop in draw(st.lists(PROPS, max_size=3)):
        kf[prop] = draw(JSON_VALUES)
    if draw(st.booleans()):
        kf["ease"] = draw(st.sampled_from(["linear", "ease-in", "nope", "cubic-bezier(0,1,1,0)",
                                           "cubic-bezier(2,0,0,1)", "cubic-bezier(0,1e308,1,0)"])
                          | JSON_VALUES)
    return kf


@st.composite
def timelines(draw):
    anims = [{"target": draw(st.sampled_from(["#a", "#b", ".c", "rect", "text", "g, rect",
                                              "svg > g", "", "#", "image"])),
              "keyframes": draw(st.lists(keyframes(), max_size=4))}
             for _ in range(draw(st.integers(0, 3)))]
    doc = {"animations": anims} if draw(st.integers(0, 9)) != 3 else draw(JSON_VALUES)
    return json.dumps(doc)


@st.composite
def compositions(draw) -> bytes:
    root = etree.Element(f"{{{SVG}}}svg", nsmap={None: SVG, "xlink": XLINK})
    root.set("data-width", draw(st.sampled_from(["64"] * 20 + ["1", "0", "16384", "-3", "2.5"])))
    root.set("data-height", draw(st.sampled_from(["48"] * 20 + ["1", "nan"])))
    for name in ("data-fps", "data-duration"):
        if draw(st.booleans()):
            root.set(name, draw(st.sampled_from(["10", "1", "0.5", "240", "2"] * 4 + HOSTILE)))
    for child in draw(st.lists(elements(), max_size=5)):
        root.append(child)
    if draw(st.booleans()):
        script = etree.SubElement(root, f"{{{SVG}}}script", type="application/nanoframes+json")
        text = draw(timelines())
        script.text = etree.CDATA(text) if draw(st.booleans()) and "]]>" not in text else text
    data = etree.tostring(root)
    if draw(st.integers(0, 7)) == 3:  # splice junk in (hypothesis favours 0: not that)
        at = draw(st.integers(0, len(data) - 1).map(lambda i: len(data) - 1 - i))
        junk = draw(st.binary(min_size=1, max_size=12)
                    | st.sampled_from([b"<", b"&", b"<!DOCTYPE x>", b"\x00", b"\xff\xfe",
                                       b"]]>", b"<!--", b'"', b"</svg>"]))
        cut = draw(st.integers(0, 8))
        data = data[:at] + junk + data[at + cut:]
    return data


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz") / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "fuzz"\n')
    (root / "ok.png").write_bytes(hostile_gen.small_png())
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.png").write_bytes(hostile_gen.small_png(seed=1))
    return root


def check_document(doc: bytes) -> None:
    root = etree.fromstring(doc, etree.XMLParser(resolve_entities=False, no_network=True))
    for el in root.iter(etree.Element):
        tag = etree.QName(el).localname
        assert tag not in ("script", "style", "foreignObject"), tag
        for name, value in el.attrib.items():
            assert not name.startswith("data-"), name
            if etree.QName(name).localname == "href":
                assert value.startswith("#") or value.startswith("data:image/"), value


def parse_and_bake(path: Path) -> str:
    """Parse, bake the first and a middle frame, check both documents; what happened."""
    try:
        comp = parse(path)
        baker = Baker(comp)
        for index in sorted({0, comp.frame_count // 2}):
            check_document(baker.document(index))
    except NanoframesError as err:
        assert err.code and "\n" not in str(err), str(err)
        return f"refused: {err.code}"
    return "baked"


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(data=compositions())
def test_parse_and_bake_never_crash(project: Path, data: bytes) -> None:
    path = project / "fuzz.nf.svg"
    path.write_bytes(data)
    event(parse_and_bake(path))


# Inputs the fuzz found, kept as fixed cases.
FOUND = {
    # bake.py: a <text> inside a <text>, with a clipped element in it: IndexError in _text.
    "nested-text-clip": (b'<svg xmlns="http://www.w3.org/2000/svg" data-width="64" '
                         b'data-height="48"><text><text><rect data-start="1"/></text></text>'
                         b'</svg>'),
}
FOUND_BUGS: dict[str, str] = {}  # name -> reason, for a found case not fixed yet


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=[pytest.mark.xfail(reason=FOUND_BUGS[name], strict=True)]
                 if name in FOUND_BUGS else []) for name in sorted(FOUND)])
def test_found_cases(project: Path, name: str) -> None:
    path = project / f"{name}.nf.svg"
    path.write_bytes(FOUND[name])
    parse_and_bake(path)


# --- rendering for real, within the documented limits (issue 31, item 6) ------------
#
# Hypothesis builds compositions that every documented limit accepts, pushed
# towards the limits (strokes up to 4 canvas sides, blurs up to one, frame text at
# width and precision 64, curve text, <use> fan-outs, images declaring 4096x4096),
# and each is drawn by the real command in a child with a memory limit and a time
# limit: it must exit 0 with no signal and no traceback. Brief by default (CI);
# set NANOFRAMES_FUZZ_EXAMPLES=500 (and, if need be, NANOFRAMES_FUZZ_SECONDS, the
# per-composition bound, default 60) to run it longer on demand.

RENDER_EXAMPLES = int(os.environ.get("NANOFRAMES_FUZZ_EXAMPLES", "5"))
RENDER_SECONDS = float(os.environ.get("NANOFRAMES_FUZZ_SECONDS", "60"))
RENDER_MEMORY = 2 << 30
SIDES = st.sampled_from([16, 64, 200, 640])
SPECS = st.sampled_from(["{frame}", "{second:.2f}", "{frame:>64}", "{second:.64f}",
                         "{time:64.3e}", "{fps:^64}", "{frames:064d}", "{duration:,.3f}"])


@st.composite
def drawable(draw, side: int, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["rect", "circle", "text", "curve", "blur", "g", "image"]))
    coord = st.floats(-2 * side, 2 * side, allow_nan=False).map(lambda v: f"{v:.3f}")
    stroke = draw(st.floats(0, 4 * side, allow_nan=False))
    join = draw(st.sampled_from(["miter", "round", "bevel"]))
    paint = (f'fill="#{draw(st.integers(0, 0xFFFFFF)):06x}" stroke="#123456" '
             f'stroke-width="{stroke:.3f}" stroke-linejoin="{join}"')
    if kind == "rect":
        return f'<rect id="e{draw(st.integers(0, 9))}" x="{draw(coord)}" y="{draw(coord)}" ' \
               f'width="{abs(float(draw(coord)))}" height="{abs(float(draw(coord)))}" {paint}/>'
    if kind == "circle":
        return f'<circle cx="{draw(coord)}" cy="{draw(coord)}" ' \
               f'r="{abs(float(draw(coord))):.3f}" {paint}/>'
    if kind == "text":
        spec = "".join(draw(st.lists(SPECS, min_size=1, max_size=4)))
        size = draw(st.integers(1, side))
        return f'<text x="{draw(coord)}" y="{draw(coord)}" font-size="{size}"' \
               f' data-frame-text="{spec}" {paint}>x</text>'
    if kind == "curve":
        chars = "AB Cd" * draw(st.integers(1, 200))
        return f'<text font-size="{draw(st.integers(1, 40))}" data-curve-circle="' \
               f'{side / 2},{side / 2},{draw(st.integers(1, side))}">{chars}</text>'
    if kind == "blur":
        dev = draw(st.floats(0, side, allow_nan=False))
        return f'<defs><filter id="f{depth}"><feGaussianBlur stdDeviation="{dev:.3f}"/></filter>' \
               f'</defs><rect width="{side}" height="{side}" filter="url(#f{depth})" {paint}/>'
    if kind == "image":
        return f'<image href="big.png" width="{side}" height="{side}"/>'
    inner = "".join(draw(st.lists(drawable(side, depth + 1), max_size=3))) if depth < 2 else ""
    uses = "".join(f'<use href="#e{i}"/>' for i in range(draw(st.integers(0, 10))))
    return f"<g>{inner}{uses}</g>"


@st.composite
def within_limits(draw) -> tuple[str, int]:
    side = draw(SIDES)
    body = "".join(draw(st.lists(drawable(side), min_size=1, max_size=8)))
    frames = draw(st.integers(1, 4))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" data-width="{side}" data-height="{side}" '
            f'data-fps="10" data-duration="{frames / 10}">{body}</svg>', frames)


@pytest.fixture(scope="module")
def render_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fuzz-render")
    (root / "pyproject.toml").write_text('[project]\nname = "fuzz"\n')
    (root / "big.png").write_bytes(hostile_gen.blank_png(4096))  # 64 MiB decoded
    return root


@settings(max_examples=RENDER_EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(case=within_limits())
def test_within_the_limits_renders(render_project: Path, case: tuple[str, int]) -> None:
    text, frames = case
    path = render_project / "fuzz.nf.svg"
    path.write_text(text)
    argv = [sys.executable, "-m", "nanoframes", "render", str(path), "--frame",
            str(frames - 1), "-o", str(render_project / "out.png")]
    try:
        proc = subprocess.run(launched(argv, address_space=RENDER_MEMORY), cwd=render_project,
                              capture_output=True, text=True, errors="replace",
                              timeout=RENDER_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a composition within the limits took over {RENDER_SECONDS} s:\n{text}")
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-1500:]}\n{text[:3000]}"
    assert "Traceback" not in proc.stderr
