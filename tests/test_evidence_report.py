"""The evidence a reviewer sees, for compositions built in tests (``nf.check``) as for
files: pytest in a subprocess (pytester), rendering for real, the page opened in
headless Chromium.

A project with one test file: two badges (32x16, 2 frames) checked with nf.check,
and a test that fails before it checks anything. It is recorded; then one badge's
recording is made a regression (the store and ledger of another recording, with a
green frame where the badge is magenta) and the other's colour is edited.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from built_once import once
from ledger_edit import reseal
from PIL import Image

from nanoframes.frames.digest import film_digest, frame_digest
from nanoframes.frames.store import Store

PYPROJECT = """\
[tool.nanoframes]
ledger = "tests/digests.json"
[tool.pytest.ini_options]
testpaths = ["tests"]
"""

BADGES = '''\
import json
from pathlib import Path

import pytest

COLOURS = json.loads((Path(__file__).parent / "colours.json").read_text())


def badge(fill):
    return f"""<svg xmlns="http://www.w3.org/2000/svg" data-width="32" data-height="16"
     data-fps="2" data-duration="1">
  <rect x="0" y="0" width="32" height="16" fill="{fill}"/>
  <rect id="m" x="0" y="12" width="4" height="4" fill="#000000"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#m", "keyframes": [{{"t": 0, "x": 0}}, {{"t": 0.5, "x": 28}}]}}]}}
  </script>
</svg>"""


@pytest.mark.parametrize("name", ["ok", "warn"])
def test_badge(nf, name):
    nf.check(badge(COLOURS[name]))


@pytest.mark.nanoframes
def test_broken_before_check():
    raise RuntimeError("the badge data could not be read")
'''

OK_KEY = "tests/test_badges.py::test_badge[ok]"
WARN_KEY = "tests/test_badges.py::test_badge[warn]"
MAGENTA, GREEN = "#ff00ff", "#00c000"


def glob(text: str) -> str:
    """``text`` as an fnmatch pattern that matches it literally (brackets escaped)."""
    return re.sub(r"([\[\]])", r"[\1]", text)


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    return found


def dump_dom(page: Path) -> str:
    return subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
         "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly",
                                         "-p", "no:xdist", *args)


def colours(root: Path, ok: str, warn: str) -> None:
    (root / "tests" / "colours.json").write_text(json.dumps({"ok": ok, "warn": warn}))


def make_regression(root: Path, key: str, index: int = 1) -> None:
    """Another recording of ``key``, in which frame ``index`` was all green: the
    inputs the same, the pixels not (the regression a reviewer must find)."""
    path = root / "tests" / "digests.json"
    doc = json.loads(path.read_text())
    entry = doc["compositions"][key]
    store = Store(root / ".nanoframes" / "store")
    frames = [store.get(d) for d in entry["frame_digests"]]
    assert all(f is not None for f in frames), "recording keeps nf.check frames in the store"
    other = frames[index].copy()
    other[..., :3] = (0, 0xC0, 0)
    store.put(other)
    digests = [frame_digest(f) for f in frames]
    digests[index] = frame_digest(other)
    entry["frame_digests"][index] = digests[index][:16]
    entry["digest"] = film_digest(digests)
    reseal(entry)
    path.write_text(json.dumps(doc, indent=2) + "\n")


@pytest.fixture
def recorded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("NANOFRAMES_STORE", raising=False)
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    root = pytester.path
    once(root, "test_evidence_report recorded", lambda: _record(pytester), root)
    # every frame nf.check recorded is in the store
    doc = json.loads((root / "tests" / "digests.json").read_text())
    store = Store(root / ".nanoframes" / "store")
    held = {d for e in doc["compositions"].values() for d in e["frame_digests"]}
    assert len(doc["compositions"]) == 2 and held
    assert all(store.candidates(d) for d in held)
    return root


def _record(pytester: pytest.Pytester) -> None:
    root = pytester.path
    pytester.makefile(".toml", pyproject=PYPROJECT)
    (root / "tests").mkdir()
    (root / "tests" / "test_badges.py").write_text(BADGES)
    colours(root, MAGENTA, "#e0a000")
    result = run(pytester, "--nf-record", "tests/test_badges.py::test_badge")
    assert result.ret == 0, result.stdout.str()


def test_a_failing_nf_check_is_on_every_front_end(pytester, recorded):
    root = recorded
    make_regression(root, OK_KEY)
    colours(root, MAGENTA, "#e0a001")  # warn: a drawn edit, ±1/255: changed
    html = pytest.importorskip("pytest_html") and ["--html", "ph.html", "--self-contained-html"]
    result = run(pytester, "--nf-check", "--nf-html", "report.html", "--nf-artifacts", "art",
                 "--nf-report", "verdicts.json", "-rx", *html)
    result.assert_outcomes(failed=2, xfailed=1, passed=1)  # passed: the ledger item
    out = result.stdout.str()
    # the terminal: pixel lines, what moved in words, where the page is, how to see
    result.stdout.fnmatch_lines([
        f"REGRESSION {glob(OK_KEY)}: regression, 1 of 2 frames differ: 1",
        "*pixels: 1 of 2 frames differ, 512 px each, max ±255/255, within (0,0)–(31,15)",
        f"*see: {(root / 'report.html').as_uri()}  (expected, actual and diff)"])
    result.stdout.fnmatch_lines([f"XFAIL {glob(WARN_KEY)} - changed, source changed*",
                                 "*pixels: 2 of 2 frames differ*", "*moved: source *",
                                 '*-  <rect fill="#e0a000" height="16"*',
                                 '*+  <rect fill="#e0a001" height="16"*'])
    result.stdout.fnmatch_lines([f"report: {(root / 'report.html').as_uri()}",
                                 "artifacts: *art (manifest.json lists every file)"])
    assert "Traceback" not in out

    # --nf-report and --nf-artifacts carry the test's composition as a file's
    verdicts = {v["key"]: v for v in json.loads((root / "verdicts.json").read_text())["verdicts"]}
    frame = verdicts[OK_KEY]["evidence"]["frames"][0]
    assert frame["files"]["actual"] == "tests/test_badges.py/test_badge_ok_/1-actual.png"
    manifest = json.loads((root / "art" / "manifest.json").read_text())
    assert {f["composition"] for f in manifest["files"]} == {OK_KEY, WARN_KEY}
    actual = np.asarray(Image.open(root / "art" / frame["files"]["actual"]))
    assert (actual[0, 8, :3] == (255, 0, 255)).all()  # the magenta badge as drawn now

    # the page: every nanoframes item counted, the failures first
    page = (root / "report.html").read_text()
    assert '3 items: <a href="#failed">2 failed</a>, <a href="#changed">1 changed</a>' in page
    assert page.index(OK_KEY) < page.index(WARN_KEY)
    assert "FAILED tests/test_badges.py::test_broken_before_check: " in page
    assert "Partial report" not in page
    dom = dump_dom(root / "report.html")
    assert 'data-images="decoded"' in dom
    sections = [s.split('"')[0] for s in dom.split('data-section="')[1:]]
    assert sections == ["failed", "failed", "changed"]
    first = dom.split("<section")[1]
    assert OK_KEY in first and "frame 1 actual" in first

    # pytest-html: the changed row reads like the terminal, the images attached
    if html:
        report = (root / "ph.html").read_text()
        assert "raise XFailed" not in report and "_pytest/outcomes.py" not in report
        assert "changed, source changed" in report and "pixels: 2 of 2 frames differ" in report
        assert f"{OK_KEY}: frame 1 actual" in report


def test_recording_says_what_it_accepts_before_writing(pytester, recorded):
    colours(recorded, MAGENTA, "#e0a001")
    result = run(pytester, "--nf-record", "-k", "warn")
    assert result.ret == 0, result.stdout.str()
    out = result.stdout.str()
    result.stdout.fnmatch_lines([
        "*nanoframes: what --nf-record accepts*",
        f"accepting {glob(WARN_KEY)}: changed, source changed (2 of 2 frames differ: 0, 1)",
        "  pixels: 2 of 2 frames differ, * px each, max ±1/255, within *",
        "  moved: source *", "*-  <rect fill=\"#e0a000\"*", "*+  <rect fill=\"#e0a001\"*"])
    assert out.index("accepting") < out.index("wrote tests/digests.json")
    # A test's composition has no file to bake again: its scene comes from the store
    # the recording just filled, never an error naming its node id (issue 43, item 8).
    assert "file-missing" not in out and "cannot be baked again" not in out, out
    result.stdout.fnmatch_lines(["  scene: different scene*"])


def test_a_run_stopped_early_writes_a_partial_page(pytester, recorded):
    make_regression(recorded, OK_KEY)
    result = run(pytester, "--nf-check", "-x", "--nf-html", "report.html")
    result.assert_outcomes(failed=1, passed=1)
    page = (recorded / "report.html").read_text()
    assert ("Partial report: the run stopped early (stopping after 1 failures); 2 of 4 "
            "collected test items did not run") in page
    # Ctrl-C (here raised by a test that runs before the badges)
    stop = recorded / "tests" / "test_a_stop.py"
    stop.write_text("def test_stop():\n    raise KeyboardInterrupt\n")
    run(pytester, "--nf-check", "--nf-html", "report.html")
    page = (recorded / "report.html").read_text()
    assert ("Partial report: the run stopped early (interrupted); 3 of 5 collected test "
            "items did not run") in page
    stop.unlink()
    (recorded / "tests" / "test_syntax.py").write_text("def broken(:\n")
    result = run(pytester, "--nf-check", "--nf-html", "report.html")
    page = (recorded / "report.html").read_text()
    assert "1 error(s) during collection); 4 of 4 collected test items did not run" in page


# --- a regression among many matches, seen in a real browser ----------------------

TINY = """<svg xmlns="http://www.w3.org/2000/svg" data-width="{w}" data-height="{h}"
     data-fps="1" data-duration="1"><rect x="0" y="0" width="{w}" height="{h}" fill="{fill}"/>
</svg>
"""


def test_a_regression_among_fifty_matches_is_the_first_thing_seen(tmp_path, monkeypatch, capsys):
    from nanoframes.cli import main

    browser = chromium()
    monkeypatch.delenv("NANOFRAMES_STORE", raising=False)
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    examples = tmp_path / "examples"
    examples.mkdir()
    for n in range(50):  # named to sort before and after the regression
        grey = f"#{40 + 4 * n:02x}{40 + 4 * n:02x}{40 + 4 * n:02x}"
        (examples / f"{'a' if n % 2 else 'z'}{n:02d}.nf.svg").write_text(
            TINY.format(w=8, h=8, fill=grey))
    key = "examples/m-badge.nf.svg"
    (tmp_path / key).write_text(TINY.format(w=48, h=32, fill=MAGENTA))
    assert main(["digest", "--record"]) == 0
    # another recording of the badge drew it green: the same inputs, other pixels
    ledger = tmp_path / "tests" / "digests.json"
    doc = json.loads(ledger.read_text())
    green = np.zeros((32, 48, 4), np.uint8)
    green[...] = (0, 0xC0, 0, 255)
    Store(tmp_path / ".nanoframes" / "store").put(green)
    doc["compositions"][key]["frame_digests"] = [frame_digest(green)[:16]]
    doc["compositions"][key]["digest"] = film_digest([frame_digest(green)])
    reseal(doc["compositions"][key])
    ledger.write_text(json.dumps(doc, indent=2) + "\n")
    capsys.readouterr()

    assert main(["digest", "--check", "--html", "report.html"]) == 1
    out = capsys.readouterr().out
    assert f"REGRESSION {key}: regression, 1 of 1 frames differ: 0" in out
    assert f"see: nanoframes diff {key} --frame 0  (expected, actual and diff)" in out
    assert f"report: {(tmp_path / 'report.html').as_uri()}" in out
    page = tmp_path / "report.html"
    dom = dump_dom(page)
    assert 'data-images="decoded"' in dom
    sections = [s.split('"')[0] for s in dom.split('data-section="')[1:]]
    assert sections == ["failed"] + ["match"] * 50
    assert '51 items: <a href="#failed">1 failed</a>, <a href="#match">50 match</a>' in dom
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--virtual-time-budget=5000", "--window-size=1000,700",
                    f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    magenta = (r > 220) & (g < 40) & (b > 220)   # only the actual frame is magenta
    green_seen = (r < 40) & (g > 160) & (b < 40)  # the expected frame
    assert magenta.sum() >= 48 * 32 and green_seen.sum() >= 48 * 32, (magenta.sum(),
                                                                     green_seen.sum())
    # the actual frame is beside the expected one, not behind it
    rows = np.nonzero(magenta.any(axis=1))[0]
    green_rows = np.nonzero(green_seen.any(axis=1))[0]
    assert abs(int(rows.min()) - int(green_rows.min())) < 40
