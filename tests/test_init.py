"""``nanoframes init`` in an existing repository (issue 30, items 2 and 6): what it
writes, that it keeps pyproject.toml's formatting and comments, never replaces a
file it did not write, changes nothing the second time, and that afterwards a
recording leaves only the ledger (and init's files) for git."""

from __future__ import annotations

from pathlib import Path

import pytest
from scratch_project import TINY, git, has_git, new_repo, nf, porcelain, pytest_run, write_film

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
    installed = workflow.requirement_here()
    assert done.stdout.splitlines() == [
        "wrote  pyproject.toml: [tool.nanoframes] compositions = ['brand/**/*.nf.svg', "
        "'films/**/*.nf.svg'] (2 compositions), ledger = 'tests/digests.json'",
        "wrote  pyproject.toml: [tool.pytest.ini_options] nf_check = true, "
        "nf_strict = \"edits\", testpaths += ['brand', 'films']",
        "wrote  .gitignore: /.nanoframes/, /nanoframes-report/, tests/digests.json.unreadable-*",
        "wrote  .gitattributes: tests/digests.json merge=nanoframes",
        "wrote  .github/workflows/nanoframes.yml: the CI check of pushes to main and of pull "
        "requests (docs/ci.md)",
        *([f"note   {installed.note}"] if installed.note else []),
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
    # Two top-level folders of films and no package: pip would refuse `pip install -e .`,
    # so the workflow only says when to add it.
    assert (root / workflow.PATH).read_text() == workflow.render(
        installed.line, "main", project_install=False)
    assert workflow.NO_PROJECT_INSTALL in (root / workflow.PATH).read_text()

    # The merge driver as printed works in this clone.
    git(root, "config", "merge.nanoframes.driver", "nanoframes ledger merge %O %A %B")
    assert git(root, "check-attr", "merge", "tests/digests.json").strip().endswith(
        "merge: nanoframes")

    # Twice: nothing changes, and the merge driver, enabled now, is not asked for again.
    before = files_of(root)
    again = nf(root, "init")
    assert again.returncode == 0
    assert "nothing to do: the project is set up" in again.stdout
    assert "merge driver" not in again.stdout
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
        "*.pyc", "/.nanoframes/", "# nanoframes: the report the CI workflow writes (docs/ci.md)",
        "/nanoframes-report/", "# nanoframes: an unreadable ledger that --force set aside",
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
    assert workflow.PROJECT_INSTALL not in (root / workflow.PATH).read_text()


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


def test_init_takes_the_branch_from_git(tmp_path: Path) -> None:
    """Issue 43, item 2: the branch checked out (one with no commit yet included), else
    the one origin/HEAD names; said in the line that wrote the workflow."""
    root = tmp_path / "proj"
    write_film(root, "a")
    git(root, "init", "-q", "-b", "master")
    done = nf(root, "init")
    assert done.returncode == 0, done.stderr
    assert "branches: [master]" in (root / workflow.PATH).read_text()
    assert "the CI check of pushes to master" in done.stdout
    # A detached clone: origin/HEAD's branch.
    git(root, "add", "-A")
    git(root, "commit", "-qm", "films")
    git(root, "branch", "-m", "master", "trunk")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(root), str(clone))
    git(clone, "checkout", "-q", "--detach")
    (clone / workflow.PATH).unlink()
    assert nf(clone, "init").returncode == 0
    assert "branches: [trunk]" in (clone / workflow.PATH).read_text()
    # Neither: main, and a line saying so.
    git(clone, "remote", "remove", "origin")
    (clone / workflow.PATH).unlink()
    done = nf(clone, "init")
    assert "branches: [main]" in (clone / workflow.PATH).read_text()
    assert any(line.startswith("note   the workflow checks pushes to main: no branch")
               for line in done.stdout.splitlines()), done.stdout


@pytest.mark.parametrize("layout, installs", [
    ({"films/a.nf.svg": None, "brand/b.nf.svg": None}, False),  # films only: pip refuses
    ({"films/a.nf.svg": None, "films_pkg/__init__.py": ""}, False),  # two top-level names
    ({"films/__init__.py": "", "films/a.nf.svg": None}, True),  # named after the project
    ({"src/lib/__init__.py": "", "art/a.nf.svg": None}, True),  # a src layout
    ({"tool/__init__.py": "", "tests/test_x.py": ""}, True),  # the one package found
])
def test_init_installs_the_project_only_when_it_is_a_package(
        tmp_path: Path, layout: dict, installs: bool) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "films"\nversion = "1"\n')
    for name, text in layout.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else TINY.format(fill="#cc0000"))
    git(root, "init", "-q", "-b", "main")
    assert nf(root, "init").returncode == 0
    text = (root / workflow.PATH).read_text()
    assert (workflow.PROJECT_INSTALL in text) is installs
    assert (workflow.NO_PROJECT_INSTALL in text) is not installs


def test_the_install_line_follows_how_nanoframes_was_installed(tmp_path: Path) -> None:
    """Issue 43, item 2: a git URL and commit as pip recorded them; an archive's URL;
    a local wheel to commit beside the workflow; a local checkout's origin and commit;
    else a placeholder, never silently: each with the one line init prints."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    git_install = workflow.from_direct_url({
        "url": "https://example.org/team/nanoframes.git",
        "vcs_info": {"vcs": "git", "commit_id": commit}})
    assert git_install == workflow.Requirement(
        f"pytest-nanoframes @ git+https://example.org/team/nanoframes.git@{commit}")
    archive = workflow.from_direct_url({
        "url": "https://example.org/w/pytest_nanoframes-0.1.0-py3-none-any.whl",
        "archive_info": {}})
    assert archive.line == ("pytest-nanoframes @ "
                            "https://example.org/w/pytest_nanoframes-0.1.0-py3-none-any.whl")
    assert archive.note is None
    wheel = workflow.from_direct_url({
        "url": "file:///tmp/dist/pytest_nanoframes-0.1.0-py3-none-any.whl", "archive_info": {}})
    assert wheel.line == "ci/pytest_nanoframes-0.1.0-py3-none-any.whl"
    assert wheel.note.startswith("the workflow installs the wheel you installed from "
                                 "ci/pytest_nanoframes-0.1.0-py3-none-any.whl: copy "
                                 "/tmp/dist/pytest_nanoframes-0.1.0-py3-none-any.whl there")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git(checkout, "init", "-q")
    (checkout / "f").write_text("x")
    git(checkout, "add", "f")
    git(checkout, "commit", "-qm", "x")
    head = git(checkout, "rev-parse", "HEAD").strip()
    lonely = workflow.from_direct_url({"url": checkout.as_uri(), "dir_info": {}})
    assert "OWNER" in lonely.line and "which CI cannot reach" in lonely.note
    git(checkout, "remote", "add", "origin", "https://example.org/team/nanoframes.git")
    local = workflow.from_direct_url({"url": checkout.as_uri(),
                                      "dir_info": {"editable": True}})
    assert local.line == f"pytest-nanoframes @ git+https://example.org/team/nanoframes.git@{head}"
    assert local.note.startswith("the workflow installs pytest-nanoframes from "
                                 f"https://example.org/team/nanoframes.git at {head[:12]}")
