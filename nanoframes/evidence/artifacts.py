"""Artifacts of a failed check: expected, actual and diff PNGs, and a manifest.

Layout: ``DIR/<ledger key>/<frame>-expected.png``, ``-actual.png``,
``-diff.png`` (and ``sheet.png``, a contact sheet of the fresh film, for the
HTML report), plus ``DIR/manifest.json`` listing every file with its
composition, frame, verdict and numbers. Paths in the manifest are relative to
DIR and everything is sorted, so a CI job can upload DIR as it is and the
bytes do not depend on the order items ran in (pytest-xdist or serial).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..config import Config
from ..determinism.reading import sample_indices
from ..determinism.verdict import Kind, Verdict
from ..errors import NanoframesError
from ..files import write_bytes_atomic
from ..frames.film import Film
from ..frames.store import encode_png
from ..model.composition import Composition
from .pixels import Gathered

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
SHEET_FRAMES = 8


def _write_png(path: Path, rgba) -> None:
    write_bytes_atomic(path, encode_png(rgba), code="output-failed", durable=False)


_NODE_UNSAFE = re.compile(r'[:<>|*?"\[\]\s\\]')  # what CI artifact uploads refuse
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\\]")  # never in a file name we write
MAX_COMPONENT = 200  # bytes of one folder name (file systems allow 255)


def folder_of(key: str) -> str:
    """A key as a relative folder inside the artifacts folder: a file's key as it
    is; a test's node id (``nf.check``) with ``::`` as ``/`` and what CI artifact
    uploads refuse (``:<>|*?"``, brackets, spaces) as ``_``, so
    ``tests/t.py::test_a[x]`` is ``tests/t.py/test_a_x_``. Built from sanitized
    components, whatever the key holds: no empty, ``.`` or ``..`` component (a
    ``parametrize`` id over paths, ``test_a[../../x]``, stays inside: ``.`` become
    ``_``), no control character or backslash, none longer than ``MAX_COMPONENT``
    bytes (cut, with a digest of the whole to keep them apart)."""
    node = "::" in key
    text = _NODE_UNSAFE.sub("_", key.replace("::", "/")) if node else key
    parts = [_component(part) for part in text.split("/") if part]
    return "/".join(parts) or "_"


def _component(part: str) -> str:
    part = _CONTROL.sub("_", part)
    if set(part) == {"."}:
        return "_" * len(part)
    if len(part.encode("utf-8", "surrogatepass")) > MAX_COMPONENT:
        import hashlib

        digest = hashlib.sha256(part.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        part = part.encode("utf-8", "surrogatepass")[:MAX_COMPONENT - 17].decode(
            "utf-8", "ignore") + "-" + digest
    return part


def inside(directory: Path, relative: str) -> Path:
    """``directory / relative``, checked to lie inside ``directory`` (its path, no link
    followed): ``output-failed`` otherwise, before anything is written."""
    base = os.path.normpath(os.path.abspath(directory))
    path = os.path.normpath(os.path.join(base, relative))
    if os.path.commonpath([base, path]) != base:
        raise NanoframesError("output-failed", f"an artifact path out of the folder "
                              f"({relative!r})", directory)
    return Path(path)


def write_artifacts(directory: Path, gathered: Gathered, config: Config,
                    sheet: bool = False, comp: Composition | None = None) -> Gathered:
    """Write the kept frames of ``gathered`` (and a contact sheet when asked);
    return it with the file paths (relative to ``directory``) in its evidence.
    ``comp``: the composition, when it is not a file under its key (built in a test)."""
    from ..frames.compare import amplify_diff  # NumPy: only where frames are written
    from .sheet import contact_sheet

    verdict = gathered.verdict
    relative = folder_of(verdict.key)
    folder = inside(directory, relative)
    files: dict[int, dict[str, str]] = {}
    for index, (expected, actual) in sorted(gathered.images.items()):
        names = {}
        pictures = {"expected": expected, "actual": actual}
        if expected.shape == actual.shape:
            pictures["diff"] = amplify_diff(expected, actual)
        for role, rgba in pictures.items():
            path = folder / f"{index}-{role}.png"
            _write_png(path, rgba)
            names[role] = f"{relative}/{path.name}"
        files[index] = names
    sheet_name = None
    if sheet and verdict.kind not in (Kind.ERROR, Kind.STALE):
        film = Film(comp) if comp is not None else \
            Film.open(config.root / verdict.key, config.root)
        indices = sample_indices(film.source.frame_count, SHEET_FRAMES)
        path = folder / "sheet.png"
        _write_png(path, contact_sheet(film, indices))
        sheet_name = f"{relative}/{path.name}"
    evidence = verdict.evidence
    if evidence is not None:
        evidence = dataclasses.replace(evidence, files=files, sheet=sheet_name)
        verdict = dataclasses.replace(verdict, evidence=evidence)
    return Gathered(verdict, gathered.images, gathered.moved, sheet_name)


def diff_command(key: str, path: str | None = None) -> str:
    """The command that shows expected, actual and diff of one frame (``{frame}`` to
    fill): ``path`` draws, ``key`` names the ledger entry when they differ."""
    shown = path or key
    tail = f' --key "{key}"' if path is not None and path != key else ""
    quoted = f'"{shown}"' if " " in shown else shown
    return f"nanoframes diff {quoted} --frame {{frame}}{tail}"


def record_of(verdict: Verdict, moved: list[dict], sheet: str | None = None,
              record_hint: str = "--record", command: str | None = None) -> dict:
    """What the manifest, the JSON outputs and the HTML report say of one verdict.
    ``command``: ``diff_command`` for it (None where no command can draw it)."""
    evidence = verdict.evidence
    return {"composition": verdict.key, "verdict": verdict.kind.value, "diff_command": command,
            "excused": verdict.excused, "reasons": list(verdict.reasons),
            "line": verdict.line(record_hint), "moved": moved,
            "evidence": evidence.to_json() if evidence is not None else None,
            "sheet": sheet, "platform": verdict.platform,
            "outdated_platforms": list(verdict.outdated),
            "bounds": dict(verdict.bounds) if verdict.bounds is not None else None,
            "opinion": verdict.opinion.as_dict() if verdict.opinion is not None else None,
            "time_axis": verdict.time_axis.as_dict() if verdict.time_axis is not None else None,
            "scenes": verdict.scenes.as_dict() if verdict.scenes is not None else None}


def manifest(records: Iterable[dict]) -> dict:
    """Every file with its composition, frame, verdict and numbers."""
    records = sorted(records, key=lambda r: r["composition"])
    files = []
    for record in records:
        evidence = record.get("evidence") or {}
        for frame in evidence.get("frames", ()):
            if "files" not in frame:
                continue
            files.append({"composition": record["composition"], "frame": frame["frame"],
                          "verdict": record["verdict"], "pixels": frame["pixels"],
                          "max_delta": frame["max_delta"], "bbox": frame["bbox"],
                          "size": frame["size"], **frame["files"]})
    return {"version": MANIFEST_VERSION, "files": files,
            "compositions": [{"composition": r["composition"], "verdict": r["verdict"],
                              "summary": (r.get("evidence") or {}).get("summary"),
                              "bounds": r.get("bounds"),
                              "sheet": r.get("sheet")}
                             for r in records if r["verdict"] != "match" or r.get("sheet")]}


def write_manifest(directory: Path, records: Iterable[dict]) -> Path:
    path = directory / MANIFEST
    data = json.dumps(manifest(records), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_bytes_atomic(path, data.encode("utf-8"), code="output-failed")
    return path
