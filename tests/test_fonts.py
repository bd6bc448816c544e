"""Font discovery, family resolution and the CSS-ish font properties of elements."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree

from nanoframes.cli import main
from nanoframes.text.drawn import drawn_copy
from nanoframes.text.fonts import (
    GENERIC_FAMILIES,
    Face,
    FontBook,
    bundled_fonts_dir,
    describe_fonts,
    face_bytes,
    face_digest,
    font_book,
    parse_family_list,
)
from nanoframes.text.style import FontRequest, font_request, inherited, parse_style_attr

BUNDLED = bundled_fonts_dir()
HOST_DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.fixture(scope="module")
def book() -> FontBook:
    return FontBook(host_dirs=())  # bundled only: the same answer on every machine


def svg(markup: str) -> etree._Element:
    return etree.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{markup}</svg>')


def find(root: etree._Element, ident: str) -> etree._Element:
    return root.xpath(f'//*[@id="{ident}"]')[0]


# -- family lists ---------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    (None, []),
    ("", []),
    ("  ", []),
    ("Noto Sans", ["Noto Sans"]),
    ('"Brand Sans", Arial, sans-serif', ["Brand Sans", "Arial", "sans-serif"]),
    ("'Brand Sans',Arial", ["Brand Sans", "Arial"]),
    ("  Noto   Sans ,  serif ", ["Noto Sans", "serif"]),
    ('"Comma, Inc", x', ["Comma, Inc", "x"]),
    ("'It''s', y", ["It", "y"]),
    ("a,,b,", ["a", "b"]),
    ('"unterminated, still one', ["unterminated, still one"]),
    ("Sans-Serif, MONOSPACE", ["Sans-Serif", "MONOSPACE"]),  # generics kept as written
    ("Noto\tSans\nDisplay", ["Noto Sans Display"]),
])
def test_parse_family_list(value, expected):
    assert parse_family_list(value) == expected


def test_generic_families_are_lowercase_css_names():
    assert {"serif", "sans-serif", "monospace", "cursive", "fantasy", "system-ui",
            "ui-sans-serif"} <= GENERIC_FAMILIES
    assert all(g == g.lower() for g in GENERIC_FAMILIES)


# -- the bundled faces and the default ------------------------------------------------------


def test_bundled_faces_and_default(book):
    bundled = [f for f in book.faces if f.origin == "bundled"]
    assert [f.name for f in bundled] == ["NotoSans-Regular", "NotoSans-Bold",
                                         "NotoSerifDisplay-Bold"]
    assert book.default == bundled[0]
    assert (book.default.family, book.default.weight, book.default.style) == (
        "Noto Sans", 400, "normal")
    assert set(book.families()) == {"Noto Sans", "Noto Serif Display"}
    assert [f.weight for f in book.families()["Noto Sans"]] == [400, 700]


def test_bundled_fonts_carry_their_licence():
    assert (BUNDLED / "OFL.txt").read_text().count("SIL OPEN FONT LICENSE") == 1
    assert "default" in (BUNDLED / "README.md").read_text().lower()
    assert sum(p.stat().st_size for p in BUNDLED.iterdir()) < 2_000_000


def test_face_bytes_and_digest(book):
    face = book.default
    data = face_bytes(face)  # what ThorVG is handed: the drawn copy of the file
    assert data == drawn_copy(face.path.read_bytes())
    assert face_bytes(face) is data  # cached
    assert face_digest(face) == "89c3c497f618fdaa0b2d1e98fef93582f28c71debd2c4a8cdf41f190ced2909d"


# -- resolution -----------------------------------------------------------------------------


def test_first_loaded_family_wins(book):
    r = book.resolve('"Brand Sans", noto serif display, Noto Sans')
    assert r.face.name == "NotoSerifDisplay-Bold"
    assert not r.fallback
    assert r.matched == "noto serif display"
    assert r.family_value == '"Brand Sans", noto serif display, Noto Sans'


@pytest.mark.parametrize("value", [None, "", "sans-serif", "serif, monospace",
                                   "'Brand Sans', Nope", ",,"])
def test_unknown_generic_and_empty_fall_back_to_default(book, value):
    r = book.resolve(value)
    assert r.fallback
    assert r.face == book.default
    assert r.matched is None


def test_generic_before_a_loaded_family_is_skipped(book):
    r = book.resolve("serif, Noto Serif Display")
    assert (r.face.name, r.fallback) == ("NotoSerifDisplay-Bold", False)


@pytest.mark.parametrize(("weight", "style", "name"), [
    (400, "normal", "NotoSans-Regular"),
    (700, "normal", "NotoSans-Bold"),
    (900, "normal", "NotoSans-Bold"),     # heavier wanted: nearest heavier, else lighter
    (600, "normal", "NotoSans-Bold"),     # >500 looks heavier first
    (500, "normal", "NotoSans-Regular"),  # 500 looks up to 500, then lighter
    (300, "normal", "NotoSans-Regular"),  # <400 looks lighter, then heavier
    (700, "italic", "NotoSans-Bold"),     # no italic loaded: the normal face
])
def test_weight_and_style_pick_a_face_of_the_family(book, weight, style, name):
    assert book.resolve("Noto Sans", weight, style).face.name == name
    # the fallback picks within the default family the same way
    fallback = book.resolve("Unknown", weight, style)
    assert fallback.fallback and fallback.face.name == name


def test_only_face_of_a_family_serves_every_weight(book):
    assert book.resolve("Noto Serif Display", 100).face.name == "NotoSerifDisplay-Bold"


def test_resolve_takes_a_font_request(book):
    request = FontRequest(family="Nope, 'Noto Sans'", weight=700, style="normal", size_px=20)
    r = book.resolve(request)
    assert (r.face.name, r.fallback, r.family_value) == ("NotoSans-Bold", False,
                                                         "Nope, 'Noto Sans'")


def test_resolution_is_deterministic():
    a, b = FontBook(), FontBook()  # with this machine's host fonts, twice
    assert a.faces == b.faces
    values = ["Noto Sans", "x", "DejaVu Sans", "serif"]
    assert [a.resolve(v, 700).face for v in values] == [b.resolve(v, 700).face for v in values]
    assert [f.origin for f in a.faces][:3] == ["bundled"] * 3


# -- candidate order, origins, names --------------------------------------------------------


def test_candidate_origins_and_duplicates(tmp_path):
    project = tmp_path / "project-fonts"
    host = tmp_path / "host-fonts"
    (project / "sub").mkdir(parents=True)
    (host).mkdir()
    # The same face in a project dir and the host: the earlier candidate wins the
    # family/weight/style and the plain name; the later copy gets a suffix.
    shutil.copy(BUNDLED / "NotoSans-Bold.ttf", project / "sub" / "NotoSans-Bold.ttf")
    shutil.copy(BUNDLED / "NotoSans-Regular.ttf", host / "NotoSans-Regular.ttf")
    if HOST_DEJAVU.exists():
        shutil.copy(HOST_DEJAVU, host / "DejaVuSans.ttf")
    (host / "broken.ttf").write_bytes(b"not a font")
    (host / "collection.ttc").write_bytes(b"ttcf")
    (host / "cff.otf").write_bytes(b"OTTO" + b"\0" * 100)

    book = FontBook(project_dirs=[project], host_dirs=[host])
    origins = [f.origin for f in book.faces]
    assert origins == sorted(origins, key=["bundled", "project", "host"].index)
    names = [f.name for f in book.faces]
    assert len({n.casefold() for n in names}) == len(names)
    assert "NotoSans-Bold-2" in names and "NotoSans-Regular-2" in names
    assert not any("broken" in n or "collection" in n or "cff" in n for n in names)
    # duplicates never beat the bundled copy
    assert book.resolve("Noto Sans", 700).face.origin == "bundled"
    assert book.resolve("Noto Sans").face.origin == "bundled"
    if HOST_DEJAVU.exists():
        dejavu = book.resolve("DejaVu Sans")
        assert (dejavu.face.origin, dejavu.fallback) == ("host", False)
        # a family the host has but no loaded bold: nearest weight, not the fallback
        assert book.resolve("DejaVu Sans", 700).face.name == "DejaVuSans"
    rows = describe_fonts(book)
    shadowed = {r["name"]: r["reachable"] for r in rows}
    assert shadowed["NotoSans-Bold"] and not shadowed["NotoSans-Bold-2"]


@pytest.mark.skipif(not HOST_DEJAVU.with_name("DejaVuSansCondensed.ttf").exists(),
                    reason="needs the host's DejaVu Sans Condensed")
def test_legacy_family_name_reaches_a_width_variant(tmp_path):
    # nameID 16 says "DejaVu Sans"; nameID 1 "DejaVu Sans Condensed" still selects it.
    shutil.copy(HOST_DEJAVU, tmp_path / "DejaVuSans.ttf")
    shutil.copy(HOST_DEJAVU.with_name("DejaVuSansCondensed.ttf"), tmp_path)
    book = FontBook(project_dirs=[tmp_path], host_dirs=())
    assert book.resolve("DejaVu Sans").face.name == "DejaVuSans"
    assert book.resolve("dejavu sans condensed").face.name == "DejaVuSansCondensed"
    assert all(r["reachable"] for r in describe_fonts(book))


def test_symlink_loops_and_missing_dirs_are_harmless(tmp_path):
    (tmp_path / "fonts").mkdir()
    shutil.copy(BUNDLED / "NotoSans-Bold.ttf", tmp_path / "fonts" / "Only.ttf")
    (tmp_path / "fonts" / "loop").symlink_to(tmp_path / "fonts")
    book = FontBook(project_dirs=[tmp_path / "fonts", tmp_path / "missing"], host_dirs=())
    assert [f.name for f in book.faces if f.origin == "project"] == ["Only"]


def test_another_bundled_dir_changes_the_default(tmp_path):
    # Sorted file names decide the default family; its regular face leads.
    shutil.copy(BUNDLED / "NotoSerifDisplay-Bold.ttf", tmp_path / "A-Display.ttf")
    shutil.copy(BUNDLED / "NotoSans-Regular.ttf", tmp_path / "B-Sans.ttf")
    book = FontBook(bundled_dir=tmp_path, host_dirs=())
    assert book.default.name == "A-Display"
    assert book.resolve("sans-serif").face.name == "A-Display"
    assert book.resolve("Noto Sans").face.name == "B-Sans"


def test_no_bundled_face_is_a_clear_error(tmp_path):
    from nanoframes.errors import NanoframesError

    book = FontBook(bundled_dir=tmp_path, host_dirs=())
    assert book.faces == ()
    with pytest.raises(NanoframesError, match="font-missing"):
        book.resolve("anything")


def test_font_book_is_built_once_per_project(tmp_path):
    from nanoframes.config import load_config

    config = load_config(BUNDLED.parent)
    assert font_book(config) is font_book(config)
    assert font_book(config).faces[0].origin == "bundled"


def test_faces_are_plain_values(book):
    face = book.default
    assert isinstance(face, Face)
    with pytest.raises(AttributeError):
        face.name = "x"  # type: ignore[misc]


# -- element font properties ----------------------------------------------------------------


@pytest.mark.parametrize(("style", "expected"), [
    ("font-family: 'A B', serif; font-weight:bold", {"font-family": "'A B', serif",
                                                     "font-weight": "bold"}),
    ("FONT-SIZE: 12px;;  ; junk; :x; fill:red !important", {"font-size": "12px",
                                                            "fill": "red"}),
    ("font-family: 'semi;colon'; a:1; a:2", {"font-family": "'semi;colon'", "a": "2"}),
    ("/* c */ font-size: 3px /* d */", {"font-size": "3px"}),
    ("", {}),
])
def test_parse_style_attr(style, expected):
    assert parse_style_attr(style) == expected


def test_inheritance_from_parent_and_style():
    root = svg(
        '<g font-family="Outer" style="font-size: 30px">'
        '  <g style="font-family: \'Inner Sans\', serif" font-family="Ignored">'
        '    <text id="a">x</text>'
        '    <text id="b" font-family="Own">x</text>'
        '    <text id="c" font-family="inherit">x</text>'
        '  </g>'
        '  <text id="d">x</text>'
        '</g><text id="e">x</text>'
    )
    assert inherited(find(root, "a"), "font-family") == "'Inner Sans', serif"
    assert inherited(find(root, "b"), "font-family") == "Own"
    assert inherited(find(root, "c"), "font-family") == "'Inner Sans', serif"
    assert inherited(find(root, "d"), "font-family") == "Outer"
    assert inherited(find(root, "e"), "font-family") is None
    assert font_request(find(root, "a")) == FontRequest("'Inner Sans', serif", 400, "normal", 30)
    assert font_request(find(root, "e")) == FontRequest(None, 400, "normal", 16)


@pytest.mark.parametrize(("markup", "size"), [
    ('<text id="t">x</text>', 16),
    ('<text id="t" font-size="24">x</text>', 24),
    ('<text id="t" font-size="24px">x</text>', 24),
    ('<text id="t" font-size=" 18pt ">x</text>', 24),
    ('<text id="t" font-size="1.5e1">x</text>', 15),
    ('<text id="t" font-size="bogus">x</text>', 16),
    ('<text id="t" font-size="-5">x</text>', 16),
    ('<text id="t" font-size="0">x</text>', 16),
    ('<text id="t" style="font-size:20px" font-size="40">x</text>', 20),
    ('<g font-size="40"><text id="t">x</text></g>', 40),
    ('<g font-size="40"><text id="t" font-size="50%">x</text></g>', 20),
    ('<g font-size="40"><text id="t" font-size="1.5em">x</text></g>', 60),
    ('<g font-size="40"><text id="t" font-size="nonsense">x</text></g>', 40),
    ('<g font-size="large"><text id="t">x</text></g>', 18),
])
def test_font_size(markup, size):
    assert font_request(find(svg(markup), "t")).size_px == pytest.approx(size)


@pytest.mark.parametrize(("markup", "weight", "style"), [
    ('<text id="t">x</text>', 400, "normal"),
    ('<text id="t" font-weight="bold" font-style="italic">x</text>', 700, "italic"),
    ('<text id="t" font-weight="600">x</text>', 600, "normal"),
    ('<text id="t" font-weight="1000">x</text>', 900, "normal"),
    ('<text id="t" font-weight="heavy" font-style="wobbly">x</text>', 400, "normal"),
    ('<g font-weight="bold"><text id="t" font-style="oblique 10deg">x</text></g>', 700,
     "oblique"),
    ('<g font-weight="bold"><text id="t" font-weight="bolder">x</text></g>', 900, "normal"),
    ('<g font-weight="bold"><text id="t" font-weight="lighter">x</text></g>', 400, "normal"),
    ('<text id="t" font-weight="bolder">x</text>', 700, "normal"),
    ('<g style="font-weight: 300"><text id="t" style="font-weight:bolder">x</text></g>', 400,
     "normal"),
])
def test_font_weight_and_style(markup, weight, style):
    request = font_request(find(svg(markup), "t"))
    assert (request.weight, request.style) == (weight, style)


def test_inherited_request_resolves_through_the_book(book):
    root = svg('<g style="font-family: Nope, &quot;Noto Sans&quot;; font-weight: bold">'
               '<text id="t">x</text></g>')
    r = book.resolve(font_request(find(root, "t")))
    assert (r.face.name, r.fallback) == ("NotoSans-Bold", False)


# -- ThorVG draws every bundled face, each differently --------------------------------------

_DRAW = r"""
import ctypes, hashlib, json, sys
import thorvg_python as tvg
from thorvg_python.engine import THORVG_LIB
lib = ctypes.CDLL(THORVG_LIB._name)
lib.tvg_font_load_data.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32,
                                   ctypes.c_char_p, ctypes.c_bool]
engine = tvg.Engine()
faces = json.loads(sys.argv[1])
for name, path in faces:
    data = open(path, "rb").read()
    assert lib.tvg_font_load_data(name.encode(), data, len(data), b"ttf", True) == 0, name
out = {}
for name, _ in faces:
    doc = ('<svg xmlns="http://www.w3.org/2000/svg" width="320" height="60" '
           'viewBox="0 0 320 60"><text x="4" y="44" font-family="%s" font-size="32">'
           'Hamburg 123</text></svg>' % name).encode()
    canvas = tvg.SwCanvas(engine)
    canvas.set_target(320, 60, 320, tvg.Colorspace.ABGR8888)
    pic = tvg.Picture(engine)
    pic.load_data(doc, "svg", None, True)
    pic.set_size(320, 60)
    canvas.add(pic); canvas.update(); canvas.draw(True); canvas.sync()
    px = bytes(canvas.buffer_arr)
    out[name] = [sum(1 for a in px[3::4] if a), hashlib.sha256(px).hexdigest()]
print(json.dumps(out))
"""


def test_thorvg_draws_each_bundled_face_distinctly(book):
    faces = [[f.name, str(f.path)] for f in book.faces]
    if HOST_DEJAVU.exists():
        faces.append(["HostDejaVu", str(HOST_DEJAVU)])
    # Fonts are process-global in ThorVG: register them in a child process.
    run = subprocess.run([sys.executable, "-c", _DRAW, json.dumps(faces)],
                         capture_output=True, text=True, timeout=60, check=True)
    drawn = json.loads(run.stdout)
    assert all(ink > 500 for ink, _ in drawn.values()), drawn
    assert len({digest for _, digest in drawn.values()}) == len(faces), drawn


# -- the CLI --------------------------------------------------------------------------------


def test_cli_fonts_lists_bundled_faces_and_marks_the_fallback(capsys, monkeypatch):
    monkeypatch.chdir(BUNDLED.parent)
    assert main(["fonts"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["NAME", "ORIGIN"]
    regular = next(line for line in lines if line.startswith("NotoSans-Regular "))
    assert "(default fallback)" in regular and "bundled" in regular
    assert out.count("(default fallback)") == 1
    assert any(line.startswith("NotoSans-Bold ") and 'font-weight="700"' in line
               for line in lines)
    assert any(line.startswith("NotoSerifDisplay-Bold ") for line in lines)


def test_cli_fonts_json(capsys, monkeypatch):
    monkeypatch.chdir(BUNDLED.parent)
    assert main(["fonts", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["name"] == "NotoSans-Regular" and rows[0]["default"] is True
    assert sum(r["default"] for r in rows) == 1
    assert {r["origin"] for r in rows} <= {"bundled", "project", "host"}
    bold = next(r for r in rows if r["name"] == "NotoSans-Bold")
    assert bold["selector"] == 'font-family="Noto Sans" font-weight="700"'
    assert bold["reachable"] is True
