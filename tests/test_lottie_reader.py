"""The Lottie reader: canonical JSON, identity, images inlined under the sandbox,
dotLottie archives, markers, and every refusal as one line with its code
(docs/errors.md; docs/limits.md, "Lottie"). Documents come from tests/lottie_gen.py."""

from __future__ import annotations

import copy
import hashlib
import io
import json
import zipfile
from pathlib import Path

import lottie_gen as g
import pytest

from nanoframes.errors import NanoframesError
from nanoframes.lottie import describe_changes, is_lottie_name, lottie_from_bytes, open_lottie
from nanoframes.lottie.jsontext import canonical, parse


@pytest.fixture()
def proj(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.png").write_bytes(g.png())
    return tmp_path


def _doc_with_image(folder="images/") -> dict:
    return g.animation(layers=[g.image_layer("img"), g.shape_layer(ind=2)],
                       assets=[g.image_asset("img", "a.png", folder=folder)])


def _refused(data: bytes | dict, code: str, root: Path | None = None, name="a.json") -> str:
    if isinstance(data, dict):
        data = g.dumps(data)
    with pytest.raises(NanoframesError) as info:
        lottie_from_bytes(data, name, root)
    assert info.value.code == code, str(info.value)
    line = str(info.value)
    assert "\n" not in line and f"error[{code}]" in line
    return line


def test_names():
    assert is_lottie_name("a.json") and is_lottie_name(Path("x/B.LOTTIE"))
    assert not is_lottie_name("a.nf.svg")


def test_numbers_kept_as_written_and_canonical_whitespace():
    a = b'{"a": 0.50, "b": [1e2, -0, 3]}'
    b = b'{\n  "a":0.50,\n "b":[1e2,-0,3]\n}'
    assert canonical(parse(a, "a")) == canonical(parse(b, "b")) == b'{"a":0.50,"b":[1e2,-0,3]}'
    assert canonical(parse(b'{"a": 0.5}', "c")) != canonical(parse(a, "a"))


def test_same_animation_written_two_ways_is_one_source(proj):
    doc = g.animation()
    one = lottie_from_bytes(json.dumps(doc).encode(), "a.json", proj)
    two = lottie_from_bytes(json.dumps(doc, indent=4, ensure_ascii=True).encode(), "b.json", proj)
    assert one.document == two.document
    assert one.identity_parts() == two.identity_parts()
    assert one.identity_parts()["media"] == one.identity_parts()["fonts"] == "none"


def test_duplicate_keys_refused():
    text = g.dumps(g.animation()).replace(b'"shapes":', b'"shapes": [], "shapes":', 1)
    assert "twice" in _refused(text, "lottie-invalid")


@pytest.mark.parametrize("data", [b"", b"{", b'{"w": NaN}', b'{"a": 1e999}', b"\xff\xfe",
                                  b'{"a": "\\ud800"}', b'{"a": "x\\u0000"}', b"[" * 5000])
def test_bad_json_is_one_line(data):
    with pytest.raises(NanoframesError) as info:
        lottie_from_bytes(data, "a.json")
    assert info.value.code in ("lottie-invalid", "lottie-too-deep")


@pytest.mark.parametrize("data", [b"{}", b"[1, 2]", b'{"w": 1, "h": 1}', b'"text"'])
def test_json_that_is_not_lottie(data):
    assert "not a Lottie animation" in _refused(data, "lottie-not-lottie")


def test_canvas_and_range_limits():
    _refused(g.animation(w=100.5), "lottie-canvas")
    _refused(g.animation(w=0), "lottie-canvas")
    _refused(g.animation(w=20000), "canvas-too-large")
    _refused(g.animation(ip=10, op=10), "lottie-range")
    _refused(g.animation(ip=10, op=5), "lottie-range")
    _refused(g.animation(fr=0), "lottie-range")
    _refused(g.animation(fr=1000), "lottie-range")
    _refused(g.animation(op=10_000_000), "lottie-range")


def test_fractional_range_rounds_up():
    source = lottie_from_bytes(g.dumps(g.animation(ip=0, op=59.5)), "a.json")
    assert source.frame_count == 60 and source.frame_number(59) == 59.0
    assert lottie_from_bytes(g.dumps(g.animation(ip=2, op=62)), "a.json").frame_count == 60
    # After Effects at 29.97 fps: op 301.000012 is 301 frames (ThorVG's float32 count)
    noisy = g.animation(ip=0, op=301.000012, fr=29.97, markers=[("m", 16.0000006, 10)])
    read = lottie_from_bytes(g.dumps(noisy), "a.json")
    assert read.frame_count == 301 and read.markers == {"m": (16, 26)}
    _refused(g.animation(ip=0, op=0.0005), "lottie-range")
    with pytest.raises(NanoframesError) as info:
        source.frame_number(60)
    assert info.value.code == "frame-range"


def test_parenting_cycle_refused():
    doc = g.animation(layers=[g.shape_layer(ind=1, parent=2), g.shape_layer(ind=2, parent=1)])
    assert "parent each other" in _refused(doc, "lottie-cycle")
    _refused(g.animation(layers=[g.shape_layer(ind=1, parent=1)]), "lottie-cycle")
    chain = [g.shape_layer(ind=i, parent=i + 1) for i in range(1, 50)] + [g.shape_layer(ind=50)]
    lottie_from_bytes(g.dumps(g.animation(layers=chain)), "a.json")  # a long chain is fine


def test_precomp_cycles_refused():
    inner = {"id": "inner", "layers": [g.precomp_layer("inner")]}
    assert "contains itself" in _refused(
        g.animation(layers=[g.precomp_layer("inner")], assets=[inner]), "lottie-cycle")
    a = {"id": "a", "layers": [g.precomp_layer("b")]}
    b = {"id": "b", "layers": [g.precomp_layer("a")]}
    _refused(g.animation(layers=[g.precomp_layer("a")], assets=[a, b]), "lottie-cycle")
    # the same precomposition used twice (a diamond) is no cycle
    leaf = {"id": "leaf", "layers": [g.shape_layer()]}
    mid = {"id": "mid", "layers": [g.precomp_layer("leaf", ind=1), g.precomp_layer("leaf", ind=2)]}
    lottie_from_bytes(g.dumps(g.animation(layers=[g.precomp_layer("mid")],
                                          assets=[leaf, mid])), "a.json")


def test_precomp_fan_out_bomb_refused():
    assets = [{"id": "c0", "layers": [g.shape_layer()]}]
    for i in range(1, 12):  # each level uses the one below 4 times: 4^11 layers
        assets.append({"id": f"c{i}", "layers": [g.precomp_layer(f"c{i - 1}", ind=k)
                                                 for k in range(1, 5)]})
    doc = g.animation(layers=[g.precomp_layer("c11")], assets=assets)
    assert "expand to" in _refused(doc, "lottie-too-large")


def test_repeater_and_layer_counts():
    huge = g.group(g.rect(), g.fill(), g.repeater(10**6))
    big = g.animation(layers=[g.shape_layer(shapes=[huge])])
    assert "copies" in _refused(big, "lottie-too-large")
    ok = g.animation(layers=[g.shape_layer(shapes=[g.group(g.rect(), g.fill(), g.repeater(50))])])
    lottie_from_bytes(g.dumps(ok), "a.json")
    nested = g.group(g.group(g.rect(), g.fill(), g.repeater(500)), g.repeater(500))
    _refused(g.animation(layers=[g.shape_layer(shapes=[nested])]), "lottie-too-large")
    # null layers: the count is what is refused; 10,001 shape layers were 19 MB to parse
    many = g.animation(layers=[{"ind": i, "ty": 3, "ks": {}, "ip": 0, "op": 60, "st": 0}
                               for i in range(10_001)])
    assert "10001 layers exceed" in _refused(many, "lottie-too-large")
    # a precomposition with a repeater of 1,000, used 1,001 times: 1,001,000 copies
    inner = {"id": "r", "layers": [g.shape_layer(shapes=[g.group(g.rect(), g.fill(),
                                                                 g.repeater(1000))])]}
    fan = g.animation(layers=[g.precomp_layer("r", ind=i) for i in range(1, 1002)],
                      assets=[inner])
    assert "copies of layers" in _refused(fan, "lottie-too-large")
    fan["layers"] = fan["layers"][:999]  # 999 + 999 x 1,000 = 999,999 is drawn
    lottie_from_bytes(g.dumps(fan), "a.json")


def test_null_easing_dropped_other_malformed_easing_refused():
    doc = g.animation()
    plain = lottie_from_bytes(g.dumps(doc), "a.json").document
    key = doc["layers"][0]["ks"]["p"]["k"][0]
    del key["i"], key["o"]
    without = lottie_from_bytes(g.dumps(doc), "a.json").document
    key["i"] = key["o"] = None
    nulls = lottie_from_bytes(g.dumps(doc), "a.json").document
    assert nulls == without != plain and b'"i":null' not in nulls
    key["i"] = {"x": [0.5]}
    assert "without x and y" in _refused(doc, "lottie-keyframe")
    key["i"] = 5
    _refused(doc, "lottie-keyframe")
    # a gradient fill has "t" (its type), "s" (start) and "o" (opacity): no keyframe
    gradient = {"ty": "gf", "t": 1, "s": g.static([0, 0]), "e": g.static([10, 0]),
                "o": g.static(100), "g": {"p": 2, "k": g.static([0, 1, 0, 0, 1, 0, 0, 1])}}
    lottie_from_bytes(g.dumps(g.animation(layers=[g.shape_layer(
        shapes=[g.group(g.rect(), gradient)])])), "a.json")


def test_images_inlined_and_identified(proj):
    (proj / "a.json").write_bytes(g.dumps(_doc_with_image()))
    doc_without_id = _doc_with_image()
    source = open_lottie(proj / "a.json", proj)
    asset = json.loads(source.document)["assets"][0]
    assert asset["p"].startswith("data:image/png;base64,") and asset["u"] == "" and asset["e"] == 1
    assert b"a.png" not in source.document  # ThorVG is handed no path at all
    assert [kind for kind, _, _ in source.inputs()] == ["media", "source"]
    assert source.identity_parts()["media"] != "none"
    before = source.identity_parts()
    (proj / "images" / "a.png").write_bytes(g.png(rgba=(255, 0, 0, 255)))
    after = open_lottie(proj / "a.json", proj).identity_parts()
    assert after["media"] != before["media"] and after["source"] == before["source"]
    projection = source.projection()
    assert b"(media)" in projection and b"base64" not in projection
    assert hashlib.sha256(projection).hexdigest() == before["source"]
    # an image asset without an id is named by its position
    del doc_without_id["assets"][0]["id"]
    unnamed = lottie_from_bytes(g.dumps(doc_without_id), "a.json", proj)
    assert unnamed.media_items()[0][0] == "#1" and b"base64" not in unnamed.projection()


@pytest.mark.parametrize("folder,name,code", [
    ("", "/etc/passwd", "image-outside"),
    ("images/", "../../outside.png", "image-outside"),
    ("/", "tmp/x.png", "image-outside"),
    ("", "https://example.com/a.png", "image-outside"),
    ("images/", "missing.png", "image-missing"),
])
def test_images_outside_or_missing_refused(proj, folder, name, code):
    doc = _doc_with_image()
    doc["assets"][0].update(u=folder, p=name)
    _refused(doc, code, proj)


def test_image_without_project_root_refused():
    _refused(_doc_with_image(), "image-outside", None)


def test_inline_image_is_validated(proj):
    doc = _doc_with_image()
    doc["assets"][0].update(u="", p="data:image/png;base64," + "QUJD", e=1)
    _refused(doc, "image-invalid", proj)


def test_dotlottie_gives_the_same_document_and_identity(proj):
    doc = _doc_with_image()
    (proj / "a.json").write_bytes(g.dumps(doc))
    packed = copy.deepcopy(doc)
    packed["assets"][0]["u"] = "/images/"
    (proj / "a.lottie").write_bytes(g.dotlottie(json.dumps(packed).encode(), {"a.png": g.png()}))
    plain, archived = open_lottie(proj / "a.json", proj), open_lottie(proj / "a.lottie", proj)
    assert plain.document == archived.document
    assert plain.identity_parts() == archived.identity_parts()
    assert [k for k, _, _ in archived.inputs()] == ["source"]  # the archive is the one file


def _zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return out.getvalue()


def test_dotlottie_bounds():
    anim = g.dumps(g.animation())
    _refused(_zip({"../evil.json": anim}), "lottie-archive", name="a.lottie")
    _refused(_zip({"/abs/animations/a.json": anim}), "lottie-archive", name="a.lottie")
    _refused(_zip({f"images/{i}.png": b"x" for i in range(1001)}), "lottie-archive",
             name="a.lottie")
    bomb = _zip({"animations/a.json": anim, "images/big.png": b"\0" * (33 * 1024 * 1024)})
    assert len(bomb) < 200_000
    assert "limits" in _refused(bomb, "lottie-archive", name="a.lottie")
    _refused(b"PK\x03\x04 not really", "lottie-archive", name="a.lottie")
    _refused(_zip({"animations/a.json": anim, "animations/b.json": anim}), "lottie-archive",
             name="a.lottie")
    lottie_from_bytes(_zip({"animations/a.json": anim}), "a.lottie")  # one animation, no manifest
    # dotLottie 2 folders; a bare image name is looked up in the image folder
    bare = g.animation(layers=[g.image_layer("img")], assets=[g.image_asset("img", "a.png",
                                                                            folder="")])
    manifest = json.dumps({"version": "2", "animations": [{"id": "Main Scene"}]}).encode()
    for images in ("images/", "i/"):
        read = lottie_from_bytes(_zip({"manifest.json": manifest, "a/Main Scene.json":
                                       g.dumps(bare), f"{images}a.png": g.png()}), "a.lottie")
        assert read.media_items()[0][0] == "img"
    doc = _doc_with_image("/images/")
    _refused(g.dotlottie(g.dumps(doc), {}), "image-missing", name="a.lottie")
    doc["assets"][0]["p"] = "../manifest.json"
    _refused(g.dotlottie(g.dumps(doc), {}), "image-outside", name="a.lottie")


def test_markers():
    doc = g.animation(markers=[("intro", 0, 10), ("rest", 10.5, 100), ("bad", 5, -3),
                               ("twice", 1, 2), ("twice", 3, 2), ("late", 70, 5)])
    source = lottie_from_bytes(g.dumps(doc), "a.json")
    assert source.markers == {"intro": (0, 10), "rest": (11, 60)}
    rest = lottie_from_bytes(g.dumps(doc), "a.json", marker="rest")
    assert rest.frame_count == 49 and rest.frame_number(0) == 11.0
    assert rest.identity_parts() == source.identity_parts()
    for name in ("bad", "twice", "late", "nope"):
        with pytest.raises(NanoframesError) as info:
            lottie_from_bytes(g.dumps(doc), "a.json", marker=name)
        assert info.value.code == "lottie-marker"


def test_embedded_face_refused():
    doc = g.animation(layers=[g.text_layer()], fonts=g.font_list("Body"))
    doc["fonts"]["list"][0]["fPath"] = "data:font/ttf;base64,AAAA"
    assert "embeds" in _refused(doc, "lottie-font")


def test_text_faces_are_resolved_renamed_and_identified(proj):
    doc = g.animation(layers=[g.text_layer(font="Body")], fonts=g.font_list("Body"))
    source = lottie_from_bytes(g.dumps(doc), "a.json", proj)
    [face] = source.faces
    tree = json.loads(source.document)
    assert tree["fonts"]["list"][0]["fName"] == face.name
    assert tree["layers"][0]["t"]["d"]["k"][0]["s"]["f"] == face.name
    assert source.font_items() == [(face.path.name, face.sha256)]
    assert source.identity_parts()["fonts"] != "none"
    assert [k for k, _, _ in source.inputs()] == ["font", "source"]
    bold = g.animation(layers=[g.text_layer(font="Body")],
                       fonts=g.font_list("Body", style="Bold"))
    assert lottie_from_bytes(g.dumps(bold), "a.json", proj).faces[0].sha256 != face.sha256


def test_text_with_its_own_glyphs_needs_no_face():
    doc = g.animation(layers=[g.text_layer(text="I", font="Body")], fonts=g.font_list("Body"))
    doc["chars"] = [{"ch": "I", "size": 30, "style": "Regular", "w": 30, "fFamily": "Noto Sans",
                     "data": {"shapes": []}}]
    assert lottie_from_bytes(g.dumps(doc), "a.json").faces == ()


def test_describe_changes_names_layer_and_path():
    doc = g.animation(layers=[g.shape_layer(ind=1, name="Ball"), g.shape_layer(ind=2)])
    old = lottie_from_bytes(g.dumps(doc), "a.json").document
    doc["layers"][0]["ks"]["p"]["k"][1]["s"] = [170, 50, 0]
    doc["layers"][1]["nm"] = "Square"
    new = lottie_from_bytes(g.dumps(doc), "a.json").document
    assert describe_changes(old, new) == [
        "layer 'Ball' (ind 1): ks.p.k[1].s[0]: 180 -> 170",
        "layer 'Box' (ind 2): nm: \"Box\" -> \"Square\""]
    assert describe_changes(old, old) == []
    many = g.animation(layers=[g.shape_layer(ind=i) for i in range(1, 40)])
    moved = copy.deepcopy(many)
    for layer in moved["layers"]:
        layer["ks"]["o"]["k"] = 50
    lines = describe_changes(lottie_from_bytes(g.dumps(many), "a.json").document,
                             lottie_from_bytes(g.dumps(moved), "a.json").document)
    assert len(lines) == 12 and lines[-1] == "... and 28 more differences"


def test_every_code_is_documented():
    import re

    root = Path(__file__).resolve().parents[1]
    sources = [*sorted((root / "nanoframes" / "lottie").glob("*.py")),
               root / "nanoframes" / "engine" / "lottie.py"]
    codes = set()
    for path in sources:
        codes.update(re.findall(r'NanoframesError\(\s*"([a-z-]+)"', path.read_text()))
    codes.add("render-timeout")
    documented = (root / "docs" / "errors.md").read_text(encoding="utf-8")
    assert len(codes) > 15
    assert not sorted(c for c in codes if f"`{c}`" not in documented)
