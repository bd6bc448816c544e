"""The shared libraries libthorvg runs with are toolchain parts (engine/linked.py).

The end-to-end cases are real: a few lines of C wrap ``sinf``/``cosf``/``sincosf``
one ulp up and are preloaded into ``nanoframes digest --check`` of a rotating
film recorded without them (before these parts it read ``regression``), and a
copy of the system's libm, one byte longer, is put first on the linker's path
(another libm build on another machine).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from built_once import once

from nanoframes.determinism.identity import is_linked_part, part_names, toolchain_parts
from nanoframes.determinism.ledger import Entry
from nanoframes.determinism.reading import entry_from_reading, read_film
from nanoframes.engine.library import library_path
from nanoframes.engine.linked import elf_dynamic, linked_parts, preloaded
from nanoframes.errors import NanoframesError

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF and dlinfo: Linux")
ROOT = Path(__file__).resolve().parent.parent
NUDGE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
float sinf(float x) {
    static float (*real)(float);
    if (!real) real = (float (*)(float))dlsym(RTLD_NEXT, "sinf");
    return nextafterf(real(x), INFINITY);
}
float cosf(float x) {
    static float (*real)(float);
    if (!real) real = (float (*)(float))dlsym(RTLD_NEXT, "cosf");
    return nextafterf(real(x), INFINITY);
}
void sincosf(float x, float *s, float *c) {
    static void (*real)(float, float *, float *);
    if (!real) real = (void (*)(float, float *, float *))dlsym(RTLD_NEXT, "sincosf");
    real(x, s, c);
    *s = nextafterf(*s, INFINITY);
    *c = nextafterf(*c, INFINITY);
}
"""


def _mapped_files() -> dict[str, str]:
    """basename -> path of every file mapped into this process (/proc/self/maps)."""
    out = {}
    for line in Path("/proc/self/maps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) == 6 and fields[5].startswith("/"):
            out[Path(fields[5]).name] = fields[5]
    return out


@linux
def test_libthorvg_needs_are_read_from_its_elf_header() -> None:
    needed, _ = elf_dynamic(library_path())
    assert "libm.so.6" in needed and "libc.so.6" in needed
    readelf = shutil.which("readelf")
    if readelf:  # binutils' own reading, where it is installed
        text = subprocess.run([readelf, "-d", str(library_path())], capture_output=True,
                              text=True, timeout=60, check=True).stdout
        listed = [line.split("[", 1)[1].rstrip("]") for line in text.splitlines()
                  if "(NEEDED)" in line]
        assert needed == listed


@linux
def test_not_an_elf_object_needs_nothing(tmp_path: Path) -> None:
    for data in (b"", b"GROUP ( libc.so.6 )", b"\x7fELF\x02\x01" + b"\0" * 10):
        (tmp_path / "x.so").write_bytes(data)
        assert elf_dynamic(tmp_path / "x.so") == ([], [])


@linux
def test_each_part_is_the_file_the_loaded_rasterizer_uses() -> None:
    from nanoframes.engine.raster import engine_version

    engine_version()  # ThorVG loaded: its libraries are mapped into this process
    parts = linked_parts(library_path())
    assert {"libm.so.6", "libc.so.6", "libstdc++.so.6"} <= set(parts)
    mapped = {Path(os.path.realpath(p)): p for p in _mapped_files().values()}
    from nanoframes.engine.linked import loaded_path

    for soname, digest in parts.items():
        path = loaded_path(soname)
        assert path in mapped, soname  # the linker's choice is what is mapped
        assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert all(is_linked_part(name) for name in parts)
    assert {n: toolchain_parts()[n] for n in parts} == parts


def test_part_names_and_the_ledger_accept_library_parts_only() -> None:
    assert is_linked_part("libm.so.6") and is_linked_part("preload:libnudge.so")
    assert not is_linked_part("modules") and not is_linked_part("bogus")
    assert not is_linked_part("preload:../x") and not is_linked_part("libthorvg")
    assert part_names({"libm.so.6": "a", "modules": "b"}, {"thorvg-python": "c"}) \
        == ("thorvg-python", "modules", "libm.so.6")


def test_an_entry_with_library_parts_round_trips(tmp_path: Path) -> None:
    comp = tmp_path / "a.nf.svg"
    comp.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8" '
                    'data-fps="2" data-duration="1"><rect width="4" height="4"/></svg>')
    entry = entry_from_reading(read_film(comp))
    assert Entry.from_json("a", entry.to_json()) == entry
    bad = entry.to_json()
    bad["toolchain_parts"] = {**bad["toolchain_parts"], "bogus": "x"}
    with pytest.raises(NanoframesError, match="toolchain_parts"):
        Entry.from_json("a", bad)


def test_preloads_come_from_the_starting_environment(tmp_path: Path) -> None:
    code = ("import os; os.environ['LD_PRELOAD'] = 'later.so'; "
            "from nanoframes.engine.linked import preloaded; print(preloaded())")
    env = {**os.environ, "LD_PRELOAD": ""}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env, check=True).stdout
    assert "later.so" not in out  # set after start: the linker never saw it
    assert preloaded() == preloaded()


def _project(root: Path) -> Path:
    (root / "examples").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
    shutil.copy(ROOT / "examples" / "spinner-loop.nf.svg", root / "examples")
    return root


def _digest(root: Path, *args: str, env: dict[str, str] | None = None):
    environ = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "EXCUSED_COMPOSITIONS")}
    environ.update(XDG_CACHE_HOME=str(root / "cache"), **(env or {}))
    return subprocess.run([sys.executable, "-m", "nanoframes", "digest", *args], cwd=root,
                          capture_output=True, text=True, timeout=300, env=environ)


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """Recorded once per session, copied for each test."""
    root = tmp_path / "p"
    once(tmp_path, "test_linked recorded", lambda: _record(root), root)
    return root


def _record(root: Path) -> None:
    _project(root)
    result = _digest(root, "--record")
    assert result.returncode == 0, result.stderr


@linux
def test_a_libm_nudged_one_ulp_by_a_preload_reads_changed_not_regression(
        recorded: Path, tmp_path: Path) -> None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this machine to build the preloaded library")
    (tmp_path / "nudge.c").write_text(NUDGE)
    library = tmp_path / "libnudge.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(library), str(tmp_path / "nudge.c"),
                    "-ldl", "-lm"], check=True, timeout=120, capture_output=True)
    result = _digest(recorded, "--check", "--json", env={"LD_PRELOAD": str(library)})
    assert result.returncode == 1, result.stderr
    verdict = json.loads(result.stdout)["verdicts"][0]
    # The frames really moved (every declared input but the preload is the same) ...
    assert verdict["differing_frames"], verdict["line"]
    assert verdict["evidence"]["frames"]
    # ... and the verdict names the preloaded library, not a regression.
    assert verdict["verdict"] == "changed"
    assert verdict["reasons"] == ["toolchain changed (preload:libnudge.so)"]
    assert verdict["line"].startswith("CHANGED examples/spinner-loop.nf.svg: changed, "
                                      "toolchain changed (preload:libnudge.so) (")
    assert _digest(recorded, "--check").returncode == 0  # without it: a match again


@linux
def test_another_libm_build_first_on_the_linker_path_is_named(recorded: Path,
                                                              tmp_path: Path) -> None:
    from nanoframes.engine.linked import loaded_path

    system = loaded_path("libm.so.6")
    assert system is not None
    other = tmp_path / "otherlibm"
    other.mkdir()
    (other / "libm.so.6").write_bytes(system.read_bytes() + b"\0")  # same code, other build
    result = _digest(recorded, "--check", env={"LD_LIBRARY_PATH": str(other)})
    assert result.returncode == 0, result.stderr  # a match, its moved input named
    first = result.stdout.splitlines()[0]
    # The same code draws the same pixels: the inputs moved and nothing else did.
    assert first == ("MATCH examples/spinner-loop.nf.svg: match (recorded inputs moved: "
                     "toolchain changed (libm.so.6))"), result.stdout
    # Recording there replaces the primary with another machine's libraries: said, as
    # for another renderer build, with the command that records it beside it instead.
    result = _digest(recorded, "--record", env={"LD_LIBRARY_PATH": str(other)})
    assert result.returncode == 0, result.stderr
    assert "recorded under another toolchain than the primary's" in result.stdout


def test_an_entry_recorded_before_library_parts_re_records_without_a_note() -> None:
    from nanoframes.determinism.policy import _renderer_parts

    base = {"thorvg-python": "1.1.3", "libthorvg": "a" * 64, "nanoframes": "0", "modules": "m"}
    entry = Entry(digest="0" * 64, frames=1, sampled=False, samples=None,
                  identity={k: "0" * 64 for k in ("source", "media", "fonts", "toolchain")},
                  toolchain_parts=base, frame_digests=("0" * 16,), platforms={})
    fresh = dataclasses.replace(entry, toolchain_parts={**base, "libm.so.6": "b" * 64})
    assert _renderer_parts(entry) == _renderer_parts(fresh, like=entry)
    moved = dataclasses.replace(fresh, toolchain_parts={**base, "libm.so.6": "c" * 64})
    assert _renderer_parts(fresh) != _renderer_parts(moved, like=fresh)
