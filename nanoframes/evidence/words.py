"""The evidence in a terminal's words: what moved, the pixel line, where to look.

Printed under a verdict by ``digest --check``, in a pytest failure or xfail, and
by recording before it writes the ledger, so every front end says the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..determinism.verdict import Kind

if TYPE_CHECKING:
    from ..config import Config
    from ..determinism.ledger import Entry
    from ..determinism.verdict import Reading, Verdict

TERMINAL_DETAILS = 8  # lines of each input's details; the page shows them all


def _short(value: object) -> str:
    text = str(value)
    return text[:12] + "…" if len(text) == 64 else text


def moved_lines(moved: list[dict], limit: int = TERMINAL_DETAILS) -> list[str]:
    """One line per moved input, its details (a source diff, the files) indented."""
    lines = []
    for m in moved:
        details = list(m.get("details") or [])
        lines.append(f"moved: {m['input']} {_short(m['recorded'])} → {_short(m['fresh'])}")
        lines += ["  " + d for d in details[:limit]]
        if len(details) > limit:
            lines.append(f"  … {len(details) - limit} more line(s) (the --html page has them)")
    return lines


def see_line(record: dict, frame: int | None) -> str | None:
    """The command that shows expected, actual and diff of ``frame``."""
    command = record.get("diff_command")
    if not command or frame is None:
        return None
    return f"see: {command.format(frame=frame)}  (expected, actual and diff)"


def scene_lines(scenes: dict | None) -> list[str]:
    """The ``scene:`` line and the first frames' diffs, from a record's ``scenes``."""
    if not scenes:
        return []
    from ..determinism.scenes import SceneEvidence

    return SceneEvidence.from_json(scenes).lines()


def evidence_lines(record: dict) -> list[str]:
    """Everything printed under a verdict line (each to be indented by the caller):
    the pixel line, the second opinion, what moved, why (the scenes), and the
    command that shows the first differing frame whose reference the store holds."""
    lines = []
    evidence = record.get("evidence") or {}
    if evidence.get("summary"):
        lines.append(f"pixels: {evidence['summary']}")
    opinion = record.get("opinion") or {}  # a regression drawn again (second_opinion.py)
    if opinion.get("summary"):
        lines.append(f"opinion: {opinion['summary']}")
    lines += moved_lines(record.get("moved") or [])
    lines += scene_lines(record.get("scenes"))
    frames = [f["frame"] for f in evidence.get("frames", ())]
    see = see_line(record, frames[0] if frames else None)
    if see:
        lines.append(see)
    return lines


def accepted(verdict: Verdict, force: bool) -> bool:
    """Would recording this reading replace its entry with other frames? (what
    policy.plan_record updates, said before it is done: a regression only with
    --force; a match whose inputs moved keeps its frames, and its ``updated`` line
    already names what moved)"""
    kind = verdict.kind
    return kind is Kind.CHANGED or (kind is Kind.REGRESSION and force)


def accepting_lines(verdict: Verdict, entry: Entry, reading: Reading, config: Config,
                    store_root: Path | None, record_hint: str = "--record") -> list[str]:
    """What recording is about to accept for one entry: the verdict against the old
    entry, the moved inputs in words and, where the store holds the old frames, the
    pixel line. The fresh frames are the ones the recording just kept; nothing is drawn."""
    from .pixels import gather

    gathered = gather(verdict, entry, reading, config, store_root, keep=0, draw=False)
    evidence = gathered.verdict.evidence
    scenes = gathered.verdict.scenes
    record = {"evidence": evidence.to_json() if evidence is not None else None,
              "moved": gathered.moved,
              "scenes": scenes.as_dict() if scenes is not None else None}
    return [f"accepting {verdict.key}: {verdict.summary(record_hint)}",
            *("  " + line for line in evidence_lines(record))]
