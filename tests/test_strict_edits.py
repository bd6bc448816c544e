"""A stale entry cannot disarm the gate (issue 30, item 4).

``--nf-strict=edits`` (ini ``nf_strict = edits``) fails a composition whose
source, media or fonts moved without being re-recorded, while a toolchain-only
move (a code edit of nanoframes, an upgrade: every entry moves alike) stays an
xfail; the defaults (match / changed / regression as pass / xfail / fail) are
unchanged; and whenever anything is not a plain match the terminal summary has a
``nanoframes`` section with counts per verdict and the command that accepts the
changes. Rendering is real; a "toolchain move" is a ledger whose entry names
another toolchain and whose frames that toolchain drew differently, which is
what an upgrade that moves pixels leaves behind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ledger_edit import reseal
from test_plugin import make_project, outcomes, recorded_project, run, tamper, write

from nanoframes.determinism.accept import is_edit, strict_fails, strictness
from nanoframes.determinism.identity import toolchain_digest
from nanoframes.determinism.verdict import Kind, Verdict
from nanoframes.errors import NanoframesError


@pytest.fixture(autouse=True)
def _no_ambient_excuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)


def upgraded(ledger: Path, moved: str) -> None:
    """Every entry as another toolchain recorded it (another ThorVG build), which drew
    frame 1 of ``moved`` differently: what an upgrade leaves behind."""
    doc = json.loads(ledger.read_text())
    for key, entry in doc["compositions"].items():
        entry["toolchain_parts"]["libthorvg"] = "f" * 64
        entry["identity"]["toolchain"] = toolchain_digest(entry["toolchain_parts"])
        if key == moved:
            entry["frame_digests"][1] = "1" * 16
            entry["digest"] = "1" * 64
            reseal(entry)
    ledger.write_text(json.dumps(doc, indent=2) + "\n")


def defaults_project(pytester: pytest.Pytester, ini: str = "") -> Path:
    ledger = recorded_project(pytester, names=("a", "b", "c"), ini=ini)
    tamper(ledger, "examples/c.nf.svg")  # c: a regression (same inputs, other pixels)
    write(pytester, "a", fill="#00ff00")  # a: an edit nobody re-recorded; b: a match
    return ledger


def upgrade_project(pytester: pytest.Pytester, ini: str = "") -> Path:
    ledger = recorded_project(pytester, names=("a", "b", "c"), ini=ini)
    upgraded(ledger, "examples/b.nf.svg")  # b: its pixels moved with the toolchain
    write(pytester, "a", fill="#00ff00")   # a: an edit too; c: same pixels, inputs moved
    return ledger


def test_edits_fail_and_a_toolchain_only_move_xfails(pytester: pytest.Pytester) -> None:
    upgrade_project(pytester)
    result = run(pytester, "--nf-check", "--nf-strict=edits", "-rfx")
    out = result.stdout.str()
    assert result.ret == 1
    assert outcomes(result) == {"failed": 1, "passed": 2, "xfailed": 1}, out
    assert "(check, strict: edits)" in out
    result.stdout.fnmatch_lines([
        "CHANGED examples/a.nf.svg: changed, source changed, toolchain changed (libthorvg) (*",
        "  fails under --nf-strict=edits: an edit that was not re-recorded",
        # the toolchain moved for every entry: the whole project, in one pass
        "  if intended: pytest --nf-record",
    ])
    assert "XFAIL examples/b.nf.svg::b - changed, toolchain changed (libthorvg)" in out
    # Following the hint leaves nothing failing: not even the ledger item.
    assert run(pytester, "--nf-record").ret == 0
    result = run(pytester, "--nf-check", "--nf-strict=edits")
    assert outcomes(result) == {"passed": 4}, result.stdout.str()


def test_an_unrecorded_edit_fails_alone(pytester: pytest.Pytester) -> None:
    defaults_project(pytester)
    result = run(pytester, "--nf-check", "--nf-strict=edits")
    assert outcomes(result) == {"failed": 2, "passed": 2}, result.stdout.str()
    result.stdout.fnmatch_lines([
        "CHANGED examples/a.nf.svg: changed, source changed (*",
        "  fails under --nf-strict=edits: an edit that was not re-recorded",
        "  if intended: pytest examples/a.nf.svg --nf-record",
    ])


def test_the_ini_setting_is_the_same_strictness(pytester: pytest.Pytester) -> None:
    upgrade_project(pytester, ini="nf_strict = \"edits\"")
    result = run(pytester, "--nf-check")
    assert outcomes(result) == {"failed": 1, "passed": 2, "xfailed": 1}, result.stdout.str()


def test_the_defaults_are_unchanged(pytester: pytest.Pytester) -> None:
    defaults_project(pytester)
    result = run(pytester, "--nf-check")
    # changed, match, regression (+ the ledger item): xfail, pass, fail
    assert outcomes(result) == {"failed": 1, "passed": 2, "xfailed": 1}, result.stdout.str()
    # --nf-strict (all), as before: a changed composition fails
    result = run(pytester, "--nf-check", "--nf-strict")
    assert outcomes(result) == {"failed": 2, "passed": 2}, result.stdout.str()
    # and `--nf-strict PATH` still means strict over PATH
    result = run(pytester, "--nf-check", "--nf-strict", "examples/a.nf.svg")
    assert outcomes(result) == {"failed": 1}, result.stdout.str()


def test_a_bad_ini_strictness_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_project(pytester, names=("a",), ini="nf_strict = \"sometimes\"")
    result = run(pytester, "--nf-check")
    assert result.ret == 4
    assert "nf_strict must be true, false, all, edits or pixels, got 'sometimes'" \
        in result.stderr.str()


def test_the_summary_counts_verdicts_and_names_the_command_that_accepts(
        pytester: pytest.Pytester) -> None:
    defaults_project(pytester)
    result = run(pytester, "--nf-check")
    out = result.stdout.str()
    section = out.split("= nanoframes =", 1)[1].splitlines()[1:4]
    assert section == [
        "3 compositions: 1 match, 1 changed, 1 regression",
        "accept the changes: pytest --nf-record",
        "  it refuses 1 regression (the same inputs drew other pixels): examples/c.nf.svg; "
        "if intended: pytest examples/c.nf.svg --nf-record --nf-force",
    ], out
    # Following it accepts the change; the regression is still refused, and says so.
    assert run(pytester, "--nf-record").ret == 1
    result = run(pytester, "--nf-check", "--nf-strict=edits")
    assert outcomes(result) == {"failed": 1, "passed": 3}, result.stdout.str()


def test_a_plain_match_has_no_section(pytester: pytest.Pytester) -> None:
    recorded_project(pytester, names=("a", "b"))
    result = run(pytester, "--nf-check")
    assert outcomes(result) == {"passed": 3}
    assert "= nanoframes =" not in result.stdout.str()


def test_the_rule_of_what_counts_as_an_edit() -> None:
    def changed(*reasons: str) -> Verdict:
        return Verdict("k", Kind.CHANGED, reasons=reasons)

    toolchain = changed("toolchain changed (modules)")
    for edit in (changed("source changed"), changed("media changed"),
                 changed("fonts changed", "toolchain changed (libthorvg)"),
                 changed("source changed", "frame count 4 → 8")):
        assert is_edit(edit) and strict_fails(edit, "edits") and strict_fails(edit, "all")
        assert not strict_fails(edit, None)
    assert not is_edit(toolchain) and not strict_fails(toolchain, "edits")
    assert strict_fails(toolchain, "all")
    assert not strict_fails(Verdict("k", Kind.REGRESSION), "edits")  # it fails anyway
    assert [strictness(v) for v in ("", "false", "True", "all", "edits", "EDITS")] == [
        None, None, "all", "all", "edits", "edits"]
    with pytest.raises(NanoframesError):
        strictness("maybe")
