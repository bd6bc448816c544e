"""Concurrent recorders lose nothing: each takes the ledger's lock, re-reads the
ledger under it and merges its readings by key (``recording.commit``).

Real processes started together on one project; the compositions are tiny
(16x16, 2 frames) so that the race, not the rendering, is what is exercised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock
from scratch_project import TINY

from nanoframes.determinism.ledger import read_ledger

# Before the lock, two recorders lost an entry in about half of all rounds; eight at
# once, four rounds, race far more pairs than that and keep the suite quick.
ROUNDS = 4
RECORDERS = 8


def project(root: Path, n: int) -> list[str]:
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\nledger = "tests/digests.json"\n'
        '[tool.pytest.ini_options]\ntestpaths = ["tests", "examples"]\n')
    (root / "tests").mkdir(exist_ok=True)
    (root / "examples").mkdir(exist_ok=True)
    keys = []
    for i in range(n):
        (root / "examples" / f"c{i}.nf.svg").write_text(TINY.format(fill=f"#{i * 30:02x}0000"))
        keys.append(f"examples/c{i}.nf.svg")
    return keys


def start(root: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def entries(root: Path) -> list[str]:
    return sorted(read_ledger(root / "tests" / "digests.json").entries)


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


def test_eight_recorders_at_once_lose_nothing(tmp_path: Path) -> None:
    keys = project(tmp_path, RECORDERS)
    ledger = tmp_path / "tests" / "digests.json"
    for round_ in range(ROUNDS):
        ledger.unlink(missing_ok=True)
        procs = [start(tmp_path, "-m", "nanoframes", "digest", "--record", key) for key in keys]
        results = [finish(p) for p in procs]
        for status, out, err in results:
            assert status == 0, err
            assert "1 added" in out.splitlines()[-1], out
        assert entries(tmp_path) == keys, f"round {round_}: an entry was lost"


def test_two_pytest_recorders_at_once_lose_nothing(tmp_path: Path) -> None:
    keys = project(tmp_path, 2)
    ledger = tmp_path / "tests" / "digests.json"
    for round_ in range(ROUNDS):
        ledger.unlink(missing_ok=True)
        procs = [start(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nf-record",
                       key) for key in keys]
        for status, out, err in (finish(p) for p in procs):
            assert status == 0, out + err
            assert "1 added" in out, out
        assert entries(tmp_path) == keys, f"round {round_}: an entry was lost"


def test_a_recorder_racing_a_check(tmp_path: Path) -> None:
    keys = project(tmp_path, 3)
    ledger = tmp_path / "tests" / "digests.json"
    assert finish(start(tmp_path, "-m", "nanoframes", "digest", "--record"))[0] == 0
    for round_ in range(ROUNDS):
        # Every round changes c0, so the recorder rewrites the ledger while the check reads it.
        fill = f"#00{round_ * 20:02x}00"
        (tmp_path / "examples" / "c0.nf.svg").write_text(TINY.format(fill=fill))
        recorder = start(tmp_path, "-m", "nanoframes", "digest", "--record")
        checker = start(tmp_path, "-m", "nanoframes", "digest", "--check")
        rec, chk = finish(recorder), finish(checker)
        assert rec[0] == 0, rec[2]
        assert chk[0] in (0, 1), chk[2]  # match or changed: never an unreadable ledger
        assert "error[" not in chk[2]
        assert entries(tmp_path) == keys
        assert json.loads(ledger.read_text())["version"] == 1


def test_a_held_lock_is_a_bounded_wait_then_one_line(tmp_path: Path) -> None:
    project(tmp_path, 1)
    lock = tmp_path / ".nanoframes" / "locks" / "tests" / "digests.json.lock"
    lock.parent.mkdir(parents=True)
    env = dict(os.environ, NANOFRAMES_LOCK_TIMEOUT="0.5")
    with FileLock(lock):
        proc = subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--record"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == (f"nanoframes: {lock}: error[ledger-locked]: another recorder has "
                           "held the ledger's lock for over 0.5 s (set NANOFRAMES_LOCK_TIMEOUT "
                           "to wait longer)\n")
    assert not (tmp_path / "tests" / "digests.json").exists()
