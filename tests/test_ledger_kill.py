"""A ledger is never lost (issue 6, item 2).

``nanoframes digest --record`` and ``pytest --nf-record`` are killed with SIGKILL at
seeded random moments, 24 times in all; after each kill the ledger must read back
valid and be byte-for-byte the old ledger or the complete new one. A hand-broken
ledger gives one error naming its line and column and is never overwritten
without ``--force``.

The kill delays are drawn as fractions of one uninterrupted run measured first,
so that they spread over the whole run (start-up, rendering, the write) on fast
and slow machines alike. Nothing here asserts how long anything takes.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from built_once import once

from nanoframes.determinism.ledger import Ledger, read_ledger, write_ledger
from nanoframes.errors import NanoframesError

KILLS_DIGEST = 8
KILLS_PYTEST = 8
TEMP_NAME = re.compile(r"^\.digests\.json\..+\.tmp$")  # write_ledger's mkstemp name

PYPROJECT = """\
[project]
name = "kill"

[tool.nanoframes]
compositions = ["comps/*.nf.svg"]
ledger = "tests/digests.json"
"""


def composition(i: int, colour: str) -> str:
    return f"""\
<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32" data-fps="10" \
data-duration="2">
  <rect id="r" x="0" y="4" width="12" height="12" fill="{colour}"/>
  <text x="2" y="30" font-size="8">c{i}</text>
  <script type="application/nanoframes+json">{{"animations":[{{"target":"#r",
    "keyframes":[{{"t":0,"x":{i}}},{{"t":2,"x":36,"ease":"ease-in-out"}}]}}]}}</script>
</svg>
"""


def nanoframes(*args: str) -> list[str]:
    exe = shutil.which("nanoframes")
    return [exe, *args] if exe else [sys.executable, "-m", "nanoframes", *args]


RECORDERS = {
    "digest": nanoframes("digest", "--record"),
    "pytest": [sys.executable, "-m", "pytest", "--nf-record", "-p", "no:cacheprovider",
               "-p", "no:randomly", "-q", "comps"],
}


def _env(root: Path) -> dict[str, str]:
    env = dict(os.environ, NANOFRAMES_CACHE_DIR=str(root.parent / "cache"))
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def run(argv: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=root, env=_env(root), capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Four compositions with a valid ledger recorded from a first version of them;
    then the compositions change, so a record writes a different ledger. Recorded
    once per session, copied for each test."""
    root = tmp_path / "project"
    once(tmp_path, "test_ledger_kill project", lambda: _build_project(root), root)
    return root


def _build_project(root: Path) -> None:
    (root / "comps").mkdir(parents=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    for i in range(1, 5):
        (root / "comps" / f"c{i}.nf.svg").write_text(composition(i, "#3366cc"))
    proc = run(RECORDERS["digest"], root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for i in range(1, 5):
        (root / "comps" / f"c{i}.nf.svg").write_text(composition(i, "#cc6633"))


def ledger_of(root: Path) -> Path:
    return root / "tests" / "digests.json"


def new_ledger(root: Path, recorder: str, old: bytes) -> tuple[bytes, float]:
    """The ledger a complete run of ``recorder`` writes over ``old``, and how long it ran."""
    start = time.monotonic()
    proc = run(RECORDERS[recorder], root)
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new = ledger_of(root).read_bytes()
    assert new != old
    ledger_of(root).write_bytes(old)
    return new, elapsed


def kill_after(argv: list[str], root: Path, delay: float) -> int | None:
    proc = subprocess.Popen(argv, cwd=root, env=_env(root), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        proc.wait(timeout=delay)
        return proc.returncode  # finished before the kill
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: the recorder and any workers
        proc.wait(timeout=60)
        return None


# Over 10 s: recorders killed with SIGKILL at many moments, the ledger read after each.
def test_sigkill_leaves_old_or_new_ledger(project: Path) -> None:
    ledger = ledger_of(project)
    old = ledger.read_bytes()
    read_ledger(ledger)  # valid to begin with
    rng = random.Random(20_061)
    outcomes = {"old": 0, "new": 0}
    for recorder, kills in (("digest", KILLS_DIGEST), ("pytest", KILLS_PYTEST)):
        new, elapsed = new_ledger(project, recorder, old)
        for n in range(kills):
            delay = rng.uniform(0.0, 1.2) * elapsed
            kill_after(RECORDERS[recorder], project, delay)
            now = ledger.read_bytes()
            assert now in (old, new), f"{recorder} kill {n} after {delay:.2f} s tore the ledger"
            read_ledger(ledger)  # and it reads back valid
            outcomes["old" if now == old else "new"] += 1
            ledger.write_bytes(old)
    # Whatever a kill left behind besides the ledger is write_ledger's hidden temp file,
    # which nothing reads as a ledger.
    others = [p.name for p in ledger.parent.iterdir()
              if p.name != ledger.name]  # the recorders' lock is in .nanoframes/
    assert all(TEMP_NAME.match(name) for name in others), others
    print(f"outcomes {outcomes}; stray temp files: {len(others)}")


# --- a hand-broken ledger ------------------------------------------------------------------


def _break(text: str) -> tuple[str, int, int]:
    """Drop the comma after the second frame digest: a JSON error at a known line/column."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "frame_digests" in line) + 1
    lines[at] = lines[at].replace('",', '"', 1)
    column = len(lines[at + 1]) - len(lines[at + 1].lstrip()) + 1
    return "".join(lines), at + 2, column  # the parser stops at the next line's string


def _at(text: str, mark: str) -> tuple[str, int, int]:
    """``text`` with the 1-based line and column of the first ``mark`` in it."""
    at = text.index(mark)
    return text, text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)


def _duplicate(text: str) -> tuple[str, int, int]:
    """A bad merge: one composition's entry twice (json.loads would keep the last)."""
    start = text.index('    "comps/c2.nf.svg"')
    end = text.index('    "comps/c3.nf.svg"')
    return text[:end] + text[start:end] + text[end:], text.count("\n", 0, end) + 1, 5


BROKEN = {
    "missing-comma": (_break, "ledger-corrupt"),
    "merge-conflict": (lambda text: (
        text.replace('  "compositions": {\n',
                     '  "compositions": {\n<<<<<<< HEAD\n', 1), 3, None), "ledger-conflict"),
    "truncated": (lambda text: (text[: len(text) // 2], None, None), "ledger-corrupt"),
    "duplicate-key": (_duplicate, "ledger-invalid"),
    "not-utf8": (lambda text: _at(text.replace('"version"', '"v\udcffersion"', 1), "\udcff"),
                 "ledger-corrupt"),
}
GAPS: dict[str, str] = {}  # how -> reason, for a breakage not located yet


@pytest.mark.parametrize("how", [
    pytest.param(how, marks=[pytest.mark.xfail(reason=GAPS[how], strict=True)]
                 if how in GAPS else []) for how in sorted(BROKEN)])
def test_corrupt_ledger_is_named_and_kept(project: Path, how: str) -> None:
    ledger = ledger_of(project)
    breaker, code = BROKEN[how]
    broken, line, column = breaker(ledger.read_text())
    ledger.write_bytes(broken.encode("utf-8", "surrogateescape"))
    broken = ledger.read_text(errors="surrogateescape")
    with pytest.raises(NanoframesError) as info:
        read_ledger(ledger)
    err = info.value
    assert err.code == code
    # A conflict is named by its line (a marker fills it); anything else by line and column.
    assert err.line is not None and (err.column is not None or code == "ledger-conflict"), err
    if line is not None:
        assert (err.line, err.column) == (line, column)
    at = f":{err.column}" if err.column is not None else ""
    where = f"{ledger}:{err.line}{at}: error[{code}]"

    for argv in (nanoframes("digest", "--check"), nanoframes("digest", "--record")):
        proc = run(argv, project)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "error[" in ln]
        assert len(errors) == 1 and where in errors[0], proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
        assert ledger.read_text(errors="surrogateescape") == broken, f"{argv} touched it"

    proc = run(RECORDERS["pytest"], project)
    assert proc.returncode != 0 and "INTERNALERROR" not in proc.stdout + proc.stderr
    assert where in proc.stdout + proc.stderr, proc.stdout[-2000:]
    assert ledger.read_text(errors="surrogateescape") == broken, "pytest --nf-record touched it"

    proc = run(nanoframes("digest", "--record", "--force"), project)
    if how == "merge-conflict":  # a lone marker has no two sides to merge: refused, kept
        assert proc.returncode == 2 and "do not form whole hunks" in proc.stderr, proc.stderr
        assert "git show :1:" in proc.stderr
        assert ledger.read_text(errors="surrogateescape") == broken
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert set(read_ledger(ledger).entries) == {f"comps/c{i}.nf.svg" for i in range(1, 5)}


def test_invalid_entry_names_its_line(project: Path) -> None:
    """Valid JSON, wrong content (a hand-edited digest): the error names the entry's line."""
    ledger = ledger_of(project)
    text = ledger.read_text()
    broken = re.sub(r'("digest": ")[0-9a-f]{64}', r"\g<1>not-a-digest", text, count=1)
    ledger.write_text(broken)
    for argv in (nanoframes("digest", "--check"), nanoframes("digest", "--record")):
        proc = run(argv, project)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "error[" in ln]
        assert len(errors) == 1, proc.stdout + proc.stderr
        assert re.search(rf"{re.escape(str(ledger))}:\d+(:\d+)?: error\[ledger-invalid\]",
                         errors[0]), errors[0]
        assert ledger.read_text() == broken


WRITER = """\
import sys
from pathlib import Path
from nanoframes.determinism.ledger import Ledger, read_ledger, write_ledger

target, *sources = (Path(p) for p in sys.argv[1:])
ledgers = [Ledger(target, read_ledger(p).entries) for p in sources]
print("ready", flush=True)
while True:
    for ledger in ledgers:
        write_ledger(ledger)
"""


def test_sigkill_mid_write_never_tears(project: Path, tmp_path: Path) -> None:
    """The write itself, hammered: a process rewrites a ~1 MB ledger in a loop, alternating
    two contents, and is killed 20 times; each time the file is one of them, whole."""
    base = read_ledger(ledger_of(project))
    entry = next(iter(base.entries.values()))
    texts = []
    for n, name in enumerate(("a", "b")):
        path = tmp_path / f"{name}.json"
        keys = [f"comps/{name}{i:04d}.nf.svg" for i in range(400 + n)]
        write_ledger(Ledger(path, {k: entry for k in keys}))
        texts.append(path.read_bytes())
    target = tmp_path / "out" / "digests.json"
    target.parent.mkdir()
    target.write_bytes(texts[0])
    rng = random.Random(6)
    for n in range(20):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target),
                                 str(tmp_path / "a.json"), str(tmp_path / "b.json")],
                                stdout=subprocess.PIPE, text=True, start_new_session=True)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(rng.uniform(0.0, 0.3))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdout.close()
        assert target.read_bytes() in texts, f"kill {n} tore the ledger"
        read_ledger(target)
    others = [p.name for p in target.parent.iterdir() if p.name != target.name]
    assert all(TEMP_NAME.match(name) for name in others), others
    print(f"stray temp files after 20 kills mid-write: {len(others)}")
