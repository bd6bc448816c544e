"""A renderer build you choose (NANOFRAMES_LIBTHORVG) and the guard on every build.

The second toolchain is real: a copy of the wheel's libthorvg with other bytes
(trailing bytes an ELF loader ignores), so it draws the same pixels under a
different ``libthorvg`` identity part. Wrong builds are real shared libraries
compiled here, answering ThorVG's version query with what an old or foreign
build would say.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nanoframes.engine.raster import library_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "title-card.nf.svg"


def run(*args: str, env: dict[str, str] | None = None, cwd: Path = ROOT):
    full = {**os.environ, "NANOFRAMES_RECORD_IN_CI": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "nanoframes", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def other_bytes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("build") / "libthorvg-copy.so"
    shutil.copyfile(library_path(), copy)
    with open(copy, "ab") as fh:
        fh.write(b"\0nanoframes test: same code, other bytes\0")
    return copy


def _compile(tmp_path: Path, name: str, body: str) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler here to build a stand-in library")
    src = tmp_path / f"{name}.c"
    src.write_text(body)
    out = tmp_path / f"lib{name}.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(out), str(src)], check=True)
    return out


_VERSION_ONLY = """
#include <stdint.h>
int tvg_engine_version(uint32_t* major, uint32_t* minor, uint32_t* micro, const char** v) {
    *major = %d; *minor = %d; *micro = %d; if (v) *v = "%d.%d.%d"; return 0;
}
"""


def test_a_chosen_build_draws_and_is_the_libthorvg_part(other_bytes: Path,
                                                          tmp_path: Path) -> None:
    env = {"NANOFRAMES_LIBTHORVG": str(other_bytes)}
    ours = json.loads(run("identity", str(EXAMPLE), "--json").stdout)
    theirs_proc = run("identity", str(EXAMPLE), "--json", env=env)
    assert theirs_proc.returncode == 0, theirs_proc.stderr
    theirs = json.loads(theirs_proc.stdout)
    import hashlib

    assert theirs["toolchain_parts"]["libthorvg"] == hashlib.sha256(
        other_bytes.read_bytes()).hexdigest()
    moved = [p for p in ours["toolchain_parts"]
             if ours["toolchain_parts"][p] != theirs["toolchain_parts"][p]]
    assert moved == ["libthorvg"]
    # Same pixels: the frames it draws hash the same.
    a = run("render", str(EXAMPLE), "--frame", "10", "-o", str(tmp_path / "a.png"), "--no-cache")
    b = run("render", str(EXAMPLE), "--frame", "10", "-o", str(tmp_path / "b.png"), "--no-cache",
            env=env)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()


@pytest.mark.parametrize("command", [
    ["identity", str(EXAMPLE)],
    ["render", str(EXAMPLE), "--frame", "0", "-o", "{tmp}/x.png", "--no-cache"],
    # through the frame cache, whose key loads no renderer: drawing checks the build
    ["render", str(EXAMPLE), "--frame", "0", "-o", "{tmp}/x.png"],
    ["render", str(EXAMPLE), "-o", "{tmp}/frames", "-j", "2"],
    ["render", str(EXAMPLE), "-o", "{tmp}/frames", "-j", "2", "--no-cache"],
    ["video", str(EXAMPLE), "-o", "{tmp}/x.mp4", "-j", "2"],
    ["digest", str(EXAMPLE)],
    ["digest", str(EXAMPLE), "-j", "2"],
])
def test_a_foreign_major_version_is_one_line(command: list[str], tmp_path: Path) -> None:
    lib = _compile(tmp_path, "oldthorvg", _VERSION_ONLY % (0, 15, 8, 0, 15, 8))
    proc = run(*[c.replace("{tmp}", str(tmp_path)) for c in command],
               env={"NANOFRAMES_LIBTHORVG": str(lib)})
    assert proc.returncode == 2, proc.stderr
    # digest reports it as that composition's ERROR line on stdout; the rest on stderr
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "error[thorvg-invalid]" in lines[0] and "ThorVG 0.15.8" in lines[0]
    assert "needs ThorVG 1.x" in lines[0] and str(lib) in lines[0]
    assert not (tmp_path / "x.png").exists() and not list(tmp_path.glob("frames/*.png"))


def test_a_build_without_the_api_names_what_is_missing(tmp_path: Path) -> None:
    # What thorvg-python 1.0.1 ships: a 1.x library without tvg_canvas_add.
    lib = _compile(tmp_path, "thorvg101", _VERSION_ONLY % (1, 0, 1, 1, 0, 1))
    proc = run("render", str(EXAMPLE), "--frame", "0", "-o", str(tmp_path / "x.png"),
               "--no-cache", env={"NANOFRAMES_LIBTHORVG": str(lib)})
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line, proc.stderr
    assert "ThorVG 1.0.1 without tvg_engine_init" in line
    assert "thorvg-python 1.1.3" in line


def test_not_a_library_at_all(tmp_path: Path) -> None:
    fake = tmp_path / "libthorvg.so"
    fake.write_bytes(b"not an ELF file")
    proc = run("identity", str(EXAMPLE), env={"NANOFRAMES_LIBTHORVG": str(fake)})
    assert proc.returncode == 2 and "cannot be loaded" in proc.stderr
    missing = run("identity", str(EXAMPLE),
                  env={"NANOFRAMES_LIBTHORVG": str(tmp_path / "absent.so")})
    assert missing.returncode == 2 and "names no readable file" in missing.stderr
