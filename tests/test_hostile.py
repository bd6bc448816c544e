"""Hostile compositions (issue 6, item 1): every case fails cleanly, in bounded time and memory.

The corpus and the code each case must give are listed in tests/hostile/README.md;
tests/hostile_gen.py builds the project (committed small cases plus generated big
ones). Each command runs in a subprocess limited to 1 GB of address space and 10 s,
and must exit 2 with one error line naming the code: no traceback, no signal.

``render`` runs on the whole corpus; ``digest`` and ``check`` on a representative
subset (one or more per kind of hostility, every generated giant included), since
each run costs an interpreter start.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import hostile_gen
import pytest
from launched import launched

from nanoframes.errors import NanoframesError
from nanoframes.model.composition import parse

GB = 1 << 30
TIMEOUT = 10
CASES = hostile_gen.expected()
BUGS = hostile_gen.known_bugs()
DOCS = Path(__file__).resolve().parents[1] / "docs" / "errors.md"

# One or more of each kind, and every generated case: digest and check run these.
SUBSET = sorted({
    "truncated-open-tag", "truncated-cdata", "truncated-mid-utf8", "empty", "nul-byte",
    "billion-laughs", "external-entity-file", "external-dtd",
    "use-fanout-4x11", "use-external-file",
    "not-svg", "canvas-100000", "canvas-exponent-bomb", "canvas-5000-digits", "canvas-negative",
    "fps-nan", "duration-negative", "frames-too-many",
    "attr-inf-width", "attr-huge-image-box", "negative-data-fade", "negative-data-duration",
    "timeline-nan", "timeline-huge-finite", "keyframe-t-string", "timeline-deep-json",
    "non-utf8-latin1", "binary-random",
    "image-absolute-etc", "image-file-url", "image-http", "image-dotdot-out",
    "image-not-an-image", "nested-self",
    "frame-text-precision", "frame-text-width", "stroke-width-1e8", "blur-1e8",
    *hostile_gen.GENERATED,
})


def _nanoframes() -> list[str]:
    exe = shutil.which("nanoframes")
    return [exe] if exe else [sys.executable, "-m", "nanoframes"]


def _commands() -> set[str]:
    out = subprocess.run([*_nanoframes(), "--help"], capture_output=True, text=True, timeout=60)
    return set(re.findall(r"^\s{4}([a-z]+)\s", out.stdout, re.M))


COMMANDS = _commands()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return hostile_gen.build(tmp_path_factory.mktemp("hostile") / "project")


def _params(names):
    out = []
    for name in names:
        marks = []
        if name in BUGS:
            marks.append(pytest.mark.xfail(reason=BUGS[name], strict=True))
        out.append(pytest.param(name, id=name, marks=marks))
    return out


def run_case(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    try:
        proc = subprocess.run(launched([*_nanoframes(), *argv], address_space=GB), cwd=cwd,
                              capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"nanoframes {' '.join(argv[:1])} ran past {TIMEOUT} s")
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode < 0:
        pytest.fail(f"killed by {signal.Signals(-proc.returncode).name}\n{err[-2000:]}")
    assert "Traceback" not in out + err, err[-3000:]
    return proc.returncode, out, err


def assert_one_error(code: str, text: str) -> None:
    lines = [line for line in text.splitlines() if "error[" in line]
    assert len(lines) == 1, f"expected one error line, got:\n{text[-2000:]}"
    if code != "*":
        assert f"error[{code}]" in lines[0], lines[0]


@pytest.mark.parametrize("case", _params(sorted(CASES)))
def test_render(project: dict[str, Path], case: str, tmp_path: Path) -> None:
    path = project[case]
    rc, out, err = run_case(["render", str(path), "--frame", "0", "-o",
                             str(tmp_path / "out.png")], path.parent)
    assert rc == 2, (rc, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].strip(), err  # exactly one line on stderr
    assert_one_error(CASES[case], lines[0])
    assert not (tmp_path / "out.png").exists()


@pytest.mark.skipif("digest" not in COMMANDS, reason="command not built yet")
@pytest.mark.parametrize("case", _params(SUBSET))
def test_digest_check(project: dict[str, Path], case: str, tmp_path: Path) -> None:
    path = project[case]
    ledger = tmp_path / "digests.json"
    rc, out, err = run_case(["digest", str(path), "--check", "--ledger", str(ledger)],
                            path.parent)
    assert rc == 2, (rc, out, err)
    assert_one_error(CASES[case], out + err)
    assert not ledger.exists()


@pytest.mark.skipif("digest" not in COMMANDS, reason="command not built yet")
def test_one_sweep_with_workers_reports_every_case(project: dict[str, Path],
                                                   tmp_path: Path) -> None:
    # With -j 2 the files are parsed here, frames queued on workers, identities
    # worked out while they draw: each case is still its own one-line error.
    cases = [c for c in SUBSET if c not in BUGS]
    ledger = tmp_path / "digests.json"
    argv = ["digest", "--check", "-j", "2", "--ledger", str(ledger),
            *(str(project[c]) for c in cases)]
    try:
        proc = subprocess.run(launched([*_nanoframes(), *argv], address_space=GB),
                              cwd=tmp_path, capture_output=True, text=True, errors="replace",
                              timeout=6 * TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a -j 2 sweep of {len(cases)} hostile cases ran past {6 * TIMEOUT} s")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[-1] == f"{len(cases)} compositions: {len(cases)} error"
    for case in cases:
        mine = [line for line in lines if line.startswith("ERROR ")
                and Path(line[len("ERROR "):].split(":", 1)[0]).name == project[case].name]
        assert len(mine) == 1, (case, mine)
        assert_one_error(CASES[case], mine[0])
    assert not ledger.exists()


@pytest.mark.skipif("check" not in COMMANDS, reason="command not built yet")
@pytest.mark.parametrize("case", _params(SUBSET))
def test_check(project: dict[str, Path], case: str) -> None:
    path = project[case]
    rc, out, err = run_case(["check", str(path)], path.parent)
    assert_one_error(CASES[case], out + err)
    assert rc == 2, (rc, out, err)  # bad input, as for render and digest


def test_pytest_items_fail(project: dict[str, Path], tmp_path: Path) -> None:
    """``pytest --nf-check`` on the corpus: every item fails with its code; no internal error."""
    root = next(iter(project.values())).parent
    report = tmp_path / "junit.xml"
    names = sorted(n for n in CASES if n not in BUGS)
    try:
        proc = subprocess.run(
            launched([sys.executable, "-m", "pytest", "--nf-check", "-p", "no:cacheprovider",
                      "-p", "no:randomly", "-q", f"--junitxml={report}",
                      *(str(project[n]) for n in names)], address_space=GB),
            cwd=root, capture_output=True, timeout=TIMEOUT * 12,
            env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")})
    except subprocess.TimeoutExpired:
        pytest.fail("pytest --nf-check over the corpus ran past 120 s")
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert proc.returncode == 1, text[-3000:]  # 1: tests failed; 3 would be an internal error
    assert "INTERNALERROR" not in text and "Traceback" not in text, text[-3000:]
    outcomes: dict[str, str] = {}
    for tc in ET.parse(report).getroot().iter("testcase"):
        failure = tc.find("failure")
        outcomes[tc.get("name", "")] = "" if failure is None else (failure.get("message") or "")
    assert sorted(outcomes) == names
    wrong = {n: m[:200] for n, m in outcomes.items() if f"error[{CASES[n]}]" not in m}
    assert not wrong, wrong


@pytest.mark.parametrize("case", sorted(n for n in CASES if n.startswith("truncated-")
                                        or n in ("empty", "whitespace-only")))
def test_truncated_documents_stop_at_parse(project: dict[str, Path], case: str) -> None:
    """ThorVG segfaults on truncated XML: such a document is refused by parse, before
    bake (and so the rasterizer) could see it."""
    with pytest.raises(NanoframesError) as info:
        parse(project[case])
    assert info.value.code == CASES[case]
    assert info.value.code in ("xml-malformed", "xml-encoding")


def test_codes_are_documented() -> None:
    documented = DOCS.read_text(encoding="utf-8")
    missing = sorted({code for name, code in CASES.items()
                      if name not in BUGS and f"`{code}`" not in documented})
    assert not missing, f"codes missing from docs/errors.md: {missing}"
