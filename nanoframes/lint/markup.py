"""What the SVG markup says that nanoframes does not draw as written: style-sheet
parts it does not apply (``css-unsupported``) and ``<use>`` references that lead
back to themselves, which bake skips (``use-cycle``)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.composition import Composition
from ..model.css import unapplied
from ..model.limits import cyclic_uses
from ..model.svg import href_of
from .findings import WARNING, Finding, finding


def check(comp: Composition) -> Iterator[Finding]:
    for skipped in unapplied(comp.root):
        found = finding(WARNING, "css-unsupported", skipped.style, None,
                        f"{skipped.what} in the style sheet is not applied (nanoframes "
                        "applies rules whose selectors use types, classes, ids, attributes, "
                        "descendant and child combinators; at-rules, pseudo-classes, "
                        "pseudo-elements and sibling combinators are ignored)")
        yield Finding(found.severity, found.code, found.element, found.t, found.message,
                      line=skipped.line or found.line)
    for use in cyclic_uses(comp.root):
        yield finding(WARNING, "use-cycle", use, None,
                      f"<use href={href_of(use)!r}> leads back to itself; it is skipped "
                      "(nothing drawn for it) and the rest of the file draws")
