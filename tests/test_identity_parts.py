"""The identity's building blocks and the frame/film digests, as plain functions."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy
import pytest
from lxml import etree

import nanoframes
from nanoframes.determinism.identity import (
    NONE,
    TOOLCHAIN_PARTS,
    Identity,
    canonical_source,
    fonts_digest,
    media_digest,
    modules_digest,
    source_digest,
    toolchain_digest,
    toolchain_parts,
)
from nanoframes.frames.digest import SHORT, film_digest, frame_digest

SVG = "http://www.w3.org/2000/svg"

BASE = b"""<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
     data-width="320" data-height="180" data-fps="30">
  <!-- a title card -->
  <rect id="bg" x="0" y="0" width="320" height="180" fill="#123456"/>
  <g id="title" opacity="0.5">
    <text x="10" y="40" font-size="24">Hello</text>
  </g>
  <image xlink:href="logo.png" x="1" y="2" width="3" height="4"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#title", "keyframes": [{"t": 0, "opacity": 0},
                                                       {"t": 1, "opacity": 1}]}]}
  </script>
</svg>
"""


def parse(data: bytes) -> etree._Element:
    return etree.fromstring(data)


def digest_of(data: bytes) -> str:
    return source_digest(parse(data))


# --- frame and film digests ------------------------------------------------


def test_frame_digest_is_sha256_of_the_rgba_bytes() -> None:
    frame = numpy.arange(2 * 3 * 4, dtype=numpy.uint8).reshape(2, 3, 4)
    assert frame_digest(frame) == hashlib.sha256(frame.tobytes()).hexdigest()


def test_frame_digest_of_a_strided_view_hashes_its_row_major_bytes() -> None:
    big = numpy.arange(4 * 6 * 4, dtype=numpy.uint8).reshape(4, 6, 4)
    view = big[::2, 1:4]
    assert not view.flags.c_contiguous
    assert frame_digest(view) == hashlib.sha256(view.tobytes()).hexdigest()


def test_frame_digest_refuses_a_non_byte_array() -> None:
    with pytest.raises(TypeError):
        frame_digest(numpy.zeros((2, 2, 4), dtype=numpy.float32))


def test_film_digest_joins_frame_digests_with_newlines_in_order() -> None:
    a, b = hashlib.sha256(b"a").hexdigest(), hashlib.sha256(b"b").hexdigest()
    assert film_digest([a, b]) == hashlib.sha256(f"{a}\n{b}".encode()).hexdigest()
    assert film_digest([a, b]) != film_digest([b, a])
    assert SHORT == 16


# --- canonical source: what does not move it ---------------------------------


def test_reindenting_does_not_move_the_source() -> None:
    lines = BASE.splitlines()
    flat = b"\n".join(line.strip() for line in lines)
    deeper = b"\n".join(b"\t    " + line if line.strip() else line for line in lines)
    assert len({flat, deeper, BASE}) == 3
    assert digest_of(flat) == digest_of(BASE)
    assert digest_of(deeper) == digest_of(BASE)


def test_reformatting_the_timeline_json_does_not_move_the_source() -> None:
    compact = BASE.replace(
        b"""{"animations": [{"target": "#title", "keyframes": [{"t": 0, "opacity": 0},
                                                       {"t": 1, "opacity": 1}]}]}""",
        b"""<![CDATA[{"animations":[{"keyframes":[{"opacity":0,"t":0},{"t":1,"opacity":1}],
        "target":"#title"}]}]]>""",
    )
    assert compact != BASE
    assert digest_of(compact) == digest_of(BASE)


def test_attribute_order_and_namespace_prefix_do_not_move_the_source() -> None:
    reordered = BASE.replace(
        b'<rect id="bg" x="0" y="0" width="320" height="180" fill="#123456"/>',
        b'<rect fill="#123456" height="180" width="320" y="0" x="0" id="bg"/>',
    ).replace(b"xmlns:xlink=", b"xmlns:xl=").replace(b"xlink:href", b"xl:href")
    assert digest_of(reordered) == digest_of(BASE)


def test_comments_and_processing_instructions_do_not_move_the_source() -> None:
    commented = BASE.replace(b"<!-- a title card -->", b"<!-- another note --><?pi x?>")
    commented = commented.replace(b">Hello<", b">Hel<!-- split -->lo<")
    assert digest_of(commented) == digest_of(BASE)


def test_check_only_attributes_do_not_move_the_source() -> None:
    checked = BASE.replace(b'data-fps="30"', b'data-fps="30" data-safe-margin="12" '
                                              b'data-palette-budget="4"')
    checked = checked.replace(b'<g id="title"', b'<g data-safe-margin="3" id="title"')
    assert digest_of(checked) == digest_of(BASE)


def test_canonical_source_accepts_a_tree() -> None:
    root = parse(BASE)
    assert canonical_source(root.getroottree()) == canonical_source(root)


# --- canonical source: what moves it -------------------------------------------


@pytest.mark.parametrize(
    "old, new",
    [
        (b'fill="#123456"', b'fill="#123457"'),  # an attribute value
        (b'data-fps="30"', b'data-fps="30" data-fade="1"'),  # an attribute added
        (b">Hello<", b">Hello!<"),  # text
        (b'"opacity": 0}', b'"opacity": 0.5}'),  # a timeline value
        (b'<rect id="bg"', b'<circle id="bg"'),  # a tag (closing tag is self-closed)
        (b'<text x="10"', b'<text xml:space="preserve" x="10"'),  # a namespaced attribute
    ],
)
def test_edits_that_can_draw_move_the_source(old: bytes, new: bytes) -> None:
    assert old in BASE
    assert digest_of(BASE.replace(old, new)) != digest_of(BASE)


def test_tail_text_after_a_child_element_moves_the_source() -> None:
    a = b'<svg xmlns="http://www.w3.org/2000/svg"><text>A<tspan>B</tspan></text></svg>'
    b = b'<svg xmlns="http://www.w3.org/2000/svg"><text>A<tspan>B</tspan>C</text></svg>'
    assert digest_of(a) != digest_of(b)


def test_whitespace_inside_text_counts() -> None:
    # Between two tspans a space can draw; it is never dropped as indentation.
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><text>%s</text></svg>'
    a = svg % b"<tspan>A</tspan> <tspan>B</tspan>"
    b = svg % b"<tspan>A</tspan><tspan>B</tspan>"
    assert digest_of(a) != digest_of(b)


def test_invalid_timeline_json_counts_as_its_stripped_text() -> None:
    def doc(body: bytes) -> bytes:
        return (b'<svg xmlns="http://www.w3.org/2000/svg">'
                b'<script type="application/nanoframes+json">' + body + b"</script></svg>")

    assert digest_of(doc(b"  {broken  ")) == digest_of(doc(b"{broken"))
    assert digest_of(doc(b"{broken")) != digest_of(doc(b"{broken!"))


def test_the_same_json_in_an_ordinary_script_is_not_reformatted() -> None:
    def doc(body: bytes) -> bytes:
        return (b'<svg xmlns="http://www.w3.org/2000/svg">'
                b'<script type="text/plain">' + body + b"</script></svg>")

    assert digest_of(doc(b'{"a": 1}')) != digest_of(doc(b'{"a":1}'))


def test_canonical_source_names_elements_with_their_namespace() -> None:
    text = canonical_source(parse(BASE)).decode()
    assert f"{{{SVG}}}rect" in text
    assert "{http://www.w3.org/1999/xlink}href" in text
    assert "a title card" not in text
    assert "data-safe-margin" not in text


def test_source_digest_extras_are_order_independent_and_count() -> None:
    root = parse(BASE)
    x = ("child.nf.svg", "a" * 64)
    y = ("other.nf.svg", "b" * 64)
    assert source_digest(root, [x, y]) == source_digest(root, [y, x])
    assert source_digest(root, [x]) != source_digest(root)
    assert source_digest(root, [x]) != source_digest(root, [("child.nf.svg", "c" * 64)])


# --- media and fonts -------------------------------------------------------------


def test_media_and_fonts_are_none_when_empty() -> None:
    assert media_digest([]) == NONE
    assert fonts_digest([]) == NONE


def test_media_digest_is_order_independent_and_accepts_bytes_or_hex() -> None:
    a, b = b"png-bytes-a", b"png-bytes-b"
    hex_a = hashlib.sha256(a).hexdigest()
    forward = media_digest([("a.png", a), ("img/b.png", b)])
    assert forward == media_digest([("img/b.png", b), ("a.png", hex_a)])
    assert forward != media_digest([("a.png", b), ("img/b.png", a)])  # names bind to bytes
    assert forward != media_digest([("a.png", a)])


def test_fonts_digest_is_order_independent_and_deduplicated() -> None:
    r = ("Regular.ttf", hashlib.sha256(b"r").hexdigest())
    b = ("Bold.ttf", hashlib.sha256(b"b").hexdigest())
    assert fonts_digest([r, b]) == fonts_digest([b, r, r])
    assert fonts_digest([r, b]) != fonts_digest([r])


def test_a_non_hex_digest_is_refused() -> None:
    with pytest.raises(ValueError):
        fonts_digest([("Regular.ttf", "not-a-digest")])


# --- toolchain --------------------------------------------------------------------


def test_identity_as_dict() -> None:
    ident = Identity(source="s", media=NONE, fonts="f", toolchain="t")
    assert ident.as_dict() == {"source": "s", "media": NONE, "fonts": "f", "toolchain": "t"}


def test_toolchain_parts_name_the_four_parts() -> None:
    parts = toolchain_parts()
    assert tuple(parts)[:4] == TOOLCHAIN_PARTS  # then the shared libraries (test_linked.py)
    assert parts["nanoframes"] == nanoframes.__version__
    assert len(parts["libthorvg"]) == 64 and len(parts["modules"]) == 64
    assert parts["modules"] == modules_digest()
    from thorvg_python import engine  # the library the binding actually loaded

    with open(engine.THORVG_LIB._name, "rb") as fh:
        assert parts["libthorvg"] == hashlib.sha256(fh.read()).hexdigest()
    parts["nanoframes"] = "mutated"
    assert toolchain_parts()["nanoframes"] == nanoframes.__version__  # a copy each call


def test_toolchain_digest_is_canonical_and_moves_with_any_part() -> None:
    parts = {"thorvg-python": "1.1.3", "libthorvg": "a" * 64, "nanoframes": "0.1.0",
             "modules": "b" * 64}
    assert toolchain_digest(parts) == toolchain_digest(dict(reversed(parts.items())))
    for name in parts:
        assert toolchain_digest({**parts, name: "moved"}) != toolchain_digest(parts)


def test_modules_digest_moves_on_an_edit_a_rename_or_a_new_module(tmp_path: Path) -> None:
    package = Path(nanoframes.__file__).parent
    copy = tmp_path / "nanoframes"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = modules_digest(copy)
    assert original == modules_digest(package)

    (copy / "__pycache__").mkdir(exist_ok=True)
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    (copy / "notes.txt").write_text("not a module")
    assert modules_digest(copy) == original  # bytecode and non-modules do not count

    digest_py = copy / "frames" / "digest.py"
    source = digest_py.read_bytes()
    digest_py.write_bytes(source + b"\n# an edit\n")
    assert modules_digest(copy) != original
    digest_py.write_bytes(source)
    assert modules_digest(copy) == original

    digest_py.rename(copy / "frames" / "digests.py")
    assert modules_digest(copy) != original
    (copy / "frames" / "digests.py").rename(digest_py)

    (copy / "text" / "extra.py").write_text("X = 1\n")
    assert modules_digest(copy) != original
