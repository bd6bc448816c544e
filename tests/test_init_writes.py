"""Writes stay where they belong (issue 42, item 5): ``init`` never writes through a
symbolic link or into a file that is not a regular one, never blocks on a FIFO nor
reads ``/dev/zero``; it refuses values of the wrong kind in pyproject.toml with one
line; its globs match folders named with glob characters. ``store --prune`` deletes
nothing through a link. Artifact folders stay inside ``--nf-artifacts`` whatever a
pytest node id holds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scratch_project import nf as nf_plain
from scratch_project import pytest_run, write_film
from test_bounded_inputs import nf, no_traceback, one_error

from nanoframes.adopt.project import globs_for, init
from nanoframes.config import glob_compositions, load_config
from nanoframes.errors import NanoframesError
from nanoframes.evidence.artifacts import folder_of, inside

SECRET = "API_TOKEN=do-not-commit\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write_film(root, "intro", folder="films")
    (root / "pyproject.toml").write_text('[project]\nname = "films"\n')
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes", "pyproject.toml"])
def test_init_refuses_a_file_linked_to_one_outside(repo: Path, tmp_path: Path,
                                                   name: str) -> None:
    outside = tmp_path / "secret.env"
    outside.write_text(SECRET)
    target = repo / name
    target.unlink(missing_ok=True)
    target.symlink_to(outside)
    before = snapshot(repo)
    with pytest.raises(NanoframesError) as caught:
        init(repo)
    assert caught.value.code == "init-not-regular" and "symbolic link" in str(caught.value)
    assert outside.read_text() == SECRET and target.is_symlink()
    assert snapshot(repo) == before  # nothing else written either: refused before writing


def test_init_refuses_a_github_folder_linked_outside(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / ".github").symlink_to(elsewhere)
    with pytest.raises(NanoframesError) as caught:
        init(repo)
    assert caught.value.code == "init-not-regular"
    assert Path(caught.value.file).name == ".github"
    assert list(elsewhere.iterdir()) == []


def test_init_neither_blocks_on_a_fifo_nor_reads_dev_zero(repo: Path) -> None:
    os.mkfifo(repo / ".gitignore")
    line = one_error(nf(repo, "init", timeout=60), "init-not-regular")
    assert ".gitignore" in line and "not a regular file" in line
    (repo / ".gitignore").unlink()
    (repo / ".gitattributes").symlink_to("/dev/zero")
    one_error(nf(repo, "init", timeout=60), "init-not-regular")
    (repo / ".gitattributes").unlink()
    os.mkfifo(repo / "tox.ini")  # read only to find pytest's settings: skipped, not waited on
    done = nf(repo, "init", timeout=120)
    no_traceback(done)
    assert done.returncode == 0 and "wrote  .gitignore" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("toml", [
    'tool = 1\n',
    '[tool]\nnanoframes = "yes"\n',
    '[tool.nanoframes]\ncompositions = 5\n',
    '[tool.nanoframes]\nledger = ["a"]\n',
    '[tool]\npytest = 3\n',
    '[tool.pytest]\nini_options = "x"\n',
])
def test_init_refuses_values_of_the_wrong_kind_with_one_line(repo: Path, toml: str) -> None:
    (repo / "pyproject.toml").write_text(toml)
    line = one_error(nf(repo, "init", timeout=120), "config-invalid")
    assert "pyproject.toml" in line
    assert (repo / "pyproject.toml").read_text() == toml and not (repo / ".gitignore").exists()


def test_init_globs_match_folders_named_with_glob_characters(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for folder in ("shots[1]", "a*b", "what?"):
        write_film(root, "f", folder=folder)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    setup = init(root)
    config = load_config(root)
    found = [p.relative_to(root).as_posix() for p in glob_compositions(config)]
    assert found == sorted(setup.compositions) == ["a*b/f.nf.svg", "shots[1]/f.nf.svg",
                                                   "what?/f.nf.svg"]
    assert globs_for(["x[y]/z.nf.svg"]) == ["x[[]y]/**/*.nf.svg"]
    text = (root / "pyproject.toml").read_text()
    assert '"shots[1]"' in text and '"a*b"' in text  # testpaths: the folders themselves


# --- store --prune never follows a link -----------------------------------------------

def _ledger_project(root: Path) -> None:
    write_film(root, "a", folder="films")
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["films/*.nf.svg"]\n')
    done = nf_plain(root, "digest", "--record")
    assert done.returncode == 0, done.stdout + done.stderr


def test_prune_deletes_nothing_through_a_linked_store(tmp_path: Path) -> None:
    root = tmp_path / "p"
    _ledger_project(root)
    outside = tmp_path / "outside"
    victim = outside / "ab" / f"{'ab' * 32}.png"
    victim.parent.mkdir(parents=True)
    victim.write_bytes(b"someone else's file")
    store = root / ".nanoframes" / "store"
    linked = store / "ab"
    linked.symlink_to(outside / "ab")  # a folder of the store that is a link
    done = nf(root, "store", "--prune")
    no_traceback(done)
    assert done.returncode == 0 and victim.is_file(), done.stdout + done.stderr
    os.rename(store, tmp_path / "real-store")
    store.symlink_to(outside)  # the store itself a link
    line = one_error(nf(root, "store", "--prune"), "store-linked")
    assert "store" in line and victim.is_file()
    store.unlink()
    (root / ".nanoframes").rename(tmp_path / "state")
    (root / ".nanoframes").symlink_to(tmp_path / "state")  # a folder on the way
    one_error(nf(root, "store", "--prune"), "store-linked")


def test_recording_writes_nothing_through_a_linked_store_folder(tmp_path: Path) -> None:
    """Every folder the store makes (``ab/``, ``inputs/``), committed as a link to a
    folder outside: a recording writes nothing there, and says why."""
    root = tmp_path / "p"
    write_film(root, "a", folder="films")
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = ["films/*.nf.svg"]\n')
    outside = tmp_path / "outside"
    outside.mkdir()
    store = root / ".nanoframes" / "store"
    store.mkdir(parents=True)
    for n in range(256):
        (store / f"{n:02x}").symlink_to(outside)
    (store / "inputs").symlink_to(outside)
    done = nf(root, "digest", "--record")
    no_traceback(done)
    assert done.returncode == 0, done.stdout + done.stderr  # the ledger is written
    assert "error[store-linked]" in done.stdout + done.stderr, done.stdout + done.stderr
    assert list(outside.iterdir()) == []
    assert (root / "tests" / "digests.json").is_file()


# --- artifact folders -----------------------------------------------------------------

@pytest.mark.parametrize("key", [
    "tests/t.py::test_p[../../../../outside]", "tests/t.py::test_p[/etc/x]",
    "../outside/x.nf.svg", "/abs/x.nf.svg", "a/./../b", "..", "", "x" * 5000,
    "tests/t.py::test_p[\x1b]0;title\x07]", "films/\x9b2J.nf.svg",
])
def test_an_artifact_folder_is_inside_whatever_the_key(tmp_path: Path, key: str) -> None:
    folder = folder_of(key)
    parts = folder.split("/")
    assert all(p and p not in (".", "..") and len(p.encode()) <= 200 for p in parts)
    assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in folder)
    path = inside(tmp_path / "art", folder)
    assert path.is_relative_to(tmp_path / "art")
    assert folder_of("examples/a b[1].nf.svg") == "examples/a b[1].nf.svg"  # a file: as is


PARAMETRIZED = """
import pytest

@pytest.mark.parametrize("where", ["../../../../../../escaped", "plain"])
def test_drawn(nf, where):
    nf.check(open("films/a.nf.svg").read().replace("#cc0000", "{fill}"))
"""


def test_a_parametrized_node_id_with_dot_dot_writes_inside_the_artifacts(
        tmp_path: Path) -> None:
    root = tmp_path / "deep" / "er" / "p"
    write_film(root, "a", folder="films")
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\ncompositions = []\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    (root / "tests").mkdir()
    test = root / "tests" / "test_drawn.py"
    test.write_text(PARAMETRIZED.replace("{fill}", "#cc0000"))
    done = pytest_run(root, "--nf-record")
    assert done.returncode == 0, done.stdout
    test.write_text(PARAMETRIZED.replace("{fill}", "#00cc00"))
    # outside the project only the cache folder the run names may change (the check's
    # key for its pending readings lands there: determinism/origin.py)
    cache = root.parent / "p-cache"

    def outside() -> set[Path]:
        return {p for p in tmp_path.rglob("*")
                if not p.is_relative_to(root) and not p.is_relative_to(cache)}
    before = outside()
    done = pytest_run(root, "--nf-check", "--nf-artifacts", "art")
    assert "Traceback" not in done.stdout
    assert outside() == before
    manifest = json.loads((root / "art" / "manifest.json").read_text())
    written = [f["expected"] for f in manifest["files"]]
    assert written and all((root / "art" / name).is_file() for name in written)
    assert any("/test_drawn_../__/__/__/__/__/escaped_/" in name for name in written), written
    assert not [p for p in root.rglob("*.png") if not p.is_relative_to(root / "art")
                and ".nanoframes" not in p.parts]
