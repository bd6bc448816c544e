"""The package as a user gets it: sdist and wheel built, the wheel installed into
a fresh virtual environment, used from projects outside this repository.

Slow (tens of seconds), so it is marked ``wheel``: ``pytest -m "not wheel"``
leaves it out; the default run (and CI) includes it. See docs/packaging.md.

The fresh environment gets the wheel with ``--no-deps --no-index`` and finds
its dependencies through a ``.pth`` over links to exactly the distributions its
declared requirements name, transitively, as installed here (no dev extras, no
editable nanoframes): no network, a few seconds; ``pip check`` there proves
they satisfy the wheel's metadata, and a module that imports anything
undeclared fails in it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import nanoframes
from nanoframes.determinism.identity import module_files

pytestmark = [
    pytest.mark.wheel,
    pytest.mark.skipif(sys.platform == "win32", reason="the test environment links with symlinks"),
]

REPO = Path(__file__).resolve().parents[1]
VERSION = nanoframes.__version__
# Not copied into the build tree: checkout state and build outputs.
_BUILD_IGNORE = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "*.pyc", ".hypothesis",
    ".pytest_cache", ".ruff_cache", ".benchmarks", "out", ".nanoframes-cache")
# A scratch project's pieces, copied from examples/: text, images, a nested child.
FILMS = ("nested-grid.nf.svg", "parts/pulse-tile.nf.svg", "master-demo.nf.svg",
         "assets/dunes.jpg", "assets/product.png", "assets/avatar.png")
SCRATCH_PYPROJECT = """\
[project]
name = "my-films"
version = "1.0"

[tool.nanoframes]
compositions = ["films/**/*.nf.svg"]
ledger = "digests.json"

[tool.pytest.ini_options]
testpaths = ["films"]
addopts = "-p no:cacheprovider"
"""


def run(args: list[str], cwd: Path, env: dict[str, str], ok: bool = True,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if ok and done.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {done.returncode}\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def base_env(cache: Path, venv: Path | None = None) -> dict[str, str]:
    """The parent's environment without anything that points back into the checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
           and not k.startswith(("PYTEST_", "COV_"))}
    env.update(NANOFRAMES_CACHE_DIR=str(cache), NANOFRAMES_RECORD_IN_CI="1",
               PYTHONDONTWRITEBYTECODE="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


class Built:
    def __init__(self, sdist: Path, wheel: Path) -> None:
        self.sdist, self.wheel = sdist, wheel


class WheelEnv:
    """A fresh virtual environment with the wheel installed."""

    def __init__(self, venv: Path, cache: Path) -> None:
        self.venv = venv
        self.python = str(venv / "bin" / "python")
        self.nanoframes = str(venv / "bin" / "nanoframes")
        self.env = base_env(cache, venv)

    def run(self, args: list[str], cwd: Path, ok: bool = True):
        return run(args, cwd, self.env, ok)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """sdist, then the wheel built from the unpacked sdist (``python -m build``'s default)."""
    root = tmp_path_factory.mktemp("wheel-build")
    tree, out = root / "tree", root / "dist"
    shutil.copytree(REPO, tree, ignore=_BUILD_IGNORE, symlinks=True)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(tree)],
        root, base_env(root / "cache"))
    (sdist,), (wheel,) = out.glob("*.tar.gz"), out.glob("*.whl")
    return Built(sdist, wheel)


@pytest.fixture(scope="module")
def wheel_env(built: Built, tmp_path_factory: pytest.TempPathFactory) -> WheelEnv:
    root = tmp_path_factory.mktemp("wheel-env")
    venv = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], root, base_env(root))
    site = Path(run([str(venv / "bin" / "python"), "-c",
                     "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    root, base_env(root)).stdout.strip())
    # The dependencies: links to what nanoframes requires, as installed here.
    deps = root / "deps"
    deps.mkdir()
    for entry in _runtime_dependency_files():
        (deps / entry.name).symlink_to(entry)
    (site / "zz-test-deps.pth").write_text(f"{deps}\n")
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    run([*pip, "install", "--quiet", "--no-deps", "--no-index", str(built.wheel)], root,
        base_env(root))
    run([*pip, "check"], root, base_env(root))
    return WheelEnv(venv, root / "cache")


def _runtime_dependency_files() -> set[Path]:
    """The top-level files of every distribution nanoframes requires, transitively.

    Requirements under an extra (``dev``) or a marker false here are left out.
    """
    todo, seen, files = list(metadata.requires("pytest-nanoframes") or ()), set(), set()
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        dist = metadata.distribution(req.name)
        name = dist.metadata["Name"].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        tops = {f.parts[0] for f in dist.files or () if f.parts[0] != ".."}
        files |= {Path(dist.locate_file(top)) for top in tops}
        todo += dist.requires or ()
    return files


# --- item 1 and 4: what the artifacts hold, and their metadata ---------------


def test_the_wheel_carries_the_faces_and_every_module(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as whl:
        names = set(whl.namelist())
        metadata = whl.read(f"pytest_nanoframes-{VERSION}.dist-info/METADATA").decode()
    faces = {p.name for p in (REPO / "fonts").iterdir() if p.suffix == ".ttf"}
    assert faces and {f"nanoframes/fonts/{f}" for f in faces} <= names
    assert {"nanoframes/fonts/OFL.txt", "nanoframes/fonts/README.md"} <= names
    assert not any(n.startswith("fonts/") for n in names)  # nothing outside the packages
    licences = {n.split("/licenses/", 1)[1] for n in names if "/licenses/" in n}
    assert licences == {"LICENSE", "fonts/OFL.txt"}
    # Every module of the source package ships, so the `modules` digest can agree.
    modules = {f"nanoframes/{rel}" for rel, _ in module_files(REPO / "nanoframes")}
    assert modules <= names
    plugin = {f"pytest_nanoframes/{p.name}" for p in (REPO / "pytest_nanoframes").glob("*.py")}
    assert plugin <= names
    # Our own distribution name: `nanoframes` on the package index is another project.
    assert "\nName: pytest-nanoframes\n" in metadata
    assert built.wheel.name == f"pytest_nanoframes-{VERSION}-py3-none-any.whl"
    assert f"\nVersion: {VERSION}\n" in metadata
    assert "\nClassifier: Framework :: Pytest\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata


def test_the_sdist_builds_the_wheel_and_runs_the_tests(built: Built) -> None:
    with tarfile.open(built.sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for required in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE",
                     "conftest.py", "tests/digests.json", "tests/test_wheel.py",
                     "fonts/OFL.txt", "fonts/__init__.py", "fonts/NotoSans-Regular.ttf",
                     "examples/master-demo.nf.svg", "examples/assets/dunes.jpg",
                     "docs/packaging.md", "nanoframes/__init__.py",
                     "pytest_nanoframes/plugin.py"):
        assert required in names, required
    for tree in ("tests", "examples", "docs", "benchmarks", "nanoframes", "pytest_nanoframes"):
        tracked = {p.relative_to(REPO).as_posix() for p in (REPO / tree).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}
        assert tracked <= names, sorted(tracked - names)[:5]
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)


def test_twine_accepts_both_artifacts(built: Built, tmp_path: Path) -> None:
    done = run([sys.executable, "-m", "twine", "check", "--strict", str(built.sdist),
                str(built.wheel)], tmp_path, base_env(tmp_path))
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_one_version_everywhere(wheel_env: WheelEnv, tmp_path: Path) -> None:
    cli = wheel_env.run([wheel_env.nanoframes, "--version"], tmp_path).stdout.strip()
    meta = wheel_env.run([wheel_env.python, "-c", "import importlib.metadata as m, nanoframes;"
                          "print(m.version('pytest-nanoframes'), nanoframes.__version__)"],
                         tmp_path).stdout.split()
    assert cli == f"nanoframes {VERSION}"
    assert meta == [VERSION, VERSION]
    project = tmp_path / "p"
    project.mkdir()
    (project / "pyproject.toml").write_text(SCRATCH_PYPROJECT)
    (project / "films").mkdir()
    header = wheel_env.run([wheel_env.python, "-m", "pytest", "--nf-check"], project,
                           ok=False).stdout
    assert f"nanoframes {VERSION}: thorvg-python " in header, header


# --- item 3: a user's project, with nanoframes from the wheel ---------------------


def _scratch_project(where: Path) -> Path:
    where.mkdir()
    (where / "pyproject.toml").write_text(SCRATCH_PYPROJECT)
    for rel in FILMS:
        target = where / "films" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / "examples" / rel, target)
    return where


# Over 10 s: render, record and check, each a fresh interpreter from the installed wheel.
def test_a_users_project_renders_records_and_checks_from_the_wheel(
        wheel_env: WheelEnv, tmp_path: Path) -> None:
    project = _scratch_project(tmp_path / "my-films")
    nf, py = wheel_env.nanoframes, wheel_env.python

    # Where the code and the faces come from: the environment, never a checkout.
    origin = wheel_env.run([py, "-c", "import nanoframes; print(nanoframes.__file__)"], project)
    assert Path(origin.stdout.strip()).resolve().is_relative_to(wheel_env.venv.resolve())
    faces = json.loads(wheel_env.run([nf, "fonts", "--json"], project).stdout)
    bundled = [f for f in faces if f["origin"] == "bundled"]
    assert bundled and all(Path(f["path"]).resolve().is_relative_to(wheel_env.venv.resolve())
                           for f in bundled)

    # render: text, images, a nested child.
    for film in ("nested-grid", "master-demo"):
        wheel_env.run([nf, "render", f"films/{film}.nf.svg", "--frame", "20",
                       "-o", f"{film}.png"], project)
        assert (project / f"{film}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    # identity: the same four inputs as the editable install computes here.
    wheel_ident = json.loads(wheel_env.run(
        [nf, "identity", "films/master-demo.nf.svg", "--json"], project).stdout)
    here = run([sys.executable, "-m", "nanoframes", "identity", "films/master-demo.nf.svg",
                "--json"], project, base_env(tmp_path / "cache-editable"))
    assert wheel_ident == json.loads(here.stdout)
    assert wheel_ident["identity"]["media"] != "none" and wheel_ident["font_files"]

    # digest --record, then --check: every film matches.
    wheel_env.run([nf, "digest", "--all", "--record"], project)
    check = wheel_env.run([nf, "digest", "--all", "--check"], project).stdout
    assert "3 compositions: 3 match" in check, check

    # video: an H.264 file.
    wheel_env.run([nf, "video", "films/nested-grid.nf.svg", "-o", "grid.mp4"], project)
    assert (project / "grid.mp4").read_bytes()[4:8] == b"ftyp"

    # The plugin, found through its entry point (no conftest, no -p): record, then check.
    (project / "digests.json").unlink()
    rec = wheel_env.run([py, "-m", "pytest", "--nf-record", "-q"], project).stdout
    assert "3 passed" in rec, rec
    chk = wheel_env.run([py, "-m", "pytest", "--nf-check", "-rA"], project).stdout
    assert "3 passed" in chk and f"nanoframes {VERSION}:" in chk, chk

    # An edit is seen as one, from the wheel too.
    grid = project / "films" / "nested-grid.nf.svg"
    grid.write_text(grid.read_text().replace("</svg>", '<rect width="9" height="9"/></svg>'))
    moved = wheel_env.run([nf, "digest", "films/nested-grid.nf.svg", "--check"], project,
                          ok=False)
    assert moved.returncode != 0 and "source" in moved.stdout, moved.stdout


# --- item 2: the examples' ledger holds from the wheel, outside the repository ----


# Over 10 s: every example drawn twice, recorded by this checkout and checked by the wheel.
def test_the_examples_ledger_matches_from_the_wheel(wheel_env: WheelEnv,
                                                    tmp_path: Path) -> None:
    """Recorded by the editable install, checked by the wheel: every example matches.

    The committed ledger may be stale on a branch that edited nanoframes/ (the
    ``modules`` part moves), so the editable install records a copy of it first.
    """
    recorded = tmp_path / "recorded"
    shutil.copytree(REPO / "examples", recorded / "examples", ignore=_BUILD_IGNORE)
    (recorded / "tests").mkdir()
    # Without the entries of tests: `digest` cannot draw those (on a branch that moved
    # the toolchain they would stay behind, recorded with another one).
    doc = json.loads((REPO / "tests" / "digests.json").read_text())
    doc["compositions"] = {k: v for k, v in doc["compositions"].items()
                           if "::" not in k and k.endswith(".nf.svg")}  # the globs below
    (recorded / "tests" / "digests.json").write_text(json.dumps(doc, indent=2) + "\n")
    (recorded / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["examples/**/*.nf.svg"]\n'
        'ledger = "tests/digests.json"\n')
    run([sys.executable, "-m", "nanoframes", "digest", "--all", "--record"], recorded,
        base_env(tmp_path / "cache-editable"))

    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(recorded, elsewhere)
    out = wheel_env.run([wheel_env.nanoframes, "digest", "--all", "--check"], elsewhere).stdout
    films = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "examples").rglob("*.nf.svg"))
    for film in films:
        assert f"MATCH {film}: match" in out, out
    assert f"{len(films)} compositions: {len(films)} match" in out, out
