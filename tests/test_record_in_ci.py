"""Recording in CI is deliberate: where ``CI`` is set, ``digest --record`` and
``pytest --nf-record`` refuse with one line unless ``--ci`` / ``--nf-ci`` or
``NANOFRAMES_RECORD_IN_CI=1`` says so. Also: the ``nanoframes`` terminal section
is printed only when it has something to say.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_plugin import make_project, record, recorded_project

from nanoframes.determinism.policy import ci_is_set

REFUSAL = ("error[record-in-ci]: refusing to record where CI is set (CI='true'): pass {flag} "
           "or set NANOFRAMES_RECORD_IN_CI=1 if this recording is intended")


@pytest.fixture
def in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("NANOFRAMES_RECORD_IN_CI", raising=False)  # set for the suite
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


def digest(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanoframes", "digest", *args], cwd=root,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("value", "set_"), [("true", True), ("1", True), ("yes", True),
                                             ("", False), ("false", False), ("0", False)])
def test_what_counts_as_ci(value: str, set_: bool) -> None:
    assert ci_is_set({"CI": value}) is set_
    assert ci_is_set({}) is False


def test_cli_refuses_to_record_in_ci_unless_asked(pytester: pytest.Pytester, in_ci) -> None:
    ledger = make_project(pytester, names=("a",))
    proc = digest(pytester.path, "--record")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"nanoframes: {REFUSAL.format(flag='--ci')}\n"
    assert not ledger.exists()
    assert digest(pytester.path, "--check").returncode == 1  # checking is what CI does
    assert digest(pytester.path, "--record", "--ci").returncode == 0
    ledger.unlink()
    assert digest(pytester.path, "--record", NANOFRAMES_RECORD_IN_CI="1").returncode == 0
    ledger.unlink()
    assert digest(pytester.path, "--record", CI="false").returncode == 0


def test_plugin_refuses_to_record_in_ci_unless_asked(pytester: pytest.Pytester, in_ci) -> None:
    ledger = make_project(pytester, names=("a",))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-record")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert [ln for ln in result.stderr.lines if ln] == [f"ERROR: {REFUSAL.format(flag='--nf-ci')}"]
    assert not ledger.exists()
    record(pytester, "--nf-ci")
    assert ledger.exists()
    ledger.unlink()
    os.environ["NANOFRAMES_RECORD_IN_CI"] = "1"  # undone by in_ci's monkeypatch
    record(pytester)
    assert ledger.exists()


def test_no_empty_nanoframes_section(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    recorded_project(pytester, names=("a", "b"))
    clean = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-check")
    clean.assert_outcomes(passed=3)
    (pytester.path / "examples" / "c.nf.svg").write_text(
        (pytester.path / "examples" / "a.nf.svg").read_text())
    missing = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-check")
    missing.assert_outcomes(passed=3, failed=1)  # c is absent: its own item fails, once
    assert "nanoframes =====" not in clean.stdout.str()
    # Not a plain match: the section counts the verdicts and names the accepting command.
    missing.stdout.fnmatch_lines(["=*= nanoframes =*=",
                                  "3 compositions: 2 match, 1 absent",
                                  "accept the changes: pytest --nf-record"])
    monkeypatch.setenv("EXCUSED_COMPOSITIONS", "b")
    listed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nf-check", "-k", "b")
    listed.stdout.fnmatch_lines(["=*= nanoframes =*=",
                                 "EXCUSED examples/b.nf.svg: match (excused: *"])
