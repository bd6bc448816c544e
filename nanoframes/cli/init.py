"""``nanoframes init``: set an existing repository up (nanoframes/adopt/project.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

EPILOG = """\
Writes, each only where it is missing (never replacing a file it did not write;
a second run changes nothing): [tool.nanoframes] and the pytest settings in
pyproject.toml (formatting and comments kept), the .gitignore and .gitattributes
lines, and the CI workflow .github/workflows/nanoframes.yml (docs/ci.md).
Prints what it wrote, and the git config command that enables the ledger's
merge driver (git keeps it per clone).
"""


def register(sub) -> None:
    p = sub.add_parser("init", help="set a repository up: configuration, git files, CI workflow",
                       description="Set an existing repository up to check its compositions.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("directory", nargs="?", type=Path, default=None, metavar="DIR",
                   help="the project (default: the one around the current directory)")
    p.add_argument("--branch", default=None,
                   help="the branch whose pushes the workflow checks (default: the branch "
                        "checked out, else the one origin/HEAD names, else main)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..adopt.project import MERGE_DRIVER, init
    from ..config import project_root

    root = args.directory.resolve() if args.directory else project_root()
    setup = init(root, branch=args.branch)
    for line in setup.wrote:
        print(f"wrote  {line}")
    for line in setup.kept:
        print(f"kept   {line}")
    if not setup.wrote:
        print("nothing to do: the project is set up")
    for note in setup.notes:
        print(f"note   {note}")
    for command in setup.commands:
        if command != MERGE_DRIVER:
            print(command)
    if MERGE_DRIVER in setup.commands:
        print("enable the ledger's merge driver (once per clone):")
        print(f"  {MERGE_DRIVER}")
    if setup.wrote:
        print("then record the ledger and commit it with these files: pytest --nf-record")
    return 0
