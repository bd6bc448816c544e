"""The Markdown summary of a check, for a CI job's summary page (GitHub's
``$GITHUB_STEP_SUMMARY``) or any Markdown reader: the counts per verdict, a
table of every composition that is not a plain match, regressions first (verdict,
what moved, the pixel line; a regression's second opinion), and the command that
accepts the changes (``determinism.accept``). Under a fire drill, a DRILL line first.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..determinism.accept import closing_lines, failure_order, tally
from ..determinism.verdict import Kind, Verdict

_MARK = {"match": "✅", "changed": "🟡", "regression": "❌", "absent": "❌", "stale": "❌",
         "error": "❌"}


def _cell(text: str) -> str:
    """Text safe inside one table cell: no pipe ends it, no newline breaks the row."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


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
            moved = ", ".join(v.reasons) or (v.error or "")
            if v.differing_frames:
                moved += f" ({len(v.differing_frames)} of {v.compared_frames} frames differ)"
            pixels = v.evidence.summary if v.evidence is not None else ""
            lines.append(f"| `{_cell(v.key)}` | {mark} {kind} | {_cell(moved)} | "
                         f"{_cell(pixels)} |")
        lines.append("")
        pixel_lines = [v for v in shown if v.pixels_line]
        for v in pixel_lines:
            lines.append(f"- `{_cell(v.key)}`: {_cell(v.pixels_line or '')}")
        if pixel_lines:
            lines.append("")
        opinions = [v for v in shown if v.opinion_line]  # a regression drawn again
        lines += [f"- `{_cell(v.key)}`: {_cell(v.opinion_line or '')}" for v in opinions]
        if opinions:
            lines.append("")
    lines += [f"- the ledger: {_cell(p)}" for p in problems]
    lines += [f"{line.strip()}" if not line.startswith("accept") else
              f"accept the changes: `{line.split(': ', 1)[1]}`" for line in closing[1:]]
    lines.append("")
    return "\n".join(lines)
