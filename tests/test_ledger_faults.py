"""A ledger or report that cannot be written: one line naming the file and the reason,
a failed run (``nanoframes digest`` exits 2; pytest exits non-zero, no traceback),
and the old file intact. The faults are real: an immutable file or directory
(``chattr +i``, which stops root too), a full disk (a 64 KiB tmpfs), a
directory where the file should be.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_plugin import assert_no_traceback, make_project, recorded_project, write

ERRNO = {"immutable-file": "Operation not permitted", "immutable-dir": "Operation not permitted",
         "full-disk": "No space left on device"}


def _can(*cmd: str) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    if shutil.which("chattr") is None or not _can("chattr", "+i", str(path)):
        pytest.skip("chattr +i is not permitted here (needs root on a file system with "
                    "attributes)")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@contextlib.contextmanager
def full_disk(directory: Path) -> Iterator[None]:
    """``directory`` becomes a 64 KiB tmpfs holding its old files, then filled up."""
    saved = {p.name: p.read_bytes() for p in directory.iterdir() if p.is_file()}
    if not _can("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(directory)):
        pytest.skip("mounting a tmpfs is not permitted here (needs CAP_SYS_ADMIN)")
    try:
        for name, data in saved.items():
            (directory / name).write_bytes(data)
        with contextlib.suppress(OSError), open(directory / f"filler-{uuid.uuid4().hex}",
                                                "wb") as fh:
            while True:
                fh.write(b"\0" * 4096)
                fh.flush()
        yield
    finally:
        subprocess.run(["umount", str(directory)], check=True)


@contextlib.contextmanager
def fault(kind: str, ledger: Path) -> Iterator[None]:
    if kind == "immutable-file":
        with immutable(ledger):
            yield
    elif kind == "immutable-dir":
        with immutable(ledger.parent):
            yield
    else:
        with full_disk(ledger.parent):
            yield


def digest(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanoframes", "digest", *args], cwd=root,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


@pytest.mark.parametrize("kind", list(ERRNO))
def test_cli_write_failure_is_one_line_and_exit_2(pytester: pytest.Pytester, kind: str) -> None:
    ledger = make_project(pytester, names=("a",))
    assert digest(pytester.path, "--record").returncode == 0
    old = ledger.read_bytes()
    write(pytester, "b")  # something to add, so the ledger must be rewritten
    with fault(kind, ledger):
        proc = digest(pytester.path, "--record")
        assert ledger.read_bytes() == old
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"nanoframes: {ledger}: error[ledger-write]: cannot write: ")
    assert lines[0].endswith(ERRNO[kind])
    assert ledger.read_bytes() == old
    assert not [p for p in ledger.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_directory_where_the_ledger_should_be(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester, names=("a",))
    ledger.mkdir()
    for args in (("--record",), ("--record", "--force"), ("--check",)):
        proc = digest(pytester.path, *args)
        assert proc.returncode == 2
        assert proc.stderr == (f"nanoframes: {ledger}: error[ledger-unreadable]: cannot read "
                               "the ledger: it is a directory\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-record",
                                           "--nf-force")
    assert result.ret != 0
    assert_no_traceback(result)
    assert (f"nanoframes: {ledger}: error[ledger-unreadable]: cannot read the ledger: it is a "
            "directory") in result.stdout.lines
    assert ledger.is_dir()


@pytest.mark.parametrize("kind", list(ERRNO))
def test_pytest_ledger_write_failure_fails_the_run(pytester: pytest.Pytester, kind: str) -> None:
    ledger = recorded_project(pytester, names=("a",))
    old = ledger.read_bytes()
    write(pytester, "b")
    with fault(kind, ledger):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-record")
        assert ledger.read_bytes() == old
    result.assert_outcomes(passed=3)  # every item passed; the run still fails
    assert result.ret == 1
    assert_no_traceback(result)
    result.stdout.fnmatch_lines([f"nanoframes: {ledger}: error[ledger-write]: cannot write: "
                                 f"{ERRNO[kind]}"])
    assert ledger.read_bytes() == old


def test_a_ledger_corrupted_in_teardown_fails_the_run(pytester: pytest.Pytester) -> None:
    ledger = recorded_project(pytester, names=("a",))
    pytester.makeconftest(f"""
        import pytest
        @pytest.fixture(autouse=True, scope="session")
        def spoil():
            yield
            open({str(ledger)!r}, "w").write("{{ spoiled")
        """)
    (pytester.path / "tests" / "test_x.py").write_text("def test_x():\n    pass\n")
    write(pytester, "b")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-record")
    assert result.ret == 1
    assert_no_traceback(result)
    assert (f"nanoframes: {ledger}:1:3: error[ledger-corrupt]: not valid JSON: Expecting "
            "property name enclosed in double quotes") in result.stdout.lines
    assert ledger.read_text() == "{ spoiled"


@pytest.mark.parametrize("kind", ["immutable-dir", "full-disk"])
def test_pytest_report_write_failure_fails_the_run(pytester: pytest.Pytester, kind: str) -> None:
    recorded_project(pytester, names=("a",))
    out = pytester.path / "out"
    out.mkdir()
    report = out / "report.json"
    report.write_text("old\n")
    with fault(kind, report):
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-check",
                                               "--nf-report", str(report))
    result.assert_outcomes(passed=2)
    assert result.ret == 1
    assert_no_traceback(result)
    result.stdout.fnmatch_lines([f"nanoframes: {report}: error[report-write]: cannot write: "
                                 f"{ERRNO[kind]}"])
    assert report.read_text() == "old\n"
