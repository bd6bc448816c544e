"""Evidence for a whole check: one call after the verdicts are in.

The command line calls :func:`evidence_for_check` after ``sweep.check``; the
plugin calls :func:`evidence_for_item` for each item and writes the manifest
and the page once, on the controller, from what the items sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the options are read at start-up; the evidence is drawn only on a miss
    from ..config import Config
    from ..determinism.ledger import Entry, Ledger
    from ..determinism.opinions import Budget
    from ..determinism.verdict import Reading, Verdict


@dataclass(frozen=True)
class EvidenceOptions:
    store: Path | None = None        # where recorded frames are; None: off
    artifacts: Path | None = None    # --artifacts DIR
    frames: int = 5                  # --artifacts-frames N
    html: Path | None = None         # --html PATH
    second_opinion: int = 0          # re-renders of a regression (--second-opinion N)

    @property
    def directory(self) -> Path | None:
        """Where images go: DIR, or a folder beside the page when only --html is given."""
        if self.artifacts is not None:
            return self.artifacts
        if self.html is not None:
            return self.html.with_name(self.html.stem + "_files")
        return None


def evidence_for_item(verdict: Verdict, entry: Entry | None, reading: Reading | None,
                      config: Config, options: EvidenceOptions,
                      record_hint: str = "--record", budget: Budget | None = None
                      ) -> tuple[Verdict, dict]:
    """One verdict with its evidence, artifacts written; and its record (JSON-able).
    ``budget``: the check's second opinions (determinism/opinions.py)."""
    from .artifacts import diff_command, record_of, write_artifacts
    from .pixels import gather

    gathered = gather(verdict, entry, reading, config, options.store,
                      keep=options.frames if options.directory is not None else 0,
                      second_opinion=options.second_opinion, budget=budget)
    directory = options.directory
    if directory is not None:
        gathered = write_artifacts(directory, gathered, config, sheet=options.html is not None)
    return gathered.verdict, record_of(gathered.verdict, gathered.moved, gathered.sheet,
                                       record_hint, diff_command(verdict.key))


def finish(records: list[dict], options: EvidenceOptions, title: str = "nanoframes check",
           partial: str | None = None, frames_option: str = "--artifacts-frames"
           ) -> list[Path]:
    """The manifest and the page, from every item's record; returns what was written.
    ``partial``: the note a page from a run that stopped early carries."""
    from .artifacts import write_manifest

    directory = options.directory
    written = []
    if options.artifacts is not None:
        written.append(write_manifest(directory, records))
    if options.html is not None:
        from .html import write_html

        written.append(write_html(options.html, records, directory, title, partial,
                                  frames_option))
    return written


def evidence_for_check(verdicts: list[Verdict], ledger: Ledger, readings: Mapping[str, Reading],
                       config: Config, options: EvidenceOptions) -> tuple[list[Verdict],
                                                                         list[dict]]:
    from ..determinism.opinions import Budget

    out, records = [], []
    budget = Budget(config.second_opinion_budget)  # regressions grouped by cause
    budget.plan(verdicts, ledger.entries, readings, options.second_opinion)
    for verdict in verdicts:
        verdict, record = evidence_for_item(verdict, ledger.entries.get(verdict.key),
                                            readings.get(verdict.key), config, options,
                                            budget=budget)
        out.append(verdict)
        records.append(record)
    finish(records, options)
    return out, records
