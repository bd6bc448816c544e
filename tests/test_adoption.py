"""Adopting nanoframes in a project of one's own (issue 30): only the ledger lands
in git, and nothing silently checks nothing.

Each test is a scratch git repository driven by the commands a user types.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scratch_project import PYPROJECT, has_git, new_repo, nf, porcelain, pytest_run

pytestmark = pytest.mark.skipif(not has_git(), reason="git is not installed")

CONFIGURED = PYPROJECT + """
[tool.nanoframes]
compositions = ["films/**/*.nf.svg"]
"""


def test_recording_leaves_only_the_ledger_for_git(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj", pyproject=CONFIGURED)
    done = nf(root, "digest", "--all", "--record")
    assert done.returncode == 0, done.stdout + done.stderr
    # The lock and the frame store went to .nanoframes/, which ignores itself.
    assert (root / ".nanoframes" / "locks" / "tests" / "digests.json.lock").is_file()
    assert any((root / ".nanoframes" / "store").rglob("*.png"))
    assert porcelain(root) == ["?? tests/digests.json"]
    # pytest records (and checks) the same way: still only the ledger.
    (root / "films" / "a.nf.svg").write_text(
        (root / "films" / "a.nf.svg").read_text().replace("#cc0000", "#00cc00"))
    done = pytest_run(root, "--nf-record")
    assert done.returncode == 0, done.stdout + done.stderr
    done = pytest_run(root, "--nf-check", "--nf-strict")
    assert done.returncode == 0, done.stdout + done.stderr
    assert porcelain(root) == [" M films/a.nf.svg", "?? tests/digests.json"]


def test_configured_compositions_without_a_check_say_so_in_the_header(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj", pyproject=CONFIGURED)
    done = pytest_run(root)
    header = [line for line in done.stdout.splitlines() if line.startswith("nanoframes")]
    assert header == ["nanoframes: 2 compositions configured ([tool.nanoframes] compositions) "
                      "but not checked: set nf_check = true in [tool.pytest.ini_options] "
                      "or pass --nf-check"], done.stdout
    # Enabled: the header is the usual one, and the items are collected.
    done = pytest_run(root, "--nf-check")
    assert "but not checked" not in done.stdout
    assert "films/a.nf.svg" in done.stdout, done.stdout


def test_an_unconfigured_project_gets_no_nanoframes_line(tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj", films={})
    (root / "tests").mkdir()
    (root / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    done = pytest_run(root)
    assert done.returncode == 0, done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("nanoframes")]


def test_a_glob_that_matches_nothing_while_the_ledger_holds_entries_is_an_error(
        tmp_path: Path) -> None:
    root = new_repo(tmp_path / "proj", pyproject=CONFIGURED)
    assert nf(root, "digest", "--all", "--record").returncode == 0
    # The compositions move; the configured glob is not updated.
    (root / "films").rename(root / "movies")
    done = nf(root, "digest", "--all", "--check")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        f"nanoframes: {root / 'pyproject.toml'}: error[no-compositions]: the compositions "
        "glob films/**/*.nf.svg matches no composition, but the ledger tests/digests.json "
        "holds 2 entries it would check: films/a.nf.svg, films/b.nf.svg"]
    assert nf(root, "digest", "--all", "--record").returncode == 2
    # Explicit paths are not the glob: they still work.
    done = nf(root, "digest", "--check", "movies/a.nf.svg")
    assert done.returncode == 1 and "ABSENT movies/a.nf.svg" in done.stdout
