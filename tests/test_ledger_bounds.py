"""Hostile ledgers (issue 31, item 4; issue 30, item 7): every read of the ledger is
bounded, a merge never takes an empty side for "every entry deleted", ``--record
--force`` on conflict markers merges the two sides, and an entry that disagrees
with its seal is corrupt, one line naming the key, never a match.

Each command runs in a child limited to 1 GB of address space and a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from built_once import once
from launched import nanoframes_capped
from test_plugin import assert_no_traceback, make_project

from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.ledger_text import MAX_LEDGER_BYTES, MAX_LEDGER_DEPTH

GB = 1 << 30
KEY = "examples/a.nf.svg"
TEST_KEY = "tests/test_charts.py::test_bar[de]"


def nf(root: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return nanoframes_capped(root, args, GB, timeout)


def one_error(proc: subprocess.CompletedProcess, code: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and f"error[{code}]" in lines[0], proc.stderr
    return lines[0]


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    """Recorded once per session, copied for each test."""
    once(pytester.path, "test_ledger_bounds project", lambda: _record(pytester), pytester.path)
    return pytester.path


def _record(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester, names=("a", "b"))
    assert nf(pytester.path, "digest", "--record").returncode == 0
    doc = json.loads(ledger.read_text())
    doc["compositions"][TEST_KEY] = doc["compositions"][KEY]  # as nf.check records
    ledger.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def test_a_fifo_ledger_is_refused_even_with_force(project: Path) -> None:
    ledger = project / "tests" / "digests.json"
    ledger.unlink()
    os.mkfifo(ledger)
    for args in (["--check"], ["--record"], ["--record", "--force"]):
        line = one_error(nf(project, "digest", *args, timeout=30), "ledger-unreadable")
        assert "not a regular file" in line, args
    assert not list(ledger.parent.glob("digests.json.unreadable-*"))


def test_a_link_to_dev_zero_is_refused_even_with_force(project: Path) -> None:
    ledger = project / "tests" / "digests.json"
    ledger.unlink()
    ledger.symlink_to("/dev/zero")
    line = one_error(nf(project, "digest", "--record", "--force", timeout=30),
                     "ledger-unreadable")
    assert "not a regular file" in line
    assert ledger.is_symlink()


def test_a_ledger_past_the_size_limit_is_refused(project: Path) -> None:
    ledger = project / "tests" / "digests.json"
    with open(ledger, "r+b") as fh:
        fh.truncate(MAX_LEDGER_BYTES + 1)  # sparse: no disk, but every byte must be read
    for args in (["--check"], ["--record", "--force"]):
        one_error(nf(project, "digest", *args, timeout=30), "ledger-too-large")
    assert ledger.stat().st_size == MAX_LEDGER_BYTES + 1


def test_deep_nesting_is_one_line_everywhere(project: Path, pytester: pytest.Pytester) -> None:
    ledger = project / "tests" / "digests.json"
    text = "[" * 100_000 + "]" * 100_000
    ledger.write_text(text)
    for args in (["--check"], ["--record"], ["--all", "--check"]):
        line = one_error(nf(project, "digest", *args), "ledger-corrupt")
        assert f"nested deeper than {MAX_LEDGER_DEPTH}" in line
    for args in (["--nf-check"], ["--nf-record"]):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=120)
        assert_no_traceback(result)
        assert "RecursionError" not in result.stdout.str()
        assert "error[ledger-corrupt]" in result.stdout.str()
        assert result.ret == 1
    assert ledger.read_text() == text
    # --force keeps it aside and records afresh
    forced = nf(project, "digest", "--record", "--force")
    assert forced.returncode == 0, forced.stderr
    assert sorted(read_ledger(ledger).entries) == ["examples/a.nf.svg", "examples/b.nf.svg"]


@pytest.mark.parametrize("side", ["ours", "theirs"])
def test_an_empty_side_of_a_merge_is_an_error(project: Path, side: str) -> None:
    ledger = project / "tests" / "digests.json"
    for name in ("base", "ours", "theirs"):
        (project / f"{name}.json").write_bytes(ledger.read_bytes())
    (project / f"{side}.json").write_bytes(b"")
    before = (project / "ours.json").read_bytes()
    line = one_error(nf(project, "ledger", "merge", "base.json", "ours.json", "theirs.json"),
                     "ledger-corrupt")
    assert f"{side}.json" in line and "empty" in line
    assert (project / "ours.json").read_bytes() == before


def test_an_empty_base_is_no_entries(project: Path) -> None:
    ledger = project / "tests" / "digests.json"
    (project / "base.json").write_bytes(b"")
    for name in ("ours", "theirs"):
        (project / f"{name}.json").write_bytes(ledger.read_bytes())
    proc = nf(project, "ledger", "merge", "base.json", "ours.json", "theirs.json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "merged ours.json: 3 entries, 0 from theirs, 0 conflicts\n"


def _conflicted(project: Path) -> tuple[Path, str]:
    """A ledger git's line merge left markers in: ours adds d, theirs adds c (and both
    keep the test-keyed entry); the merge by key conflicts on nothing."""
    ledger = project / "tests" / "digests.json"
    base = json.loads(ledger.read_text())
    entry = base["compositions"]["examples/b.nf.svg"]
    sides = {}
    for name, extra in (("base", None), ("ours", "examples/d.nf.svg"),
                        ("theirs", "examples/c.nf.svg")):
        doc = json.loads(json.dumps(base))
        if extra:
            doc["compositions"][extra] = entry
        sides[name] = project / f"{name}.txt"
        sides[name].write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    merged = subprocess.run(["git", "merge-file", "-p", str(sides["ours"]), str(sides["base"]),
                             str(sides["theirs"])], capture_output=True, text=True, timeout=60)
    assert merged.returncode > 0 and "<<<<<<<" in merged.stdout  # conflicts
    ledger.write_text(merged.stdout)
    return ledger, merged.stdout


def test_force_on_conflict_markers_merges_the_two_sides(project: Path) -> None:
    ledger, text = _conflicted(project)
    line = one_error(nf(project, "digest", "--record", KEY), "ledger-conflict")
    assert f"git show :1:{project / 'tests' / 'digests.json'}" in line  # not in a git repo
    assert "`:2:`, `:3:`" in line
    forced = nf(project, "digest", "--record", "--force", KEY)
    assert forced.returncode == 0, forced.stderr
    assert "merged the two sides of its conflict by key" in forced.stdout
    assert sorted(read_ledger(ledger).entries) == sorted(
        ["examples/a.nf.svg", "examples/b.nf.svg", "examples/c.nf.svg", "examples/d.nf.svg",
         TEST_KEY])  # nothing dropped, the pytest-recorded entry included
    copies = list(ledger.parent.glob("digests.json.unreadable-*"))
    assert len(copies) == 1 and copies[0].read_text() == text


def _edit(ledger: Path, change) -> None:
    doc = json.loads(ledger.read_text())
    change(doc["compositions"][KEY])
    ledger.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


def test_an_entry_that_disagrees_with_its_seal_is_corrupt(project: Path,
                                                         pytester: pytest.Pytester) -> None:
    ledger = project / "tests" / "digests.json"
    assert "seal" in json.loads(ledger.read_text())["compositions"][KEY]

    def edit_frame(entry):
        entry["frame_digests"][0] = "0" * 16

    _edit(ledger, edit_frame)
    line = one_error(nf(project, "digest", "--check"), "ledger-invalid")
    assert f"entry {KEY!r}" in line and "seal" in line
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-check", timeout=120)
    assert_no_traceback(result)
    assert result.ret == 1
    assert f"entry {KEY!r}" in result.stdout.str() and "MATCH" not in result.stdout.str()
    # --force leaves out the corrupt entry alone, by name, and records it afresh
    forced = nf(project, "digest", "--record", "--force", KEY)
    assert forced.returncode == 0, forced.stderr
    assert f"left out 1 corrupt entry: {KEY}" in forced.stdout
    assert TEST_KEY in read_ledger(ledger).entries
    assert nf(project, "digest", "--check").returncode == 0


def test_a_hand_edited_frame_count_is_corrupt(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester, names=("a",))
    assert nf(pytester.path, "digest", "--record", "--sample", "3").returncode == 0

    def edit_count(entry):
        assert entry["sampled"]
        entry["frames"] += 5

    _edit(ledger, edit_count)
    line = one_error(nf(pytester.path, "digest", "--check"), "ledger-invalid")
    assert f"entry {KEY!r}" in line and "seal" in line


def test_an_entry_written_before_seals_still_reads(project: Path) -> None:
    ledger = project / "tests" / "digests.json"
    _edit(ledger, lambda entry: entry.pop("seal"))
    assert nf(project, "digest", "--check", KEY).returncode == 0
