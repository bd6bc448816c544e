"""``nanoframes diff A.png B.png``: how two frames differ, in numbers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..files import write_bytes_atomic


def register(sub) -> None:
    p = sub.add_parser(
        "diff", help="compare two PNG frames: differing pixels, max channel delta, bbox",
        description="Compare two frames pixel by pixel (straight RGBA). Exit 0 identical, "
        "1 different, 2 unreadable or of different sizes.")
    p.add_argument("a", type=Path, metavar="A.png", help="the expected frame")
    p.add_argument("b", type=Path, metavar="B.png", help="the actual frame")
    p.add_argument("-o", "--output", type=Path, metavar="diff.png",
                   help="write the difference made visible (red over the dimmed A)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _read(path: Path):
    from ..frames.png import decode_png

    try:
        return decode_png(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable image: one line, exit 2
        reason = getattr(exc, "strerror", None) or str(exc)
        print(f"nanoframes: {path}: error[image-unreadable]: {reason}", file=sys.stderr)
        return None


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: building the command line loads no NumPy
    from ..frames.compare import amplify_diff, compare
    from ..frames.digest import frame_digest
    from ..frames.png import encode_png

    a, b = _read(args.a), _read(args.b)
    if a is None or b is None:
        return 2
    diff = compare(a, b)
    status = 2 if diff.size is not None else (1 if diff.pixels else 0)
    if args.output is not None and diff.size is None:
        write_bytes_atomic(args.output, encode_png(amplify_diff(a, b)), code="output-failed",
                           durable=False)
    if args.json:
        data = diff.to_json()
        data.pop("frame")
        data.update(a=str(args.a), b=str(args.b), a_digest=frame_digest(a),
                    b_digest=frame_digest(b), identical=diff.identical, exit_status=status,
                    diff=str(args.output) if args.output is not None and diff.size is None
                    else None)
        print(json.dumps(data, indent=2))
        return status
    if diff.size is not None:
        (ew, eh), (aw, ah) = diff.size
        print(f"size differs: {args.a} is {ew}×{eh}, {args.b} is {aw}×{ah}")
    elif not diff.pixels:
        print("identical")
    else:
        x0, y0, x1, y1 = diff.bbox
        print(f"{diff.pixels} px differ, max ±{diff.max_delta}/255, "
              f"within ({x0},{y0})–({x1},{y1})")
    return status
