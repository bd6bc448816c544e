"""One root, stable keys (docs/projects.md): the project a run works in is decided
once, the same way by the command line and the plugin, whatever the argument
order; every key is relative to it; a composition outside it (directly or through
a link) is an error naming the path; no ledger is made outside a project; a link
inside the project is its own composition with its own key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nanoframes.config import marked_root, project_root, relative_key
from nanoframes.errors import NanoframesError

NS = "http://www.w3.org/2000/svg"
EXE = shutil.which("nanoframes", path=str(Path(sys.executable).parent)) or "nanoframes"
COMP = (f'<svg xmlns="{NS}" data-width="16" data-height="12" data-fps="4" data-duration="0.5">'
        '<rect id="b" width="8" height="8" fill="{fill}"/></svg>\n')


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A project (pyproject.toml, examples/a.nf.svg) and a directory in no project."""
    if marked_root(tmp_path) is not None:
        pytest.skip(f"{tmp_path} lies inside a project already")
    proj, outside = tmp_path / "proj", tmp_path / "outside"
    (proj / "examples").mkdir(parents=True)
    outside.mkdir()
    (proj / "pyproject.toml").write_text("[tool.nanoframes]\n")
    (proj / "examples" / "a.nf.svg").write_text(COMP.format(fill="#ff0000"))
    (outside / "y.nf.svg").write_text(COMP.format(fill="#00ff00"))
    return proj, outside


def nanoframes(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, NANOFRAMES_CACHE_DIR=str(cwd / ".cache")))


def keys(ledger: Path) -> list[str]:
    return sorted(json.loads(ledger.read_text())["compositions"])


def test_the_root_does_not_depend_on_argument_order(tree) -> None:
    proj, outside = tree
    a, y = proj / "examples" / "a.nf.svg", outside / "y.nf.svg"
    for order in ([y, a], [a, y]):
        with pytest.raises(NanoframesError) as caught:
            project_root(order, cwd=proj)
        assert caught.value.code == "outside-project"
        assert str(y) in str(caught.value)
    assert project_root([a], cwd=outside) == project_root([], cwd=proj / "examples") == proj


@pytest.mark.parametrize("mode", ["--check", "--record"])
def test_a_composition_outside_is_an_error_and_makes_no_ledger(tree, mode: str) -> None:
    proj, outside = tree
    for args in (["../outside/y.nf.svg", "examples/a.nf.svg"],
                 ["examples/a.nf.svg", "../outside/y.nf.svg"]):
        done = nanoframes(proj, "digest", mode, *args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stderr.count("\n") == 1 and "error[outside-project]" in done.stderr
        assert "y.nf.svg" in done.stderr
    assert not (outside / "tests").exists()
    assert not (proj / "tests").exists()


def test_no_ledger_outside_a_project(tree) -> None:
    _, outside = tree
    done = nanoframes(outside, "digest", "--record", "y.nf.svg")
    assert done.returncode == 2 and "error[outside-project]" in done.stderr, done.stderr
    done = nanoframes(outside, "digest", "--record")
    assert done.returncode == 2 and "error[no-project]" in done.stderr, done.stderr
    assert not (outside / "tests").exists()


def test_keys_are_relative_to_the_root_from_anywhere(tree) -> None:
    proj, outside = tree
    ledger = proj / "tests" / "digests.json"
    for cwd, path in ((proj, "examples/a.nf.svg"), (proj / "examples", "a.nf.svg"),
                      (outside, str(proj / "examples" / "a.nf.svg"))):
        done = nanoframes(cwd, "digest", "--record", path)
        assert done.returncode == 0, done.stderr
        assert keys(ledger) == ["examples/a.nf.svg"]
        done = nanoframes(cwd, "digest", "--check", path)
        assert done.returncode == 0 and "MATCH" in done.stdout.upper(), done.stdout


def test_links(tree) -> None:
    proj, outside = tree
    ex = proj / "examples"
    (ex / "link.nf.svg").symlink_to("a.nf.svg")
    assert relative_key(ex / "link.nf.svg", proj) == "examples/link.nf.svg"
    done = nanoframes(proj, "digest", "--record")
    assert done.returncode == 0, done.stderr
    assert keys(proj / "tests" / "digests.json") == ["examples/a.nf.svg", "examples/link.nf.svg"]
    (ex / "away.nf.svg").symlink_to(outside / "y.nf.svg")
    done = nanoframes(proj, "digest", "--record", "examples/away.nf.svg")
    assert done.returncode == 2, done.stdout
    assert "error[outside-project]" in done.stderr and "away.nf.svg" in done.stderr
    assert "outside" in done.stderr
    assert keys(proj / "tests" / "digests.json") == ["examples/a.nf.svg", "examples/link.nf.svg"]


def test_the_plugin_uses_the_same_root_and_keys(tree) -> None:
    """pytest's rootdir here is examples/ (its own pytest.ini); the project, and so
    every key, is still the one the command line uses."""
    proj, _ = tree
    ex = proj / "examples"
    (ex / "pytest.ini").write_text("[pytest]\n")
    (ex / "link.nf.svg").symlink_to("a.nf.svg")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--nf-record", "."], cwd=ex,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTEST_ADDOPTS=""))
    assert done.returncode == 0, done.stdout + done.stderr
    ledger = proj / "tests" / "digests.json"
    from_pytest = json.loads(ledger.read_text())["compositions"]
    assert sorted(from_pytest) == ["examples/a.nf.svg", "examples/link.nf.svg"]
    (ex / "away.nf.svg").symlink_to(proj.parent / "outside" / "y.nf.svg")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-p", "no:xdist", "--nf-check", "-k", "away", "."], cwd=ex,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTEST_ADDOPTS=""))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error[outside-project]" in done.stdout and "away.nf.svg" in done.stdout
    assert "Traceback" not in done.stdout
    (ex / "away.nf.svg").unlink()
    ledger.unlink()
    done = nanoframes(ex, "digest", "--record", "a.nf.svg", "link.nf.svg")
    assert done.returncode == 0, done.stderr
    from_cli = json.loads(ledger.read_text())["compositions"]
    assert {k: v["digest"] for k, v in from_cli.items()} == {
        k: v["digest"] for k, v in from_pytest.items()}
