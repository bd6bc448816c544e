"""Fonts that travel (issue 33, item 6): a face found only in the host's font
directories is a ``font-host`` warning and is marked in ``identity``; characters
a face has no glyph for are a ``glyph-missing`` warning, in lint and in
``measure``. The character map is the project's own reader, checked here
against fontTools on every face of this machine."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from nanoframes.cli import main
from nanoframes.lint import lint_file
from nanoframes.text import fonts
from nanoframes.text.coverage import missing_characters
from nanoframes.text.faces import bundled_fonts_dir, font_files
from nanoframes.text.fonts import FontBook, host_font_dirs
from nanoframes.text.sfnt import SfntError, read_cmap, read_sfnt

SVG = 'xmlns="http://www.w3.org/2000/svg"'
REGULAR = bundled_fonts_dir() / "NotoSans-Regular.ttf"


def comp(body: str) -> str:
    return (f'<svg {SVG} data-width="400" data-height="120" data-fps="10" '
            f'data-duration="1">{body}</svg>')


def renamed_face(target: Path, family: str) -> Path:
    """A copy of the bundled regular face under another family name."""
    font = TTFont(str(REGULAR))
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = family
        elif record.nameID == 6:
            record.string = family.replace(" ", "")
    target.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(target))
    return target


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project, and a host font directory holding a face the project lacks."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    host = tmp_path / "host-fonts"
    renamed_face(host / "TravelTest-Regular.ttf", "Travel Test")
    monkeypatch.setattr(fonts, "host_font_dirs", lambda: (host,))
    return root


def findings(path: Path, code: str) -> list[str]:
    return [f.message for f in lint_file(path) if f.code == code]


def test_a_host_face_is_a_font_host_warning(project: Path) -> None:
    path = project / "t.nf.svg"
    path.write_text(comp('<text x="10" y="50" font-family="Travel Test">Hi</text>'))
    messages = findings(path, "font-host")
    assert len(messages) == 1
    assert "'Travel Test'" in messages[0] and "TravelTest-Regular.ttf" in messages[0]
    assert "font-dirs" in messages[0] and "another face" in messages[0]
    assert main(["check", "--strict", str(path)]) == 1  # no longer "ok"


def test_the_same_face_in_font_dirs_travels(project: Path) -> None:
    renamed_face(project / "fonts" / "TravelTest-Regular.ttf", "Travel Test")
    (project / "pyproject.toml").write_text('[tool.nanoframes]\nfont-dirs = ["fonts"]\n')
    path = project / "t.nf.svg"
    path.write_text(comp('<text x="10" y="50" font-family="Travel Test">Hi</text>'))
    assert findings(path, "font-host") == []
    bundled = project / "b.nf.svg"
    bundled.write_text(comp('<text x="10" y="50" font-family="Noto Sans">Hi</text>'))
    assert findings(bundled, "font-host") == []


def test_identity_names_the_host_face(project: Path, capsys: pytest.CaptureFixture) -> None:
    path = project / "t.nf.svg"
    path.write_text(comp('<text x="10" y="50" font-family="Travel Test">Hi</text>'
                         '<text x="10" y="90">Bundled</text>'))
    assert main(["identity", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["host_fonts"]) == {"TravelTest-Regular.ttf"}
    assert set(report["font_files"]) == {"TravelTest-Regular.ttf", "NotoSans-Regular.ttf"}
    assert main(["identity", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    host_lines = [line for line in lines if "host:" in line]
    assert len(host_lines) == 1 and "TravelTest-Regular.ttf" in host_lines[0]
    assert "does not travel" in host_lines[0]


def test_characters_without_a_glyph_are_named_with_the_face(project: Path) -> None:
    path = project / "t.nf.svg"
    path.write_text(comp('<text id="greet" x="10" y="50">Hello \u0645\u0631\u062d\u0628\u0627'
                         ' \u65e5\u672c</text><text x="10" y="90">All Latin</text>'))
    messages = findings(path, "glyph-missing")
    assert len(messages) == 1
    message = messages[0]
    assert "NotoSans-Regular" in message and "U+0645" in message and "U+65E5" in message
    assert "'H'" not in message and "U+0020" not in message


def test_measure_warns_about_missing_glyphs(project: Path, capsys) -> None:
    path = project / "t.nf.svg"
    path.write_text(comp('<text id="greet" x="10" y="50">Hi \u65e5\u672c</text>'))
    assert main(["measure", str(path)]) == 0
    captured = capsys.readouterr()
    assert "#greet" in captured.out
    warning = captured.err.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("warning[glyph-missing]:")
    assert "#greet" in warning[0] and "U+65E5" in warning[0] and "U+672C" in warning[0]
    assert main(["measure", "--json", str(path)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["missing"] == ["\u65e5", "\u672c"]


def test_missing_characters_skip_controls_and_keep_order() -> None:
    face = FontBook(host_dirs=()).default
    assert missing_characters(face, "A\u200db\u65e5\u65e5\u0645") == ("\u65e5", "\u0645")


def _every_face_file() -> list[Path]:
    files = list(font_files(bundled_fonts_dir()))
    for d in host_font_dirs():
        files += [p for p in font_files(d) if p.suffix.lower() == ".ttf"]
    return files


def test_cmap_reads_as_fonttools_reads_it_on_every_face_of_this_machine() -> None:
    checked = 0
    for path in _every_face_file():
        try:
            font = TTFont(str(path), lazy=True, fontNumber=0)
            best = font.getBestCmap()
        except Exception:  # not a font fontTools reads: discovery skips it too
            continue
        if best is None:
            continue
        with path.open("rb") as fh:
            cmap = read_sfnt(fh).char_map()
        probe = set(best) | set(range(0, 0x3100)) | {0x1F600, 0x10FFFF}
        wrong = [cp for cp in probe if (best.get(cp, ".notdef") != ".notdef") != cmap.has_glyph(cp)]
        assert not wrong, (path, wrong[:5])
        checked += 1
    assert checked >= 3  # the bundled faces at least


def test_a_damaged_cmap_raises_sfnt_error_not_anything_else() -> None:
    with REGULAR.open("rb") as fh:
        sfnt = read_sfnt(fh)
        table = sfnt.table("cmap")
    for cut in (0, 3, 11, 20, len(table) // 3, len(table) - 1):
        try:
            read_cmap(table[:cut])
        except SfntError:
            pass
    rng = random.Random(33)
    for _ in range(300):  # random damage: a char map or SfntError, nothing else
        damaged = bytearray(table[:4096])
        for _ in range(8):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        try:
            read_cmap(bytes(damaged)).has_glyph(rng.randrange(0x110000))
        except SfntError:
            pass
    bogus = bytearray(table)
    count = struct.unpack_from(">H", bogus, 2)[0]
    for k in range(count):  # every subtable offset past the end
        struct.pack_into(">I", bogus, 4 + 8 * k + 4, len(bogus) + 100)
    with pytest.raises(SfntError):
        read_cmap(bytes(bogus))
