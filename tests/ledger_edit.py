"""Hand-editing a ledger entry in a test, as a recording with other results would
have written it: after changing ``digest``, ``frame_digests`` or ``scene_digests``, :func:`reseal`
gives the entry the seal a recording would (``ledger.seal``), so it reads as a
consistent entry, not a corrupt one."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from nanoframes.determinism.ledger import seal


def reseal(entry: dict) -> dict:
    samples = entry.get("samples")
    entry["seal"] = seal(entry["digest"], entry["frames"],
                         tuple(samples) if samples is not None else None,
                         tuple(entry["frame_digests"]),
                         tuple(entry["scene_digests"]) if "scene_digests" in entry else None)
    return entry


def alter_frames(ledger: Path, key: str, frames: list[int]) -> None:
    """Make the recorded digests of ``frames`` of ``key`` disagree with what its
    inputs draw, the identity kept: the next check reads a regression."""
    doc = json.loads(ledger.read_text())
    entry = doc["compositions"][key]
    for i in frames:
        entry["frame_digests"][i] = "0" * 16
    entry["digest"] = "3" * 64
    reseal(entry)
    ledger.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":  # for the docs' hidden setup: ledger_edit.py LEDGER KEY FRAME...
    alter_frames(Path(sys.argv[1]), sys.argv[2], [int(f) for f in sys.argv[3:]])
