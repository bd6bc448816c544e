"""Tolerance-bounded excuses: excused only while the drift stays inside its bounds.

An excuse written with bounds (``max-delta``, ``max-pixels``, ``max-frames``)
holds only while every differing frame, measured against its reference frame
in the store, stays inside them (WPT's fuzzy annotations: a bounded difference
is accepted, and nothing more). Past a bound, or with nothing to measure
against, the composition is not excused and the verdict says which bound broke
and by how much. An excuse without bounds keeps its plain meaning.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..config import ExcuseBounds
from .verdict import Kind, Verdict

if TYPE_CHECKING:  # NumPy: the evidence is computed by the caller
    from ..frames.compare import FilmEvidence

MAX_LISTED_BREACHES = 3


def apply_bounds(verdict: Verdict, bounds: ExcuseBounds | None,
                 evidence: FilmEvidence | None) -> Verdict:
    """``verdict`` with its excuse kept (and the numbers attached) or withdrawn."""
    if verdict.excused is None or bounds is None or not bounds.bounded:
        return verdict
    if verdict.kind in (Kind.MATCH, Kind.STALE, Kind.ERROR):
        return verdict  # a match is reported as today; the others are not about pixels
    data: dict[str, Any] = {"max-delta": bounds.max_delta, "max-pixels": bounds.max_pixels,
                            "max-frames": bounds.max_frames,
                            "platforms": list(bounds.platforms) if bounds.platforms else None}
    breaches: list[str] = []
    diffs = list(evidence.frames) if evidence is not None else []
    drawn = [d for d in diffs if d.size is None]
    frames = len(verdict.differing_frames)
    pixels = max((d.pixels for d in drawn), default=0)
    delta = max((d.max_delta for d in drawn), default=0)
    data.update(frames=frames, pixels=pixels, delta=delta)
    if verdict.kind is Kind.ABSENT:
        breaches.append("no reference frames (no ledger entry)")
    elif not frames or evidence is None:
        breaches.append("no reference frames to measure the drift against")
    else:
        if bounds.max_frames is not None and frames > bounds.max_frames:
            breaches.append(f"{frames} frames differ > max-frames {bounds.max_frames}")
        for d in diffs:
            if d.size is not None:
                breaches.append(d.text())
                continue
            if bounds.max_pixels is not None and d.pixels > bounds.max_pixels:
                breaches.append(f"frame {d.frame}: {d.pixels} px > max-pixels {bounds.max_pixels}")
            if bounds.max_delta is not None and d.max_delta > bounds.max_delta:
                breaches.append(f"frame {d.frame}: ±{d.max_delta}/255 > max-delta "
                                f"{bounds.max_delta}")
        breaches += [f"frame {i}: no reference frame in the store" for i in evidence.unavailable]
    data["within"] = not breaches
    data["broke"] = breaches
    if breaches:
        listed = "; ".join(breaches[:MAX_LISTED_BREACHES])
        if len(breaches) > MAX_LISTED_BREACHES:
            listed += f"; … ({len(breaches)} in all)"
        data["text"] = f"not excused ({verdict.excused}): {listed}"
        note = f"{verdict.note}; {data['text']}" if verdict.note else data["text"]
        return dataclasses.replace(verdict, excused=None, bounds=data, note=note)
    data["text"] = "within its bounds: " + ", ".join(_measured(bounds, frames, pixels, delta))
    return dataclasses.replace(verdict, bounds=data)


def _measured(bounds: ExcuseBounds, frames: int, pixels: int, delta: int) -> list[str]:
    parts = []
    if bounds.max_frames is not None:
        parts.append(f"{frames} frame{'s' if frames != 1 else ''} ≤ max-frames "
                     f"{bounds.max_frames}")
    if bounds.max_pixels is not None:
        parts.append(f"{pixels} px ≤ max-pixels {bounds.max_pixels}")
    if bounds.max_delta is not None:
        parts.append(f"±{delta}/255 ≤ max-delta {bounds.max_delta}")
    return parts
