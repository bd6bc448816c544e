"""Outputs honour the umask: PNG frames, MP4, cache entries and the ledger get the
mode a plain ``open()`` would give (0666 less the umask), not mkstemp's 0600."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from launched import launched

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")

NS = "http://www.w3.org/2000/svg"
EXE = shutil.which("nanoframes", path=str(Path(sys.executable).parent)) or "nanoframes"


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.nanoframes]\ncompositions = ['*.nf.svg']\n")
    (root / "a.nf.svg").write_text(
        f'<svg xmlns="{NS}" data-width="16" data-height="12" data-fps="10" '
        'data-duration="0.3"><rect id="b" width="8" height="8" fill="#ff8000"/>'
        '<script type="application/nanoframes+json">{"animations": [{"target": "#b", '
        '"keyframes": [{"t": 0, "opacity": 0}, {"t": 0.3, "opacity": 1}]}]}</script></svg>\n')
    return root


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o027])
def test_outputs_get_the_umask_mode(tmp_path: Path, mask: int) -> None:
    root = _project(tmp_path / "p")
    env = dict(os.environ, NANOFRAMES_CACHE_DIR=str(root / "cache"))

    def run(*args: str) -> None:
        done = subprocess.run(launched([EXE, *args], umask=mask), cwd=root, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    run("render", "a.nf.svg", "--frame", "1", "-o", "one.png", "--no-cache")
    run("render", "a.nf.svg", "-o", "frames")  # stores cache entries too
    run("video", "a.nf.svg", "-o", "v.mp4", "--no-cache")
    run("digest", "--record")
    want = 0o666 & ~mask
    outputs = [root / "one.png", *sorted((root / "frames").glob("*.png")), root / "v.mp4",
               root / "tests" / "digests.json", *sorted((root / "cache" / "films").rglob("*")),
               *sorted((root / ".nanoframes" / "store").rglob("*.png"))]
    outputs = [p for p in outputs if p.is_file()]
    # ... the cache's three PNGs and its checks, reference frames
    assert len(outputs) == 1 + 3 + 1 + 1 + 4 + 3
    assert {p.relative_to(root).as_posix(): oct(_mode(p)) for p in outputs} == {
        p.relative_to(root).as_posix(): oct(want) for p in outputs}
