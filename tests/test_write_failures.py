"""A write that fails is one line and exit status 2, and the old file stays whole.

For real, on a small tmpfs of the test's own: a read-only file system, a full
disk, an immutable file (``chattr +i``), a directory where the file should be;
for a PNG, a directory of frames (over two workers) and an MP4. Root writes
through ``chmod``, so read-only is a read-only mount. Skipped (with the reason)
where mounting or ``chattr`` is not permitted.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tmpfs mounts")

NS = "http://www.w3.org/2000/svg"
EXE = shutil.which("nanoframes", path=str(Path(sys.executable).parent)) or "nanoframes"

# output -> (arguments after the composition, the file whose old bytes must survive)
OUTPUTS = {
    "png": (["--frame", "1", "-o", "{m}/f.png", "--no-cache"], "f.png"),
    "frames-j2": (["-o", "{m}/d", "-j", "2", "--no-cache"], "d/00001.png"),
    "video": (["-o", "{m}/v.mp4", "--no-cache"], "v.mp4"),
}


def _sh(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True)


@pytest.fixture
def mount(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of this test's own."""
    point = tmp_path / "m"
    point.mkdir()
    done = _sh("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(point))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield point
    finally:
        for path in point.rglob("*"):
            _sh("chattr", "-i", str(path))
        _sh("umount", str(point))


@pytest.fixture(scope="module")
def composition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("comp")
    (root / "pyproject.toml").write_text("")
    path = root / "c.nf.svg"
    path.write_text(
        f'<svg xmlns="{NS}" data-width="64" data-height="48" data-fps="10" '
        'data-duration="0.4"><rect width="64" height="48" fill="#202830"/>'
        '<rect id="b" width="8" height="8" fill="#ff8000"/>'
        '<script type="application/nanoframes+json">{"animations": [{"target": "#b", '
        '"keyframes": [{"t": 0, "x": 0}, {"t": 0.4, "x": 50}]}]}</script></svg>\n')
    return path


def _run(composition: Path, output: str, mount: Path) -> subprocess.CompletedProcess:
    command = "video" if output == "video" else "render"
    args = [a.format(m=mount) for a in OUTPUTS[output][0]]
    return subprocess.run([EXE, command, str(composition), *args], capture_output=True,
                          text=True, cwd=composition.parent, timeout=120)


def _old_file(mount: Path, output: str) -> tuple[Path, bytes]:
    target = mount / OUTPUTS[output][1]
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(b"the old bytes")
    return target, target.read_bytes()


def _assert_one_line(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("nanoframes: ") and "error[output-failed]" in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in done.stderr


def _no_temps(mount: Path) -> None:
    assert not [p.name for p in mount.rglob(".*") if ".tmp" in p.name]


@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_read_only_file_system(composition: Path, mount: Path, output: str) -> None:
    target, old = _old_file(mount, output)
    assert _sh("mount", "-o", "remount,ro", str(mount)).returncode == 0
    _assert_one_line(_run(composition, output, mount), "Read-only file system",
                     str(target.parent))
    assert target.read_bytes() == old


@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_full_disk(composition: Path, mount: Path, output: str) -> None:
    target, old = _old_file(mount, output)
    with open(mount / "filler", "wb", buffering=0) as fh:  # fill it to the last block
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass
    _assert_one_line(_run(composition, output, mount), "No space left on device")
    assert target.read_bytes() == old
    _no_temps(mount)


@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_immutable_file(composition: Path, mount: Path, output: str) -> None:
    target, old = _old_file(mount, output)
    done = _sh("chattr", "+i", str(target))
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not permitted here: {done.stderr.strip()}")
    _assert_one_line(_run(composition, output, mount), "Operation not permitted",
                     target.name)
    assert target.read_bytes() == old
    _no_temps(mount)


@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_a_directory_in_the_way(composition: Path, mount: Path, output: str) -> None:
    target = mount / OUTPUTS[output][1]
    (target / "inside").mkdir(parents=True)
    _assert_one_line(_run(composition, output, mount), "is a directory", target.name)
    assert (target / "inside").is_dir()
    _no_temps(mount)


def test_an_unwritable_cache_is_only_a_slower_render(composition: Path, mount: Path,
                                                      tmp_path: Path) -> None:
    """Cache entries are an optimisation: a cache that cannot be written is skipped."""
    assert _sh("mount", "-o", "remount,ro", str(mount)).returncode == 0
    env = dict(os.environ, NANOFRAMES_CACHE_DIR=str(mount / "cache"))
    done = subprocess.run([EXE, "render", str(composition), "-o", str(tmp_path / "d")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "d").glob("*.png"))) == 4
