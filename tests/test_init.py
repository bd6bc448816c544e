"""``nanoframes init`` in an existing repository (issue 30, items 2 and 6): what it
writes, that it keeps pyproject.toml's formatting and comments, never replaces a
file it did not write, changes nothing the second time, and that afterwards a
recording leaves only the ledger (and init's files) for git."""

from __future__ import annotations

from pathlib import Path

import pytest
from scratch_project import git, has_git, new_repo, nf, porcelain, pytest_run, write_film

from nanoframes.adopt import workflow
from nanoframes.config import glob_compositions, load_config

pytestmark = pytest.mark.skipif(not has_git(), reason="git is not installed")

PYPROJECT = """\
# The team's project: keep every comment and the odd spacing
[project]
name    = "films"   # aligned on purpose
version = "1.0"

[tool.ruff]
line-length = 90  # house style

[tool.pytest.ini_options]
testpaths = ["tests"]   # unit tests only, so far
"""


def files_of(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def test_init_sets_a_repository_up_and_says_what_it_wrote(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj", films={}, pyproject=PYPROJECT)
    write_film(root, "intro", folder="films")
    write_film(root, "badge", folder="brand/logos")
    write_film(root, "vendored", folder="node_modules/x")  # not the team's
    (root / "tests").mkdir()
    (root / "tests" / "test_unit.py").write_text("def test_unit():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "films")

    done = nf(root, "init")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "wrote  pyproject.toml: [tool.nanoframes] compositions = ['brand/**/*.nf.svg', "
        "'films/**/*.nf.svg'] (2 compositions), ledger = 'tests/digests.json'",
        "wrote  pyproject.toml: [tool.pytest.ini_options] nf_check = true, "
        "nf_strict = \"edits\", testpaths += ['brand', 'films']",
        "wrote  .gitignore: /.nanoframes/, tests/digests.json.unreadable-*",
        "wrote  .gitattributes: tests/digests.json merge=nanoframes",
        "wrote  .github/workflows/nanoframes.yml: the CI check (docs/ci.md)",
        "enable the ledger's merge driver (once per clone):",
        '  git config merge.nanoframes.driver "nanoframes ledger merge %O %A %B"',
        "then record the ledger and commit it with these files: pytest --nf-record",
    ]
    text = (root / "pyproject.toml").read_text()
    # Every line of the original is still there, in order, comments and spacing included.
    original = PYPROJECT.splitlines()
    kept = [line for line in text.splitlines()
            if line in original or line.startswith("testpaths")]
    assert kept[:len(original) - 2] == original[:-2]
    assert 'testpaths = ["tests", "brand", "films"]   # unit tests only, so far' in text
    # The glob matches exactly the team's compositions.
    config = load_config.__wrapped__(root)
    assert [p.relative_to(root).as_posix() for p in glob_compositions(config)] == [
        "brand/logos/badge.nf.svg", "films/intro.nf.svg"]
    assert (root / workflow.PATH).read_text() == workflow.render(
        workflow.installed_requirement(), "main", project_install=True)

    # The merge driver as printed works in this clone.
    git(root, "config", "merge.nanoframes.driver", "nanoframes ledger merge %O %A %B")
    assert git(root, "check-attr", "merge", "tests/digests.json").strip().endswith(
        "merge: nanoframes")

    # Twice: nothing changes.
    before = files_of(root)
    again = nf(root, "init")
    assert again.returncode == 0
    assert "nothing to do: the project is set up" in again.stdout
    assert not [line for line in again.stdout.splitlines() if line.startswith("wrote")]
    assert files_of(root) == before

    # pytest now checks the compositions (and the unit test), and a recording leaves
    # only the ledger beside what init wrote for git.
    recorded = pytest_run(root, "--nf-record")
    assert recorded.returncode == 0, recorded.stdout
    checked = pytest_run(root)
    assert checked.returncode == 0, checked.stdout
    assert "4 passed" in checked.stdout  # two films, the ledger item, the unit test
    assert porcelain(root) == sorted([
        "?? .gitattributes", "?? .gitignore", "?? .github/workflows/nanoframes.yml",
        " M pyproject.toml", "?? tests/digests.json"])


def test_init_never_replaces_what_it_did_not_write(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj")
    mine = "name: our own nanoframes job\n"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / workflow.PATH).write_text(mine)
    (root / ".gitignore").write_text("*.pyc\n/.nanoframes/")  # no final newline
    with (root / "pyproject.toml").open("a") as fh:
        fh.write('\n[tool.nanoframes]\ncompositions = ["films/*.nf.svg"]  # ours\n')
    done = nf(root, "init")
    assert done.returncode == 0, done.stderr
    assert (root / workflow.PATH).read_text() == mine
    assert "kept   .github/workflows/nanoframes.yml (already there: never overwritten)" \
        in done.stdout
    assert "kept   pyproject.toml: [tool.nanoframes] (already there)" in done.stdout
    assert 'compositions = ["films/*.nf.svg"]  # ours' in (root / "pyproject.toml").read_text()
    assert (root / ".gitignore").read_text().splitlines() == [
        "*.pyc", "/.nanoframes/", "# nanoframes: an unreadable ledger that --force set aside",
        "tests/digests.json.unreadable-*"]


def test_init_in_a_repository_without_a_pyproject_creates_one(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    write_film(root, "a")
    git(root, "init", "-q")
    done = nf(root, "init")
    assert done.returncode == 0, done.stderr
    config = load_config.__wrapped__(root)
    assert config.compositions == ("films/**/*.nf.svg",)
    assert "project_install" not in (root / workflow.PATH).read_text()
    assert "pip install -e ." not in (root / workflow.PATH).read_text()


def test_init_leaves_pytest_settings_where_pytest_reads_them(tmp_path: Path) -> None:
    """A project configuring pytest in tox.ini: a new [tool.pytest.ini_options] in
    pyproject.toml would take over from it, so init says what to add there instead."""
    root = new_repo(tmp_path / "proj", pyproject='[project]\nname = "films"\nversion = "1"\n')
    (root / "tox.ini").write_text("[pytest]\ntestpaths = tests\n")
    done = nf(root, "init")
    assert done.returncode == 0, done.stderr
    assert "add to tox.ini: nf_check = true, nf_strict = edits (pytest reads its settings " \
           "there)" in done.stdout.splitlines()
    text = (root / "pyproject.toml").read_text()
    assert "[tool.nanoframes]" in text and "ini_options" not in text
    assert (root / "tox.ini").read_text() == "[pytest]\ntestpaths = tests\n"
