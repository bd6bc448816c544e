"""``nanoframes digest --selftest``: the self-test's options and its printing.

The self-test itself is :mod:`nanoframes.determinism.selftest`; this module only
adds its options to ``digest``'s parser, calls it and prints the result.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..config import find_project_root, load_config
from ..determinism.variations import DEFAULT_PER_FRAME, VARIATIONS


def register_selftest_args(parser) -> None:
    parser.add_argument(
        "--selftest", action="store_true",
        help="render each composition under variations that must not matter (process "
        "layout, frame order, worker pool, ThorVG threads, locale, TZ, hash seed, "
        "de-duplication) and compare frame digests; exit 1 naming any that differ")
    parser.add_argument(
        "--selftest-per-frame", type=int, default=DEFAULT_PER_FRAME, metavar="N",
        help=f"frames given a fresh process each in fresh-process-per-frame "
        f"(default {DEFAULT_PER_FRAME}; 0 = every frame)")
    parser.add_argument(
        "--selftest-variation", action="append", choices=VARIATIONS, metavar="NAME",
        help="run only this variation (repeatable; default: all of "
        f"{', '.join(VARIATIONS)})")


def run_selftest_cli(args) -> int:
    """``nanoframes digest --selftest [PATH...] [--all] [--samples N] [--json]``."""
    from ..determinism.selftest import CompositionSelftest, result_json, run
    from ..determinism.sweep import collect  # the renderer: only when the self-test runs

    if getattr(args, "check", False) or getattr(args, "record", False):
        print("nanoframes digest: --selftest cannot be combined with --check or --record",
              file=sys.stderr)
        return 2
    paths = list(getattr(args, "paths", []) or [])
    start = paths[0] if paths else Path.cwd()
    config = load_config(find_project_root(start))
    targets = collect(paths, config, getattr(args, "all_", False))
    as_json = getattr(args, "json", False)

    def show(one: CompositionSelftest) -> None:
        if not as_json:
            for line in one.lines():
                print(line, flush=True)

    result = run(targets, config, progress=show, samples=getattr(args, "samples", None),
                 per_frame=getattr(args, "selftest_per_frame", DEFAULT_PER_FRAME),
                 variations=getattr(args, "selftest_variation", None) or VARIATIONS)
    if as_json:
        print(json.dumps(result_json(result), indent=2))
    else:
        print(result.lines()[-1])
    return result.exit_status
