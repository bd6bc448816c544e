"""Faces pass the OpenType Sanitizer before ThorVG sees them (issue 31, item 3).

Damaged faces come from ``damaged_faces`` (a bundled face, renamed to its own
family, with bytes of ``glyf``, ``loca`` or ``cmap`` overwritten by a seeded
generator). Without the check, ``cmap-18`` and ``loca-15`` segfaulted ``render``
(measured before the fix: 2 of 90 such faces); now each is passed over with one
warning naming it, and the text falls back to the default face.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import damaged_faces
import pytest
from launched import launched

from nanoframes.text.faces import bundled_fonts_dir
from nanoframes.text.fonts import FontBook
from nanoframes.text.sanitize import face_problem

GB = 1 << 30
HEAD = ('<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="48" '
        'data-fps="10" data-duration="0.1">')
CRASHERS = ("cmap-18", "loca-15")  # segfaulted ThorVG before the check


def test_bundled_faces_pass() -> None:
    faces = sorted(bundled_fonts_dir().glob("*.ttf"))
    assert faces
    assert {f.name: face_problem(f) for f in faces} == {f.name: None for f in faces}


def test_the_renamed_face_itself_passes(tmp_path: Path) -> None:
    path = tmp_path / "ok.ttf"
    path.write_bytes(bytes(damaged_faces.renamed(damaged_faces.SOURCE.read_bytes())))
    assert face_problem(path) is None
    book = FontBook(project_dirs=[tmp_path], host_dirs=())
    res = book.resolve(damaged_faces.FAMILY)
    assert not res.fallback and res.face.path == path


@pytest.mark.parametrize("table", damaged_faces.TABLES)
def test_a_rejected_face_is_not_a_candidate(tmp_path: Path, table: str, capsys) -> None:
    rejected = 0
    for seed in range(8):
        directory = tmp_path / f"{table}-{seed}"
        directory.mkdir()
        path = directory / "face.ttf"
        path.write_bytes(damaged_faces.damaged(seed, table))
        book = FontBook(project_dirs=[directory], host_dirs=())
        res = book.resolve(damaged_faces.FAMILY)
        if face_problem(path) is None:
            assert res.face.path == path
            continue
        rejected += 1
        assert res.fallback and res.face.origin == "bundled"
        book.resolve(damaged_faces.FAMILY)  # again: no second warning
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(
            f"nanoframes: warning[face-rejected]: {path}: rejected by the OpenType Sanitizer")
    assert rejected >= 4  # the generator damages enough to be refused most of the time


@pytest.mark.parametrize("name", CRASHERS)
@pytest.mark.parametrize("command", ["render", "check"])
def test_a_face_that_crashed_thorvg_is_one_warning(tmp_path: Path, name: str,
                                                   command: str) -> None:
    table, seed = name.split("-")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "f"\n'
                                             '[tool.nanoframes]\nfont-dirs = ["fonts"]\n')
    (tmp_path / "fonts").mkdir()
    face = tmp_path / "fonts" / f"{name}.ttf"
    face.write_bytes(damaged_faces.damaged(int(seed), table))
    (tmp_path / "t.nf.svg").write_text(
        f'{HEAD}<text x="1" y="20" font-family="{damaged_faces.FAMILY}">Hello 123</text></svg>')
    argv = ["render", "t.nf.svg", "--frame", "0", "-o", "out.png"] if command == "render" \
        else ["check", "t.nf.svg"]
    proc = subprocess.run(launched([sys.executable, "-m", "nanoframes", *argv],
                                   address_space=GB), cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode >= 0, proc.stderr  # no signal
    warnings = [line for line in proc.stderr.splitlines() if "warning[face-rejected]" in line]
    assert len(warnings) == 1 and str(face.resolve()) in warnings[0], proc.stderr
    assert "Traceback" not in proc.stderr
    if command == "render":
        assert proc.returncode == 0 and (tmp_path / "out.png").exists(), proc.stderr
