"""The scene classification on the real cases that move pixels (issue 34, item 2).

- nanoframes' own bake edited, the source the same: a copy of the package with
  one change to how numbers are written, first on PYTHONPATH, so the
  toolchain's ``modules`` part moves: *different scene*, the diff names it;
- a rasterizer that draws the same documents otherwise: the libm nudge of
  test_linked.py preloaded (every frame moves by a rounding), and the aarch64
  build under emulation (tools/arm64/run) against an x86-64 recording:
  *same scene, different pixels*;
- a platform entry recorded from another build: the reading is judged against
  it, and its scenes (another bake's) are the ones compared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from built_once import once
from test_linked import NUDGE

ROOT = Path(__file__).resolve().parent.parent
KEY = "examples/spinner-loop.nf.svg"
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD: Linux")
# The nudge of test_linked.py, by NUDGE_ULPS ulps (default 1): the same library file,
# so the same toolchain, drawing otherwise as the environment says (nondeterminism)
HELPER = r"""
#include <stdlib.h>
static float up(float v, float toward) {
    static int n = -1;
    if (n < 0) { const char *e = getenv("NUDGE_ULPS"); n = e ? atoi(e) : 1; }
    for (int i = 0; i < n; i++) v = nextafterf(v, toward);
    return v;
}
"""
TIMEOUT = 300


def project(root: Path) -> Path:
    (root / "examples").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
    shutil.copy(ROOT / "examples" / "spinner-loop.nf.svg", root / "examples")
    return root


def digest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "EXCUSED_COMPOSITIONS", "NANOFRAMES_STORE",
                            "NANOFRAMES_PLATFORM", "PYTHONPATH", "CI")}
    environ.update(XDG_CACHE_HOME=str(root / "cache"), PYTHONDONTWRITEBYTECODE="1", **env)
    return subprocess.run([sys.executable, "-m", "nanoframes", "digest", *args], cwd=root,
                          capture_output=True, text=True, timeout=TIMEOUT, env=environ)


def verdict_of(done: subprocess.CompletedProcess[str]) -> dict:
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return json.loads(done.stdout)["verdicts"][0]


def edited_bake(tmp_path: Path) -> Path:
    """A copy of nanoframes that writes numbers with 2 decimals instead of 6."""
    where = tmp_path / "edited"
    shutil.copytree(ROOT / "nanoframes", where / "nanoframes",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "fonts", where / "fonts")  # the bundled faces, as in a checkout
    numbers = where / "nanoframes" / "model" / "numbers.py"
    text = numbers.read_text()
    assert 'f"{x:.6f}"' in text
    numbers.write_text(text.replace('f"{x:.6f}"', 'f"{x:.2f}"'))
    return where


def nudge(tmp_path: Path) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler on this machine to build the preloaded library")
    source = NUDGE.replace("nextafterf(", "up(").replace("#include <math.h>\n",
                                                         "#include <math.h>\n" + HELPER)
    (tmp_path / "nudge.c").write_text(source)
    library = tmp_path / "libnudge.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(library), str(tmp_path / "nudge.c"),
                    "-ldl", "-lm"], check=True, timeout=120, capture_output=True)
    return library


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """Recorded once per session, copied for each test."""
    root = tmp_path / "p"
    once(tmp_path, "test_scene_cases recorded", lambda: _record(root), root)
    return root


def _record(root: Path) -> None:
    project(root)
    done = digest(root, "--record", "-j", "1")
    assert done.returncode == 0, done.stderr


def test_an_edit_to_nanoframes_own_bake_is_a_different_scene(recorded: Path,
                                                              tmp_path: Path) -> None:
    edited = edited_bake(tmp_path)
    verdict = verdict_of(digest(recorded, "--check", "--json", "-j", "1",
                                PYTHONPATH=str(edited)))
    assert verdict["verdict"] == "changed"
    assert verdict["reasons"] == ["toolchain changed (modules)"]  # the source is the same
    scenes = verdict["scenes"]
    assert scenes["classification"] == "different scene", scenes["summary"]
    assert scenes["different_scene"] == verdict["differing_frames"]
    # the diff names elements and attributes, old (6 decimals) → new (2)
    first = scenes["diffs"][0]["changes"][0]
    assert " → " in first and first.startswith(("#", "svg/")), first
    old, new = first.rsplit(" → ", 1)
    assert len(old) > len(new), first


@linux
def test_a_rasterizer_nudged_by_libm_draws_the_same_scenes_otherwise(recorded: Path,
                                                                     tmp_path: Path) -> None:
    library = nudge(tmp_path)
    verdict = verdict_of(digest(recorded, "--check", "--json", "-j", "1",
                                LD_PRELOAD=str(library)))
    assert verdict["verdict"] == "changed"
    assert verdict["reasons"] == ["toolchain changed (preload:libnudge.so)"]
    scenes = verdict["scenes"]
    assert verdict["differing_frames"] and scenes["classification"] == "same scene"
    assert scenes["same_scene"] == verdict["differing_frames"] and not scenes["diffs"]
    assert scenes["summary"].startswith("same scene, different pixels in every differing frame")
    done = digest(recorded, "--check", "-j", "1", LD_PRELOAD=str(library))
    assert "  scene: same scene, different pixels in every differing frame" in done.stdout


@linux
def test_a_platform_entry_from_another_build_is_the_one_whose_scenes_are_compared(
        recorded: Path, tmp_path: Path) -> None:
    """The platform entry is recorded by another bake (the edited copy) with the nudge
    preloaded; the same build then draws otherwise (the nudge's NUDGE_ULPS, which no
    toolchain part sees: what nondeterminism looks like). Judged against the
    platform entry, whose scenes are that bake's, every differing frame is the same
    scene; against the primary's scenes they would all be different ones."""
    library = nudge(tmp_path)
    other = {"PYTHONPATH": str(edited_bake(tmp_path)), "LD_PRELOAD": str(library)}
    done = digest(recorded, "--record", "-j", "1", "--platform", "linux-other", **other)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = json.loads((recorded / "tests" / "digests.json").read_text())["compositions"][KEY]
    platform = entry["platforms"]["linux-other"]
    moved = [i for i, (a, b) in enumerate(zip(entry["scene_digests"],
                                              platform["scene_digests"], strict=True)) if a != b]
    assert moved  # the other bake's scenes really are other documents
    verdict = verdict_of(digest(recorded, "--check", "--json", "-j", "1", NUDGE_ULPS="3",
                                **other))
    assert verdict["verdict"] == "regression" and verdict["platform"] == "linux-other"
    scenes = verdict["scenes"]
    assert scenes["classification"] == "same scene", scenes["summary"]
    assert scenes["same_scene"] == verdict["differing_frames"]
    assert set(verdict["differing_frames"]) & set(moved)  # where the primary's differ


# --- arm64 under emulation ---------------------------------------------------------

def arm64_dir() -> Path:
    """The emulated interpreter's folder, as .ci/run sets it up; skipped where there is
    none (setting one up downloads Debian's packages: never from a test)."""
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "nanoframes-arm64"
    where = Path(os.environ.get("NANOFRAMES_ARM64_DIR") or default)
    if not (where / "root" / ".complete").exists():
        pytest.skip(f"no emulated arm64 interpreter set up at {where} (tools/arm64/setup; "
                    ".ci/run sets it up)")
    if not (shutil.which("qemu-aarch64-static") or shutil.which("qemu-aarch64")):
        pytest.skip("qemu-user is not installed: arm64 cannot be emulated here")
    return where


# Slow: a film drawn under emulated arm64 (qemu-user is 8-14x slower than native); over
# 10 s where tools/arm64/setup first rebuilds its wheel for these sources.
@linux
def test_arm64_draws_the_recorded_scenes_otherwise(recorded: Path) -> None:
    where = arm64_dir()
    environ = {k: v for k, v in os.environ.items()
               if k not in ("LD_PRELOAD", "EXCUSED_COMPOSITIONS", "NANOFRAMES_STORE", "CI")}
    environ.update(NANOFRAMES_ARM64_DIR=str(where), XDG_CACHE_HOME=str(recorded / "cache"))
    done = subprocess.run([str(ROOT / "tools" / "arm64" / "run"), "nanoframes", "digest",
                           "--check", "--json", "-j", "1", "--samples", "6"],
                          cwd=recorded, capture_output=True, text=True, timeout=900,
                          env=environ)
    if done.returncode == 3:
        pytest.skip(done.stderr.strip().splitlines()[-1])
    verdict = verdict_of(done)
    assert "libthorvg" in verdict["line"]  # another build of the rasterizer ...
    assert verdict["differing_frames"], verdict["line"]  # ... that really draws otherwise
    scenes = verdict["scenes"]
    assert scenes["classification"] == "same scene", scenes["summary"]
    assert scenes["same_scene"] == verdict["differing_frames"]
