"""``nanoframes review``: pending readings one at a time, in a terminal
(nanoframes/evidence/review.py says what is shown; acceptance.py writes)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .store import add_store_args, store_path

EPILOG = """\
For each pending reading (kept by the last check, or those of a CI run's
artifacts with --from): its verdict as computed against your ledger, the moved
inputs in words, the pixel line and when it moved; then one key (no Enter):

  a  accept: write it into the ledger (a regression asks again; a reading under
     another toolchain than the primary's may become a platform entry)
  r  reject: forget it (the ledger is not touched)
  s  skip: leave it pending
  o  open its section of the HTML report
  q  quit

Without a terminal: nanoframes accept KEY..., accept --all-changed, reject.
"""


def register(sub) -> None:
    p = sub.add_parser("review", help="review pending readings one by one: accept, reject, skip",
                       description="Review what the last check read, one composition at a time.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--from", type=Path, dest="source", metavar="DIR|ZIP", default=None,
                   help="the pending readings of a CI run's artifacts (folder or zip)")
    p.add_argument("--ledger", type=Path, metavar="PATH", default=None)
    add_store_args(p)
    p.set_defaults(func=run)


def _ask(prompt: str) -> str:
    """A line (``type yes``): read with Enter."""
    try:
        return input(prompt).strip().lower()
    except EOFError:
        return "q"


def _key(prompt: str) -> str:
    """One key press, no Enter (the terminal in cbreak mode for that one read: it
    still turns Ctrl-C into an interrupt and its output is unchanged); a line where
    the terminal cannot be put in that mode. Enter and spaces are skipped, an
    escape sequence (an arrow key) is read whole and answers nothing known."""
    try:
        import termios
        import tty
    except ImportError:  # no termios (Windows): a line
        return _ask(prompt)
    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        return _ask(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    try:
        tty.setcbreak(fd)
        while True:
            data = os.read(fd, 1)
            if not data or data == b"\x04":  # end of input, Ctrl-D
                key = "q"
                break
            if data in (b"\r", b"\n", b" "):
                continue
            if data == b"\x1b":
                _drain(fd)
                key = "?"
                break
            key = data.decode("latin-1").lower()
            break
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    print(key if key.isprintable() else "")
    return key


def _drain(fd: int) -> None:
    """The rest of an escape sequence: what arrives with it."""
    import select

    while select.select([fd], [], [], 0.05)[0]:
        if not os.read(fd, 16):
            return


def run(args: argparse.Namespace) -> int:
    from ..config import load_config, project_root
    from ..determinism.acceptance import accept, offers_platform
    from ..determinism.ledger import read_ledger
    from ..determinism.pending import forget, load
    from ..determinism.platforms import platform_tag
    from ..evidence.review import (
        CHOICES,
        is_regression,
        report_of,
        section_link,
        shown_lines,
        verify,
    )

    if not sys.stdin.isatty():
        print("nanoframes review: needs a terminal; without one: nanoframes accept KEY..., "
              "accept --all-changed, nanoframes reject", file=sys.stderr)
        return 2
    config = load_config(project_root())
    source, pending = load(config.root, args.source)
    ledger_path = args.ledger.absolute() if args.ledger else config.ledger_path
    store = store_path(args, config)
    report = report_of(source, config.root)
    counts = {"accepted": 0, "rejected": 0, "skipped": 0}
    items = [pending[k] for k in sorted(pending)]
    if not items:
        print("nothing pending: the last check matched everything")
        return 0
    refused = False
    for n, item in enumerate(items, 1):
        ledger = read_ledger(ledger_path, empty_ok=True)
        print(f"\n({n}/{len(items)})")
        problem = verify(item, source, store, elsewhere=args.source is not None)
        if problem:
            print(f"{item.key}: {problem}")
        for line in shown_lines(item, ledger, config, store, own=source.own):
            print(line)
        while True:
            choice = _key(f"{CHOICES}? ")
            if choice == "o":
                if report is None:
                    print("no report: check with --html PATH (or --nf-html) to have one")
                else:
                    import webbrowser

                    link = section_link(report, item.key)  # file:///….html#k-…, built here
                    print(f"opening {link}")
                    webbrowser.open(link)
                continue
            if choice in ("a", "r", "s", "q"):
                break
            print("type a, r, s, o or q")
        if choice == "q":
            break
        if choice == "s":
            counts["skipped"] += 1
            continue
        if choice == "r":
            if args.source is None:
                forget(config.root, [item.key])
            print(f"rejected {item.key}")
            counts["rejected"] += 1
            continue
        force = False
        if is_regression(item, ledger):
            force = _ask("a regression: the same inputs drew other pixels. Accept it anyway? "
                         "type yes: ") == "yes"
            if not force:
                print(f"left pending {item.key}")
                counts["skipped"] += 1
                continue
        platform = None
        if args.source is None and offers_platform(item, ledger):  # --from: accept decides
            tag = platform_tag()
            if _key(f"read under another toolchain than the primary entry's: record it as "
                    f"platform entry {tag} beside the primary instead? [y/N] ") == "y":
                platform = tag
        out = accept([item], source, config=config, ledger_path=ledger_path, store_root=store,
                     force=force, platform=platform, from_elsewhere=args.source is not None)
        for line in out.accepted + ["  " + note for note in out.notes]:
            print(line)
        for line in out.refused:
            print(f"refused {line}")
            refused = True
        if out.keys:
            counts["accepted"] += 1
            if args.source is None:
                forget(config.root, out.keys)
    print(", ".join(f"{v} {k}" for k, v in counts.items()) +
          (f"; the ledger {ledger_path}: review and commit it" if counts["accepted"] else ""))
    return 1 if refused else 0
