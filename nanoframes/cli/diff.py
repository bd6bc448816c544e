"""``nanoframes diff``: how two frames differ, in numbers and pictures.

``diff A.png B.png`` compares two PNG files. ``diff COMP --frame N`` compares
frame N as recorded (the store's frame of the ledger entry) with the frame drawn
now, and writes expected, actual and diff PNGs side by side in a folder: the
command a failure names for its first differing frame."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..files import write_bytes_atomic


def register(sub) -> None:
    from .store import add_store_args

    p = sub.add_parser(
        "diff", help="compare two PNG frames, or a composition's frame with its recorded one",
        description="Compare two frames pixel by pixel (straight RGBA): two PNG files, or "
        "frame N of a composition as recorded (from the store) and as drawn now. "
        "Exit 0 identical, 1 different, 2 unreadable, of different sizes, or no reference.")
    p.add_argument("a", type=Path, metavar="A.png|COMP",
                   help="the expected frame, or a composition (with --frame)")
    p.add_argument("b", type=Path, nargs="?", metavar="B.png", help="the actual frame")
    p.add_argument("--frame", type=int, metavar="N", default=None,
                   help="with a composition: the frame to compare with its recorded one")
    p.add_argument("--key", metavar="KEY", default=None,
                   help="with --frame: the ledger entry (default: the file's own key; a "
                        "test's node id for a composition nf.check judged)")
    p.add_argument("-o", "--output", type=Path, metavar="PATH",
                   help="two PNGs: write the difference made visible (red over the dimmed "
                        "A); --frame: the folder for expected, actual and diff (default "
                        ".nanoframes/diff of the project)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_store_args(p)
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

    if args.frame is not None or args.b is None:
        return _against_store(args)
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


def _against_store(args: argparse.Namespace) -> int:
    """``diff COMP --frame N``: the recorded frame, the frame now, and their diff."""
    from ..config import load_config, project_root, state_dir
    from ..errors import NanoframesError
    from ..evidence.pixels import against_store
    from ..frames.compare import amplify_diff, compare
    from ..frames.png import encode_png
    from ..model.svg import composition_stem
    from .store import store_path

    if args.frame is None or args.b is not None:
        print("nanoframes diff: give two PNG files, or one composition and --frame N",
              file=sys.stderr)
        return 2
    config = load_config(project_root([args.a]))
    try:
        expected, actual, key = against_store(args.a, args.frame, config,
                                              store_path(args, config), args.key)
    except NanoframesError as exc:
        print(f"nanoframes: {exc}", file=sys.stderr)
        return 2
    diff = compare(expected, actual, args.frame)
    # By default under the project's .nanoframes/ (which ignores itself): nothing for git.
    folder = args.output if args.output is not None else Path(os.path.relpath(
        state_dir(config.root, create=True, code="output-failed") / "diff"))
    stem = f"{composition_stem(args.a.name)}-{args.frame}"
    pictures = {"expected": expected, "actual": actual}
    if diff.size is None:
        pictures["diff"] = amplify_diff(expected, actual)
    written = {}
    for role, rgba in pictures.items():
        path = folder / f"{stem}-{role}.png"
        write_bytes_atomic(path, encode_png(rgba), code="output-failed", durable=False)
        written[role] = str(path)
    status = 1 if diff.size is not None or diff.pixels else 0
    if args.json:
        print(json.dumps(dict(diff.to_json(), key=key, files=written, identical=diff.identical,
                              exit_status=status), indent=2))
        return status
    print(f"frame {args.frame} of {key}, recorded → now: {diff.numbers()}")
    for role, path in written.items():
        print(f"  {role:<9}{path}")
    return status
