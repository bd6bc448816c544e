"""The plugin's frame store and pixel evidence: pytest in a subprocess (pytester).

Recording keeps frames; a check with a drawn edit carries the numbers in
--nf-report; artifacts and the HTML page written under ``-n 2`` are byte for
byte those of a serial run; pytest-html gets each item's images as extras.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from built_once import once

PYPROJECT = """\
[tool.nanoframes]
ledger = "tests/digests.json"
[tool.pytest.ini_options]
testpaths = ["tests", "examples"]
"""


def composition(fill: str) -> str:
    return f"""\
<svg xmlns="http://www.w3.org/2000/svg" data-width="40" data-height="24"
     data-fps="4" data-duration="1">
  <rect x="0" y="18" width="40" height="6" fill="{fill}"/>
  <rect id="box" x="0" y="0" width="8" height="8" fill="#2040c0"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box", "keyframes": [{{"t": 0, "x": 0}}, {{"t": 1, "x": 30}}]}}]}}
  </script>
</svg>
"""


def project(pytester: pytest.Pytester) -> Path:
    pytester.makefile(".toml", pyproject=PYPROJECT)
    (pytester.path / "tests").mkdir(exist_ok=True)
    (pytester.path / "examples").mkdir(exist_ok=True)
    for name, fill in (("a", "#20a040"), ("b", "#a02040"), ("c", "#404040")):
        (pytester.path / "examples" / f"{name}.nf.svg").write_text(composition(fill))
    return pytester.path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def edited(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("NANOFRAMES_STORE", raising=False)
    root = pytester.path
    once(root, "test_evidence_plugin recorded", lambda: _record(pytester), root)
    assert list((root / ".nanoframes" / "store").glob("*/*.png"))
    for name, fill in (("a", "#21a040"), ("b", "#a02041")):  # two drawn edits, ±1/255
        (root / "examples" / f"{name}.nf.svg").write_text(composition(fill))
    return root


def _record(pytester: pytest.Pytester) -> None:
    project(pytester)
    result = run(pytester, "--nf-record")
    assert result.ret == 0, result.stdout.str()


def test_check_carries_numbers_and_xdist_writes_the_same_files(pytester, edited):
    root = edited
    outputs = {}
    for label, extra in (("serial", ["-p", "no:xdist"]), ("xdist", ["-n", "2"])):
        out = root / label
        result = run(pytester, "--nf-check", *extra, "--nf-artifacts", str(out / "art"),
                     "--nf-html", str(out / "report.html"), "--nf-report",
                     str(out / "verdicts.json"))
        assert result.ret == 0, result.stdout.str()  # changed xfails
        result.assert_outcomes(passed=2, xfailed=2)
        report = json.loads((out / "verdicts.json").read_text())
        page = (out / "report.html").read_text()
        assert "Partial report" not in page, label  # every item ran, with xdist too
        assert '3 items: <a href="#changed">2 changed</a>, <a href="#match">1 match</a>' in page
        (out / "verdicts.json").unlink()
        outputs[label] = (tree(out), report)
    serial, xdist = outputs["serial"], outputs["xdist"]
    assert serial[0] == xdist[0]  # artifacts, manifest and page: byte for byte
    files = serial[0]
    assert "art/manifest.json" in files and "report.html" in files
    assert "art/examples/a.nf.svg/0-diff.png" in files
    by_key = {v["key"]: v for v in serial[1]["verdicts"]}
    evidence = by_key["examples/a.nf.svg"]["evidence"]
    assert evidence["summary"] == ("4 of 4 frames differ, 240 px each, max ±1/255, "
                                   "within (0,18)–(39,23)")
    assert evidence["frames"][0]["files"]["expected"] == "examples/a.nf.svg/0-expected.png"
    assert by_key["examples/c.nf.svg"]["evidence"] is None


def test_pytest_html_gets_the_images_as_extras(pytester, edited):
    pytest.importorskip("pytest_html")
    result = run(pytester, "--nf-check", "-p", "no:xdist", "--html", "ph.html",
                 "--self-contained-html", "examples/a.nf.svg")
    assert result.ret == 0, result.stdout.str()
    page = (edited / "ph.html").read_text()
    for role in ("expected", "actual", "diff"):
        assert f"frame 0 {role}" in page
    assert "data:image/png;base64," in page


def test_record_without_store_and_missing_reference(pytester, edited):
    import shutil

    shutil.rmtree(edited / ".nanoframes")
    result = run(pytester, "--nf-check", "-p", "no:xdist", "examples/a.nf.svg", "-rx")
    result.stdout.fnmatch_lines(["*4 recorded frames are not in the store*"])
    shutil.rmtree(edited / ".nanoframes" / "store")  # the check kept its fresh frames there
    result = run(pytester, "--nf-record", "--nf-no-store", "-p", "no:xdist")
    assert result.ret == 0
    assert not (edited / ".nanoframes" / "store").exists()  # (the ledger's lock is there)
