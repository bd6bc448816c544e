"""``nanoframes measure COMP [--frame N] [--json]``: every text run's face, size and ink box.

A run is one line a ``<text>`` draws (a wrapped text has several). The box is
ThorVG's own bounds query for exactly what the frame's document draws (after
frame text, fit, wrap and anchor), never a probe render. ``canvas`` is the box
in canvas pixels, through every transform above the text in this frame (the
axis-aligned bounds when rotated) and a declared viewBox (xMidYMid meet); the
JSON ``box`` is the same ink in the text's own user space. The plain listing
prints the canvas box.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING

from lxml import etree

from ..model.composition import parse
from ..model.geometry import IDENTITY, Matrix, multiply, parse_transform, transform_box
from ..model.svg import REFERENCED_ONLY_TAGS, SVG_NS, local_name
from ..model.timeline import fmt
from .common import add_frame_choice, frame_index

if TYPE_CHECKING:
    from ..text.layout import Run


def register(sub) -> None:
    p = sub.add_parser("measure", help="print the face, size and ink box of every text run",
                       description="For one frame, print each text run the document draws: "
                       "the element (id or line), the resolved face, the font-size after "
                       "fitting, and the renderer-exact ink box (x, y, width, height).")
    p.add_argument("composition", type=Path)
    add_frame_choice(p)
    p.add_argument("--json", action="store_true", help="print a JSON list of objects")
    p.set_defaults(func=run)


def measure_runs(path: Path, frame: int | None = None, t: float | None = None) -> list[Run]:
    """The text runs frame ``frame`` (or the instant ``t``) draws, in document order."""
    from ..bake.baker import Baker  # the renderer: imported when measuring, not to parse argv

    comp = parse(path)
    index = frame_index(comp, frame, t)
    baker = Baker(comp)
    baker.layout.runs = []  # layout records each line it places, with its source element
    doc = baker.document(index, t)
    laid = sorted(baker.layout.runs, key=lambda r: (r.element, r.run))
    baker.layout.runs = None
    # Walk what the document draws (a text under an absent group is gone) and take
    # each box through the transforms above it in this frame.
    root = etree.fromstring(doc)
    view = _view_matrix(root, comp.width, comp.height)
    out: list[Run] = []
    pending = iter(laid)
    for el in root.iter(f"{{{SVG_NS}}}text", "text"):
        if any(local_name(a) in REFERENCED_ONLY_TAGS for a in el.iterancestors()):
            continue
        key = (el.get("font-family"), el.get("font-size"), "".join(el.itertext()))
        for r in pending:
            if (r.face, fmt(r.size), r.text) == key:
                x, y, w, h = r.box
                # a character on a curve: its box already went through its own transform
                ctm = _ctm(el.getparent()) if r.along else _ctm(el)
                box = transform_box(multiply(view, ctm), (x, y, x + w, y + h))
                if box is not None:
                    out.append(replace(r, canvas=(box[0], box[1], box[2] - box[0],
                                                  box[3] - box[1])))
                break
    return out


def _ctm(el) -> Matrix:
    m = IDENTITY
    for node in [*reversed(list(el.iterancestors())), el]:
        m = multiply(m, parse_transform(node.get("transform")))
    return m


def _view_matrix(root, width: int, height: int) -> Matrix:
    """viewBox → canvas pixels, uniform and centred (SVG's default xMidYMid meet)."""
    try:
        vx, vy, vw, vh = (float(v) for v in (root.get("viewBox") or "").replace(",", " ")
                          .split())
    except ValueError:
        return IDENTITY
    if vw <= 0 or vh <= 0:
        return IDENTITY
    s = min(width / vw, height / vh)
    return (s, 0.0, 0.0, s, (width - vw * s) / 2 - vx * s, (height - vh * s) / 2 - vy * s)


def _row(run: Run) -> dict:
    out = asdict(run)
    out["box"] = dict(zip(("x", "y", "width", "height"), (round(v, 3) for v in run.box)))
    out["canvas"] = dict(zip(("x", "y", "width", "height"),
                             (round(v, 3) for v in run.canvas or run.box)))
    out["line"] = out.pop("source_line")
    del out["element"]
    return out


def run(args: argparse.Namespace) -> int:
    runs = measure_runs(args.composition, args.frame, args.t)
    if args.json:  # each row's "missing" lists the characters its face cannot draw
        print(json.dumps([_row(r) for r in runs], indent=2, ensure_ascii=False))
    else:
        for r in runs:
            x, y, w, h = r.canvas or r.box  # where the ink lands; --json also gives user space
            print(f"{_who(r)}  {r.face}  {r.size:g}px  x={x:.2f} y={y:.2f} w={w:.2f} "
                  f"h={h:.2f}  {json.dumps(r.text, ensure_ascii=False)}")
        if not runs:
            print("no text drawn in this frame")
    _warn_missing(args.composition, runs)
    return 0


def _who(r: Run) -> str:
    return (f"#{r.id}" if r.id else f"line {r.source_line}") + (f"[{r.run}]" if r.run else "")


def _warn_missing(path: Path, runs: list[Run]) -> None:
    """On stderr, after the listing: what lint calls ``glyph-missing``."""
    from ..text.coverage import describe_missing

    for r in runs:
        if r.missing:
            print(f"warning[glyph-missing]: {path}: {_who(r)}: face {r.face!r} has no glyph "
                  f"for {describe_missing(r.missing)}", file=sys.stderr)
