"""The nf fixture and the nanoframes marker end to end: pytest in a subprocess
(pytester), rendering for real, serially and under ``-n 2``.

One small project holds a test for every outcome (tiny charts: 24x16, 2 frames).
It is recorded, then data and ledger are edited, then checked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ledger_edit import reseal
from test_plugin import record, run

SERIAL_AND_XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

PYPROJECT = """\
[tool.nanoframes]
ledger = "tests/digests.json"

[tool.nanoframes.excused]
"tests/test_charts.py::test_excused" = "a font is pending (#7)"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

CHARTS = '''\
import json
from pathlib import Path

import pytest

import nanoframes

DATA = json.loads((Path(__file__).parent / "data.json").read_text())


def bar(values):
    """A bar chart: one bar per value, and a marker that moves over 2 frames."""
    bars = "".join(f'<rect x="{2 + 6 * i}" y="{16 - v}" width="4" height="{v}" fill="#5b4bff"/>'
                   for i, v in enumerate(values))
    return f"""<svg xmlns="http://www.w3.org/2000/svg" data-width="24" data-height="16"
     data-fps="2" data-duration="1">{bars}
  <rect id="m" x="0" y="0" width="2" height="2" fill="#000"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#m", "keyframes": [{{"t": 0, "x": 0}}, {{"t": 0.5, "x": 20}}]}}]}}
  </script>
</svg>"""


def test_match(nf):
    verdict = nf.check(bar(DATA["match"]))
    assert len(verdict.digest) == 64 and verdict.key == "tests/test_charts.py::test_match"


@pytest.mark.parametrize("table", ["de", "fr"])
def test_two_checks(nf, table):
    nf.check(bar(DATA[table]), key="small")
    nf.check(bar([v * 2 for v in DATA[table]]), key="large")


def test_changed(nf):
    nf.check(bar(DATA["changed"]))


def test_regression(nf):
    nf.check(bar(DATA["regression"]))


def test_excused(nf):
    nf.check(bar(DATA["excused"]))


@pytest.mark.nanoframes
def test_marked_match():
    return bar(DATA["match"])


@pytest.mark.nanoframes(key="chart", samples=1)
def test_marked_changed():
    return nanoframes.load(bar(DATA["changed"]))


@pytest.mark.nanoframes
def test_marked_regression():
    return bar(DATA["regression"])
'''

LATE = '''\
import numpy as np
import pytest

import nanoframes
from test_charts import bar


def test_absent(nf):
    nf.check(bar([1, 2, 3, 4]))


def test_broken(nf):
    nf.check("<svg")


def test_checked_twice(nf):
    try:
        nf.check(bar([1]))
    except pytest.fail.Exception:  # absent: not the point here
        pass
    nf.check(bar([1]))


@pytest.mark.nanoframes
def test_marked_returns_nothing():
    bar([1])


def test_frames_equal(nf):
    nf.assert_frames_equal(nanoframes.load(bar([5, 6])), bar([5, 6]))


def test_frames_differ(nf):
    nf.assert_frames_equal(nanoframes.render_frame(bar([5, 6]), 0),
                           nanoframes.render_frame(bar([5, 7]), 0))


def test_films_differ(nf):
    nf.assert_frames_equal(bar([5, 6]), list(nanoframes.frames(bar([5, 9]))))


def test_film_digests_compared(nf):
    assert nanoframes.film_digest(bar([3])) == nanoframes.film_digest(bar([4]))


def test_verdict_compared(nf):
    assert nanoframes.judge(bar([1, 2, 3]), key="tests/test_charts.py::test_regression") == "match"
'''

DATA = {"match": [3, 9, 14], "de": [4, 8], "fr": [10, 2], "changed": [5, 5, 5],
        "regression": [2, 12], "excused": [7, 1, 7]}


def make_project(pytester: pytest.Pytester) -> Path:
    pytester.makefile(".toml", pyproject=PYPROJECT)
    tests = pytester.path / "tests"
    tests.mkdir()
    (tests / "data.json").write_text(json.dumps(DATA))
    (tests / "test_charts.py").write_text(CHARTS)
    (tests / "conftest.py").write_text("import sys, pathlib\n"
                                       "sys.path.insert(0, str(pathlib.Path(__file__).parent))\n")
    return tests / "digests.json"


def tamper(ledger: Path, key: str, frame: int = 1) -> None:
    """One recorded frame differs while every recorded input stays the same."""
    doc = json.loads(ledger.read_text())
    entry = doc["compositions"][key]
    entry["frame_digests"][frame] = "0" * 16
    entry["digest"] = "0" * 64
    reseal(entry)
    ledger.write_text(json.dumps(doc, indent=2) + "\n")


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.setenv("NANOFRAMES_RECORD_IN_CI", "1")  # recording is refused in CI otherwise


# Over 10 s under xdist at times: a recording and a check of 19 tests, each a
# pytest whose two workers start; the recording of test-keyed entries is the subject.
@SERIAL_AND_XDIST
def test_every_outcome_of_the_fixture_and_the_marker(pytester: pytest.Pytester,
                                                     xdist: list[str]) -> None:
    ledger = make_project(pytester)
    result = record(pytester, *xdist)
    result.stdout.fnmatch_lines(["wrote tests/digests.json: 11 added, 0 updated*"])
    keys = set(json.loads(ledger.read_text())["compositions"])
    assert {"tests/test_charts.py::test_match", "tests/test_charts.py::test_two_checks[de]::small",
            "tests/test_charts.py::test_two_checks[fr]::large",
            "tests/test_charts.py::test_marked_changed::chart",
            "tests/test_charts.py::test_marked_match"} <= keys

    # Edit the data of two tests (an input moves); alter two recorded digests (none does).
    data = dict(DATA, changed=[5, 6, 5])
    (pytester.path / "tests" / "data.json").write_text(json.dumps(data))
    tamper(ledger, "tests/test_charts.py::test_regression")
    tamper(ledger, "tests/test_charts.py::test_marked_regression")
    (pytester.path / "tests" / "test_late.py").write_text(LATE)

    result = run(pytester, "--nf-check", "-rxX", *xdist)
    out = result.stdout.str()
    assert result.parseoutcomes() == {"passed": 6, "xfailed": 2, "failed": 10, "excused": 1}
    # changed: the edit is named, as the xfail reason
    # (one line at a time: under xdist the summary lists them in the order they ended)
    result.stdout.fnmatch_lines(["XFAIL tests/test_charts.py::test_changed - changed, source "
                                 "changed (2 of 2 frames differ: 0, 1)"])
    result.stdout.fnmatch_lines(["XFAIL tests/test_charts.py::test_marked_changed - changed, "
                                 "source changed*"])
    # regression: the frames, what did not move, how to see it and how to accept it
    result.stdout.fnmatch_lines([
        "REGRESSION tests/test_charts.py::test_regression: regression, 1 of 2 frames differ: 1",
        "  every recorded input is identical (source, media, fonts, toolchain): the same "
        "inputs drew different pixels",
        "  inspect: */nanoframes/test_regression-1.png (frame 1 as drawn now)",
        '  if intended: pytest "tests/test_charts.py::test_regression" --nf-record --nf-force'])
    result.stdout.fnmatch_lines(["REGRESSION tests/test_charts.py::test_marked_regression: "
                                 "regression, 1 of 2 frames differ: 1"])
    result.stdout.fnmatch_lines([
        "ABSENT tests/test_late.py::test_absent: absent, no ledger entry; record it with "
        "--nf-record",
        '  if intended: pytest "tests/test_late.py::test_absent" --nf-record'])
    result.stdout.fnmatch_lines(["ERROR tests/test_late.py::test_broken: error, */tests/<text>:1:"
                                 " error?xml-malformed?*"])
    result.stdout.fnmatch_lines(["*test_checked_twice* is checked twice in one test; give each "
                                 "check its own key=*"])
    result.stdout.fnmatch_lines(["@pytest.mark.nanoframes: the test returned nothing*"])
    result.stdout.fnmatch_lines(["*frames differ: 4 px differ, max ±255/255, "
                                 "within (8,9)–(11,9)"])
    result.stdout.fnmatch_lines(["*films differ: 2 of 2 frames differ, * (frames 0, 1)",
                                 "*  frame 0: 12 px differ*"])
    result.stdout.fnmatch_lines(["*films differ: 2 of 2 frames", "*  frames: 0, 1",
                                 "*  frame 0: 4 px differ*"])
    result.stdout.fnmatch_lines(["*the verdict is changed, not match:",
                                 "*  CHANGED tests/test_charts.py::test_regression: changed, "
                                 "source changed*", "*  what moved: source changed"])
    # the excused check is printed in the nanoframes section, a match that needs no excuse
    result.stdout.fnmatch_lines(["EXCUSED tests/test_charts.py::test_excused: match (excused: a "
                                 "font is pending (#7); it matches: remove the exemption)"])
    assert "Traceback" not in out and "pytest_nanoframes/" not in out
    png = next((pytester.path).glob("**/nanoframes/test_regression-1.png"), None) or next(
        Path(out.split("inspect: ")[1].split(" ")[0]).parent.glob("test_regression-1.png"))
    assert png.stat().st_size > 0

    # --nf-record refuses the regressions, records the edits and the new test
    result = run(pytester, "--nf-record", "tests/test_charts.py", *xdist)
    result.assert_outcomes(passed=7, failed=2)
    result.stdout.fnmatch_lines(["refusing to record a regression (--nf-force records it anyway)",
                                 "REGRESSION tests/test_charts.py::test_regression: *"])
    result.stdout.fnmatch_lines(["wrote tests/digests.json: 0 added, 2 updated, 7 unchanged, "
                                 "0 removed"])


def test_editing_data_is_changed_but_a_moved_digest_is_a_regression(
        pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester)
    record(pytester, "-k", "test_match")
    (pytester.path / "tests" / "data.json").write_text(json.dumps(dict(DATA, match=[3, 9, 15])))
    result = run(pytester, "-k", "test_match and not marked", "-rx")
    result.assert_outcomes(xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *test_match - changed, source changed*"])

    (pytester.path / "tests" / "data.json").write_text(json.dumps(DATA))  # the inputs as recorded
    tamper(ledger, "tests/test_charts.py::test_match")
    result = run(pytester, "-k", "test_match and not marked")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["REGRESSION tests/test_charts.py::test_match: regression, "
                                 "1 of 2 frames differ: 1"])


# Over 10 s: seven pytest runs of one project, each a fresh process.
def test_a_gone_test_is_stale_only_when_every_test_ran(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester)
    record(pytester)
    charts = pytester.path / "tests" / "test_charts.py"
    charts.write_text(CHARTS.replace("def test_excused(", "def test_excused_renamed("))
    stale = "STALE tests/test_charts.py::test_excused: the ledger has an entry but the test is gone"

    result = run(pytester, "--nf-check")  # every test: the ledger item says so
    result.assert_outcomes(passed=8, failed=2)  # the ledger item and the renamed test
    result.stdout.fnmatch_lines([f"  {stale}; --nf-record drops it"])
    for narrowed in (["-k", "ledger or match"], ["tests/digests.json", "tests/test_charts.py"],
                     ["-m", "not slow"]):
        result = run(pytester, "--nf-check", *narrowed)
        assert stale not in result.stdout.str(), narrowed
    # A narrowed record keeps the entry; a full one drops it.
    narrowed = run(pytester, "--nf-record", "tests/digests.json", "tests/test_charts.py")
    narrowed.stdout.fnmatch_lines(["*1 added, 0 updated, 10 unchanged, 0 removed"])
    assert "tests/test_charts.py::test_excused" in json.loads(ledger.read_text())["compositions"]
    result = run(pytester, "--nf-record")
    result.stdout.fnmatch_lines(["*1 removed", "  removed tests/test_charts.py::test_excused"])
    assert "tests/test_charts.py::test_excused" not in json.loads(ledger.read_text())[
        "compositions"]


# sitecustomize for the self-test's workers: each raster in a process nudges a pixel by
# the number of rasters before it, so the order of frames changes their pixels.
ORDER_HOOK = """\
import os
if os.environ.get("NF_ORDER_HOOK"):
    from nanoframes.frames import film as _film

    _original = _film.Film.raster
    _count = [0]

    def _raster(self, doc):
        frame = _original(self, doc).copy()
        frame[0, 0, 0] = (int(frame[0, 0, 0]) + _count[0]) % 256
        _count[0] += 1
        return frame

    _film.Film.raster = _raster
"""

DETERMINISTIC = '''\
from test_charts import bar


def test_deterministic(nf):
    result = nf.assert_deterministic(bar([3, 4]), variations=["reversed-order", "tz"])
    assert [v.name for v in result.variations] == ["reversed-order", "tz"]
'''


def test_assert_deterministic_names_the_variation(pytester: pytest.Pytester,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    make_project(pytester)
    (pytester.path / "tests" / "test_det.py").write_text(DETERMINISTIC)
    result = run(pytester, "tests/test_det.py")
    result.assert_outcomes(passed=1)
    assert not list((pytester.path / "tests").glob(".nf-selftest-*"))  # the text went away

    hooks = pytester.path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(ORDER_HOOK)
    monkeypatch.setenv("PYTHONPATH", str(hooks))
    monkeypatch.setenv("NF_ORDER_HOOK", "1")
    result = run(pytester, "tests/test_det.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "nf.assert_deterministic: reversed-order changed a frame*",
        "  DIFF  reversed-order           2 of 2 frames differ, first at frame 0",
        "  ok    tz *"])


def test_an_entry_that_disagrees_with_its_seal_fails_nf_check(pytester: pytest.Pytester) -> None:
    """Issue 30, item 7: one recorded frame digest edited by hand (the film digest
    and seal left alone) is a corrupt entry, one line naming the key, never a match."""
    ledger = make_project(pytester)
    record(pytester, "-k", "test_match and not marked")
    key = "tests/test_charts.py::test_match"
    doc = json.loads(ledger.read_text())
    doc["compositions"][key]["frame_digests"][1] = "0" * 16
    ledger.write_text(json.dumps(doc, indent=2) + "\n")
    result = run(pytester, "-k", "test_match and not marked")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert f"entry {key!r}: its frame digests, frame count or samples do not match its seal" \
        in out
    assert "MATCH" not in out and "Traceback" not in out
