"""Pixel evidence for a verdict whose frames differ: what moved, in numbers.

Called once a check has judged (the CLI after the sweep, the plugin item after
``check_one``), and only for a changed or regression verdict naming differing
frames: a check that matches never opens the store. The recorded frames come
from the store (frames/store.py); the fresh ones are drawn again, just the
differing indices (the check itself kept only digests).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import Config
from ..determinism.identity import part_names
from ..determinism.ledger import Entry
from ..determinism.tolerance import apply_bounds
from ..determinism.verdict import Kind, Reading, Verdict, excuse_bounds_for
from ..frames.compare import FilmEvidence, compare
from ..frames.film import Film
from ..frames.store import Store

HINT = ("record them with `nanoframes digest --record` on the recorded revision, or bring "
        "them with `nanoframes store --import FILE.tar`")


@dataclass
class Gathered:
    """A verdict with its evidence, plus the pixels artifacts and reports draw from."""

    verdict: Verdict
    images: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    moved: list[dict] = field(default_factory=list)
    sheet: str | None = None  # a contact sheet's path, once written (artifacts.py)


def wants_evidence(verdict: Verdict) -> bool:
    return verdict.kind in (Kind.CHANGED, Kind.REGRESSION) and bool(verdict.differing_frames)


def gather(verdict: Verdict, entry: Entry | None, reading: Reading | None, config: Config,
           store_root: Path | None, keep: int = 5) -> Gathered:
    """``verdict`` with pixel evidence attached (when it wants some), the expected
    and actual pixels of up to ``keep`` differing frames, and the identity inputs
    that moved."""
    if entry is not None and verdict.platform in entry.platforms:
        entry = entry.platforms[verdict.platform]  # what the reading was judged against
    moved = moved_inputs(entry, reading) if entry is not None and reading is not None else []
    bounds = excuse_bounds_for(verdict.key, config,
                               reading.composition_id if reading is not None else None)
    if not wants_evidence(verdict) or entry is None:
        return Gathered(apply_bounds(verdict, bounds, None), moved=moved)
    recorded = dict(zip(entry.indices, entry.frame_digests))
    store = Store(store_root) if store_root is not None else None
    # Which references exist is known from file names; each is decoded (and
    # verified) only beside its fresh frame, so a long film is never held whole.
    listed = [i for i in verdict.differing_frames
              if store is not None and store.candidates(recorded[i])]
    unavailable = [i for i in verdict.differing_frames if i not in set(listed)]
    diffs = []
    images: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    if listed:
        film = Film.open(config.root / verdict.key, config.root)
        for index, frame in film.frames(listed):
            reference = store.get(recorded[index])
            if reference is None:  # a bad entry: said by the store, counted as missing
                unavailable.append(index)
                continue
            diffs.append(compare(reference, frame, index))
            if len(images) < keep:
                images[index] = (reference, frame.copy())
    unavailable.sort()
    hint = HINT if store is not None else "the store is off (--no-store)"
    evidence = FilmEvidence(verdict.compared_frames, tuple(diffs), tuple(unavailable),
                            hint if unavailable else "")
    verdict = apply_bounds(dataclasses.replace(verdict, evidence=evidence), bounds, evidence)
    return Gathered(verdict, images, moved)


def moved_inputs(entry: Entry, reading: Reading) -> list[dict]:
    """Each identity input that moved, recorded → fresh; toolchain parts named."""
    out = []
    for name in ("source", "media", "fonts"):
        before, after = entry.identity.get(name), reading.identity.get(name)
        if before != after:
            out.append({"input": name, "recorded": before, "fresh": after})
    for part in part_names(entry.toolchain_parts, reading.toolchain_parts):
        before, after = entry.toolchain_parts.get(part), reading.toolchain_parts.get(part)
        if before != after:
            out.append({"input": f"toolchain: {part}", "recorded": before, "fresh": after})
    if entry.frames != reading.frames:
        out.append({"input": "frame count", "recorded": str(entry.frames),
                    "fresh": str(reading.frames)})
    return out
