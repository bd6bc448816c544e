"""The reference frame store: every distinct frame a recording digested, as PNG.

Content-addressed: ``<store>/<first two hex digits>/<64-hex frame digest>.png``,
a lossless PNG whose decoded straight RGBA hashes (SHA-256, ``frame_digest``)
to its own name. Anyone can verify an entry with any PNG reader, and anyone
can add one. Writes are atomic (``files.atomic_target``), so two writers of one
digest are harmless: both write the same pixels and the last rename wins.

A read verifies the hash; a bad entry is treated as missing and said so once.
A store that cannot be written is never an error: the recording goes on, and
the caller says so in one warning line (``Store.write_problem``).

The ledger keeps only the first 16 hex digits of each frame digest, so a
lookup by a recorded (short) digest finds the entry by prefix.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import STATE_DIR
from ..errors import NanoframesError
from ..files import read_limited, workers_write_under, write_bytes_atomic
from .digest import SHORT, frame_digest

if TYPE_CHECKING:
    import numpy as np

ENV = "NANOFRAMES_STORE"
DEFAULT = f"{STATE_DIR}/store"
_HEX = frozenset("0123456789abcdef")

Warn = Callable[[str], None]
RecordCheck = Callable[[str, str, bytes], bool]


def warn_stderr(message: str) -> None:
    print(f"nanoframes: warning: {message}", file=sys.stderr)


def encode_png(rgba: np.ndarray) -> bytes:
    """Lossless PNG bytes of a straight RGBA frame: ``frames.png``'s encoder (the
    one ``render`` writes with), imported on first use so that the store's
    command line loads no NumPy."""
    from .png import encode_png as encode

    return encode(rgba)


def decode_png(data: bytes | Path) -> np.ndarray:
    """Straight RGBA of a PNG (bytes or a path). Raises on anything unreadable."""
    from .png import decode_png as decode

    return decode(data)


def is_digest(name: str) -> bool:
    return len(name) == 64 and set(name) <= _HEX


def store_location(root: Path, configured: str | None = None, override: str | Path | None = None,
                   disabled: bool = False, environ=os.environ) -> Path | None:
    """Where the store is: ``override`` (--store), else $NANOFRAMES_STORE, else
    ``[tool.nanoframes] store``, else ``.nanoframes/store``; relative paths are
    relative to the project root. None when turned off (--no-store)."""
    if disabled:
        return None
    chosen = override or environ.get(ENV) or configured or DEFAULT
    path = Path(chosen).expanduser()
    return path if path.is_absolute() else (root / path)


@dataclass
class VerifyResult:
    good: int
    bad: list[Path]


class Store:
    """One store directory. Nothing is created until the first write."""

    def __init__(self, root: str | Path, warn: Warn | None = warn_stderr) -> None:
        self.root = Path(root)
        self.warn = warn
        self.write_problem: str | None = None  # why the last failed write failed
        self._known: set[str] = set()           # digests this process saw present
        workers_write_under(self.root)  # a signal's teardown sweeps what they left

    # --- paths -------------------------------------------------------------------

    def path_for(self, digest: str) -> Path:
        return self.root / digest[:2] / f"{digest}.png"

    def entries(self) -> Iterator[Path]:
        """Every entry file, sorted (names that are not digests are not entries; a
        folder or an entry that is a symbolic link is not followed, and only regular
        files are entries: ``--prune`` deletes only what lies in the store itself,
        and ``--verify`` never opens a FIFO)."""
        for sub in _listed(self.root):
            if len(sub.name) != 2 or not sub.is_dir(follow_symlinks=False):
                continue
            for entry in _listed(Path(sub.path)):
                stem, dot, ext = entry.name.partition(".")
                if dot and ext == "png" and is_digest(stem) and stem[:2] == sub.name \
                        and entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)

    # --- writing -----------------------------------------------------------------

    def has(self, digest: str) -> bool:
        if digest in self._known:
            return True
        if self.path_for(digest).is_file():
            self._known.add(digest)
            return True
        return False

    def put(self, rgba: np.ndarray, digest: str | None = None) -> bool:
        """Keep a frame unless it is already kept; False when the store cannot be
        written (the reason is in ``write_problem``; nothing is raised)."""
        digest = digest or frame_digest(rgba)
        if self.write_problem is not None:  # one failure is enough: stop trying
            return False
        if self.has(digest):
            return True
        return self.put_png(digest, encode_png(rgba))

    def put_png(self, digest: str, data: bytes) -> bool:
        if not self._put_file(self.path_for(digest), data):
            return False
        self._known.add(digest)
        return True

    def _ignore_file(self) -> None:
        """A new store holds a ``.gitignore`` of ``*``: it never lands in a commit."""
        marker = self.root / ".gitignore"
        if not marker.exists():
            write_bytes_atomic(marker, b"*\n", code="store-write-failed", durable=False)

    def missing(self, digests: Iterable[str]) -> list[str]:
        """Of these full digests, those not in the store (a stat each; no decoding)."""
        return [d for d in dict.fromkeys(digests) if not self.has(d)]

    # --- what recorded inputs were made of (determinism/inputs.py) ------------------

    def record_path(self, kind: str, digest: str) -> Path:
        """``inputs/<kind>/<digest>.json`` (``.z`` for the compressed scenes and their
        blobs, frames/scenes.py): beside the frames, never taken for one (``entries``
        reads two-digit folders only), so verify and prune leave it."""
        return self.root / "inputs" / kind / f"{digest}{record_suffix(kind)}"

    def has_record(self, kind: str, digest: str) -> bool:
        return self.record_path(kind, digest).is_file()

    def record_candidates(self, kind: str, short: str) -> list[str]:
        """Digests of the ``kind`` records that start with ``short`` (a ledger's 16 hex)."""
        short = short.lower()
        if len(short) < 2 or not set(short) <= _HEX:
            return []
        suffix = record_suffix(kind)
        folder = self.root / "inputs" / kind
        return sorted(p.name[:-len(suffix)] for p in folder.glob(f"{short}*{suffix}")
                      if is_digest(p.name[:-len(suffix)])) if folder.is_dir() else []

    def put_record(self, kind: str, digest: str, data: bytes) -> bool:
        path = self.record_path(kind, digest)
        if path.is_file():
            return True
        return self._put_file(path, data)

    def get_record(self, kind: str, digest: str) -> bytes | None:
        if not is_digest(digest):
            return None
        limit = MAX_COMPRESSED if kind in COMPRESSED_KINDS else MAX_RECORD
        try:  # a regular file within its kind's limit: never a FIFO, a device, a bomb
            return read_limited(self.record_path(kind, digest), limit)
        except OSError:
            return None

    def _put_file(self, path: Path, data: bytes) -> bool:
        if self.write_problem is not None:
            return False
        try:
            linked = self._linked_folder(path)
            if linked is not None:  # a pull request can commit one: never written through
                raise NanoframesError("store-linked", "nothing is written through a "
                                      "symbolic link inside the store", linked)
            self._ignore_file()
            write_bytes_atomic(path, data, code="store-write-failed", durable=False)
        except (NanoframesError, OSError) as exc:
            self.write_problem = str(exc)
            return False
        return True

    def _linked_folder(self, path: Path) -> Path | None:
        """The first folder between the store and ``path`` (``ab/``, ``inputs/KIND/``:
        folders only nanoframes makes) that is a symbolic link, else None."""
        folder, links = path.parent, []
        while folder != self.root and self.root in folder.parents:
            links.append(folder)
            folder = folder.parent
        return next((f for f in reversed(links) if f.is_symlink()), None)

    # --- reading -----------------------------------------------------------------

    def candidates(self, short: str) -> list[Path]:
        """Entries whose digest starts with ``short`` (a ledger's 16 hex digits)."""
        short = short.lower()
        if len(short) < 2 or not set(short) <= _HEX:
            return []
        folder = self.root / short[:2]
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(f"{short}*.png") if is_digest(p.stem))

    def get(self, digest: str) -> np.ndarray | None:
        """The frame whose (full or short) digest is ``digest``, verified; None when
        the store does not hold it. A bad entry is reported and treated as missing."""
        for path in self.candidates(digest):
            rgba = self.read_entry(path)
            if rgba is not None:
                return rgba
        return None

    def read_entry(self, path: Path, quiet: bool = False) -> np.ndarray | None:
        try:  # read first, bounded: a FIFO or a device named like an entry is not one
            rgba = decode_png(read_limited(path, MAX_ENTRY))
        except Exception as exc:  # noqa: BLE001 - any unreadable file is a bad entry
            if not quiet and self.warn:
                self.warn(f"{path}: a bad store entry (unreadable: {exc}); treated as missing")
            return None
        if frame_digest(rgba) != path.stem:
            if not quiet and self.warn:
                self.warn(f"{path}: a bad store entry (its pixels do not hash to its name); "
                          "treated as missing")
            return None
        return rgba

    # --- maintenance -------------------------------------------------------------

    def verify(self) -> VerifyResult:
        good, bad = 0, []
        for path in self.entries():
            if self.read_entry(path, quiet=True) is None:
                bad.append(path)
            else:
                good += 1
        return VerifyResult(good, bad)

    def prune(self, keep_short: set[str]) -> list[Path]:
        """Drop entries no recorded (short) digest refers to; return what was dropped."""
        dropped = []
        for path in list(self.entries()):
            if path.stem[:SHORT] not in keep_short:
                path.unlink()
                dropped.append(path)
        return dropped

    def records(self) -> Iterator[Path]:
        """Every kept input record (``inputs/<kind>/<digest>.json``), sorted; links
        are not followed (neither a linked folder nor a linked record)."""
        for sub in _listed(self.root / "inputs"):
            if not sub.is_dir(follow_symlinks=False):
                continue
            suffix = record_suffix(sub.name)
            for entry in _listed(Path(sub.path)):
                if entry.name.endswith(suffix) and is_digest(entry.name[:-len(suffix)]) \
                        and entry.is_file(follow_symlinks=False):
                    yield Path(entry.path)

    def linked(self, project: Path) -> Path | None:
        """The first part of the store's path that is a symbolic link: the store
        folder itself, or a folder between the project root and it when the store
        lies inside the project (where a pull request can commit a link). None
        when there is none; ``--prune`` deletes nothing through one."""
        root = Path(os.path.abspath(self.root))
        project = Path(os.path.abspath(project))
        chain = [root]
        if root.is_relative_to(project):
            chain = [project / Path(*root.relative_to(project).parts[:n])
                     for n in range(1, len(root.relative_to(project).parts) + 1)]
        return next((p for p in chain if p.is_symlink()), None)

def _listed(folder: Path) -> list[os.DirEntry]:
    """A folder's entries sorted by name (none where it cannot be listed)."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


# A frame's RGBA at the largest canvas (model/limits.py MAX_PIXELS) is 256 MiB;
# PNG's row filters and zlib's stored blocks add well under 1% to an incompressible one.
MAX_ENTRY = 260 << 20
MAX_RECORD = 8 << 20  # an input record is text: a larger member is not one
MAX_COMPRESSED = 64 << 20  # a scene or blob record (an inline image, compressed)
COMPRESSED_KINDS = frozenset({"scene", "blob"})  # frames/scenes.py


def record_suffix(kind: str) -> str:
    return ".z" if kind in COMPRESSED_KINDS else ".json"


def unkept_warning(root: Path, digests: Iterable[str]) -> str | None:
    """One warning line when a recording's frames did not all reach the store
    (full disk, read-only, ...), else None. Costs a stat per distinct frame."""
    store = Store(root, warn=None)
    digests = list(dict.fromkeys(digests))
    missing = store.missing(digests)
    if not missing:
        return None
    linked = next(filter(None, (store._linked_folder(store.path_for(d)) for d in missing)), None)
    reason = f"{linked}: error[store-linked]: nothing is written through a symbolic link " \
        "inside the store" if linked is not None else _write_probe(store)
    return (f"the frame store {root} could not keep {len(missing)} of {len(digests)} "
            f"frames ({reason}); the ledger is recorded, pixel evidence for them will "
            f"be missing")


def _write_probe(store: Store) -> str:
    """Why the store cannot be written, found by writing a tiny file."""
    probe = store.root / f".probe.{os.getpid()}"
    try:
        write_bytes_atomic(probe, b"\0" * 4096, code="store-write-failed", durable=False)
        probe.unlink()
    except (NanoframesError, OSError) as exc:
        return str(exc)
    return "a write failed while recording"
