"""Packaging without building: where the bundled faces come from, what the
``modules`` digest counts, one version. The built artifacts: tests/test_wheel.py."""

from __future__ import annotations

import importlib
import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nanoframes
from nanoframes.determinism.identity import module_files, modules_digest
from nanoframes.errors import NanoframesError
from nanoframes.text.fonts import FontBook, bundled_fonts_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 backport
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def test_the_bundled_faces_are_the_installed_package_nanoframes_fonts() -> None:
    package = importlib.import_module("nanoframes.fonts")
    assert bundled_fonts_dir() == Path(package.__file__).resolve().parent
    assert {p.name for p in bundled_fonts_dir().glob("*.ttf")} == {
        p.name for p in (REPO / "fonts").glob("*.ttf")}
    assert (bundled_fonts_dir() / "OFL.txt").is_file()
    book = FontBook(host_dirs=())
    assert book.default.origin == "bundled" and book.default.name == "NotoSans-Regular"


def test_without_the_faces_text_fails_in_one_line_naming_the_remedy(tmp_path: Path) -> None:
    book = FontBook(bundled_dir=tmp_path / "nowhere", host_dirs=())
    with pytest.raises(NanoframesError) as err:
        book.default  # noqa: B018
    assert err.value.code == "font-missing" and "reinstall nanoframes" in str(err.value)


def test_the_modules_digest_counts_what_a_wheel_ships_and_nothing_else(tmp_path: Path) -> None:
    package = Path(nanoframes.__file__).parent
    copy = tmp_path / "nanoframes"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    original = modules_digest(copy)
    assert original == modules_digest(package)

    # What an install or an editor leaves beside the modules does not count.
    (copy / "fonts").mkdir()
    (copy / "fonts" / "__init__.py").write_text('"""data, as a wheel installs it"""\n')
    (copy / "fonts" / "NotoSans-Regular.ttf").write_bytes(b"face")
    (copy / "frames" / ".#film.py").write_text("lock file")
    (copy / "frames" / "film-old.py").write_text("X = 1\n")
    (copy / "scratch").mkdir()  # not a package: a wheel would not ship it
    (copy / "scratch" / "try.py").write_text("X = 1\n")
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"junk")
    (copy / "text" / "faces.pyc").write_bytes(b"junk")
    assert modules_digest(copy) == original

    # A new module or subpackage does.
    (copy / "scratch" / "__init__.py").write_text("")
    assert modules_digest(copy) != original
    shutil.rmtree(copy / "scratch")
    assert modules_digest(copy) == original
    (copy / "text" / "extra.py").write_text("X = 1\n")
    assert modules_digest(copy) != original


def test_module_files_are_sorted_posix_paths_of_the_source_package() -> None:
    files = module_files()
    rels = [rel for rel, _ in files]
    assert rels == sorted(rels) and "__init__.py" in rels and "text/faces.py" in rels
    assert not any(rel.startswith("fonts/") for rel in rels)


def test_one_version_in_the_metadata_the_cli_and_the_package() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    # Our own distribution name: `pip install nanoframes` fetches another project.
    assert pyproject["project"]["name"] == "pytest-nanoframes"
    assert "version" not in pyproject["project"]
    assert pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "nanoframes.__version__"}
    assert "Framework :: Pytest" in pyproject["project"]["classifiers"]
    cli = subprocess.run([sys.executable, "-m", "nanoframes", "--version"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert cli == f"nanoframes {nanoframes.__version__}"
    assert importlib.metadata.version("pytest-nanoframes") == nanoframes.__version__
