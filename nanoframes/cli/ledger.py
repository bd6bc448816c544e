"""``nanoframes ledger merge``: a three-way merge of ledgers by key (a git merge driver)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..determinism.accept import record_command
from ..determinism.ledger import is_test_key
from ..determinism.threeway import merge_files

EPILOG = """\
As a git merge driver (once per clone; .gitattributes already names it):

  git config merge.nanoframes.driver "nanoframes ledger merge %O %A %B"

Partial ledgers (one per machine or CI shard) merge onto an empty base:

  nanoframes ledger merge /dev/null shard-1.json shard-2.json

exit status:
  0  merged; OURS now holds the result
  1  merged, but some keys changed differently on both sides (named; ours kept)
  2  a ledger cannot be read (conflict markers, bad JSON) or OURS cannot be
     written; nothing written
"""


def register(sub) -> None:
    p = sub.add_parser("ledger", help="ledger maintenance: merge ledgers by key",
                       description="Ledger maintenance.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    m = actions.add_parser(
        "merge", help="three-way merge of ledgers by key; writes the result over OURS",
        description="Merge three versions of a ledger by key: a key changed on one side "
        "takes that side; a key changed differently on both sides is a conflict (named; "
        "ours is kept, so the result is a valid ledger). The result replaces OURS.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    m.add_argument("base", type=Path, metavar="BASE",
                   help="the common ancestor (git's %%O); missing or empty = no entries")
    m.add_argument("ours", type=Path, metavar="OURS",
                   help="our version (git's %%A); the result is written here")
    m.add_argument("theirs", type=Path, metavar="THEIRS", help="their version (git's %%B)")
    m.set_defaults(func=run_merge)


def run_merge(args: argparse.Namespace) -> int:
    result = merge_files(args.base, args.ours, args.theirs)
    for key in result.conflicts:
        # A test's entry is drawn by its test; a file's by `nanoframes digest`.
        command = (record_command("--nf-record", [key]) if is_test_key(key)
                   else record_command("--record", [key]))
        print(f"CONFLICT {key}: changed differently on both sides; kept ours "
              f"(re-record it: `{command}`)")
    n = len(result.ledger.entries)
    print(f"merged {args.ours}: {n} entr{'y' if n == 1 else 'ies'}, "
          f"{len(result.from_theirs)} from theirs, {len(result.conflicts)} conflict"
          f"{'' if len(result.conflicts) == 1 else 's'}")
    return result.exit_status
