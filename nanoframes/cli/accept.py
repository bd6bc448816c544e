"""``nanoframes accept`` and ``nanoframes reject``: act on pending readings
(nanoframes/determinism/pending.py, acceptance.py) without drawing anything."""

from __future__ import annotations

import argparse
from pathlib import Path

from .store import add_store_args, store_path

EPILOG = """\
A check (digest --check, pytest --nf-check, nf.check) keeps the fresh reading
of every composition that did not match as pending, in .nanoframes/pending/
(and in DIR/pending/ with --artifacts DIR). accept writes the chosen readings
into the ledger (locked, merged by key) and their frames into the store:

  nanoframes accept KEY...          those keys
  nanoframes accept --all-changed   every pending reading but regressions
  nanoframes accept --from DIR|ZIP  what a CI run's artifacts hold (all of it,
                                    or the KEYs named)
  nanoframes accept --list accept.json
                                    the keys the HTML report's button saved

A reading whose source, media or fonts differ from the local files' is stale
and refused; a regression is accepted only with --force; a reading taken under
another renderer build or other libraries becomes a platform entry tagged
with the runner that read it (on GitHub Actions: ubuntu24-x86_64).

exit status: 0 all accepted; 1 one refused; 2 bad usage or input
"""


def register(sub) -> None:
    p = sub.add_parser("accept", help="accept pending readings into the ledger (no drawing)",
                       description="Accept what a check read, without drawing it again.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("keys", nargs="*", metavar="KEY", help="ledger keys to accept")
    p.add_argument("--all-changed", action="store_true", dest="all_changed",
                   help="every pending reading that is not a regression")
    p.add_argument("--from", type=Path, dest="source", metavar="DIR|ZIP", default=None,
                   help="the pending readings of a CI run's artifacts (folder or zip)")
    p.add_argument("--list", type=Path, dest="list_", metavar="FILE", default=None,
                   help="accept.json saved by the HTML report")
    p.add_argument("--force", action="store_true", help="accept a regression too")
    p.add_argument("--platform", nargs="?", const="", default=None, metavar="TAG",
                   help="as platform entries (TAG: default this machine's)")
    p.add_argument("--ledger", type=Path, metavar="PATH", default=None)
    add_store_args(p)
    p.set_defaults(func=run)

    r = sub.add_parser("reject", help="forget pending readings (the ledger is not touched)",
                       description="Forget pending readings: KEYs, or all of them.")
    r.add_argument("keys", nargs="*", metavar="KEY")
    r.set_defaults(func=run_reject)


def _platform(value: str | None) -> str | None:
    if value is None:
        return None
    from ..determinism.platforms import platform_tag, valid_tag

    return valid_tag(value) if value else platform_tag()


def run(args: argparse.Namespace) -> int:
    from ..config import load_config, project_root
    from ..determinism.acceptance import accept, choose, read_list
    from ..determinism.ledger import read_ledger
    from ..determinism.pending import forget, load

    config = load_config(project_root())
    keys = list(args.keys) + (read_list(args.list_) if args.list_ else [])
    source, pending = load(config.root, args.source)
    if not keys and not args.all_changed:
        if args.source is None:
            print("nanoframes accept: name KEYs, --all-changed, --list FILE or --from DIR|ZIP "
                  f"(pending: {', '.join(sorted(pending)) or 'none'})")
            return 2
        keys = sorted(pending)
    ledger = args.ledger.absolute() if args.ledger else config.ledger_path
    chosen = choose(pending, keys, args.all_changed, read_ledger(ledger, empty_ok=True))
    if not chosen:  # never silent: say what is pending and why none of it was taken
        listed = ", ".join(f"{k} ({p.kind.value})" for k, p in sorted(pending.items()))
        print(f"nothing accepted: --all-changed takes every pending reading but regressions "
              f"(pending: {listed or 'none'}); accept a regression by its KEY with --force")
        return 0
    out = accept(chosen, source, config=config, ledger_path=ledger,
                 store_root=store_path(args, config), force=args.force,
                 platform=_platform(args.platform), from_elsewhere=args.source is not None)
    for line in out.accepted:
        print(line)
    for line in out.notes:
        print(f"  {line}")
    for line in out.refused:
        print(f"refused {line}")
    if args.source is None:
        forget(config.root, out.keys)
    if out.keys:
        print(f"{len(out.keys)} accepted into {ledger}: review and commit it")
    return out.exit_status


def run_reject(args: argparse.Namespace) -> int:
    from ..config import load_config, project_root
    from ..determinism.acceptance import choose
    from ..determinism.pending import forget, load

    config = load_config(project_root())
    _, pending = load(config.root)
    keys = [p.key for p in choose(pending, args.keys)] if args.keys else sorted(pending)
    forget(config.root, keys)
    for key in keys:
        print(f"rejected {key} (its pending reading forgotten; the ledger is unchanged)")
    if not keys:
        print("nothing rejected: no pending readings")
    return 0
