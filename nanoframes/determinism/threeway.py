"""Three-way merge of ledgers, by key: what git cannot do with a JSON file.

Two branches that each record a composition touch neighbouring lines of
``tests/digests.json``, and git's line merge leaves conflict markers where
nothing conflicts. Merged by key, per entry:

- the same on both sides (or changed the same way): that;
- changed (added, updated, removed) on one side only: that side;
- changed differently on both: a conflict, named; ours is kept for it, so the
  result is always a valid ledger.

Partial ledgers (one per machine or CI shard) merge the same way, with an empty
or missing base. Platform entries merge one by one, apart from their primary:
two machines that each record their own platform entry both land.
``nanoframes ledger merge BASE OURS THEIRS`` writes the result over OURS, which
makes it a git merge driver (``%O %A %B``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import NanoframesError
from .ledger import Entry, Ledger, read_ledger, write_ledger


@dataclass(frozen=True)
class MergeResult:
    ledger: Ledger
    from_theirs: list[str]  # keys whose entry (or removal) came from theirs
    conflicts: list[str]    # changed differently on both sides: ours kept

    @property
    def exit_status(self) -> int:
        return 1 if self.conflicts else 0


def merge_entries(base: dict[str, Entry], ours: dict[str, Entry],
                  theirs: dict[str, Entry]) -> tuple[dict[str, Entry], list[str], list[str]]:
    """The merged entries, the keys taken from theirs, and the conflicting keys
    (a platform entry's named ``KEY [platform TAG]``)."""
    primary, from_theirs, conflicts = _merge_three(*(
        {k: getattr(e, "primary", e) for k, e in side.items()} for side in (base, ours, theirs)))
    merged: dict[str, Entry] = {}
    for key, entry in primary.items():
        sides = [getattr(side.get(key), "platforms", {}) for side in (base, ours, theirs)]
        platforms, taken, clashed = _merge_three(*sides)
        from_theirs += [f"{key} [platform {tag}]" for tag in taken]
        conflicts += [f"{key} [platform {tag}]" for tag in clashed]
        merged[key] = dataclasses.replace(entry, platforms=platforms) if platforms else entry
    return merged, sorted(from_theirs), sorted(conflicts)


def _merge_three(base: Mapping[str, Entry], ours: Mapping[str, Entry],
                 theirs: Mapping[str, Entry]) -> tuple[dict[str, Entry], list[str], list[str]]:
    merged: dict[str, Entry] = {}
    from_theirs: list[str] = []
    conflicts: list[str] = []
    for key in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if o == t or t == b:
            chosen = o
        elif o == b:
            chosen = t
            from_theirs.append(key)
        else:
            chosen = o
            conflicts.append(key)
        if chosen is not None:
            merged[key] = chosen
    return merged, from_theirs, conflicts


def _side(path: Path) -> Path:
    """``path``, refused if it is an empty regular file (a truncated or emptied side)."""
    try:
        empty = path.stat().st_size == 0 and path.is_file()
    except OSError:
        empty = False  # missing or unreadable: read_ledger says which
    if empty:
        raise NanoframesError("ledger-corrupt", "the file is empty (0 bytes), not a ledger; "
                              "a side with no entries is /dev/null", path)
    return path


def merge_files(base: Path, ours: Path, theirs: Path) -> MergeResult:
    """Merge three ledger files and write the result over ``ours`` (atomically; git's
    ``%A`` is a temp file of git's own, so no lock file is left beside it).

    Any of the three may be missing, or ``/dev/null``: an empty ledger. The base
    may also be an empty file (git's ``%O`` when the sides share no ancestor); an
    empty OURS or THEIRS is ``ledger-corrupt``, as every other command calls it,
    never "every entry deleted". A side that cannot be read (conflict markers
    included) is an error and nothing is written: a merge never drops entries it
    could not read.
    """
    ours = Path(ours)
    b = read_ledger(Path(base), empty_ok=True)
    o = read_ledger(_side(ours), empty_ok=ours.as_posix() == os.devnull)
    t = read_ledger(_side(Path(theirs)), empty_ok=Path(theirs).as_posix() == os.devnull)
    entries, from_theirs, conflicts = merge_entries(b.entries, o.entries, t.entries)
    merged = Ledger(ours, entries)
    write_ledger(merged)
    return MergeResult(merged, from_theirs, conflicts)
