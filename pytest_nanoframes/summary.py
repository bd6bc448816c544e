"""``--nf-summary PATH``: the check's Markdown summary appended to PATH (in GitHub
Actions, ``--nf-summary "$GITHUB_STEP_SUMMARY"``); nanoframes/evidence/summary.py
writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_nanoframes.session import RECORD_HINT, State


def addoption(group: Any) -> None:
    group.addoption("--nf-summary", dest="nf_summary", metavar="PATH", default=None,
                    help="append a Markdown summary of the check (a verdict table, the pixel "
                         "lines, the command that accepts the changes) to PATH, e.g. "
                         "$GITHUB_STEP_SUMMARY")


def finish(state: State) -> None:
    """(controller, checking) Append the summary; a failure is one session error line."""
    target = state.config.getoption("nf_summary")
    if not target or state.options.recording:
        return
    from nanoframes.determinism.policy import verdict_from_json
    from nanoframes.evidence.summary import markdown

    verdicts = [verdict_from_json(r) for r in
                sorted(state.results.values(), key=lambda r: r["key"])]
    text = markdown(verdicts, RECORD_HINT, state.ledger_problems,
                    title="nanoframes: pytest --nf-check")
    path = Path.cwd() / target
    try:
        with path.open("a", encoding="utf-8") as fh:  # a job summary is appended to
            fh.write(text + "\n")
    except OSError as exc:
        state.session_errors.append(f"{path}: error[report-write]: cannot write: "
                                    f"{exc.strerror}")
