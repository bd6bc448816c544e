"""Text laid along a curve (``data-curve-d``, ``data-curve-circle``) that does not fit it."""

from __future__ import annotations

from ..errors import NanoframesError
from .findings import WARNING, Finding, finding


def check(context) -> list[Finding]:
    """``curve-overflow``: the text's measured advances add up to more than the curve's
    length, so the last characters run off its end (they continue along the last
    tangent, or before the start with ``text-anchor`` middle/end)."""
    baker = context.baker
    if baker is None:
        return []
    from ..bake.tree import text_content

    layouts = baker.layout
    out = []
    for i, spec in layouts.specs.items():
        if spec.curve is None:
            continue
        el = context.comp.elements[i]
        try:
            lay = layouts.layout(i, layouts.content(i, text_content(el), 0.0))
        except NanoframesError:
            continue  # the render reports it
        if lay.advance > lay.length:
            out.append(finding(WARNING, "curve-overflow", el, None,
                               f"the text needs {lay.advance:.1f} px along the curve, which "
                               f"is {lay.length:.1f} px long; shorten the text, lower the "
                               "font-size or lengthen the curve"))
    return out
