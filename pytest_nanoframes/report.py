"""What the plugin shows: the header line, the terminal section, the JSON report."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from pytest_nanoframes.session import State

JSON_REPORT_VERSION = 1


def header(state: State) -> str:
    """One line: the toolchain that draws, and the ledger the verdicts compare against."""
    from nanoframes.determinism.identity import toolchain_parts

    parts = toolchain_parts()
    ledger = state.ledger_key(state.ledger_path)
    extra = ""
    if state.options.samples:
        extra += f", {state.options.samples} samples"
    if state.options.strict:
        extra += ", strict"
    return (f"nanoframes {parts['nanoframes']}: thorvg-python {parts['thorvg-python']}, "
            f"libthorvg {parts['libthorvg'][:12]}; ledger {ledger} "
            f"({state.options.mode}{extra})")


def teststatus(report: pytest.TestReport, payload: dict[str, Any]) -> tuple | None:
    """The ``excused`` category: counted as "N excused" in the summary line."""
    if report.when == "call" and payload.get("outcome") == "excused":
        return "excused", "e", ("EXCUSED", {"yellow": True})
    return None


def terminal_summary(state: State, terminalreporter: Any) -> None:
    tr = terminalreporter
    results = sorted(state.results.values(), key=lambda r: r["key"])
    recording = state.options.recording
    # Recording lists what it did instead; what it refused is listed as "not recorded".
    excused = [] if recording else [r for r in results if r.get("excused") is not None]
    if not (excused or recording or state.ledger_problems):
        return
    tr.write_sep("=", "nanoframes")
    from pytest_nanoframes.evidence import warning_line

    if warning_line(state):  # the frame store could not keep every recorded frame
        tr.write_line(f"warning: {warning_line(state)}", yellow=True)
    for result in excused:
        # Every run, every excused composition: an exemption is never silent.
        tr.write_line(result["line"], yellow=True)
    if recording:
        ledger = state.ledger_key(state.ledger_path)
        if state.record_error:
            tr.write_line(f"not recorded: {state.record_error}", red=True)
        elif state.record_summary is not None:
            s = state.record_summary
            verb = "wrote" if s.changed else "unchanged:"
            tr.write_line(f"{verb} {ledger}: {len(s.added)} added, {len(s.updated)} updated, "
                          f"{len(s.unchanged)} unchanged, {len(s.removed)} removed")
            for label, keys in (("added", s.added), ("updated", s.updated),
                                ("removed", s.removed)):
                for key in keys:
                    tr.write_line(f"  {label:<8}{key}")
        refused = [r for r in results if r.get("outcome") != "passed" and r.get("entry") is None]
        for result in refused:
            tr.write_line(f"  not recorded: {result['line']}")


def json_report(state: State) -> dict[str, Any]:
    from nanoframes.determinism.identity import toolchain_parts

    s = state.record_summary
    return {
        "version": JSON_REPORT_VERSION,
        "mode": state.options.mode,
        "ledger": state.ledger_key(state.ledger_path),
        "toolchain": toolchain_parts(),
        "verdicts": [
            {k: v for k, v in result.items() if k not in ("entry", "kind", "nf_record")}
            for result in sorted(state.results.values(), key=lambda r: r["key"])
        ],
        "ledger_problems": state.ledger_problems,
        "recorded": None if s is None else {
            "added": s.added, "updated": s.updated,
            "unchanged": s.unchanged, "removed": s.removed,
        },
    }


def write_json_report(state: State, path: Path) -> None:
    """Atomic, like the ledger: a CI step never reads half a report."""
    data = json.dumps(json_report(state), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide it from other CI steps' users
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
