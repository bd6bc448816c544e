"""--nf-record end to end: merged by key, written once by the controller, and the
same ledger and outcomes serially and under pytest-xdist (``-n 2``): one project
with every outcome checks that; each behaviour is otherwise tested serially."""

from __future__ import annotations

import json

import pytest
from test_plugin import (
    SERIAL_AND_XDIST,
    ledger_of,
    make_project,
    record,
    run,
    tamper,
    write,
)


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


def without_modules(text: str) -> dict:
    """The ledger minus the digest of nanoframes' own modules, which a concurrent edit
    of the library may move between two runs; everything that was drawn stays."""
    doc = json.loads(text)
    for entry in doc["compositions"].values():
        del entry["toolchain_parts"]["modules"]
        del entry["identity"]["toolchain"]
    return doc


def test_record_writes_every_entry_and_says_so(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester)
    result = record(pytester)
    result.stdout.fnmatch_lines([
        "wrote tests/digests.json: 3 added, 0 updated, 0 unchanged, 0 removed",
        "  added   examples/a.nf.svg",
        "  added   examples/b.nf.svg",
        "  added   examples/c.nf.svg",
    ])
    entries = ledger_of(ledger)
    assert sorted(entries) == ["examples/a.nf.svg", "examples/b.nf.svg", "examples/c.nf.svg"]
    assert all(e["frames"] == 4 and not e["sampled"] for e in entries.values())
    assert ledger.read_text().endswith("}\n")
    again = record(pytester)
    again.stdout.fnmatch_lines(["unchanged: tests/digests.json: 0 added, 0 updated, "
                                "3 unchanged, 0 removed"])


# Over 10 s: eight films recorded twice, serially and by pytest -n 2 (its workers start).
def test_serial_and_xdist_record_the_same_ledger_and_outcomes(
        pytester: pytest.Pytester) -> None:
    names = tuple(f"film-{i}" for i in range(8))
    ledger = make_project(pytester, names=names)
    record(pytester, "--nf-ledger", "serial.json")
    record(pytester, "-n", "2", "--nf-ledger", "xdist.json")
    serial = (pytester.path / "serial.json").read_text()
    assert without_modules(serial) == without_modules(
        (pytester.path / "xdist.json").read_text())  # no update lost, nothing differs
    assert len(json.loads(serial)["compositions"]) == 8

    ledger.write_text(serial)
    write(pytester, "film-3", fill="#00ff00")
    tamper(ledger, "examples/film-5.nf.svg", frame=1)
    reports = {}
    for mode, args in (("serial", []), ("xdist", ["-n", "2"])):
        run(pytester, "--nf-check", "--nf-report", f"{mode}.json", *args)
        report = json.loads((pytester.path / f"{mode}.json").read_text())
        reports[mode] = [(v["key"], v["verdict"], v["outcome"]) for v in report["verdicts"]]
    assert reports["serial"] == reports["xdist"]
    assert [v for v in reports["serial"] if v[1] != "match"] == [
        ("examples/film-3.nf.svg", "changed", "xfailed"),
        ("examples/film-5.nf.svg", "regression", "failed"),
    ]
    # Recording under xdist: the controller records the edit and refuses the regression.
    tampered = ledger_of(ledger)["examples/film-5.nf.svg"]
    result = run(pytester, "--nf-record", "-n", "2")
    result.stdout.fnmatch_lines(["wrote tests/digests.json: 0 added, 1 updated, *",
                                 "  updated examples/film-3.nf.svg"])
    result.stdout.fnmatch_lines(["  not recorded: REGRESSION examples/film-5.nf.svg*"])
    assert ledger_of(ledger)["examples/film-5.nf.svg"] == tampered


# Over 10 s under xdist: four recordings, each a pytest whose two workers start and
# draw; the entries a partial run must keep are the subject, so none is copied.
@SERIAL_AND_XDIST
def test_partial_record_keeps_other_entries(pytester: pytest.Pytester,
                                            xdist: list[str]) -> None:
    names = ("alpha", "beta", "gamma")
    ledger = make_project(pytester, names=names)
    record(pytester)
    before = ledger_of(ledger)
    write(pytester, "alpha", fill="#00ff00")
    write(pytester, "gamma", fill="#0000ff")
    (pytester.path / "examples" / "beta.nf.svg").unlink()
    result = record(pytester, "-k", "alpha", *xdist)
    result.stdout.fnmatch_lines(["wrote tests/digests.json: 0 added, 1 updated, "
                                 "0 unchanged, 0 removed"])
    after = ledger_of(ledger)
    key = "examples/{}.nf.svg".format
    assert after[key("alpha")] != before[key("alpha")]
    assert after[key("beta")] == before[key("beta")]  # file gone, but not looked at
    assert after[key("gamma")] == before[key("gamma")]  # not selected

    one = record(pytester, "examples/gamma.nf.svg", *xdist)
    one.stdout.fnmatch_lines(["*0 added, 1 updated, 0 unchanged, 0 removed"])
    assert key("beta") in ledger_of(ledger)

    full = record(pytester, *xdist)  # the ledger item is in the run: stale entries go
    full.stdout.fnmatch_lines(["wrote tests/digests.json: 0 added, *, 1 removed",
                               "  removed examples/beta.nf.svg"])
    assert sorted(ledger_of(ledger)) == [key("alpha"), key("gamma")]


def test_record_refuses_a_regression_unless_forced(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester)
    record(pytester)
    tamper(ledger, "examples/b.nf.svg")
    tampered = ledger_of(ledger)["examples/b.nf.svg"]
    result = run(pytester, "--nf-record")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "refusing to record a regression (--nf-force records it anyway)",
        "REGRESSION examples/b.nf.svg: regression, 1 of 4 frames differ: 2",
    ])
    result.stdout.fnmatch_lines(["  not recorded: REGRESSION examples/b.nf.svg*"])
    assert ledger_of(ledger)["examples/b.nf.svg"] == tampered

    forced = record(pytester, "--nf-force")
    forced.stdout.fnmatch_lines(["wrote tests/digests.json: 0 added, *, 0 removed",
                                 "  updated examples/b.nf.svg"])
    run(pytester, "--nf-check").assert_outcomes(passed=4)


def test_record_with_samples(pytester: pytest.Pytester) -> None:
    ledger = make_project(pytester, names=("a",))
    record(pytester, "--nf-samples", "2")
    entry = ledger_of(ledger)["examples/a.nf.svg"]
    assert entry["sampled"] is True
    assert entry["samples"] == [0, 3]
    assert len(entry["frame_digests"]) == 2
    run(pytester, "--nf-check", "--nf-samples", "2").assert_outcomes(passed=2)


def test_ledger_path_from_option_and_ini(pytester: pytest.Pytester) -> None:
    make_project(pytester, names=("a",), ini='nf_ledger = "ledgers/ini.json"')
    record(pytester)
    assert "examples/a.nf.svg" in ledger_of(pytester.path / "ledgers" / "ini.json")
    result = record(pytester, "--nf-ledger", "cli.json")
    result.stdout.fnmatch_lines(["*ledger cli.json (record)*",
                                 "wrote cli.json: 1 added, 0 updated, 0 unchanged, 0 removed"])
    assert not (pytester.path / "tests" / "digests.json").exists()
