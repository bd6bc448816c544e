"""``nanoframes check COMP... [--json] [--strict]``: lint compositions (docs/lint.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..lint import ERROR, exit_status, failed, lint_file
from .common import add_allow_fallback


def register(sub) -> None:
    p = sub.add_parser("check", help="lint compositions with stable finding codes",
                       description="Check compositions for mistakes that render silently: "
                       "unknown eases and properties, targets matching nothing, elements off "
                       "the canvas, missing assets, unresolved fonts, safe-margin and palette "
                       "budgets. Exit status 1 when there are errors (or, with --strict, "
                       "warnings), 2 when a composition cannot be rendered at all (a file "
                       "that does not parse, a missing or forbidden asset); codes are listed "
                       "in docs/lint.md.")
    p.add_argument("compositions", type=Path, nargs="+", metavar="COMP")
    p.add_argument("--json", action="store_true",
                   help='print {"ok": ..., "findings": [...]} instead of lines')
    p.add_argument("--strict", action="store_true", help="warnings fail the check too")
    add_allow_fallback(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    findings = [f for path in args.compositions for f in lint_file(path)]
    bad = failed(findings, args.strict)
    if args.json:
        json.dump({"ok": not bad, "findings": [f.as_dict() for f in findings]}, sys.stdout,
                  indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return exit_status(findings, args.strict)
    for f in findings:
        print(f.format())
    errors = sum(f.severity == ERROR for f in findings)
    warnings = len(findings) - errors
    files = len(args.compositions)
    status = "FAILED" if bad else "ok"
    print(f"{status}: {errors} error(s), {warnings} warning(s) in {files} file(s)")
    return exit_status(findings, args.strict)
