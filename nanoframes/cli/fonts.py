"""``nanoframes fonts``: the candidate faces, in resolution order, and how to select each."""

from __future__ import annotations

import argparse
import json

from ..config import load_config
from ..text.fonts import describe_fonts, font_book


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "fonts",
        help="list the font faces text can resolve to",
        description="List the candidate font faces in resolution order (bundled, project "
        "font-dirs, host) with the font-family value that selects each. Text whose family "
        "list names no loaded face draws with the default fallback face.",
    )
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    parser.set_defaults(func=func)


def func(args: argparse.Namespace) -> int:
    rows = describe_fonts(font_book(load_config()))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    header = ("NAME", "ORIGIN", "SELECT WITH", "PATH")
    table = [(r["name"], r["origin"], r["selector"], _note(r)) for r in rows]
    widths = [max(len(header[i]), *(len(t[i]) for t in table)) for i in range(3)] if table \
        else [len(h) for h in header[:3]]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)) + "  " + header[3])
    for row, (name, origin, selector, note) in zip(rows, table):
        print("  ".join(v.ljust(w) for v, w in zip((name, origin, selector), widths))
              + "  " + row["path"] + note)
    fallback = next((r for r in rows if r["default"]), None)
    if fallback:
        print(f"\n{len(rows)} faces; generic families and unknown lists fall back to "
              f"{fallback['name']} ({fallback['family']}).")
    return 0


def _note(row: dict) -> str:
    if row["default"]:
        return "  (default fallback)"
    if row["refused"]:
        return f"  (refused, {row['refused']})"
    if not row["reachable"]:
        return "  (shadowed by an earlier face)"
    return ""
