"""Faces are checked before ThorVG sees them, and ThorVG sees what was checked
(issue 31, item 3; issue 41, items 1, 3 and 5).

The check is on a face's drawn copy (exactly the tables ThorVG 1.0.4 reads), and that
copy is what ThorVG is handed. Damaged faces come from ``damaged_faces`` (a bundled
face, renamed to its own family, with bytes of ``glyf``, ``loca`` or ``cmap``
overwritten by a seeded generator); ``cmap-18`` and ``loca-15`` segfaulted ``render``
before faces were checked. A refused face from the project's font-dirs refuses every
film whose text names it (one line), unless the fallback is allowed.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import damaged_faces
import numpy as np
import pytest
from launched import launched

from nanoframes.engine.raster import get_rasterizer
from nanoframes.errors import NanoframesError
from nanoframes.text.drawn import _assemble, directory, drawn_copy
from nanoframes.text.faces import bundled_fonts_dir, face_digest, face_file
from nanoframes.text.fonts import FontBook, enforce
from nanoframes.text.sanitize import copy_problem, face_problem

ots = pytest.importorskip("ots")  # no wheel on Linux aarch64: the walk alone runs there

GB = 1 << 30
HEAD = ('<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="48" '
        'data-fps="10" data-duration="0.1">')
CRASHERS = ("cmap-18", "loca-15")  # segfaulted ThorVG before the check


def _ots_refuses(path: Path) -> bool:
    """What faces were checked by before issue 41: OTS on the whole file."""
    return subprocess.run([ots.OTS_SANITIZE, str(path)], capture_output=True,
                          timeout=60).returncode != 0


def _with_tables(path: Path, source: Path = damaged_faces.SOURCE, **tables: bytes) -> Path:
    """A bundled face, renamed, with tables replaced or added (``TSI3=b""``...)."""
    data = bytes(damaged_faces.renamed(source.read_bytes()))
    _, found = directory(data)
    chosen = {tag: data[o:o + n] for tag, (o, n) in found.items()}
    chosen.update({tag.replace("_", "/"): value for tag, value in tables.items()})
    path.write_bytes(_assemble(chosen))
    return path


def _kern(pairs_claimed: int) -> bytes:
    """A version 0 kern table, one format 0 subtable with one pair, claiming more."""
    pairs = struct.pack(">HHh", 36, 37, -50)
    return (struct.pack(">HH", 0, 1) + struct.pack(">HHH", 0, 14 + len(pairs), 0x0001)
            + struct.pack(">HHHH", pairs_claimed, 0, 0, 0) + pairs)


def _draw(data: bytes, name: str, text: str = "AVA Hamburg 0123") -> np.ndarray:
    rast = get_rasterizer()
    rast.register_font(name, data)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="320" height="48"><text x="2" '
           f'y="36" font-size="28" font-family="{name}">{text}</text></svg>')
    return np.array(rast.render(svg.encode(), 320, 48))


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
    assert not res.fallback and res.face.path == path and not res.refused


def test_thorvg_is_handed_the_checked_copy_and_the_identity_hashes_the_file(
        tmp_path: Path) -> None:
    path = tmp_path / "ok.ttf"
    path.write_bytes(bytes(damaged_faces.renamed(damaged_faces.SOURCE.read_bytes())))
    face = FontBook(project_dirs=[tmp_path], host_dirs=()).resolve(damaged_faces.FAMILY).face
    handed, digest = face_file(face)
    assert handed == drawn_copy(path.read_bytes()) and copy_problem(handed) is None
    assert handed != path.read_bytes()  # GSUB, GPOS, name... are not in it
    import hashlib

    assert digest == face_digest(face) == hashlib.sha256(path.read_bytes()).hexdigest()
    # and it draws exactly as the file does
    assert np.array_equal(_draw(path.read_bytes(), "whole-file"), _draw(handed, "drawn-copy"))


def test_every_damaged_face_the_old_check_refused_is_still_refused(tmp_path: Path) -> None:
    paths = damaged_faces.make(tmp_path, 30)
    old = {p.name for p in paths if _ots_refuses(p)}
    new = {p.name for p in paths if face_problem(p) is not None}
    assert old <= new, sorted(old - new)
    assert {f"{c}.ttf" for c in CRASHERS} <= new
    assert len(new) >= 80  # 82 of 90 when measured (docs/limits.md)


@pytest.mark.parametrize("table", damaged_faces.TABLES)
def test_a_rejected_face_is_not_a_candidate(tmp_path: Path, table: str) -> None:
    rejected = 0
    for seed in range(8):
        directory_ = tmp_path / f"{table}-{seed}"
        directory_.mkdir()
        path = directory_ / "face.ttf"
        path.write_bytes(damaged_faces.damaged(seed, table))
        book = FontBook(project_dirs=[directory_], host_dirs=())
        res = book.resolve(damaged_faces.FAMILY)
        problem = face_problem(path)
        if problem is None:
            assert res.face.path == path and not res.refused
            continue
        rejected += 1
        assert res.fallback and res.face.origin == "bundled"
        assert [(r.face.path, r.code, r.reason) for r in res.refused] == [
            (path, "face-rejected", problem)]
    assert rejected >= 4  # the generator damages enough to be refused most of the time


def test_kern_pairs_past_the_face_are_refused_though_ots_passes_the_file(
        tmp_path: Path) -> None:
    path = _with_tables(tmp_path / "kern.ttf", kern=_kern(65535))
    assert not _ots_refuses(path)  # OTS drops the kern table and passes the file
    problem = face_problem(path)
    assert problem is not None and "'kern': subtable 0 claims 65535 pairs" in problem
    honest = _with_tables(tmp_path / "kern-ok.ttf", kern=_kern(1))
    assert face_problem(honest) is None


def test_damage_only_in_tables_thorvg_never_reads_is_not_refused(tmp_path: Path) -> None:
    data = damaged_faces.SOURCE.read_bytes()
    _, found = directory(data)
    offset, length = found["GSUB"]
    path = _with_tables(tmp_path / "layout.ttf", GSUB=bytes([0xFF]) * length,
                        TSI3=b"", OS_2=b"\0\0")
    assert _ots_refuses(path)  # the old check refused it
    assert face_problem(path) is None
    book = FontBook(project_dirs=[tmp_path], host_dirs=())
    res = book.resolve(damaged_faces.FAMILY)
    assert not res.fallback and res.face.path == path
    intact = bytes(damaged_faces.renamed(data))
    assert np.array_equal(_draw(face_file(res.face)[0], "layout-damaged"),
                          _draw(intact, "intact"))


def _project(tmp_path: Path, name: str, data: bytes, extra: str = "") -> Path:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "f"\n[tool.nanoframes]\n'
                                             f'font-dirs = ["fonts"]\n{extra}')
    (tmp_path / "fonts").mkdir(exist_ok=True)
    face = tmp_path / "fonts" / f"{name}.ttf"
    face.write_bytes(data)
    (tmp_path / "t.nf.svg").write_text(
        f'{HEAD}<text x="1" y="20" font-family="{damaged_faces.FAMILY}">Hello 123</text></svg>')
    return face


def _nanoframes(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(launched([sys.executable, "-m", "nanoframes", *argv],
                                   address_space=GB), cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("name", CRASHERS)
@pytest.mark.parametrize("command", ["render", "check", "digest"])
def test_a_refused_project_face_refuses_the_film(tmp_path: Path, name: str,
                                                 command: str) -> None:
    table, seed = name.split("-")
    face = _project(tmp_path, name, damaged_faces.damaged(int(seed), table))
    argv = {"render": ["render", "t.nf.svg", "--frame", "0", "-o", "out.png"],
            "check": ["check", "t.nf.svg"], "digest": ["digest", "t.nf.svg"]}[command]
    proc = _nanoframes(tmp_path, *argv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in (proc.stdout + proc.stderr).splitlines()
             if "error[face-rejected]" in line]
    assert len(lines) == 1, proc.stdout + proc.stderr
    assert str(face.resolve()) in lines[0] and "t.nf.svg" in lines[0]
    assert "rejected by the OpenType Sanitizer" in lines[0] \
        or "would hurt ThorVG's reader" in lines[0]
    assert "Traceback" not in proc.stderr and not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("how", ["flag", "config"])
def test_allowing_the_fallback_makes_it_one_warning(tmp_path: Path, how: str) -> None:
    extra = "allow-fallback = true\n" if how == "config" else ""
    face = _project(tmp_path, "cmap-18", damaged_faces.damaged(18, "cmap"), extra)
    flag = ["--allow-fallback"] if how == "flag" else []
    proc = _nanoframes(tmp_path, "render", "t.nf.svg", "--frame", "0", "-o", "out.png", *flag)
    assert proc.returncode == 0 and (tmp_path / "out.png").exists(), proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "warning[face-rejected]" in line]
    assert len(warnings) == 1 and str(face.resolve()) in warnings[0], proc.stderr
    assert "draws with 'Noto Sans'" in warnings[0]
    check = _nanoframes(tmp_path, "check", "t.nf.svg", *flag)
    assert check.returncode == 0, check.stdout
    assert "warning[face-rejected]" in check.stdout and "Values that resolve" not in check.stdout
    # drawn by worker processes too (they are started before the command line is read)
    film = tmp_path / "t.nf.svg"
    film.write_text(film.read_text().replace('data-duration="0.1"', 'data-duration="1"'))
    digest = _nanoframes(tmp_path, "digest", "t.nf.svg", "-j", "2", *flag)
    assert digest.returncode == 0, digest.stdout + digest.stderr
    assert len([line for line in digest.stderr.splitlines()
                if "warning[face-rejected]" in line]) == 1, digest.stderr


def test_a_refused_host_face_stays_a_warning(tmp_path: Path, capsys) -> None:
    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "face.ttf").write_bytes(damaged_faces.damaged(18, "cmap"))
    book = FontBook(host_dirs=[tmp_path / "host"])
    res = book.resolve(damaged_faces.FAMILY)
    assert res.fallback and res.refused[0].face.origin == "host"
    enforce(res, tmp_path / "t.nf.svg", allowed=False)  # no error
    enforce(res, tmp_path / "t.nf.svg", allowed=False)  # and no second line
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("nanoframes: warning[face-rejected]: ")
    project = FontBook(project_dirs=[tmp_path / "host"], host_dirs=())
    with pytest.raises(NanoframesError) as caught:
        enforce(project.resolve(damaged_faces.FAMILY), tmp_path / "t.nf.svg", allowed=False)
    assert caught.value.code == "face-rejected"


def test_a_film_that_drew_with_the_fallback_and_now_its_face_is_changed_fonts(
        tmp_path: Path) -> None:
    """Before issue 41 a face refused for a table ThorVG never reads (NanumGothic's
    zero-length TSI3) drew in the fallback; now it draws: its record reads changed."""
    face = _project(tmp_path, "brand", b"")
    face.unlink()  # recorded while the family resolved to no face: the fallback
    (tmp_path / "tests").mkdir()
    record = _nanoframes(tmp_path, "digest", "t.nf.svg", "--record")
    assert record.returncode == 0, record.stderr
    # the face, now a candidate: Noto Sans Bold renamed (it draws unlike the fallback)
    _with_tables(face, damaged_faces.SOURCE.with_name("NotoSans-Bold.ttf"), TSI3=b"")
    assert face_problem(face) is None
    check = _nanoframes(tmp_path, "digest", "t.nf.svg", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    line = check.stdout.splitlines()[0]
    assert line.startswith("CHANGED t.nf.svg: changed, fonts changed ("), line
    assert "regression" not in line.lower()


def test_the_pytest_item_of_a_film_naming_a_refused_project_face_fails_in_one_line(
        pytester: pytest.Pytester) -> None:
    face = _project(pytester.path, "kern", b"")
    _with_tables(face, kern=_kern(65535))
    with (pytester.path / "pyproject.toml").open("a") as fh:
        fh.write('ledger = "tests/digests.json"\n[tool.pytest.ini_options]\n'
                 'testpaths = ["examples"]\n')
    (pytester.path / "examples").mkdir()
    (pytester.path / "t.nf.svg").rename(pytester.path / "examples" / "t.nf.svg")
    (pytester.path / "tests").mkdir()
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-record", "examples")
    assert result.ret == 1
    failed = [line for line in result.outlines if line.startswith("ERROR examples/t.nf.svg")]
    assert len(failed) == 1 and "error[face-rejected]" in failed[0], result.outlines
    assert str(face.resolve()) in failed[0] and "'kern'" in failed[0]


def test_nanoframes_fonts_says_which_faces_are_refused_and_why(tmp_path: Path) -> None:
    from nanoframes.text.fonts import describe_fonts

    _with_tables(tmp_path / "kern.ttf", kern=_kern(65535))
    good = tmp_path / "good.ttf"
    good.write_bytes(bytes(damaged_faces.renamed(
        damaged_faces.SOURCE.with_name("NotoSans-Bold.ttf").read_bytes())))
    rows = {r["path"]: r for r in describe_fonts(FontBook(project_dirs=[tmp_path],
                                                          host_dirs=()))}
    refused = rows[str(tmp_path / "kern.ttf")]
    assert not refused["reachable"] and refused["refused"].startswith("face-rejected: ")
    assert "'kern'" in refused["refused"]
    assert rows[str(good)]["reachable"] and rows[str(good)]["refused"] is None


def test_a_face_damaged_after_it_was_resolved_is_not_handed_to_thorvg(tmp_path: Path) -> None:
    import os

    path = tmp_path / "face.ttf"
    path.write_bytes(bytes(damaged_faces.renamed(damaged_faces.SOURCE.read_bytes())))
    res = FontBook(project_dirs=[tmp_path], host_dirs=()).resolve(damaged_faces.FAMILY)
    assert not res.fallback
    _with_tables(path, kern=_kern(65535))  # the file changes under the resolution
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(NanoframesError) as caught:
        face_file(res.face)
    assert caught.value.code == "face-rejected" and "'kern'" in caught.value.message
