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
from .html import anchor_of

CHOICES = "[a]ccept  [r]eject  [s]kip  [o]pen in the report  [q]uit"


def shown_lines(item: Pending, ledger: Ledger, config: Config,
                store_root: Path | None, own: bool = False) -> list[str]:
    """The item as a person reviews it: the verdict this machine computes against
    its own ledger (``acceptance.judged``), the moved inputs in words and the pixel
    line from the store (the reading's frames, verified: ``verify``), when it
    moved. Nothing a reading from elsewhere carries as text (its verdict line, its
    pixel or opinion lines) is shown: an artifact's words cannot tell a reviewer
    anything. ``own``: the project's own readings (signed by this machine:
    determinism/origin.py), whose second opinion this machine drew: shown too."""
    from ..determinism.acceptance import judged
    from ..determinism.policy import reading_of
    from .words import accepting_lines

    verdict = judged(item, ledger)
    lines = [verdict.line()]
    recorded = ledger.entries.get(item.key)
    if recorded is not None:  # the moved inputs in words and the store's pixels
        lines += accepting_lines(verdict, recorded, reading_of(item.key, item.entry), config,
                                 store_root)[1:]
    opinion = _own_opinion(item) if own else None
    if opinion:
        lines.append(f"  {opinion}")
    if verdict.time_line:
        lines.append(f"  {verdict.time_line}")
    lines.append(f"  read on {item.platform}")  # a valid tag (pending._pending)
    return lines


def _own_opinion(item: Pending) -> str | None:
    """The second opinion this machine's check drew on a regression, if any."""
    from ..determinism.policy import verdict_from_json

    try:
        return verdict_from_json(item.verdict).opinion_line
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def verify(item: Pending, source: Source, store_root: Path | None, elsewhere: bool
           ) -> str | None:
    """Why the reading cannot be accepted as its frames stand (shown before its
    lines), else None; a reading from elsewhere has its frames decoded, hashed and
    kept in the store first, so the pixel line is drawn from verified frames."""
    from ..determinism.acceptance import verify_frames

    return verify_frames(item, source, store_root, carried=elsewhere)


def is_regression(item: Pending, ledger: Ledger) -> bool:
    """A regression (as judged here) is accepted only after a second, explicit
    confirmation."""
    from ..determinism.acceptance import judged
    from ..determinism.verdict import Kind

    return judged(item, ledger).kind is Kind.REGRESSION


def report_of(source: Source, root: Path) -> Path | None:
    """The HTML page of the check that read them, only where it is an ``.html``
    file inside the readings' folder: the project (``root``) for its own readings,
    the artifacts folder (the one holding ``pending/``) for ``--from``. The page a
    reading names is used only as a path to look for there; a zip names none."""
    from urllib.parse import unquote, urlparse

    if source.own:
        folder = Path(root)
    elif source.path.is_dir():
        folder = source.path.parent if source.path.name == "pending" else source.path
    else:
        return None
    candidates = []
    if isinstance(source.report, str) and source.report.startswith("file:"):
        candidates.append(Path(unquote(urlparse(source.report).path)))
    if not source.own:
        candidates += sorted(folder.glob("*.html"))
    inside = Path(folder).resolve()
    for page in candidates:
        try:
            page = page.resolve()
            if page.suffix == ".html" and page.is_relative_to(inside) and page.is_file():
                return page
        except (OSError, ValueError, RuntimeError):
            continue
    return None


def section_link(report: Path, key: str) -> str:
    """A ``file:`` URI of the page, at the item's anchor (letters, digits, ``._-``)."""
    return f"{Path(report).absolute().as_uri()}#{anchor_of(key)}"
