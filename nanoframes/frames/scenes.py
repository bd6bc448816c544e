"""Scenes: the exact document a frame hands to ThorVG, kept by its digest.

A frame's *scene digest* is the SHA-256 of the bytes ``Rasterizer.render`` is
given for it (``Film.document``), the same hash ``Film`` already takes to draw
a held frame once. A recording with the store on keeps each distinct scene
beside the frames (``Store.put_record``, kind ``scene``), so a later check
whose frames differ can say whether the rasterizer drew the same document
differently or was handed another one, and what changed in it
(evidence/scenediff.py).

A scene record is zlib-compressed (level 6, default strategy and window: the
same bytes for the same zlib on every run) and names nothing but itself: the
``data:`` URIs in it (inline images, a megabyte each) are factored out into
``blob`` records keyed by their own SHA-256, so an image held for 120 frames
is kept once. Reading a scene back splices its blobs in again and checks the
SHA-256 of the result against the name; anything that does not rebuild the
exact bytes is missing, never trusted.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from pathlib import Path

from .digest import SHORT
from .store import Store, is_digest, record_suffix

SCENE, BLOB = "scene", "blob"
KINDS = (SCENE, BLOB)
LEVEL = 6
MIN_BLOB = 1024  # a shorter data: URI stays inline: a record each would cost more
_HEADER = b"nanoframes-scene 1\n"
_DATA_URI = re.compile(rb"data:[^\"'<>\s]{%d,}" % MIN_BLOB)
MAX_SCENE = 256 << 20  # the most a scene record may rebuild to (a bound on bad records)


def scene_digest(document: bytes) -> str:
    return hashlib.sha256(document).hexdigest()


def pack(document: bytes) -> tuple[bytes, dict[str, bytes]]:
    """The scene record of ``document`` and its blobs (digest -> data: URI bytes)."""
    blobs: dict[str, bytes] = {}
    body, lines, last = [], [], 0
    removed = 0
    for match in _DATA_URI.finditer(document):
        uri = match.group(0)
        digest = hashlib.sha256(uri).hexdigest()
        blobs[digest] = uri
        body.append(document[last:match.start()])
        lines.append(b"%d %s %d\n" % (match.start() - removed, digest.encode(), len(uri)))
        removed += len(uri)
        last = match.end()
    body.append(document[last:])
    raw = _HEADER + b"%d\n" % len(lines) + b"".join(lines) + b"".join(body)
    return zlib.compress(raw, LEVEL), blobs


def _inflate(data: bytes) -> bytes | None:
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(data, MAX_SCENE)
        return None if inflater.unconsumed_tail else raw
    except zlib.error:
        return None


_REF_LINE = len(b"0 ") + 64 + len(b" 0\n")  # the shortest blob-reference line


def _parts(raw: bytes) -> tuple[list[tuple[int, str, int]], bytes] | None:
    """The blob references and the body of an inflated scene record: one pass over
    the lines (each sliced once), their count bounded by the bytes they would take."""
    if not raw.startswith(_HEADER):
        return None
    end = raw.find(b"\n", len(_HEADER))
    try:
        count = int(raw[len(_HEADER):end]) if end >= 0 else -1
        if not 0 <= count <= (len(raw) - end) // _REF_LINE:
            return None
        refs, pos = [], end + 1
        for _ in range(count):
            stop = raw.find(b"\n", pos)
            if stop < 0:
                return None
            offset, digest, length = raw[pos:stop].split(b" ")
            name = digest.decode("ascii")
            if not is_digest(name):
                return None
            refs.append((int(offset), name, int(length)))
            pos = stop + 1
    except ValueError:  # UnicodeDecodeError included
        return None
    return refs, raw[pos:]


def blob_of(store: Store, digest: str) -> bytes | None:
    raw = store.get_record(BLOB, digest)
    data = None if raw is None else _inflate(raw)
    return data if data is not None and hashlib.sha256(data).hexdigest() == digest else None


def unpack(record: bytes, blob) -> bytes | None:
    """The document a scene record stands for; ``blob(digest)`` gives each blob
    (None: missing). None when the record is unreadable, a blob is missing, or the
    document would rebuild past ``MAX_SCENE`` (known from the lengths the record
    declares, before a blob is read). Each distinct blob is read once."""
    raw = _inflate(record)
    parts = None if raw is None else _parts(raw)
    if parts is None:
        return None
    refs, body = parts
    if len(body) + sum(length for _, _, length in refs) > MAX_SCENE:
        return None
    got: dict[str, bytes | None] = {}
    out, last = [], 0
    for offset, digest, length in refs:
        if digest not in got:
            got[digest] = blob(digest)
        uri = got[digest]
        if uri is None or len(uri) != length or not last <= offset <= len(body):
            return None
        out += [body[last:offset], uri]
        last = offset
    out.append(body[last:])
    return b"".join(out)


def keep(store: Store, digest: str, document: bytes) -> bool:
    """Keep one scene (and its blobs) unless the store holds it; False when the
    store cannot be written (``Store.write_problem`` says why)."""
    if store.has_record(SCENE, digest):
        return True
    record, blobs = pack(document)
    for name, uri in blobs.items():
        if not store.has_record(BLOB, name) and not store.put_record(
                BLOB, name, zlib.compress(uri, LEVEL)):
            return False
    return store.put_record(SCENE, digest, record)  # last: a kept scene has its blobs


def recorded_scene(store: Store, digest: str) -> bytes | None:
    """The scene whose (full, or the ledger's short) digest is ``digest``, rebuilt and
    verified; None when the store does not hold it whole."""
    for name in store.record_candidates(SCENE, digest):
        record = store.get_record(SCENE, name)
        document = None if record is None else unpack(record, lambda d: blob_of(store, d))
        if document is not None and scene_digest(document) == name:
            return document
    return None


def believed(store: Store, kind: str, digest: str, data: bytes) -> bool:
    """Whether an imported record is what its name says: a blob that hashes to it,
    a scene that rebuilds (from blobs the store holds, imported first) to it."""
    if kind == BLOB:
        uri = _inflate(data)
        return uri is not None and hashlib.sha256(uri).hexdigest() == digest
    document = unpack(data, lambda d: blob_of(store, d))
    return document is not None and scene_digest(document) == digest


def portable(document: bytes) -> bytes:
    """A scene as one self-contained file (pending readings' artifacts travel alone)."""
    return zlib.compress(document, LEVEL)


def from_portable(data: bytes, digest: str) -> bytes | None:
    """The scene a :func:`portable` file holds, if it is the one named ``digest``."""
    document = _inflate(data)
    return document if document is not None and scene_digest(document) == digest else None


# --- maintenance (``nanoframes store --verify`` / ``--prune``) ------------------------

def _kept(store: Store, kind: str) -> list[tuple[str, Path]]:
    suffix = record_suffix(kind)
    return [(p.name[:-len(suffix)], p) for p in store.records() if p.parent.name == kind]


def verify(store: Store) -> tuple[int, list[Path]]:
    """How many scene and blob records are what their names say, and those that are not
    (a scene must rebuild, from the blobs kept, to its digest)."""
    good, bad = 0, []
    for kind in (BLOB, SCENE):
        for digest, path in _kept(store, kind):
            raw = store.get_record(kind, digest)  # bounded; a FIFO or a device is not read
            ok = raw is not None and believed(store, kind, digest, raw)
            good, bad = (good + 1, bad) if ok else (good, [*bad, path])
    return good, bad


def prune(store: Store, keep_short: set[str]) -> list[Path]:
    """Drop scenes no recorded (short) scene digest refers to, then the blobs no kept
    scene refers to; return what was dropped."""
    dropped, used = [], set()
    for digest, path in _kept(store, SCENE):
        if digest[:SHORT] not in keep_short:
            path.unlink()
            dropped.append(path)
            continue
        record = store.get_record(SCENE, digest)
        raw = None if record is None else _inflate(record)
        parts = None if raw is None else _parts(raw)
        used.update(name for _, name, _ in (parts[0] if parts else ()))
    for digest, path in _kept(store, BLOB):
        if digest not in used:
            path.unlink()
            dropped.append(path)
    return dropped
