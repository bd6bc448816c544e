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
from typing import TYPE_CHECKING

from ..config import Config
from ..determinism.identity import part_names
from ..determinism.ledger import Entry
from ..determinism.tolerance import apply_bounds
from ..determinism.verdict import Kind, Reading, Verdict, excuse_bounds_for
from ..errors import NanoframesError
from ..frames.film import Film
from ..frames.store import Store
from ..model.composition import Composition

if TYPE_CHECKING:
    import numpy as np

    from ..determinism.opinions import Budget

HINT = ("record them with `nanoframes digest --record` on the recorded revision, or bring "
        "them with `nanoframes store --import FILE.tar`")
# In CI the recipe already drew or restored what it could (docs/ci.md): never a step it ran.
CI_HINT = ("in CI they come from the frames the main branch's passing check saved "
           "(docs/ci.md); `nanoframes review --from` the report artifact shows these frames "
           "beside your recorded ones")


def missing_hint() -> str:
    """What to do about recorded frames the store lacks, where this runs."""
    from ..determinism.policy import ci_is_set

    return CI_HINT if ci_is_set() else HINT


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
           store_root: Path | None, keep: int = 5, comp: Composition | None = None,
           draw: bool = True, second_opinion: int = 0, budget: Budget | None = None
           ) -> Gathered:
    """``verdict`` with pixel evidence attached (when it wants some), the expected
    and actual pixels of up to ``keep`` differing frames, and the identity inputs
    that moved, in words.

    Different scenes are diffed (scenediff.py) before the pixels are compared.
    ``comp``: the composition judged, when it is not a file under its key (built in
    a test). A fresh frame the store holds (a recording just kept it) is read from
    there; the others are drawn again, unless ``draw`` is False.

    ``second_opinion``: re-renders of a regression that still fails once its
    bounds are applied (determinism/second_opinion.py); 0: none. Every front end
    that checks (``digest --check``, collected items, ``nf.check``) comes here.
    ``budget``: the check's (determinism/opinions.py): regressions grouped by cause,
    re-renders within a time budget; None: this one asked alone."""
    if entry is not None and verdict.platform in entry.platforms:
        entry = entry.platforms[verdict.platform]  # what the reading was judged against
    film: Film | None = None

    def opened() -> Film:
        nonlocal film
        if film is None:
            film = Film(comp) if comp is not None else \
                Film.open(config.root / verdict.key, config.root)
        return film

    moved = moved_inputs(entry, reading) if entry is not None and reading is not None else []
    if moved:
        moved = _in_words(moved, store_root, opened, reading)
    bounds = excuse_bounds_for(verdict.key, config,
                               reading.composition_id if reading is not None else None)
    if entry is not None and verdict.scenes is not None:  # what changed in the documents
        from .scenediff import attach_scene_diffs

        verdict = attach_scene_diffs(verdict, entry, reading, store_root, opened, HINT)
    if not wants_evidence(verdict) or entry is None:
        return Gathered(apply_bounds(verdict, bounds, None), moved=moved)
    from ..frames.compare import FilmEvidence, compare  # NumPy: pixels only from here

    recorded = dict(zip(entry.indices, entry.frame_digests))
    fresh = dict(zip(reading.indices, reading.frame_digests)) if reading is not None else {}
    store = Store(store_root) if store_root is not None else None
    # Which references exist is known from file names; each is decoded (and
    # verified) only beside its fresh frame, so a long film is never held whole.
    listed = [i for i in verdict.differing_frames
              if store is not None and store.candidates(recorded[i])]
    unavailable = [i for i in verdict.differing_frames if i not in set(listed)]
    diffs = []
    images: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    kept = {i: store.get(fresh[i]) for i in listed if i in fresh and store.candidates(fresh[i])}\
        if store is not None else {}
    to_draw = [i for i in listed if kept.get(i) is None]
    if to_draw and not draw:  # compared only where the store holds the fresh frame too
        unavailable += to_draw
        listed = [i for i in listed if i not in set(to_draw)]
        to_draw = []
    drawn = opened().frames(to_draw) if to_draw else iter(())
    for index, frame in _merged(listed, kept, drawn):
        reference = store.get(recorded[index])
        if reference is None:  # a bad entry: said by the store, counted as missing
            unavailable.append(index)
            continue
        diffs.append(compare(reference, frame, index))
        if len(images) < keep:
            images[index] = (reference, frame.copy())
    unavailable.sort()
    hint = missing_hint() if store is not None else "the store is off (--no-store)"
    evidence = FilmEvidence(verdict.compared_frames, tuple(diffs), tuple(unavailable),
                            hint if unavailable else "")
    verdict = apply_bounds(dataclasses.replace(verdict, evidence=evidence), bounds, evidence)
    if second_opinion and budget is not None:
        verdict = budget.consult(verdict, entry, reading, config, second_opinion, comp)
    elif second_opinion:
        from ..determinism.second_opinion import consult

        verdict = consult(verdict, entry, reading, config, second_opinion, comp)
    return Gathered(verdict, images, moved)


def _merged(order: list[int], kept: dict, drawn):
    """(index, frame) in ``order``: from the store where it held the frame, else drawn."""
    for index in order:
        frame = kept.get(index)
        if frame is None:
            drawn_index, frame = next(drawn)
            assert drawn_index == index
        yield index, frame


def _in_words(moved: list[dict], store_root: Path | None, opened, reading: Reading) -> list[dict]:
    """``moved`` with each input's ``details`` (determinism/inputs.py)."""
    from ..determinism.inputs import explain, film_records

    def fresh():
        try:
            film = opened()
            return film_records(film.source, reading.identity, reading.toolchain_parts)
        except (NanoframesError, OSError):  # the file went away since: the digests stand
            return None

    return explain(moved, store_root, fresh)


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


def against_store(path: Path, index: int, config: Config, store_root: Path | None,
                  key: str | None = None) -> tuple[np.ndarray, np.ndarray, str]:
    """Frame ``index`` of the composition at ``path`` as recorded (from the store, by
    its ledger entry: ``key``, else the file's own key) and as drawn now; and the key.
    Raises a one-line ``diff-no-reference`` error when there is no reference."""
    from ..config import relative_key
    from ..determinism.ledger import read_ledger

    key = key or relative_key(path, config.root)
    entry = read_ledger(config.ledger_path).entries.get(key)
    if entry is None:
        raise NanoframesError("diff-no-reference", f"the ledger has no entry {key!r} to compare "
                              "against", config.ledger_path)
    recorded = dict(zip(entry.indices, entry.frame_digests))
    if index not in recorded:
        raise NanoframesError("diff-no-reference", f"frame {index} is not recorded in {key} "
                              f"(it records {len(recorded)} frames of {entry.frames})", path)
    if store_root is None:
        raise NanoframesError("diff-no-reference", "the store is off (--no-store): no "
                              "recorded frame to compare against", path)
    reference = Store(store_root).get(recorded[index])
    if reference is None:
        raise NanoframesError("diff-no-reference", f"frame {index}'s recorded frame "
                              f"({recorded[index]}) is not in the store {store_root}: {HINT}",
                              path)
    film = Film.open(path, config.root)
    frames = list(film.frames([index]))
    if not frames:
        raise NanoframesError("diff-no-reference", f"frame {index} is past the film's end "
                              f"({film.source.frame_count} frames)", path)
    return reference, frames[0][1].copy(), key
