"""A user's project in a scratch directory: tiny compositions, a git repository,
and the commands a user types (``nanoframes …``, ``pytest …``) run in it as
subprocesses, each with a timeout. Shared by the adoption tests (init, the CI
recipe, strictness, the hints)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

NANOFRAMES = [sys.executable, "-m", "nanoframes"]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"]

# 16x16, 2 frames: the box moves, so its two frames differ.
TINY = """<svg xmlns="http://www.w3.org/2000/svg" data-width="16" data-height="16"
     data-fps="2" data-duration="1">
  <rect id="box" x="0" y="0" width="4" height="4" fill="{fill}"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box", "keyframes": [{{"t": 0, "x": 0}}, {{"t": 1, "x": 12}}]}}]}}
  </script>
</svg>
"""

PYPROJECT = """\
# A user's project
[project]
name = "films"   # keep this comment
version = "1.0"

[tool.pytest.ini_options]
testpaths = ["films", "tests"]
"""


def write_film(root: Path, name: str, fill: str = "#cc0000", folder: str = "films") -> Path:
    path = root / folder / f"{name}.nf.svg"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TINY.format(fill=fill))
    return path


def env(root: Path, **extra: str) -> dict[str, str]:
    """The parent's environment, minus CI and pytest's own variables, with a private
    frame cache: each scratch project renders for itself."""
    out = {k: v for k, v in os.environ.items()
           if k not in ("CI", "NANOFRAMES_STORE", "EXCUSED_COMPOSITIONS", "GITHUB_STEP_SUMMARY",
                        "GITHUB_ACTIONS", "ImageOS", "NANOFRAMES_DRILL")
           and not k.startswith(("PYTEST_", "NANOFRAMES_PLATFORM"))}
    out.update(NANOFRAMES_CACHE_DIR=str(root.parent / f"{root.name}-cache"),
               PYTHONDONTWRITEBYTECODE="1", GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    out.update(extra)
    return out


def run(args: list[str], root: Path, timeout: float = 300, **extra: str
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=root, env=env(root, **extra), capture_output=True,
                          text=True, timeout=timeout)


def nf(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return run([*NANOFRAMES, *args], root, **extra)


def pytest_run(root: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return run([*PYTEST, *args], root, **extra)


def git(root: Path, *args: str) -> str:
    done = run(["git", *args], root, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def has_git() -> bool:
    return shutil.which("git") is not None


def new_repo(root: Path, films: dict[str, str] | None = None, pyproject: str = PYPROJECT
             ) -> Path:
    """A git repository with a pyproject.toml and compositions, all committed."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(pyproject)
    for name, fill in ({"a": "#cc0000", "b": "#0000cc"} if films is None else films).items():
        write_film(root, name, fill)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def porcelain(root: Path) -> list[str]:
    return sorted(git(root, "status", "--porcelain", "--untracked-files=all").splitlines())


def in_process(root: Path, monkeypatch, write) -> Path:
    """A project for tests that call nanoframes' ``main`` in this process: no CI
    excuses or store from the environment, the working directory at ``root``, an
    empty ``[tool.nanoframes]``, and ``write(root)``'s composition."""
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.delenv("NANOFRAMES_STORE", raising=False)
    monkeypatch.chdir(root)
    (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
    write(root)
    return root


def main_run(capsys, *args: str) -> tuple[int, str, str]:
    """``nanoframes ARGS`` in this process: status, stdout, stderr."""
    from nanoframes.cli import main

    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err
