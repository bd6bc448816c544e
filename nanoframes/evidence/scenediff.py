"""What changed between a frame's recorded scene and its current one, element by element.

For a verdict whose differing frames include *different scene* ones
(determinism/scenes.py), the recorded scene is read from the store
(frames/scenes.py) and the current one baked again (``Film.document``: the check
kept only its digest). Both are parsed and matched element by element: by
``id``, else by path from the nearest ancestor with one (``svg/g[2]/rect[1]``,
``#card/rect[1]``: the n-th child of that tag). Each attribute that moved is
said old → new, elements added or removed, text that changed; values longer
than a line (a ``data:`` URI) are shortened and named by hash. Capped per frame,
and grouped per film into runs of frames with the same changes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

from lxml import etree

from ..determinism.ledger import Entry
from ..determinism.scenes import FrameDiff, grouped
from ..determinism.verdict import Reading, Verdict
from ..errors import NanoframesError
from ..frames.digest import SHORT
from ..frames.film import Film
from ..frames.scenes import keep, recorded_scene, scene_digest
from ..frames.store import Store
from ..model.svg import local_name

MAX_CHANGES = 8     # changes said per frame; the rest are counted
MAX_DIFFED = 240    # frames diffed per film (the first ones); each is a bake and two parses
MAX_VALUE = 48      # characters of a value shown as it is
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                          huge_tree=True, remove_comments=True, remove_pis=True)


def shown(value: str) -> str:
    """A value as said in a diff: as it is, or shortened with its length and hash."""
    if len(value) <= MAX_VALUE:
        return value
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]
    head = value.split(",", 1)[0] + ",…" if value.startswith("data:") else value[:32] + "…"
    return f"{head} ({len(value):,} chars, sha256 {digest})"


def _elements(document: bytes) -> dict[str, etree._Element]:
    """Every element by its key: ``#id``, else its path from the nearest ancestor
    with an id (or the root), in document order."""
    root = etree.fromstring(document, _PARSER)
    out: dict[str, etree._Element] = {}

    def walk(element: etree._Element, path: str) -> None:
        counts: dict[str, int] = {}
        for child in element:
            if not isinstance(child.tag, str):
                continue
            tag = local_name(child)
            counts[tag] = counts.get(tag, 0) + 1
            own = child.get("id")
            key = f"#{own}" if own else f"{path}/{tag}[{counts[tag]}]"
            out.setdefault(key, child)
            walk(child, key)

    top = f"#{root.get('id')}" if root.get("id") else local_name(root)
    out[top] = root
    walk(root, top)
    return out


def _text(element: etree._Element) -> str:
    return (element.text or "").strip()


def structural_diff(recorded: bytes, current: bytes) -> tuple[list[str], list[str]]:
    """(changes in words, the (element, attribute) keys that changed), in document order."""
    old, new = _elements(recorded), _elements(current)
    changes: list[str] = []
    keys: list[str] = []
    for key, element in new.items():
        before = old.get(key)
        if before is None:
            changes.append(f"{key} added")
            keys.append(f"{key} added")
            continue
        names = sorted(set(before.attrib) | set(element.attrib))
        for name in names:
            a, b = before.get(name), element.get(name)
            if a == b:
                continue
            attr = etree.QName(name).localname
            keys.append(f"{key} {attr}")
            if a is None:
                changes.append(f"{key} {attr} added: {shown(b)}")
            elif b is None:
                changes.append(f"{key} {attr} removed (was {shown(a)})")
            else:
                changes.append(f"{key} {attr} {shown(a)} → {shown(b)}")
        if _text(before) != _text(element):
            keys.append(f"{key} text")
            changes.append(f"{key} text {shown(repr(_text(before)))} → "
                           f"{shown(repr(_text(element)))}")
    for key in old:
        if key not in new:
            changes.append(f"{key} removed")
            keys.append(f"{key} removed")
    return changes, keys


def frame_diff(frame: int, recorded: bytes, current: bytes,
               describe: Callable[[bytes, bytes], tuple[list[str], list[str]]] | None = None
               ) -> FrameDiff:
    """What moved between two scenes of one frame; ``describe``: the film source's own
    diff (``scene_changes``: a Lottie scene), else the SVG documents' elements."""
    try:
        changes, keys = (describe or structural_diff)(recorded, current)
    except etree.XMLSyntaxError as exc:  # not ours to parse: the digests still stand
        return FrameDiff(frame, (f"cannot be parsed to compare ({exc})",))
    return FrameDiff(frame, tuple(changes[:MAX_CHANGES]), max(0, len(changes) - MAX_CHANGES),
                     tuple(sorted(set(keys))))


def attach_scene_diffs(verdict: Verdict, entry: Entry, reading: Reading | None,
                       store_root: Path | None, opened: Callable[[], Film],
                       hint: str) -> Verdict:
    """``verdict`` with the structural diff of each different-scene frame (the first
    ``MAX_DIFFED``), grouped; frames whose recorded scene the store lacks named.
    Each current scene diffed is kept in the store (a check keeps no scenes while it
    draws), so the reading, accepted, has its scenes there."""
    scenes = verdict.scenes
    if scenes is None or not scenes.different or entry.scene_digests is None:
        return verdict
    recorded = dict(zip(entry.indices, entry.scene_digests))
    fresh = dict(zip(reading.indices, reading.scene_digests)) if reading is not None else {}
    store = Store(store_root, warn=None) if store_root is not None else None
    diffs, missing, notes = [], [], []
    documents: dict[str, bytes | None] = {}  # recorded scenes, each rebuilt once
    describe = None
    for frame in scenes.different[:MAX_DIFFED]:
        # The reading's own scene where the store keeps it (a recording kept it, a test's
        # composition has no file to bake again), else the file's, baked again.
        now = recorded_scene(store, fresh[frame][:SHORT]) \
            if store is not None and frame in fresh else None
        try:
            film = opened()
            describe = getattr(film.source, "scene_changes", None)
            if now is None:
                now = film.document(frame)
        except (NanoframesError, OSError) as exc:
            if now is None:
                notes.append(f"the current scenes cannot be baked again ({exc})")
                break
        digest = scene_digest(now)
        if frame in fresh and digest[:SHORT] != fresh[frame][:SHORT]:
            notes.append("the composition changed since it was checked: the scenes diffed "
                         "are of the file as it is now")
            fresh = {}  # said once
        elif store is not None:
            keep(store, digest, now)
        short = recorded[frame]
        if short not in documents:
            documents[short] = recorded_scene(store, short) if store is not None else None
        before = documents[short]
        if before is None:
            missing.append(frame)
            continue
        diffs.append(frame_diff(frame, before, now, describe))
    if len(scenes.different) > MAX_DIFFED:
        notes.append(f"the first {MAX_DIFFED} of {len(scenes.different)} different scenes "
                     "were diffed")
    return dataclasses.replace(verdict, scenes=dataclasses.replace(
        scenes, diffs=tuple(diffs), groups=grouped(diffs), missing=tuple(missing),
        hint=(hint if store is not None else "the store is off (--no-store)")
        if missing else "", notes=tuple(notes)))
