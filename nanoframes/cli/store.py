"""``nanoframes store``: the reference frame store, and the --store options others share."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..config import Config, find_project_root, load_config
from ..determinism.ledger import read_ledger
from ..errors import NanoframesError
from ..frames.archive import export_tar, import_tar
from ..frames.digest import SHORT
from ..frames.store import ENV, Store, store_location


def add_store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--store", type=Path, metavar="PATH", default=None,
                   help=f"the reference frame store (default: ${ENV}, else [tool.nanoframes] "
                        "store, else .nanoframes/store)")
    p.add_argument("--no-store", action="store_true", dest="no_store",
                   help="do not keep recorded frames in the store")


def store_path(args: argparse.Namespace, config: Config) -> Path | None:
    """The store these options name, or None (--no-store)."""
    return store_location(config.root, config.store, args.store, args.no_store)


def register(sub) -> None:
    p = sub.add_parser(
        "store", help="the reference frame store: where, how big, verify, prune, move",
        description="The content-addressed store of recorded frames "
        "(<store>/<2 hex>/<64 hex>.png; SHA-256 of the decoded RGBA is the name).")
    p.add_argument("--store", type=Path, metavar="PATH", default=None,
                   help=f"the store (default: ${ENV}, else [tool.nanoframes] store, "
                        "else .nanoframes/store)")
    p.add_argument("--ledger", type=Path, metavar="PATH",
                   help="the ledger (default: [tool.nanoframes] ledger)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--verify", action="store_true", help="check every entry's hash")
    action.add_argument("--prune", action="store_true",
                        help="drop entries no ledger frame refers to")
    action.add_argument("--export", type=Path, metavar="FILE.tar", help="write a tar")
    action.add_argument("--import", type=Path, metavar="FILE.tar", dest="import_",
                        help="add a tar's entries, each verified")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = load_config(find_project_root(None))
    root = store_location(config.root, config.store, args.store)
    store = Store(root, warn=None)
    ledger_path = args.ledger.absolute() if args.ledger else config.ledger_path
    out: dict = {"store": str(root)}
    status = 0
    lines: list[str] = []
    if args.verify:
        from ..frames import scenes

        result = store.verify()
        scenes_good, scenes_bad = scenes.verify(store)
        bad = [*result.bad, *scenes_bad]
        out.update(good=result.good, bad=[str(p) for p in bad], scenes_good=scenes_good)
        lines += [f"bad entry: {p}" for p in bad]
        lines.append(f"{result.good} good, {len(result.bad)} bad; scenes: {scenes_good} good, "
                     f"{len(scenes_bad)} bad")
        status = 1 if bad else 0
    elif args.prune:
        if not ledger_path.is_file():  # no ledger would mean "nothing is referenced"
            raise NanoframesError("store-prune-no-ledger",
                                  "--prune needs the ledger whose frames to keep", ledger_path)
        from ..frames import scenes

        link = store.linked(config.root)
        if link is not None:  # a pull request may commit a link: delete nothing through it
            raise NanoframesError("store-linked", "--prune deletes nothing through a "
                                  "symbolic link: name the folder it points to with --store",
                                  link)
        frames, kept_scenes = _recorded(ledger_path)
        dropped = store.prune(frames)
        gone = scenes.prune(store, kept_scenes)
        out.update(pruned=len(dropped), pruned_scenes=len(gone))
        lines.append(f"pruned {len(dropped)} entries no ledger frame refers to, and "
                     f"{len(gone)} scene records no ledger scene refers to")
    elif args.export:
        n = export_tar(store, args.export.absolute())
        out["exported"] = n
        lines.append(f"exported {n} entries to {args.export}")
    elif args.import_:
        from ..determinism.inputs import verified
        from ..frames.scenes import KINDS as SCENE_KINDS
        from ..frames.scenes import believed

        def check(kind: str, digest: str, raw: bytes) -> bool:
            if kind in SCENE_KINDS:  # a scene rebuilds from blobs imported before it
                return believed(store, kind, digest, raw)
            return verified(kind, digest, raw) is not None

        added, rejected = import_tar(store, args.import_.absolute(), check)
        out.update(imported=added, rejected=rejected)
        lines += [f"rejected: {name}" for name in rejected]
        lines.append(f"imported {added} entries, {len(rejected)} rejected")
        status = 1 if rejected else 0
    out.update(_summary(store, ledger_path))
    if args.json:
        out["exit_status"] = status
        print(json.dumps(out, indent=2))
        return status
    print(f"store   {root}")
    print(f"entries {out['entries']} ({out['bytes']:,} bytes)")
    held = out["ledger_frames_held"]
    total = out["ledger_frames"]
    print(f"ledger  {held} of {total} distinct recorded frames held"
          + (f" ({out['ledger']})" if out["ledger"] else ""))
    for line in lines:
        print(line)
    return status


def _recorded(path: Path) -> tuple[set[str], set[str]]:
    """The (short) frame and scene digests of every entry, platform entries included."""
    ledger = read_ledger(path)
    entries = [e for entry in ledger.entries.values()
               for e in (entry, *entry.platforms.values())]
    return ({d[:SHORT] for e in entries for d in e.frame_digests},
            {d[:SHORT] for e in entries for d in e.scene_digests})


def _ledger_frames(path: Path) -> set[str]:
    return _recorded(path)[0]


def _summary(store: Store, ledger_path: Path) -> dict:
    entries = list(store.entries())
    size = sum(p.stat().st_size for p in entries)
    shorts = {p.stem[:SHORT] for p in entries}
    wanted: set[str] = set()
    ledger = None
    if ledger_path.is_file():
        wanted = _ledger_frames(ledger_path)
        ledger = str(ledger_path)
    return {"entries": len(entries), "bytes": size, "ledger": ledger,
            "ledger_frames": len(wanted), "ledger_frames_held": len(wanted & shorts)}
