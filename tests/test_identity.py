"""A composition's identity, computed for real: every invariance and sensitivity
docs/digest.md names, the identity command, and frame digests against written PNGs."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from PIL import Image

import nanoframes
from nanoframes.bake.baker import Baker
from nanoframes.cli import main
from nanoframes.determinism import identity as identity_mod
from nanoframes.determinism import reading as reading_mod
from nanoframes.determinism.identity import NONE, TOOLCHAIN_PARTS
from nanoframes.determinism.reading import composition_identity, read_film, sample_indices
from nanoframes.model.composition import parse

HEAD = ('<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32" '
        'data-fps="10" data-duration="0.5"{extra}>')
BODY = """
  <rect id="box" x="2" y="2" width="12" height="12" fill="#204080"/>
  {text}
  {image}
  <script type="application/nanoframes+json">{timeline}</script>
</svg>
"""
TIMELINE = ('{"animations": [{"target": "#box", '
            '"keyframes": [{"t": 0, "x": 2}, {"t": 0.4, "x": 30}]}]}')


def png(path: Path, rgba: tuple[int, int, int, int]) -> None:
    Image.new("RGBA", (4, 4), rgba).save(path)


def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    (tmp_path / "examples").mkdir(exist_ok=True)
    return tmp_path


def write(root: Path, name: str, *, extra: str = "", text: str = "<text x='2' y='28'>Hi</text>",
          image: str = "", timeline: str = TIMELINE, body: str | None = None) -> Path:
    path = root / "examples" / name
    path.write_text(HEAD.format(extra=extra)
                    + (body if body is not None else BODY).format(text=text, image=image,
                                                                  timeline=timeline))
    return path


def ident(path: Path) -> dict[str, str]:
    comp = parse(path)
    return composition_identity(comp, Baker(comp)).as_dict()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return project(tmp_path)


# --- source ------------------------------------------------------------------------


def test_reindenting_the_file_leaves_the_source(root: Path) -> None:
    a = write(root, "a.nf.svg")
    b = root / "examples" / "b.nf.svg"
    b.write_text("\n".join("        " + line.strip() for line in a.read_text().splitlines()))
    assert ident(a) == ident(b)


def test_reformatting_the_timeline_json_leaves_the_source(root: Path) -> None:
    a = write(root, "a.nf.svg")
    pretty = json.dumps(json.loads(TIMELINE), indent=4)
    b = write(root, "b.nf.svg", timeline=f"<![CDATA[\n{pretty}\n]]>")
    assert ident(a) == ident(b)


@pytest.mark.parametrize("extra", [' data-safe-margin="4"', ' data-palette-budget="3"',
                                   ' data-safe-margin="9" data-palette-budget="1"'])
def test_check_only_attributes_leave_the_source(root: Path, extra: str) -> None:
    assert ident(write(root, "a.nf.svg")) == ident(write(root, "b.nf.svg", extra=extra))


@pytest.mark.parametrize("old, new", [
    ('fill="#204080"', 'fill="#204081"'),          # a drawn attribute
    ('width="12"', 'width="13"'),
    ('x="2" y="2"', 'x="2" y="2" opacity="0.5"'),  # a new attribute
    (">Hi<", ">Ho<"),                              # text
    ('"x": 30', '"x": 31'),                        # the timeline's content
])
def test_anything_that_can_draw_moves_the_source(root: Path, old: str, new: str) -> None:
    a = write(root, "a.nf.svg")
    b = root / "examples" / "b.nf.svg"
    text = a.read_text()
    assert old in text
    b.write_text(text.replace(old, new))
    before, after = ident(a), ident(b)
    assert before["source"] != after["source"]
    assert {k: before[k] for k in ("media", "fonts", "toolchain")} == \
        {k: after[k] for k in ("media", "fonts", "toolchain")}


def test_tail_text_after_a_child_element_moves_the_source(root: Path) -> None:
    a = write(root, "a.nf.svg", text="<text x='2' y='28'>A<tspan>B</tspan>C</text>")
    b = write(root, "b.nf.svg", text="<text x='2' y='28'>A<tspan>B</tspan>D</text>")
    assert ident(a)["source"] != ident(b)["source"]


# --- media -------------------------------------------------------------------------


def test_editing_an_images_bytes_moves_media_and_only_media(root: Path) -> None:
    logo = root / "examples" / "logo.png"
    png(logo, (255, 0, 0, 255))
    comp_path = write(root, "a.nf.svg",
                      image='<image href="logo.png" x="0" y="0" width="4" height="4"/>')
    before = ident(comp_path)
    assert before["media"] != NONE
    png(logo, (0, 255, 0, 128))
    os.utime(logo, ns=(logo.stat().st_atime_ns, logo.stat().st_mtime_ns + 10**9))
    after = ident(comp_path)
    assert after["media"] != before["media"]
    assert {k: v for k, v in after.items() if k != "media"} == \
        {k: v for k, v in before.items() if k != "media"}


def test_no_image_gives_media_none(root: Path) -> None:
    assert ident(write(root, "a.nf.svg"))["media"] == NONE


def test_media_is_keyed_by_the_path_relative_to_the_composition(root: Path) -> None:
    (root / "examples" / "img").mkdir()
    png(root / "examples" / "img" / "logo.png", (1, 2, 3, 255))
    a = write(root, "a.nf.svg", image='<image href="img/logo.png" width="4" height="4"/>')
    b = write(root, "b.nf.svg", image='<image href="./img/../img/logo.png" width="4" '
              'height="4"/>')
    assert ident(a)["media"] == ident(b)["media"]


# --- fonts -------------------------------------------------------------------------


def test_no_family_and_an_unresolvable_family_list_have_the_same_fonts(root: Path) -> None:
    a = write(root, "a.nf.svg", text="<text x='2' y='28'>Hi</text>")
    b = write(root, "b.nf.svg",
              text="<text x='2' y='28' font-family='\"No Such Face\", Nowhere'>Hi</text>")
    c = write(root, "c.nf.svg", text="<text x='2' y='28' font-family='sans-serif'>Hi</text>")
    assert ident(a)["fonts"] == ident(b)["fonts"] == ident(c)["fonts"] != NONE


def test_no_text_gives_fonts_none(root: Path) -> None:
    assert ident(write(root, "a.nf.svg", text=""))["fonts"] == NONE


def test_another_face_moves_fonts(root: Path) -> None:
    regular = write(root, "a.nf.svg", text="<text x='2' y='28'>Hi</text>")
    bold = write(root, "b.nf.svg", text="<text x='2' y='28' font-weight='700'>Hi</text>")
    assert ident(regular)["fonts"] != ident(bold)["fonts"]
    assert ident(regular)["source"] != ident(bold)["source"]  # the attribute itself draws


def test_fonts_cover_every_face_the_text_resolves_to(root: Path) -> None:
    one = write(root, "a.nf.svg", text="<text x='2' y='28'>Hi</text>")
    two = write(root, "b.nf.svg", text="<text x='2' y='28'>Hi</text>"
                "<text x='2' y='20' font-weight='bold'>Yo</text>")
    assert ident(one)["fonts"] != ident(two)["fonts"]


# --- toolchain ---------------------------------------------------------------------


def _parts_of(package_parent: Path) -> dict[str, str]:
    code = ("import json, nanoframes, nanoframes.determinism.identity as i; "
            "print(json.dumps({'file': nanoframes.__file__, 'parts': i.toolchain_parts(), "
            "'digest': i.toolchain_digest(i.toolchain_parts())}))")
    env = dict(os.environ, PYTHONPATH=str(package_parent))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=package_parent,
                         capture_output=True, text=True, check=True).stdout
    data = json.loads(out)
    assert data["file"].startswith(str(package_parent))  # the copy, not the installed one
    return data


def test_editing_a_module_moves_the_toolchain_and_only_its_modules_part(tmp_path: Path) -> None:
    src = Path(nanoframes.__file__).parent
    copies = []
    for name in ("same", "edited"):
        dest = tmp_path / name
        shutil.copytree(src, dest / "nanoframes", ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(dest)
    film = copies[1] / "nanoframes" / "frames" / "film.py"
    film.write_text(film.read_text() + "\n# an edit that draws nothing, yet counts\n")
    same, edited = _parts_of(copies[0]), _parts_of(copies[1])
    live = identity_mod.toolchain_parts()  # the copy is this very toolchain
    assert {p: same["parts"][p] for p in TOOLCHAIN_PARTS if p != "modules"} == \
        {p: live[p] for p in TOOLCHAIN_PARTS if p != "modules"}
    moved = [p for p in TOOLCHAIN_PARTS if same["parts"][p] != edited["parts"][p]]
    assert moved == ["modules"]
    assert same["digest"] != edited["digest"]


def test_the_toolchain_is_computed_once_per_process(root: Path) -> None:
    path = write(root, "a.nf.svg")
    ident(path)
    info = identity_mod._toolchain_parts.cache_info()
    ident(path)
    ident(write(root, "b.nf.svg"))
    after = identity_mod._toolchain_parts.cache_info()
    assert after.misses == info.misses and after.hits > info.hits


def test_the_source_projection_is_computed_once_per_file_version(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = reading_mod.source_digest
    monkeypatch.setattr(reading_mod, "source_digest", lambda *a: calls.append(1) or real(*a))
    path = write(root, "a.nf.svg")
    first = ident(path)
    assert ident(path) == first and len(calls) == 1
    path.write_text(path.read_text().replace("#204080", "#204099"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))
    assert ident(path)["source"] != first["source"] and len(calls) == 2


# --- the identity command ----------------------------------------------------------


def test_identity_command_prints_components_and_toolchain_parts(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png(root / "examples" / "logo.png", (9, 9, 9, 255))
    path = write(root, "a.nf.svg", image='<image href="logo.png" width="4" height="4"/>')
    assert main(["identity", str(path)]) == 0
    out = capsys.readouterr().out
    expected = ident(path)
    assert out.splitlines()[0] == "examples/a.nf.svg"
    for name in ("source", "media", "fonts", "toolchain", *TOOLCHAIN_PARTS):
        assert name in out
    for value in expected.values():
        assert value in out
    assert "logo.png" in out and "NotoSans-Regular.ttf" in out

    assert main(["identity", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["identity"] == expected
    assert data["toolchain_parts"] == identity_mod.toolchain_parts()
    assert list(data["media_files"]) == ["logo.png"]


def test_identity_of_a_bad_composition_is_one_line_and_exit_2(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = root / "examples" / "bad.nf.svg"
    bad.write_text("<svg")
    assert main(["identity", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "error[xml-malformed]" in err


# --- digests -----------------------------------------------------------------------


def test_a_rendered_pngs_decoded_rgba_hashes_to_the_frame_digest(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png(root / "examples" / "logo.png", (200, 30, 60, 100))
    path = write(root, "a.nf.svg", image='<image href="logo.png" x="30" y="20" width="8" '
                 'height="8" opacity="0.6"/>')
    reading = read_film(path)
    for index in (0, 3):
        out = root / f"f{index}.png"
        assert main(["render", str(path), "--frame", str(index), "-o", str(out)]) == 0
        with Image.open(out) as im:
            rgba = numpy.asarray(im.convert("RGBA"))
        assert hashlib.sha256(rgba.tobytes()).hexdigest() == reading.frame_digests[index]
    capsys.readouterr()


def test_the_film_digest_is_over_the_frame_digests_in_order(root: Path) -> None:
    reading = read_film(write(root, "a.nf.svg"))
    joined = "\n".join(reading.frame_digests).encode()
    assert reading.digest == hashlib.sha256(joined).hexdigest()
    assert len(set(reading.frame_digests)) > 1  # the box moves: frames differ


@pytest.mark.parametrize("frames, n, expected", [
    (20, 5, (0, 5, 10, 14, 19)),
    (180, 4, (0, 60, 119, 179)),
    (10, 1, (0,)),
    (3, 5, (0, 1, 2)),
    (7, 7, tuple(range(7))),
])
def test_sample_indices(frames: int, n: int, expected: tuple[int, ...]) -> None:
    assert sample_indices(frames, n) == expected


def test_sample_indices_are_distinct_and_span_the_film() -> None:
    for frames in range(1, 60):
        for n in range(1, frames + 3):
            got = sample_indices(frames, n)
            assert len(got) == min(n, frames) and list(got) == sorted(set(got))
            assert got[0] == 0 and (n == 1 or got[-1] == frames - 1)


# --- nested compositions -----------------------------------------------------------


def test_a_nested_childs_source_and_images_belong_to_the_parents_identity(root: Path) -> None:
    png(root / "examples" / "logo.png", (10, 20, 30, 255))
    child = write(root, "child.nf.svg", text="",
                  image='<image href="logo.png" width="4" height="4"/>')
    parent = write(root, "parent.nf.svg", text="",
                   image='<image href="child.nf.svg" x="0" y="0" width="24" height="16"/>')
    before = ident(parent)
    assert before["media"] != NONE

    child.write_text(child.read_text().replace("#204080", "#204099"))
    os.utime(child, ns=(child.stat().st_atime_ns, child.stat().st_mtime_ns + 10**9))
    edited = ident(parent)
    assert edited["source"] != before["source"] and edited["media"] == before["media"]

    png(root / "examples" / "logo.png", (10, 20, 31, 255))
    logo = root / "examples" / "logo.png"
    os.utime(logo, ns=(logo.stat().st_atime_ns, logo.stat().st_mtime_ns + 10**9))
    after = ident(parent)
    assert after["media"] != edited["media"] and after["source"] == edited["source"]
