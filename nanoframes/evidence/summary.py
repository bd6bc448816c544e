"""The Markdown summary of a check, for a CI job's summary page (GitHub's
``$GITHUB_STEP_SUMMARY``) or any Markdown reader: the counts per verdict, a
table of every composition that is not a plain match, regressions first (verdict,
what moved, the pixel line; a regression's second opinion), and the command that
accepts the changes (``determinism.accept``). Under a fire drill, a DRILL line first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..determinism.accept import closing_lines, failure_order, tally
from ..determinism.verdict import Kind, Verdict
from ..shown import shown

_TICKS = re.compile("`+")
_MARK = {"match": "✅", "changed": "🟡", "regression": "❌", "absent": "❌", "stale": "❌",
         "error": "❌"}


def _cell(text: str) -> str:
    """Text safe inside one table cell: no pipe ends it, no newline breaks the row."""
    return shown(text, lines=False).replace("\\", "\\\\").replace("|", "\\|")


def _code(text: str, cell: bool = True) -> str:
    """``text`` as one code span (a file name, a key, an error naming a file): fenced
    by more backticks than it holds in a row, padded where it starts or ends with
    one, so nothing in it is Markdown; in a table cell a pipe is escaped (GFM reads
    that before the span)."""
    text = shown(text, lines=False)
    if cell:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _TICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown(verdicts: Iterable[Verdict], record_hint: str = "--record",
             problems: Iterable[str] = (), title: str = "nanoframes") -> str:
    from ..frames.drill import banner

    verdicts = sorted(verdicts, key=failure_order)
    problems = list(problems)
    lines = [f"### {title}", ""]
    drill = banner()
    if drill is not None:
        lines += [f"> **{_cell(drill)}**", ""]
    closing = closing_lines(verdicts, record_hint, problems)
    if not closing:
        lines += [f"✅ {tally(v.kind.value for v in verdicts)}", ""]
        return "\n".join(lines)
    lines += [f"**{closing[0]}**", ""]
    shown = [v for v in verdicts if not (v.kind is Kind.MATCH and not v.reasons
                                         and v.excused is None)]
    if shown:
        lines += ["| composition | verdict | what moved | pixels |", "|---|---|---|---|"]
        for v in shown:
            kind = "excused" if v.excused else v.kind.value
            mark = "⚪" if v.excused else _MARK.get(v.kind.value, "")
            moved = _cell(", ".join(v.reasons)) if v.reasons else \
                (_code(v.error) if v.error else "")
            if v.differing_frames:
                moved += f" ({len(v.differing_frames)} of {v.compared_frames} frames differ)"
            pixels = v.evidence.summary if v.evidence is not None else ""
            lines.append(f"| {_code(v.key)} | {mark} {kind} | {moved} | "
                         f"{_cell(pixels)} |")
        lines.append("")
        pixel_lines = [v for v in shown if v.pixels_line]
        for v in pixel_lines:
            lines.append(f"- {_code(v.key, cell=False)}: {_cell(v.pixels_line or '')}")
        if pixel_lines:
            lines.append("")
        opinions = [v for v in shown if v.opinion_line]  # a regression drawn again
        lines += [f"- {_code(v.key, cell=False)}: {_cell(v.opinion_line or '')}"
                  for v in opinions]
        if opinions:
            lines.append("")
    lines += [f"- the ledger: {_code(p, cell=False)}" for p in problems]
    lines += [_code(line.strip(), cell=False) if not line.startswith("accept") else
              f"accept the changes: {_code(line.split(': ', 1)[1], cell=False)}"
              for line in closing[1:]]
    lines.append("")
    return "\n".join(lines)
