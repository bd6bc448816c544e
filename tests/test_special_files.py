"""Inputs that are not regular files: a FIFO (a read waits for a writer that
never comes) or a device such as /dev/zero (a read that never ends). Each is
one line and a non-zero exit, or, among font files, simply not a candidate;
never a hang. Real commands in subprocesses, each with a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")

TIMEOUT = 60  # a read that blocks fails the test here instead of hanging the suite

FILM = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32"
     data-fps="4" data-duration="1">
  <rect width="48" height="32" fill="#203040"/>
  {extra}
</svg>
"""


def project(root: Path, extra: str = "", config: str = "") -> Path:
    (root / "pyproject.toml").write_text(f"[tool.nanoframes]\n{config}")
    comp = root / "a.nf.svg"
    comp.write_text(FILM.format(extra=extra))
    return comp


def render(comp: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanoframes", "render", comp.name, "--frame",
                           "0", "-o", "f.png", "--no-cache"], cwd=comp.parent,
                          capture_output=True, text=True, timeout=TIMEOUT)


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_a_composition_that_is_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    os.mkfifo(tmp_path / "a.nf.svg")
    assert one_line(render(tmp_path / "a.nf.svg")).endswith(
        "a.nf.svg: error[file-unreadable]: not a regular file\n")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_a_composition_linked_to_an_endless_device(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    (tmp_path / "a.nf.svg").symlink_to("/dev/zero")
    assert "error[file-unreadable]: not a regular file" in one_line(render(tmp_path / "a.nf.svg"))


def test_an_image_that_is_a_fifo(tmp_path: Path) -> None:
    comp = project(tmp_path, '<image href="pipe.png" width="8" height="8"/>')
    os.mkfifo(tmp_path / "pipe.png")
    line = one_line(render(comp))
    assert "error[image-missing]: 'pipe.png' is not a regular file" in line


def test_a_clip_that_is_a_fifo(tmp_path: Path) -> None:
    comp = project(tmp_path, '<image href="pipe.mp4" width="8" height="8"/>')
    os.mkfifo(tmp_path / "pipe.mp4")
    line = one_line(render(comp))
    assert "error[image-missing]: 'pipe.mp4' is not a regular file" in line


def test_a_fifo_among_the_font_files_is_not_a_candidate(tmp_path: Path) -> None:
    comp = project(tmp_path, '<text x="2" y="20" font-size="12">Hi</text>',
                   'font-dirs = ["fonts"]\n')
    (tmp_path / "fonts").mkdir()
    os.mkfifo(tmp_path / "fonts" / "Pipe.ttf")
    done = render(comp)
    assert done.returncode == 0, done.stderr
    assert Image.open(tmp_path / "f.png").size == (48, 32)


def test_a_ledger_that_is_a_fifo(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "tests").mkdir()
    os.mkfifo(tmp_path / "tests" / "digests.json")
    done = subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--check", "a.nf.svg"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT)
    assert one_line(done).endswith(
        "digests.json: error[ledger-unreadable]: cannot read the ledger: not a regular file\n")
