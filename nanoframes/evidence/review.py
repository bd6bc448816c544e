"""What ``nanoframes review`` shows for each pending reading, and what it asks.

One item at a time, as ``cargo insta review`` does: the verdict line, the moved
inputs in words and the pixel line (``words.accepting_lines``: from the store,
nothing drawn), when it moved in the film, and where its section of the HTML
report is. The terminal loop is the CLI's (nanoframes/cli/review.py); what is
written goes through ``determinism.acceptance``.
"""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..determinism.ledger import Ledger
from ..determinism.pending import Pending, Source
from ..determinism.verdict import Kind
from .html import anchor_of

CHOICES = "[a]ccept  [r]eject  [s]kip  [o]pen in the report  [q]uit"


def shown_lines(item: Pending, ledger: Ledger, config: Config,
                store_root: Path | None) -> list[str]:
    """The item as a person reviews it."""
    from ..determinism.policy import reading_of, verdict_from_json
    from .words import accepting_lines

    verdict = verdict_from_json(item.verdict)
    lines = [item.verdict.get("line") or f"{item.kind.value.upper()} {item.key}"]
    # The pixel line the check measured (on the machine that read it, for --from).
    summary = (item.verdict.get("evidence") or {}).get("summary")
    if summary:
        lines.append(f"  pixels: {summary}")
    recorded = ledger.entries.get(item.key)
    if recorded is not None:  # the moved inputs in words (and, else, the store's pixels)
        lines += [line for line in accepting_lines(
            verdict, recorded, reading_of(item.key, item.entry), config, store_root)[1:]
            if not (summary and line.startswith("  pixels: "))]
    if verdict.opinion_line:  # what the check's second opinion said (second_opinion.py)
        lines.append(f"  {verdict.opinion_line}")
    if verdict.time_line:
        lines.append(f"  {verdict.time_line}")
    lines.append(f"  read on {item.platform}")
    return lines


def is_regression(item: Pending) -> bool:
    """A regression is accepted only after a second, explicit confirmation."""
    return item.kind is Kind.REGRESSION


def report_of(source: Source) -> str | None:
    """The page of the check that read them: named in the readings, else an HTML
    file beside an artifacts folder's ``pending/``."""
    if source.report:
        return source.report
    if source.path.is_dir():
        pages = sorted(source.path.parent.glob("*.html"))
        if pages:
            return pages[0].absolute().as_uri()
    return None


def section_link(report: str, key: str) -> str:
    return f"{report}#{anchor_of(key)}"
