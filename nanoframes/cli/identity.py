"""``nanoframes identity COMP``: the four inputs a frame is a function of."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..config import find_project_root, load_config, relative_key


def register(sub) -> None:
    p = sub.add_parser(
        "identity", help="print a composition's identity",
        description="Print the four identity components (source, media, fonts, toolchain) "
        "and the toolchain's four parts, with the files media and fonts cover (a face "
        "from this machine's font directories is marked host).")
    p.add_argument("composition", type=Path)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: building the command line imports no renderer
    from ..determinism.reading import film_items, film_toolchain, source_identity
    from ..frames.film import Film

    config = load_config(find_project_root(args.composition.absolute().parent))
    film = Film.open(args.composition, config.root)
    identity = source_identity(film.source)
    parts = film_toolchain(film.source)
    media, fonts, host = film_items(film.source)
    if args.json:
        print(json.dumps({
            "key": relative_key(args.composition, config.root),
            "identity": identity.as_dict(),
            "toolchain_parts": parts,
            "media_files": dict(media),
            "font_files": dict(fonts),
            "host_fonts": host,
        }, indent=2))
        return 0
    print(relative_key(args.composition, config.root))
    for name, value in identity.as_dict().items():
        print(f"  {name:<10} {value}")
        covered = {"media": media, "fonts": fonts}.get(name, [])
        for file, digest in covered:
            where = (f"  host: {host[file]} (not bundled, not in font-dirs: does not "
                     "travel)") if name == "fonts" and file in host else ""
            print(f"    {file}  {digest[:16]}{where}")
        if name == "toolchain":
            width = max(14, *(len(part) for part in parts))  # sonames run longer
            for part in parts:
                print(f"    {part:<{width}} {parts[part]}")
    return 0
