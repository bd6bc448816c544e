"""Merges are first-class: ``nanoframes ledger merge`` by key (a git merge driver),
and a ledger git left conflict markers in is named as such everywhere, never
overwritten with fewer entries than it held.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from built_once import once
from ledger_edit import reseal
from test_plugin import assert_no_traceback, make_project, write

from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.threeway import merge_entries

KEYS = [f"examples/{name}.nf.svg" for name in "abcd"]
CONFLICT = ("unresolved merge conflict at line {n}: run `nanoframes ledger merge` or resolve it "
            "(mid-merge, base, ours and theirs are `git show :1:{p}`, `:2:`, `:3:`; "
            "`--record --force` merges the two sides)")


def nf(root: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanoframes", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
                           "-c", "init.defaultBranch=main", *args], cwd=root,
                          capture_output=True, text=True, check=check, timeout=60)


def recolor(root: Path, name: str, fill: str) -> None:
    path = root / "examples" / f"{name}.nf.svg"
    path.write_text(path.read_text().replace("#ff0000", fill))


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


def test_merge_by_key_table() -> None:
    base = {"same": 1, "ours-only": 1, "theirs-only": 1, "both-alike": 1, "both-differ": 1,
            "ours-removed": 1, "removed-vs-changed": 1}
    ours = {"same": 1, "ours-only": 2, "theirs-only": 1, "both-alike": 2, "both-differ": 2,
            "removed-vs-changed": 1, "added-ours": 5}
    theirs = {"same": 1, "ours-only": 1, "theirs-only": 3, "both-alike": 2, "both-differ": 3,
              "ours-removed": 1, "added-theirs": 6}
    merged, from_theirs, conflicts = merge_entries(base, ours, theirs)  # type: ignore[arg-type]
    assert merged == {"same": 1, "ours-only": 2, "theirs-only": 3, "both-alike": 2,
                      "both-differ": 2, "added-ours": 5, "added-theirs": 6}
    assert from_theirs == ["added-theirs", "removed-vs-changed", "theirs-only"]
    assert conflicts == ["both-differ"]


@pytest.fixture
def repo(pytester: pytest.Pytester) -> Path:
    """A git repository whose ledger records a, b; branch ``other`` adds c, ``main``
    adds d and updates a: git's line merge conflicts (both add after b), a merge by
    key does not. Built once per session (three recordings), copied for each test."""
    root = pytester.path
    once(root, "test_ledger_merge repo", lambda: _build_repo(pytester), root)
    assert (root / "tests" / "digests.json").exists()
    return root


def _build_repo(pytester: pytest.Pytester) -> None:
    root = pytester.path
    make_project(pytester, names=("a", "b"))
    (root / ".gitattributes").write_text("tests/digests.json merge=nanoframes\n")
    (root / ".gitignore").write_text(".nanoframes/\n")
    assert nf(root, "digest", "--record").returncode == 0
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "other")
    write(pytester, "c")
    assert nf(root, "digest", "--record").returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "other")
    git(root, "checkout", "-q", "main")
    recolor(root, "a", "#00ff00")
    write(pytester, "d")
    assert nf(root, "digest", "--record").returncode == 0
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")


def test_git_merge_with_the_driver_merges_by_key(repo: Path) -> None:
    git(repo, "config", "merge.nanoframes.driver",
        f"{sys.executable} -m nanoframes ledger merge %O %A %B")
    merged = git(repo, "merge", "--no-edit", "other", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "merged .merge_file_" in merged.stdout  # the driver did it
    ledger = repo / "tests" / "digests.json"
    assert "<<<<<<<" not in ledger.read_text()
    assert sorted(read_ledger(ledger).entries) == KEYS
    # Each side's update landed: the merged tree checks clean.
    check = nf(repo, "digest", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert git(repo, "status", "--porcelain").stdout == ""  # no lock or temp file left


def test_a_conflicted_ledger_is_named_by_every_front_end(repo: Path,
                                                         pytester: pytest.Pytester) -> None:
    merged = git(repo, "merge", "-q", "--no-edit", "other", check=False)  # no driver: markers
    assert merged.returncode != 0
    ledger = repo / "tests" / "digests.json"
    text = ledger.read_text()
    n = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith("<<<<<<<"))
    line = f"{ledger}:{n}: error[ledger-conflict]: " \
           f"{CONFLICT.format(n=n, p='tests/digests.json')}"
    for args in (["digest", "--check"], ["digest", "--record"], ["digest", "--all", "--check"],
                 ["digest", "--check", "examples/a.nf.svg"]):
        proc = nf(repo, *args)
        assert (proc.returncode, proc.stderr) == (2, f"nanoframes: {line}\n"), args
    assert ledger.read_text() == text
    for args in (["--nf-check"], ["--nf-record"]):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", *args)
        assert_no_traceback(result)
        result.assert_outcomes(failed=5)  # a, b, c, d and the ledger item
        assert result.stdout.str().count(line) >= 5, args
        assert ledger.read_text() == text

    # --force keeps the unreadable file and merges its two sides by key
    forced = nf(repo, "digest", "--record", "--force")
    assert forced.returncode == 0, forced.stderr
    copies = list(ledger.parent.glob("digests.json.unreadable-*"))
    assert len(copies) == 1 and copies[0].read_text() == text
    assert (f"REPLACED the ledger could not be read (ledger-conflict); kept it as "
            f"{copies[0].name}; merged the two sides of its conflict by key without a base "
            "(none dropped): 4 entries, 1 from theirs\n") in forced.stdout
    assert sorted(read_ledger(ledger).entries) == KEYS


def test_merge_command_on_git_stages(repo: Path) -> None:
    """The driver's own contract: BASE OURS THEIRS, result over OURS; a key changed
    differently on both sides is named, ours kept, exit 1."""
    stages = repo / "stages"
    stages.mkdir()
    for name, rev in (("base", "HEAD~1"), ("ours", "main"), ("theirs", "other")):
        (stages / name).write_text(git(repo, "show", f"{rev}:tests/digests.json").stdout)
    ours_a = read_ledger(stages / "ours").entries["examples/a.nf.svg"]
    doc = json.loads((stages / "theirs").read_text())
    doc["compositions"]["examples/a.nf.svg"]["digest"] = "0" * 64  # theirs changed a too
    reseal(doc["compositions"]["examples/a.nf.svg"])
    (stages / "theirs").write_text(json.dumps(doc))
    proc = nf(repo, "ledger", "merge", "stages/base", "stages/ours", "stages/theirs")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        "CONFLICT examples/a.nf.svg: changed differently on both sides; kept ours "
        "(re-record it: `nanoframes digest --record examples/a.nf.svg`)",
        "merged stages/ours: 4 entries, 1 from theirs, 1 conflict",
    ]
    merged = read_ledger(stages / "ours").entries
    assert merged["examples/a.nf.svg"] == ours_a
    assert sorted(merged) == KEYS


@pytest.mark.parametrize("base", ["/dev/null", "missing.json"])
def test_partial_ledgers_merge_onto_an_empty_base(pytester: pytest.Pytester, base: str) -> None:
    make_project(pytester, names=("a", "b"))
    root = pytester.path
    assert nf(root, "digest", "--record", "examples/a.nf.svg", "--ledger", "shard-1.json"
              ).returncode == 0
    assert nf(root, "digest", "--record", "examples/b.nf.svg", "--ledger", "shard-2.json"
              ).returncode == 0
    proc = nf(root, "ledger", "merge", base, "shard-1.json", "shard-2.json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "merged shard-1.json: 2 entries, 1 from theirs, 0 conflicts\n"
    (root / "tests" / "digests.json").write_bytes((root / "shard-1.json").read_bytes())
    assert nf(root, "digest", "--check").returncode == 0


def test_merge_refuses_an_unreadable_side_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "ours.json").write_text('{"version": 1, "compositions": {}}\n')
    (tmp_path / "theirs.json").write_text('{\n<<<<<<< HEAD\n}\n')
    proc = nf(tmp_path, "ledger", "merge", "/dev/null", "ours.json", "theirs.json",
              env=dict(os.environ))
    assert proc.returncode == 2
    assert proc.stderr == f"nanoframes: theirs.json:2: error[ledger-conflict]: " \
                          f"{CONFLICT.format(n=2, p='theirs.json')}\n"
    assert (tmp_path / "ours.json").read_text() == '{"version": 1, "compositions": {}}\n'
