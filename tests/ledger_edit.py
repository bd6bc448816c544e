"""Hand-editing a ledger entry in a test, as a recording with other results would
have written it: after changing ``digest``, ``frame_digests`` or ``scene_digests``, :func:`reseal`
gives the entry the seal a recording would (``ledger.seal``), so it reads as a
consistent entry, not a corrupt one."""

from __future__ import annotations

from nanoframes.determinism.ledger import seal


def reseal(entry: dict) -> dict:
    samples = entry.get("samples")
    entry["seal"] = seal(entry["digest"], entry["frames"],
                         tuple(samples) if samples is not None else None,
                         tuple(entry["frame_digests"]),
                         tuple(entry["scene_digests"]) if "scene_digests" in entry else None)
    return entry
