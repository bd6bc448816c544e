"""What the plugin shows: the header line, the terminal section, the JSON report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nanoframes.shown import shown
from pytest_nanoframes.session import RECORD_HINT, State

JSON_REPORT_VERSION = 1


def header(state: State) -> str:
    """One line: the toolchain that draws, and the ledger the verdicts compare against."""
    # The library's file, hashed without loading ThorVG: a session with nothing to
    # check never starts the renderer (the build is checked when it first draws).
    from nanoframes import __version__
    from nanoframes.engine.library import library_sha256, thorvg_python_version
    from nanoframes.errors import NanoframesError

    try:
        libthorvg = library_sha256()[:12]
    except NanoframesError as exc:
        libthorvg = f"unusable ({exc.code})"
    ledger = state.ledger_key(state.ledger_path)
    extra = ""
    if state.options.samples:
        extra += f", {state.options.samples} samples"
    if state.options.strictness:
        extra += ", strict" if state.options.strict else f", strict: {state.options.strictness}"
    from nanoframes.frames.drill import banner

    line = (f"nanoframes {__version__}: thorvg-python {thorvg_python_version()}, "
            f"libthorvg {libthorvg}; ledger {ledger} "
            f"({state.options.mode}{extra})")
    drill = banner()
    return line if drill is None else f"{line}\n{drill}"


def unchecked_header(config: pytest.Config) -> str | None:
    """Where ``[tool.nanoframes]`` configures compositions but the run checks none:
    one line saying so and how to enable it (a project must never believe that
    plain ``pytest`` checked its films). None in any other project; never fails."""
    if config.getoption("nf_selftest", False):
        return None
    from nanoframes.config import declares_nanoframes, glob_compositions, load_config, marked_root
    from nanoframes.errors import NanoframesError

    root = marked_root(config.invocation_params.dir)
    if root is None or not declares_nanoframes(root):
        return None
    try:
        found = glob_compositions(load_config(root))
    except NanoframesError:
        return None  # --nf-check reports a bad configuration
    if not found:
        return None
    n = len(found)
    return (f"nanoframes: {n} composition{'s' if n != 1 else ''} configured "
            f"([tool.nanoframes] compositions) but not checked: set nf_check = true in "
            f"[tool.pytest.ini_options] or pass --nf-check")


def teststatus(report: pytest.TestReport, payload: dict[str, Any]) -> tuple | None:
    """The ``excused`` category: counted as "N excused" in the summary line."""
    if report.when == "call" and payload.get("outcome") == "excused":
        return "excused", "e", ("EXCUSED", {"yellow": True})
    return None


def summary_lines(state: State) -> list[tuple[str, dict[str, bool]]]:
    """The lines of the ``nanoframes`` section, each with its colour; none, no section."""
    lines: list[tuple[str, dict[str, bool]]] = []
    results = sorted(state.results.values(), key=lambda r: r["key"])
    recording = state.options.recording
    from pytest_nanoframes.evidence import warning_line

    if warning_line(state):  # the frame store could not keep every recorded frame
        lines.append((f"warning: {warning_line(state)}", {"yellow": True}))
    # Recording lists what it did instead; what it refused is listed as "not recorded".
    if not recording:
        # Every run, every excused composition: an exemption is never silent.
        lines += [(r["line"], {"yellow": True}) for r in results if r.get("excused") is not None]
    committed = state.committed
    if recording and committed is not None:
        s = committed.summary
        ledger = state.ledger_key(state.ledger_path)
        if committed.replaced:
            lines.append((f"REPLACED {committed.replaced}", {"yellow": True}))
        verb = "wrote" if committed.written else "unchanged:"
        lines.append((f"{verb} {ledger}: {len(s.added)} added, {len(s.updated)} updated, "
                      f"{len(s.unchanged)} unchanged, {len(s.removed)} removed", {}))
        where = f" (platform entry {state.platform_tag()})" if state.options.platform is not None \
            else ""
        for label, keys in (("added", s.added), ("updated", s.updated), ("removed", s.removed)):
            lines += [(f"  {label:<8}{key}{where if label != 'removed' else ''}", {})
                      for key in keys]
        lines += [(f"  note: {note}", {"yellow": True}) for note in committed.notes]
    if recording:
        refused = {v.key for v in committed.refused} if committed else set()
        for result in results:
            if result["key"] in refused or result.get("entry") is None:
                lines.append((f"  not recorded: {result['line']}", {}))
    for what, where in state.written:  # as pytest-html says where its page is
        lines.append((f"{what}: {where}", {}))
    if not recording:
        from nanoframes.determinism.opinions import cause_lines

        lines += [(text, {}) for text in cause_lines((r["key"], r.get("opinion"))
                                                      for r in results)]
        lines += [(text, {}) for text in closing_lines(state)]
    for error in state.session_errors:
        lines.append((f"nanoframes: {error}", {"red": True, "bold": True}))
    from nanoframes.frames.drill import banner

    if banner() is not None:
        lines.append((banner() or "", {"yellow": True, "bold": True}))
    return lines


def closing_lines(state: State) -> list[str]:
    """Counts per verdict and the one command that accepts the changes, whenever
    anything was not a plain match (``accept.closing_lines``)."""
    if not state.results and not state.ledger_problems:
        return []
    import shlex

    from nanoframes.determinism.accept import closing_lines as lines_for
    from nanoframes.determinism.policy import verdict_from_json

    hint = RECORD_HINT
    if state.options.ledger_from_cli:  # the accepting run must record into the same ledger
        hint += f" --nf-ledger={shlex.quote(str(state.options.ledger))}"
    verdicts = [verdict_from_json({**r, "evidence": None}) for r in
                sorted(state.results.values(), key=lambda r: r["key"])]
    return lines_for(verdicts, hint, state.ledger_problems)


def terminal_summary(state: State, terminalreporter: Any) -> None:
    lines = summary_lines(state)
    if not lines:
        return
    terminalreporter.write_sep("=", "nanoframes")
    for text, markup in lines:
        terminalreporter.write_line(shown(text), **markup)


def json_report(state: State) -> dict[str, Any]:
    from nanoframes.determinism.identity import toolchain_parts

    c = state.committed
    return {
        "version": JSON_REPORT_VERSION,
        "mode": state.options.mode,
        "ledger": state.ledger_key(state.ledger_path),
        "toolchain": toolchain_parts(),
        "verdicts": [
            dict({k: v for k, v in result.items() if k not in ("entry", "kind", "nf_record")},
                 moved=(result.get("nf_record") or {}).get("moved") or [])
            for result in sorted(state.results.values(), key=lambda r: r["key"])
        ],
        "ledger_problems": state.ledger_problems,
        "recorded": None if c is None else {
            "added": c.summary.added, "updated": c.summary.updated,
            "unchanged": c.summary.unchanged, "removed": c.summary.removed,
            "refused": sorted(v.key for v in c.refused), "replaced": c.replaced,
            "platform": state.platform_tag(), "notes": list(c.notes),
        },
        "errors": list(state.session_errors),
    }


def write_json_report(state: State, path: Path) -> None:
    """Atomic, like the ledger (``nanoframes.files``): a CI step never reads half a
    report; a failure is one ``report-write`` line."""
    from nanoframes.files import write_bytes_atomic

    data = json.dumps(json_report(state), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_bytes_atomic(path, data.encode("utf-8"), code="report-write")
