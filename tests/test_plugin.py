"""pytest_nanoframes end to end: pytest in a subprocess (pytester), rendering for real.

Each test builds a tiny project (64x64 compositions of 4 frames) in the
pytester directory. Each outcome is tested serially; one project holding every
outcome is checked serially and under ``-n 2`` and must give the same outcomes,
lines and report (an xdist run per outcome would only repeat that). A test whose
subject is not the recording starts from ``recorded_project``: the same films
recorded once for the session, copied.
"""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest
from built_once import once
from ledger_edit import reseal

from nanoframes.determinism.identity import is_linked_part, modules_digest, toolchain_digest

SERIAL_AND_XDIST = pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])

PYPROJECT = """\
[tool.nanoframes]
ledger = "tests/digests.json"
{extra}
[tool.pytest.ini_options]
testpaths = ["tests", "examples"]
{ini}
"""


def composition(fill: str = "#ff0000", frames: int = 4) -> str:
    """A 64x64 square moving across the canvas: every frame differs."""
    return f"""\
<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="64"
     data-fps="{frames}" data-duration="1">
  <rect id="box" x="0" y="0" width="16" height="16" fill="{fill}"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box", "keyframes": [{{"t": 0, "x": 0}}, {{"t": 1, "x": 48}}]}}]}}
  </script>
</svg>
"""


def make_project(pytester: pytest.Pytester, names=("a", "b", "c"), extra: str = "",
                 ini: str = "") -> Path:
    pytester.makefile(".toml", pyproject=PYPROJECT.format(extra=extra, ini=ini))
    (pytester.path / "tests").mkdir(exist_ok=True)
    examples = pytester.path / "examples"
    examples.mkdir(exist_ok=True)
    for name in names:
        write(pytester, name)
    return pytester.path / "tests" / "digests.json"


def write(pytester: pytest.Pytester, name: str, fill: str = "#ff0000") -> None:
    (pytester.path / "examples" / f"{name}.nf.svg").write_text(composition(fill))


def ledger_of(path: Path) -> dict:
    return json.loads(path.read_text())["compositions"]


def tamper(ledger: Path, key: str, frame: int = 2) -> None:
    """Make one recorded frame differ while every recorded input stays the same."""
    doc = json.loads(ledger.read_text())
    # nanoframes' own modules are in the toolchain: re-read them now, so an edit to
    # the library between recording and checking cannot turn a regression into "changed".
    modules = modules_digest()
    for recorded in doc["compositions"].values():
        recorded["toolchain_parts"]["modules"] = modules
        recorded["identity"]["toolchain"] = toolchain_digest(recorded["toolchain_parts"])
    entry = doc["compositions"][key]
    entry["frame_digests"][frame] = "0" * 16
    entry["digest"] = "0" * 64
    reseal(entry)
    ledger.write_text(json.dumps(doc, indent=2) + "\n")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def record(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    result = run(pytester, "--nf-record", *args)
    assert result.ret == 0, result.stdout.str()
    return result


def recorded_project(pytester: pytest.Pytester, names=("a", "b", "c"), extra: str = "",
                     ini: str = "") -> Path:
    """``make_project`` then ``record``, as the recording left it (ledger and store):
    recorded once per session for these arguments, copied after (tests/built_once.py).
    Recording is the subject of test_plugin_record.py and test_match_passes, which
    record their own."""
    def build() -> None:
        make_project(pytester, names, extra, ini)
        record(pytester)

    key = f"recorded_project {tuple(names)!r} {extra!r} {ini!r}"
    once(pytester.path, key, build, pytester.path)
    return pytester.path / "tests" / "digests.json"


def outcomes(result: pytest.RunResult) -> dict[str, int]:
    return result.parseoutcomes()


def assert_no_traceback(result: pytest.RunResult) -> None:
    out = result.stdout.str()
    assert "Traceback" not in out
    assert "runtest" not in out  # no frames of the plugin's own code


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    # A CI job's own exemptions must not leak into these projects.
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


# --- registration, options, collection ------------------------------------------


def test_plain_pytest_is_unaffected(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester)
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = run(pytester, "test_plain.py", "examples")
    result.assert_outcomes(passed=1)
    assert "nanoframes 0.1.0:" not in result.stdout.str()
    assert not ledger.exists()


def test_options_are_registered(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    for option in ("--nf-check", "--nf-record", "--nf-strict", "--nf-force", "--nf-samples",
                   "--nf-ledger", "--nf-report", "nf_check", "nf_strict", "nf_samples",
                   "nf_ledger", "nf_report"):
        result.stdout.fnmatch_lines([f"*{option}*"])


def test_header_names_toolchain_and_ledger(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    result = run(pytester, "--nf-check", "--collect-only", "--nf-samples", "2")
    result.stdout.fnmatch_lines([
        "nanoframes 0.1.0: thorvg-python 1.1.3, libthorvg *; ledger tests/digests.json "
        "(check, 2 samples)"])


def test_bad_options_and_config_are_usage_errors(pytester: pytest.Pytester) -> None:
    make_project(pytester, names=("a",))
    result = run(pytester, "--nf-check", "--nf-samples", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--nf-samples must be at least 1, got 0"])
    make_project(pytester, names=("a",), extra='compositions = 3')
    result = run(pytester, "--nf-check")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: *pyproject.toml: error?config-invalid?: "
                                 "?tool.nanoframes? compositions must be a list of strings"])
    assert_no_traceback(result)


def test_collect_only_shows_sorted_ids(pytester: pytest.Pytester) -> None:
    make_project(pytester, names=("title-card", "b", "a"))
    record(pytester)
    result = run(pytester, "--nf-check", "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "tests/digests.json::ledger",
        "examples/a.nf.svg::a",
        "examples/b.nf.svg::b",
        "examples/title-card.nf.svg::title-card",
    ], consecutive=True)


def test_one_item_runs_by_its_id(pytester: pytest.Pytester) -> None:
    make_project(pytester, names=("title-card", "other"))
    record(pytester)
    result = run(pytester, "examples/title-card.nf.svg::title-card", "--nf-check", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["examples/title-card.nf.svg::title-card PASSED*"])


def test_nf_check_in_ini(pytester: pytest.Pytester) -> None:
    make_project(pytester, ini="nf_check = true")
    result = run(pytester)
    result.assert_outcomes(failed=3)  # no ledger yet: absent, without any flag
    result.stdout.fnmatch_lines(["*absent, no ledger entry; record it with --nf-record*"])


# --- outcomes -------------------------------------------------------------------


@SERIAL_AND_XDIST
def test_match_passes(pytester: pytest.Pytester, xdist: list[str]) -> None:
    make_project(pytester)
    record(pytester, *xdist)
    result = run(pytester, "--nf-check", *xdist)
    result.assert_outcomes(passed=4)  # three compositions and the ledger item
    assert result.ret == 0


def test_absent_fails_telling_to_record(pytester: pytest.Pytester, ) -> None:
    make_project(pytester, names=("a",))
    result = run(pytester, "--nf-check")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "ABSENT examples/a.nf.svg: absent, no ledger entry; record it with --nf-record"])
    assert_no_traceback(result)


def test_changed_xfails_with_reasons(pytester: pytest.Pytester, ) -> None:
    recorded_project(pytester)
    write(pytester, "b", fill="#00ff00")
    result = run(pytester, "--nf-check", "-rx")
    result.assert_outcomes(passed=3, xfailed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["XFAIL examples/b.nf.svg::b - changed, source changed*"])


def test_changed_fails_under_strict(pytester: pytest.Pytester, ) -> None:
    recorded_project(pytester)
    write(pytester, "b", fill="#00ff00")
    result = run(pytester, "--nf-check", "--nf-strict")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["CHANGED examples/b.nf.svg: changed, source changed*"])
    assert_no_traceback(result)


def test_strict_in_ini(pytester: pytest.Pytester) -> None:
    make_project(pytester, ini="nf_strict = true")
    record(pytester)
    write(pytester, "a", fill="#00ff00")
    run(pytester, "--nf-check").assert_outcomes(passed=3, failed=1)


def test_regression_fails_naming_frames(pytester: pytest.Pytester, ) -> None:
    ledger = recorded_project(pytester)
    tamper(ledger, "examples/a.nf.svg", frame=2)
    result = run(pytester, "--nf-check")
    result.stdout.fnmatch_lines([  # first: on a mismatch, this shows the whole output
        "REGRESSION examples/a.nf.svg: regression, 1 of 4 frames differ: 2",
        "  every recorded input is identical (source, media, fonts, toolchain)*",
        "  inspect: nanoframes render examples/a.nf.svg --frame 2 -o .nanoframes/a-2.png",
        "  if intended: pytest examples/a.nf.svg --nf-record --nf-force",
    ])
    result.assert_outcomes(passed=3, failed=1)
    assert_no_traceback(result)


def test_bad_composition_fails_with_one_line(pytester: pytest.Pytester) -> None:
    recorded_project(pytester, names=("a",))
    (pytester.path / "examples" / "bad.nf.svg").write_text("<svg data-width='64'>\n")
    result = run(pytester, "--nf-check", "examples")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["ERROR examples/bad.nf.svg: error, *error?xml-malformed?*"])
    assert_no_traceback(result)


def test_excused_has_its_own_status(pytester: pytest.Pytester, ) -> None:
    make_project(pytester, extra='[tool.nanoframes.excused]\n'
                                 '"examples/b.nf.svg" = "fonts differ on macOS"\n')
    record(pytester)
    write(pytester, "b", fill="#00ff00")
    result = run(pytester, "--nf-check")
    assert result.ret == 0
    assert outcomes(result) == {"passed": 3, "excused": 1}
    result.stdout.fnmatch_lines([
        "*= nanoframes =*",
        "EXCUSED examples/b.nf.svg: changed, source changed* (excused: fonts differ on macOS)",
    ])


def test_excused_match_is_reported(pytester: pytest.Pytester,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    recorded_project(pytester)
    monkeypatch.setenv("EXCUSED_COMPOSITIONS", "a c.nf.svg")
    result = run(pytester, "--nf-check", "-v")
    assert result.ret == 0
    assert outcomes(result) == {"passed": 2, "excused": 2}
    assert any("EXCUSED" in line and "examples/a.nf.svg::a" in line
               for line in result.outlines)  # -v: "a EXCUSED", or "[gw0] EXCUSED a"
    result.stdout.fnmatch_lines([
        "EXCUSED examples/a.nf.svg: match* (excused: EXCUSED_COMPOSITIONS; "
        "it matches: remove the exemption)"])
    strict = run(pytester, "--nf-check", "--nf-strict")
    strict.assert_outcomes(passed=2, failed=2)


def test_every_outcome_is_the_same_serially_and_under_xdist(
        pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester, names=("a", "b", "c", "e"),
                          extra='[tool.nanoframes.excused]\n"examples/e.nf.svg" = "pending"\n')
    record(pytester, "-n", "2")
    write(pytester, "b", fill="#00ff00")                       # changed
    tamper(ledger, "examples/c.nf.svg", frame=1)               # regression
    write(pytester, "e", fill="#0000ff")                       # excused
    write(pytester, "d")                                       # absent
    (pytester.path / "examples" / "bad.nf.svg").write_text("<svg data-width='64'>\n")  # error
    seen = {}
    for mode, xdist in (("serial", []), ("xdist", ["-n", "2"])):
        result = run(pytester, "--nf-check", "-rx", "--nf-report", f"{mode}.json", *xdist)
        report = json.loads((pytester.path / f"{mode}.json").read_text())
        lines = sorted(line for line in result.outlines
                       if line.split(" ", 1)[0] in ("ABSENT", "REGRESSION", "ERROR", "EXCUSED",
                                                    "XFAIL", "LEDGER"))
        seen[mode] = (outcomes(result), lines, sorted(
            (v["key"], v["verdict"], v["outcome"], v["line"]) for v in report["verdicts"]))
        assert_no_traceback(result)
    assert seen["serial"] == seen["xdist"]
    # a passes, and so does the ledger item: the absent d fails once, as its own item
    assert seen["serial"][0] == {"passed": 2, "xfailed": 1, "failed": 3, "excused": 1}


# --- the ledger item -----------------------------------------------------------------


def test_ledger_item_reports_stale_and_missing(pytester: pytest.Pytester) -> None:
    recorded_project(pytester)
    (pytester.path / "examples" / "b.nf.svg").unlink()
    write(pytester, "d")
    result = run(pytester, "--nf-check", "tests/digests.json", "examples")
    result.stdout.fnmatch_lines([
        "ledger tests/digests.json: 1 problem(s)",
        "  STALE examples/b.nf.svg: the ledger has an entry but the file is gone; "
        "--nf-record drops it",
    ])
    result.stdout.fnmatch_lines(["FAILED tests/digests.json::ledger*"])
    # The new composition fails once, as its own item (issue 43, item 8) ...
    assert "without an entry" not in result.stdout.str()
    result.stdout.fnmatch_lines(["FAILED examples/d.nf.svg::d*"])
    # ... and where its item does not run, the ledger item names it.
    result = run(pytester, "--nf-check", "tests/digests.json", "examples", "-k", "ledger")
    result.stdout.fnmatch_lines([
        "ledger tests/digests.json: 2 problem(s)",
        "  1 collected composition(s) without an entry (record with --nf-record): "
        "examples/d.nf.svg",
    ])
    assert_no_traceback(result)


def test_ledger_item_wants_one_toolchain(pytester: pytest.Pytester) -> None:
    ledger = recorded_project(pytester)
    doc = json.loads(ledger.read_text())
    entry = doc["compositions"]["examples/c.nf.svg"]
    entry["identity"]["toolchain"] = "1" * 64
    entry["toolchain_parts"]["libthorvg"] = "1" * 64
    ledger.write_text(json.dumps(doc))
    result = run(pytester, "--nf-check", "tests")
    result.assert_outcomes(failed=1)  # the ledger item alone: nothing rendered
    result.stdout.fnmatch_lines(["  entries recorded with 2 toolchains, expected one recording "
                                 "pass (`pytest --nf-record` re-records them): "
                                 "*examples/c.nf.svg*"])


def test_ledger_item_refuses_an_entry_without_its_inputs(pytester: pytest.Pytester) -> None:
    ledger = recorded_project(pytester, names=("a",))
    doc = json.loads(ledger.read_text())
    del doc["compositions"]["examples/a.nf.svg"]["identity"]["fonts"]
    ledger.write_text(json.dumps(doc, indent=2))
    result = run(pytester, "--nf-check")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*digests.json:*: error?ledger-invalid?: entry "
                                 "'examples/a.nf.svg': field 'identity' must have exactly*"])
    assert_no_traceback(result)


# --- CI output and hooks ---------------------------------------------------------------


def test_junit_xml_carries_properties(pytester: pytest.Pytester) -> None:
    recorded_project(pytester, names=("a", "b"))
    write(pytester, "b", fill="#00ff00")
    run(pytester, "--nf-check", "--junitxml=junit.xml")
    tree = ElementTree.parse(pytester.path / "junit.xml")
    props = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in tree.iter("testcase")
    }
    assert props["a"]["nf_verdict"] == "match"
    assert len(props["a"]["nf_digest"]) == 64
    assert props["b"]["nf_verdict"] == "changed"
    assert props["b"]["nf_reasons"].startswith("source changed")


def test_json_report_lists_every_verdict(pytester: pytest.Pytester) -> None:
    ledger = recorded_project(pytester)
    write(pytester, "b", fill="#00ff00")
    tamper(ledger, "examples/c.nf.svg", frame=0)
    run(pytester, "--nf-check", "--nf-report", "out/report.json")
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert report["mode"] == "check"
    assert report["ledger"] == "tests/digests.json"
    assert {n for n in report["toolchain"] if not is_linked_part(n)} \
        == {"thorvg-python", "libthorvg", "nanoframes", "modules"}  # then shared libraries
    verdicts = {v["key"]: v for v in report["verdicts"]}
    assert [(k, v["verdict"], v["outcome"]) for k, v in sorted(verdicts.items())] == [
        ("examples/a.nf.svg", "match", "passed"),
        ("examples/b.nf.svg", "changed", "xfailed"),
        ("examples/c.nf.svg", "regression", "failed"),
    ]
    assert verdicts["examples/c.nf.svg"]["differing_frames"] == [0]
    assert verdicts["examples/b.nf.svg"]["nodeid"] == "examples/b.nf.svg::b"


def test_json_report_path_in_ini(pytester: pytest.Pytester) -> None:
    make_project(pytester, names=("a",), ini='nf_report = "nf.json"')
    run(pytester, "--nf-check")
    report = json.loads((pytester.path / "nf.json").read_text())
    assert report["verdicts"][0]["verdict"] == "absent"


@SERIAL_AND_XDIST
def test_hooks_adjust_excused_and_observe_verdicts(pytester: pytest.Pytester,
                                                   xdist: list[str]) -> None:
    make_project(pytester)
    pytester.makeconftest("""
        import json

        SEEN = []

        def pytest_nanoframes_excused(config, excused):
            excused["b"] = "excused by a hook"

        def pytest_nanoframes_verdict(config, verdict, nodeid):
            SEEN.append([nodeid, verdict.kind.value, verdict.excused])

        def pytest_nanoframes_recorded(config, summary, ledger_path):
            SEEN.append(["recorded", summary.added, ledger_path.name])

        def pytest_sessionfinish(session):
            if not hasattr(session.config, "workerinput"):
                with open("seen.json", "w") as fh:
                    json.dump(sorted(SEEN), fh)
    """)
    record(pytester, *xdist)
    seen = json.loads((pytester.path / "seen.json").read_text())
    assert seen == [
        ["examples/a.nf.svg::a", "absent", None],
        ["examples/b.nf.svg::b", "absent", "excused by a hook"],
        ["examples/c.nf.svg::c", "absent", None],
        ["recorded", ["examples/a.nf.svg", "examples/b.nf.svg", "examples/c.nf.svg"],
         "digests.json"],
    ]
