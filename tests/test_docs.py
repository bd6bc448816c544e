"""The examples in README.md and docs/ cannot go stale: every shell session
shown with its output runs here, in a scratch copy of the examples, and must
print what the page shows (tests/doc_sessions.py has the rules)."""

from __future__ import annotations

import doctest
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from doc_sessions import blocks, commands, output_matches

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(p for p in [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
                            *(ROOT / "docs").rglob("*.md")] if p.is_file())
# variables that change what a command does or prints, from the host or from CI
_SCRUB = ("CI", "GITHUB_ACTIONS", "EXCUSED_COMPOSITIONS", "PYTEST_ADDOPTS", "COLUMNS")


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in _SCRUB and not k.startswith(("NANOFRAMES_", "PYTEST_XDIST"))}
    env["NANOFRAMES_CACHE_DIR"] = str(scratch / ".frame-cache")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTEST_ADDOPTS"] = "-p no:randomly"  # a page's pytest runs keep their shown order
    # for hidden setup that edits a ledger by hand: python "$DOCTEST_HELPERS/ledger_edit.py"
    env["DOCTEST_HELPERS"] = str(ROOT / "tests")
    return env


def _scratch_project(tmp: Path) -> Path:
    """A copy of this project's examples, configuration and ledger."""
    root = tmp / "project"
    shutil.copytree(ROOT / "examples", root / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tests").mkdir()
    shutil.copy2(ROOT / "tests" / "digests.json", root / "tests" / "digests.json")
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def ledger_is_behind_the_code() -> bool:
    """Whether the committed ledger was recorded by other nanoframes modules than
    these (every code change moves them: the examples then read
    ``changed (toolchain)`` until the ledger is re-recorded)."""
    from nanoframes.determinism.identity import toolchain_parts

    modules = toolchain_parts(False, load_engine=False)["modules"]
    entries = json.loads((ROOT / "tests" / "digests.json").read_text())["compositions"]
    return any(e.get("toolchain_parts", {}).get("modules") != modules
               for e in entries.values())


def _run(cmd, cwd: Path, env: dict[str, str], tmp: Path):
    """Run one command where the page stands; ``cd DIR`` moves the page instead."""
    if cmd.command.startswith("cd "):
        return (cwd / cmd.command[3:].strip()).resolve(), None
    done = subprocess.run(["bash", "-c", cmd.command], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=600)
    return cwd, done


def _pages_with_sessions() -> list[Path]:
    return [p for p in PAGES if any(b.is_session for b in blocks(p.read_text("utf-8")))]


# Over 10 s for the longest pages (pytest-plugin.md, digest.md): each runs every shell
# session it shows, pytest runs included, one after another in its scratch project.
@pytest.mark.parametrize("page", _pages_with_sessions(),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_session_shown_prints_what_the_page_shows(page: Path, tmp_path: Path) -> None:
    cwd = _scratch_project(tmp_path)
    env = _env(tmp_path)
    problems: list[str] = []
    unchecked: list[str] = []
    behind = None
    name = page.relative_to(ROOT).as_posix()
    page_blocks = blocks(page.read_text("utf-8"))
    for block in page_blocks:  # the page's files first: a session may come before its file
        if block.marker == "file":
            target = cwd / block.argument
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text)
    for block in page_blocks:
        if block.marker == "setup":
            for cmd in commands(block):
                cwd, done = _run(cmd, cwd, env, tmp_path)
                assert done is None or done.returncode == 0, (
                    f"{name}:{cmd.line}: setup failed: $ {cmd.command}\n{done.stdout}")
            continue
        if not block.is_session:
            continue
        if block.marker == "skip":
            assert block.argument, f"{name}:{block.line}: a skipped session says why"
            continue
        if block.marker == "ledger":
            behind = ledger_is_behind_the_code() if behind is None else behind
        for cmd in commands(block):
            cwd, done = _run(cmd, cwd, env, tmp_path)
            if done is None:
                continue
            actual = done.stdout.replace(str(tmp_path), "/tmp/...").splitlines()
            if cmd.expected and cmd.expected[-1].startswith("[exit "):  # the status is shown
                actual.append(f"[exit {done.returncode}]")
            if output_matches(cmd.expected, actual):
                continue
            where = f"{name}:{cmd.line}: $ {cmd.command}"
            if block.marker == "ledger" and behind:
                unchecked.append(where)
                continue
            problems.append(f"{where}\n--- shown\n" + "\n".join(cmd.expected)
                            + "\n--- printed\n" + "\n".join(actual))
    assert not problems, "\n\n".join(problems)
    if unchecked:
        pytest.xfail("the ledger is behind the code (re-record it: CONTRIBUTING.md), so "
                     "these sessions could not be checked: " + "; ".join(unchecked))


def test_the_reader_elides_what_moves() -> None:
    from doc_sessions import Block

    assert output_matches(["modules  ...", "..."], ["modules  4f16eb", "a", "b"])
    assert output_matches(["a", "...", "z"], ["a", "z"])
    assert not output_matches(["a", "z"], ["a", "b", "z"])
    assert not output_matches(["MATCH x: match"], ["CHANGED x: changed"])
    block = Block(10, "$ echo a \\\nb\nout\n\n$ true\n")
    assert [(c.line, c.command, c.expected) for c in commands(block)] == [
        (11, "echo a \\\nb", ["out"]), (15, "true", [])]


def test_hidden_setup_and_files_are_read_where_they_stand() -> None:
    page = """intro

<!-- doctest: file demo/a.txt
hidden text
-->

- a list item:
  <!-- doctest: setup
  $ cd demo
  $ touch b
  -->
  ```
  $ ls
  a.txt
  b
  ```
<!-- doctest: file demo/c.toml -->
```toml
[x]
```
"""
    found = blocks(page)
    assert [(b.marker, b.argument, b.line) for b in found] == [
        ("file", "demo/a.txt", 3), ("setup", "", 8), (None, "", 12), ("file", "demo/c.toml", 18)]
    assert found[0].text == "hidden text\n"
    assert [c.command for c in commands(found[1])] == ["cd demo", "touch b"]
    assert [c.expected for c in commands(found[2])] == [["a.txt", "b"]]
    assert not found[1].is_session  # its output is never compared


def _pages_with_python() -> list[Path]:
    return [p for p in PAGES if any(b.is_python_session for b in blocks(p.read_text("utf-8")))]


@pytest.mark.parametrize("page", _pages_with_python(),
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_python_session_prints_what_the_page_shows(page: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``>>>`` sessions of a page, run in order with one namespace (a later block
    uses what an earlier one defined), in the scratch project."""
    cwd = _scratch_project(tmp_path)
    for key, value in _env(tmp_path).items():
        monkeypatch.setenv(key, value)
    for key in _SCRUB:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(cwd)
    name = page.relative_to(ROOT).as_posix()
    namespace: dict = {}
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    problems, behind = [], None
    for block in blocks(page.read_text("utf-8")):
        if not block.is_python_session or block.marker == "skip":
            assert block.marker != "skip" or block.argument, f"{name}:{block.line}: say why"
            continue
        test = doctest.DocTestParser().get_doctest(block.text, namespace, f"{name}:{block.line}",
                                                   str(page), block.line)
        report = io.StringIO()
        failed = runner.run(test, out=report.write, clear_globs=False).failed
        namespace = test.globs  # DocTest works on a copy: the next block goes on from it
        if not failed:
            continue
        if block.marker == "ledger":
            behind = ledger_is_behind_the_code() if behind is None else behind
            if behind:
                continue
        problems.append(report.getvalue())
    assert not problems, "\n".join(problems)
