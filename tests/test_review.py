"""``nanoframes review`` through a real pseudo-terminal (pexpect): each pending
reading shown, then accepted, rejected, skipped or opened in the report; a
regression asks twice; a reading under another toolchain offers a platform entry."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pexpect
import pytest
from built_once import once
from scratch_project import env, nf, write_film
from test_hints import cli_project, other_build, other_machine, recorded_cli_project  # noqa: F401 - fixture

CHOICES = r"\[q\]uit\? "


def spawn(root: Path, *args: str, **extra: str) -> pexpect.spawn:
    child = pexpect.spawn(sys.executable, ["-m", "nanoframes", "review", *args], cwd=str(root),
                          env=env(root, **extra), encoding="utf-8", timeout=120)
    child.logfile_read = sys.stdout  # shown by pytest when a test fails
    return child


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def entries(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())["compositions"]


def pending(root: Path) -> dict:
    path = root / ".nanoframes" / "pending" / "readings.json"
    return json.loads(path.read_text())["readings"]


def test_accept_one_reject_one_open_the_report(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    write_film(root, "a", "#00cc00")
    write_film(root, "b", "#00cccc")
    assert nf(root, "digest", "--check", "--html", "report.html").returncode == 1
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho \"$1\" > {opened}\n")
    browser.chmod(0o755)
    child = spawn(root, BROWSER=str(browser))
    child.expect(r"\(1/2\)")
    child.expect("CHANGED films/a.nf.svg: changed, source changed")
    child.expect("pixels: 2 of 2 frames differ")
    child.expect(CHOICES)
    child.send("o")
    child.expect("opening (file://[^\r\n]+)")
    link = child.match.group(1)
    assert link.endswith("report.html#k-films-a.nf.svg")
    child.expect(CHOICES)
    child.send("a")
    child.expect("accepted films/a.nf.svg: changed, source changed")
    child.expect(r"\(2/2\)")
    child.expect("CHANGED films/b.nf.svg")
    child.expect(CHOICES)
    child.send("r")
    child.expect("rejected films/b.nf.svg")
    child.expect("1 accepted, 1 rejected, 0 skipped")
    assert finish(child) == 0
    page = (root / "report.html").read_text()
    assert 'id="k-films-a.nf.svg"' in page
    for _ in range(100):
        if opened.exists():
            break
        time.sleep(0.1)
    assert opened.read_text().strip() == link  # the browser was asked for that section
    assert pending(root) == {}
    done = nf(root, "digest", "--check")
    assert "MATCH films/a.nf.svg" in done.stdout and "CHANGED films/b.nf.svg" in done.stdout


def test_a_regression_asks_twice(tmp_path: Path) -> None:
    root = recorded_cli_project(tmp_path)
    before = entries(root)["films/a.nf.svg"]["digest"]
    done = other_machine(root, "digest", "--check", "films/a.nf.svg")
    assert "REGRESSION" in done.stdout, done.stdout
    child = spawn(root)
    child.expect("REGRESSION films/a.nf.svg")
    child.expect(CHOICES)
    child.send("a")
    child.expect("Accept it anyway\\? type yes: ")
    child.sendline("y")  # not the explicit word: nothing written
    child.expect("left pending films/a.nf.svg")
    assert finish(child) == 0
    assert entries(root)["films/a.nf.svg"]["digest"] == before
    child = spawn(root)
    child.expect(CHOICES)
    child.send("a")
    child.expect("type yes: ")
    child.sendline("yes")
    child.expect("accepted films/a.nf.svg")
    assert finish(child) == 0
    assert entries(root)["films/a.nf.svg"]["digest"] != before


def test_another_toolchain_offers_a_platform_entry(tmp_path: Path,
                                                   other_build: Path) -> None:  # noqa: F811
    root = recorded_cli_project(tmp_path)
    two = {"NANOFRAMES_PLATFORM": "linux-two", "NANOFRAMES_LIBTHORVG": str(other_build)}
    done = other_machine(root, "digest", "--check", "films/a.nf.svg", **two)
    assert "CHANGED films/a.nf.svg" in done.stdout and "toolchain" in done.stdout, done.stdout
    child = spawn(root, **two)
    child.expect(CHOICES)
    child.send("a")
    child.expect(r"platform entry linux-two beside the primary instead\? \[y/N\] ")
    child.send("y")
    child.expect("accepted films/a.nf.svg \\(platform entry linux-two\\)")
    assert finish(child) == 0
    assert list(entries(root)["films/a.nf.svg"]["platforms"]) == ["linux-two"]
    done = other_machine(root, "digest", "--check", "films/a.nf.svg", **two)
    assert done.returncode == 0 and "MATCH films/a.nf.svg" in done.stdout, done.stdout
    assert nf(root, "digest", "--check").returncode == 0  # the primary untouched


def test_without_a_terminal_it_names_accept(tmp_path: Path) -> None:
    root = cli_project(tmp_path / "p")
    done = nf(root, "review")
    assert done.returncode == 2 and "nanoframes accept KEY" in done.stderr


@pytest.fixture(autouse=True)
def _no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)


def test_review_what_ci_saw(tmp_path: Path, other_build: Path) -> None:  # noqa: F811
    """review --from a CI run's artifacts: shown, accepted as the runner's platform
    entry; the artifacts and this clone's own pending readings stay as they were."""
    root = recorded_cli_project(tmp_path)
    ci = tmp_path / "ci"
    shutil.copytree(root, ci)
    runner = {"NANOFRAMES_PLATFORM": "linux-ci", "NANOFRAMES_LIBTHORVG": str(other_build)}
    done = other_machine(ci, "digest", "--check", "films/a.nf.svg", "--artifacts", "art",
                         "--html", "art/index.html", **runner)
    assert done.returncode == 1, done.stdout + done.stderr
    child = spawn(root, "--from", str(ci / "art"))
    child.expect("CHANGED films/a.nf.svg")
    child.expect("read on linux-ci")
    child.expect(CHOICES)
    child.send("a")  # another renderer build than the primary's: the runner's entry
    child.expect(r"accepted films/a.nf.svg \(platform entry linux-ci\)")
    assert finish(child) == 0
    assert list(entries(root)["films/a.nf.svg"]["platforms"]) == ["linux-ci"]
    assert "films/a.nf.svg" in json.loads(
        (ci / "art" / "pending" / "readings.json").read_text())["readings"]


def _ci_artifacts(tmp_path: Path) -> tuple[Path, Path]:
    """A recorded project, and a CI run's artifacts (with its page) of a check where
    a.nf.svg CHANGED (the same edit made here, so it is not stale)."""
    once(tmp_path, "test_review ci artifacts", lambda: _ci_artifacts_into(tmp_path), tmp_path)
    return tmp_path / "p", tmp_path / "ci" / "art"


def _ci_artifacts_into(tmp_path: Path) -> None:
    """Built once per session and copied (tests/built_once.py), with each machine's key."""
    root = cli_project(tmp_path / "p")
    assert nf(root, "digest", "--record").returncode == 0
    ci = tmp_path / "ci"
    shutil.copytree(root, ci)
    for project in (ci, root):
        write_film(project, "a", "#00cc00")
    done = nf(ci, "digest", "--check", "films/a.nf.svg", "--artifacts", "art",
              "--html", "art/index.html")
    assert done.returncode == 1, done.stdout + done.stderr


def test_review_shows_what_it_computed_never_the_artifacts_line(tmp_path: Path) -> None:
    """The reading says MATCH after clearing the screen; review shows the CHANGED it
    computes against this ledger from the verified frames, and prints no escape."""
    root, art = _ci_artifacts(tmp_path)
    path = art / "pending" / "readings.json"
    doc = json.loads(path.read_text())
    verdict = doc["readings"]["films/a.nf.svg"]["verdict"]
    verdict["line"] = "\x1b[2J\x1b[HMATCH films/a.nf.svg: match (nothing to review: press a)"
    verdict["evidence"] = {"summary": "\x1b]52;c;cHduZWQ=\x07nothing differs"}
    path.write_text(json.dumps(doc))
    child = spawn(root, "--from", str(art))
    child.expect("CHANGED films/a.nf.svg: changed, source changed")
    child.expect("pixels: 2 of 2 frames differ")  # from the frames, decoded and hashed
    child.expect(CHOICES)
    seen = child.before
    child.send("s")
    assert finish(child) == 0
    assert "\x1b" not in seen and "MATCH" not in seen and "nothing differs" not in seen


def test_open_gives_the_browser_only_a_page_inside_the_artifacts(tmp_path: Path) -> None:
    """A reading's ``report`` is never handed to the browser: an option-like string
    is ignored, and the page opened is the artifacts folder's own ``.html``."""
    root, art = _ci_artifacts(tmp_path)
    path = art / "pending" / "readings.json"
    doc = json.loads(path.read_text())
    doc["report"] = "--renderer-cmd-prefix=/bin/sh -c 'touch /tmp/owned'"
    path.write_text(json.dumps(doc))
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {opened}\n")
    browser.chmod(0o755)
    child = spawn(root, "--from", str(art), BROWSER=str(browser))
    child.expect(CHOICES)
    child.send("o")
    child.expect("opening (file://[^\r\n]+)")
    link = child.match.group(1)
    child.expect(CHOICES)
    child.send("q")
    assert finish(child) == 0
    assert link == (art / "index.html").resolve().as_uri() + "#k-films-a.nf.svg"
    for _ in range(100):
        if opened.exists():
            break
        time.sleep(0.1)
    assert opened.read_text().splitlines() == [link]


def test_an_arrow_key_answers_nothing(tmp_path: Path) -> None:
    """Single keys: an escape sequence (arrow up, ESC [ A) is read whole, never as
    its last letter ``A`` (accept)."""
    root, art = _ci_artifacts(tmp_path)
    before = entries(root)
    child = spawn(root, "--from", str(art))
    child.expect(CHOICES)
    child.send("\x1b[A")
    child.expect("type a, r, s, o or q")
    child.send("q")
    assert finish(child) == 0
    assert entries(root) == before
