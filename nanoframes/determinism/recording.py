"""Writing a recording into the ledger: locked, re-read, merged by key, written once.

Two recorders started together (two terminals, two CI shards on one disk, two
``pytest --nf-record`` runs) must both land: each takes an exclusive lock on
``.nanoframes/locks/<ledger>.lock`` in the ledger's project (``lock_path``; the
``filelock`` package), reads the ledger as it is *now*,
applies its own readings by key (``policy.plan_record``) and writes atomically
before letting go. A reader needs no lock: a write is a rename.

A ledger that cannot be read is never silently dropped: without ``force`` the
recording stops with that error; with it, the unreadable file is kept beside
the new one (``digests.json.unreadable-<UTC time>``) and the recording says what
it made of it: git conflict markers merged by key as ``ledger merge`` would,
corrupt entries left out by name, or how many entries it replaced. A file that
is not a regular file, or too large, is refused even with ``force``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from ..config import marked_root, state_dir
from ..errors import NanoframesError
from ..files import write_bytes_atomic
from ..keys import canonical_key
from .ledger import (
    SEAL_BROKEN,
    Entry,
    Ledger,
    RecordSummary,
    merge,
    parse_ledger,
    read_ledger,
    write_ledger,
)
from .ledger_text import conflict_sides, read_bytes, read_text, recovery_hint
from .policy import plan_record
from .threeway import merge_entries
from .verdict import Verdict

LOCK_TIMEOUT_ENV = "NANOFRAMES_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 60.0
# An entry as dumps() writes it: a key four spaces in, opening an object.
_ENTRY_LINE = re.compile(r'^ {4}"((?:[^"\\]|\\.)+)": \{', re.MULTILINE)


@dataclass
class Committed:
    """What one recording did to the ledger on disk."""

    summary: RecordSummary
    refused: list[Verdict] = field(default_factory=list)
    written: bool = False
    replaced: str | None = None  # the note when an unreadable ledger was set aside
    notes: list[str] = field(default_factory=list)  # policy's lines (platform entries)


def lock_path(ledger_path: Path) -> Path:
    """The lock of ``ledger_path``: in its project's ``.nanoframes/`` (never
    committed), under the ledger's path relative to the project; beside a ledger
    that lies in no project. Every recorder of one ledger computes the same path."""
    return _lock_place(ledger_path)[1]


def _lock_place(ledger_path: Path) -> tuple[Path | None, Path]:
    """The ledger's project root (None: in no project) and its lock's path."""
    ledger = Path(ledger_path).absolute()
    ledger = ledger.parent.resolve() / ledger.name
    root = marked_root(ledger.parent)
    if root is None:
        return None, ledger.with_name(ledger.name + ".lock")
    relative = ledger.relative_to(root)
    return root, state_dir(root) / "locks" / relative.with_name(relative.name + ".lock")


def lock_timeout(environ: Mapping[str, str] = os.environ) -> float:
    raw = environ.get(LOCK_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_LOCK_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise NanoframesError("config-invalid", f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number "
                              "of seconds")
    return value


def ledger_lock(ledger_path: Path) -> FileLock:
    """The exclusive lock every writer of ``ledger_path`` takes."""
    root, path = _lock_place(ledger_path)
    try:
        if root is not None:
            state_dir(root, create=True)  # with its .gitignore: the lock is never committed
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NanoframesError("ledger-write", f"cannot write: {exc.strerror}", path) from None
    return FileLock(path, timeout=lock_timeout())


class locked:  # noqa: N801 - used as ``with locked(path):``
    """Hold the ledger's lock; a bounded wait, then one line naming the lock file."""

    def __init__(self, ledger_path: Path) -> None:
        self.ledger_path = ledger_path
        self.lock = ledger_lock(ledger_path)

    def __enter__(self) -> FileLock:
        try:
            self.lock.acquire()
        except Timeout:
            raise NanoframesError(
                "ledger-locked", f"another recorder has held the ledger's lock for over "
                f"{self.lock.timeout:g} s (set {LOCK_TIMEOUT_ENV} to wait longer)",
                self.lock.lock_file) from None
        except OSError as exc:
            raise NanoframesError("ledger-write", f"cannot lock the ledger: {exc.strerror}",
                                  self.lock.lock_file) from None
        return self.lock

    def __exit__(self, *exc_info: object) -> None:
        self.lock.release()


def count_entries(text: str) -> int:
    """How many entries an unreadable ledger seems to hold (both sides of a conflict
    counted once each), for the line that says what ``--force`` replaced."""
    return len(set(_ENTRY_LINE.findall(text)))


def set_aside(path: Path, error: NanoframesError, recovered: str = "") -> str:
    """Keep an unreadable ledger beside the new one; return the line that says so."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    copy = path.with_name(f"{path.name}.unreadable-{stamp}")
    try:
        raw = read_bytes(path)  # the bounded reader: what read_for_recording read
    except OSError as exc:
        raise NanoframesError("ledger-write", f"cannot keep a copy of the unreadable ledger: "
                              f"{exc.strerror}", path) from None
    write_bytes_atomic(copy, raw, code="ledger-write")
    if recovered:
        return f"the ledger could not be read ({error.code}); kept it as {copy.name}; {recovered}"
    n = count_entries(raw.decode("utf-8", "replace"))
    return (f"the ledger could not be read ({error.code}); kept it as {copy.name} and "
            f"replaced its {n} entr{'y' if n == 1 else 'ies'}")


def _merged_conflict(path: Path, error: NanoframesError) -> Ledger:
    """A ledger git left with conflict markers, its two sides merged by key as
    ``nanoframes ledger merge`` merges them (the base from ``diff3`` markers, else
    none: then no entry is dropped and a key that differs keeps ours, named)."""
    def refuse(why: str) -> NanoframesError:
        return NanoframesError("ledger-conflict", f"{why}; nothing written: "
                               f"{recovery_hint(path)}", path, error.line)

    sides = conflict_sides(read_text(path))
    if sides is None:
        raise refuse("its conflict markers do not form whole hunks")
    ledgers = []
    for name, text in zip(("base", "ours", "theirs"), sides):
        try:
            ledgers.append(parse_ledger(text, path) if text is not None else Ledger(path, {}))
        except NanoframesError as exc:
            raise refuse(f"{name} side of the conflict cannot be read ({exc.message})") from None
    entries, from_theirs, conflicts = merge_entries(*(led.entries for led in ledgers))
    how = "with its base" if sides[0] is not None else "without a base (none dropped)"
    line = (f"merged the two sides of its conflict by key {how}: {len(entries)} entries, "
            f"{len(from_theirs)} from theirs")
    if conflicts:
        line += f", kept ours for {len(conflicts)} that differ: {', '.join(conflicts[:5])}" + (
            " ..." if len(conflicts) > 5 else "")
    return Ledger(path, dict(sorted(entries.items())), recovered=line)


def read_for_recording(path: Path, force: bool) -> tuple[Ledger, NanoframesError | None]:
    """The ledger to record into. With ``force``, an unreadable one is recovered as
    far as it can be: conflict markers merged by key, corrupt entries left out (and
    named), anything else read as empty; its error comes back so the caller can set
    the file aside. A file that cannot be read safely (not a regular file, too
    large, unreadable) is refused even then: nothing of it is kept or replaced."""
    try:
        return read_ledger(path), None
    except NanoframesError as exc:
        if not force or exc.code in ("ledger-unreadable", "ledger-too-large"):
            raise
        if exc.code == "ledger-conflict":
            return _merged_conflict(path, exc), exc
        if exc.code == "key-invalid" or (exc.code == "ledger-invalid"
                                         and exc.message.endswith(SEAL_BROKEN)):
            try:
                ledger = read_ledger(path, skip_corrupt=True)
            except NanoframesError:
                return Ledger(path, {}), exc
            ledger.recovered = (f"left out {len(ledger.corrupt)} corrupt entr"
                                f"{'y' if len(ledger.corrupt) == 1 else 'ies'}: "
                                + ", ".join(ledger.corrupt))
            return ledger, exc
        return Ledger(path, {}), exc


def commit(path: Path, fresh: Mapping[str, Entry], *, force: bool = False,
           root: Path | None = None, seen: Iterable[str] | None = None,
           gone_tests: Iterable[str] = (), platform: str | None = None,
           record_hint: str = "--record") -> Committed:
    """Record ``fresh`` (entries by key) into the ledger at ``path`` under its lock.

    ``seen`` and ``root`` are given when the recording covered everything: stale
    entries go. The ledger is written only when something changed (or it is new).
    With ``platform`` (a tag) the readings are recorded as that platform's entries.
    """
    from ..frames.drill import refuse

    refuse("write the ledger")  # nothing drawn under a fire drill may last
    path = Path(path)
    for key in fresh:  # every key written passes the one canonical check (nanoframes/keys.py)
        canonical_key(key, path)
    with locked(path):
        ledger, unreadable = read_for_recording(path, force)
        plan = plan_record(ledger, fresh, force=force, root=root, seen=seen,
                           gone_tests=gone_tests, platform=platform, record_hint=record_hint)
        new, summary = merge(ledger, plan.updates, plan.removed)
        note = None
        if unreadable is not None:
            note = set_aside(path, unreadable, ledger.recovered)
        written = False
        if summary.changed or unreadable is not None or not path.exists():
            write_ledger(new)
            written = True
    return Committed(summary, plan.refused, written, note, plan.notes)
