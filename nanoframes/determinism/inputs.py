"""What each recorded input was made of, kept so that a moved input can be told in words.

The ledger holds one SHA-256 per input. A recording with the frame store on also
keeps, beside the frames, what each digest stands for (``inputs/<kind>/<digest>.json``,
written once per digest): the source's canonical projection as readable lines,
the media and font files (name, SHA-256, size) and the package's modules (path,
SHA-256). When a check finds an input moved, the recorded record is read back
and compared with the fresh one: a diff of the source, which files moved, which
toolchain parts and versions. Without the record (recorded before it was kept,
or elsewhere) the words say so and the digests still stand.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import loads_limited
from ..frames.store import Store
from ..model.limits import MAX_DEPTH
from .identity import (
    NONE,
    canonical_source,
    fonts_digest,
    media_digest,
    module_files,
    modules_digest_of,
    source_digest_of,
)

if TYPE_CHECKING:
    from ..bake.baker import Baker
    from ..model.composition import Composition

SVG_NS = "{http://www.w3.org/2000/svg}"
MAX_DIFF_LINES = 40
MAX_RECORD_DEPTH = 8  # a record nests 3 deep ({"canonical", "children": [[name, digest]]})
# a canonical projection nests two lists per element (node, content) and elements
# nest at most MAX_DEPTH deep
MAX_SOURCE_DEPTH = 2 * MAX_DEPTH + 8
# toolchain parts that are versions (said as they are) rather than file digests
VERSION_PARTS = frozenset({"thorvg-python", "nanoframes", "pyav"})


# --- the records ----------------------------------------------------------------

def _name(clark: str) -> str:
    return clark[len(SVG_NS):] if clark.startswith(SVG_NS) else clark


def _lines(node: list, depth: int) -> list[str]:
    tag, attrs, content = node
    pad = "  " * depth
    name = _name(tag)
    head = pad + "<" + name + "".join(f' {_name(k)}="{v}"' for k, v in attrs)
    if not content:
        return [head + "/>"]
    out = [head + ">"]
    timeline = name == "script"
    for child in content:
        if isinstance(child, list):
            out += _lines(child, depth + 1)
            continue
        text = child
        if timeline:  # canonical JSON on one line: one key per line reads as a diff
            try:
                text = json.dumps(json.loads(child), indent=1, sort_keys=True,
                                  ensure_ascii=False)
            except ValueError:
                pass
        out += [pad + "  " + line for line in text.splitlines() if line.strip()]
    return out + [f"{pad}</{name}>"]


def source_lines(canonical: str | bytes) -> list[str]:
    """The canonical projection (identity.canonical_source) as indented lines, one
    element per line: what the source digest covers, readable and diffable. A
    projection nested deeper than a composition may be (a record made by hand
    that hashes to its name) is one line saying so."""
    try:
        return _lines(loads_limited(canonical, MAX_SOURCE_DEPTH), 0)
    except ValueError as exc:
        return [f"(the recorded source cannot be shown: {exc})"]


def _files(pairs: Sequence[tuple[str, str, Path]]) -> list[list]:
    out = []
    for name, digest, path in sorted(set(pairs)):
        try:
            size = path.stat().st_size
        except OSError:
            size = None
        out.append([name, digest, size])
    return out


def records_of(comp: Composition, baker: Baker, identity: Mapping[str, str],
               toolchain: Mapping[str, str]) -> dict[str, tuple[str, Any]]:
    """kind -> (the digest the ledger records, what it stands for)."""
    import os

    from ..bake.nested import all_images, child_sources
    from ..text.fonts import face_digest
    from .identity import source_digest

    base = comp.directory.resolve()
    media = [(Path(os.path.relpath(img.path, base)).as_posix(), img.sha256, Path(img.path))
             for _, img in all_images(baker)]
    fonts = [(face.label, face_digest(face), Path(face.path)) for face in baker.faces()]
    children = [[name, source_digest(child.root)] for name, child in child_sources(comp)]
    return {
        "source": (identity["source"], {"canonical": canonical_source(comp.root).decode(),
                                        "children": sorted(children)}),
        "media": (identity["media"], _files(media)),
        "fonts": (identity["fonts"], _files(fonts)),
        "modules": (toolchain.get("modules", ""), _modules()),
    }


def film_records(source: Any, identity: Mapping[str, str], toolchain: Mapping[str, str]
                 ) -> dict[str, tuple[str, Any]]:
    """``records_of`` for any film source (frames/source.py): a composition's from its
    tree; another format's from what its source says it is made of (``records``:
    its canonical projection, marked with its ``format``, and its files)."""
    from ..frames.source import baker_of

    baker = baker_of(source)
    if baker is not None:
        return records_of(source.comp, baker, identity, toolchain)
    made = source.records()
    return {
        "source": (identity["source"], made["source"]),
        "media": (identity["media"], _files(made["media"])),
        "fonts": (identity["fonts"], _files(made["fonts"])),
        "modules": (toolchain.get("modules", ""), _modules()),
    }


_MODULES: list[list[str]] | None = None


def _modules() -> list[list[str]]:
    global _MODULES
    if _MODULES is None:  # once per process, like the toolchain's digest
        from .identity import _file_sha256

        _MODULES = [[rel, _file_sha256(path)] for rel, path in module_files()]
    return _MODULES


def keep(store: Store, records: Mapping[str, tuple[str, Any]]) -> None:
    """Write each record not yet kept (a failure is the store's ``write_problem``)."""
    for kind, (digest, data) in records.items():
        if digest and len(digest) == 64 and not store.record_path(kind, digest).is_file():
            text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
            store.put_record(kind, digest, text.encode("utf-8"))


KINDS = ("source", "media", "fonts", "modules")


def digest_of(kind: str, data: Any) -> str | None:
    """The digest a record stands for, computed from it by identity.py's own rules
    (None: not a record of that kind). A record is believed only if it hashes to
    its name, like a frame in the store."""
    try:
        if kind == "source":
            return source_digest_of(data["canonical"].encode("utf-8"),
                                    [(str(n), str(d)) for n, d in data["children"]])
        if kind in ("media", "fonts"):
            pairs = [(str(name), str(digest)) for name, digest, _ in data]
            return media_digest(pairs) if kind == "media" else fonts_digest(pairs)
        if kind == "modules":
            return modules_digest_of((str(rel), str(digest)) for rel, digest in data)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return None


def verified(kind: str, digest: str, raw: bytes) -> Any:
    """The record in ``raw`` if it is one of ``kind`` that hashes to ``digest``, else None."""
    try:  # a record nests 3 deep: 100,000 nested brackets are not one
        data = loads_limited(raw, MAX_RECORD_DEPTH)
    except ValueError:
        return None
    return data if kind in KINDS and digest_of(kind, data) == digest else None


def recorded(store: Store | None, kind: str, digest: str | None) -> Any:
    """What ``digest`` stands for, as the store keeps it (None: not kept, or a
    record that does not hash to its name)."""
    if digest == NONE and kind in ("media", "fonts"):
        return []  # no file at all: nothing to keep, nothing to look up
    if store is None or not digest:
        return None
    raw = store.get_record(kind, digest)
    return None if raw is None else verified(kind, digest, raw)


# --- the words ------------------------------------------------------------------

def _size(n: int | None) -> str:
    return "" if n is None else f" ({n:,} bytes)"


def _bytes(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


def file_changes(before: list, after: list) -> list[str]:
    """Which files moved: added, removed or changed, by name (and size where known)."""
    old = {name: (digest, size) for name, digest, size in before}
    new = {name: (digest, size) for name, digest, size in after}
    out = []
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            out.append(f"removed {name}{_size(old[name][1])}")
        elif name not in old:
            out.append(f"added {name}{_size(new[name][1])}")
        elif old[name][0] != new[name][0]:
            sizes = ""
            if old[name][1] is not None or new[name][1] is not None:
                sizes = f": {_bytes(old[name][1])} → {_bytes(new[name][1])} bytes"
            out.append(f"changed {name}{sizes} "
                       f"(sha256 {old[name][0][:12]}… → {new[name][0][:12]}…)")
    return out


def source_changes(before: dict, after: dict) -> list[str]:
    """A unified diff of the recorded and current canonical projection, and the
    nested compositions that moved; for another format (a record with a ``format``),
    what its own package says moved (a Lottie file: layer and property, old → new)."""
    if before.get("format") or after.get("format"):
        return format_changes(before, after)
    diff = list(difflib.unified_diff(source_lines(before["canonical"]),
                                     source_lines(after["canonical"]),
                                     "recorded", "current", n=2, lineterm=""))
    if len(diff) > MAX_DIFF_LINES:
        diff = diff[:MAX_DIFF_LINES] + [f"… ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
    old = dict(map(tuple, before.get("children", [])))
    new = dict(map(tuple, after.get("children", [])))
    moved = [name for name in sorted(old.keys() | new.keys()) if old.get(name) != new.get(name)]
    return diff + [f"nested composition {name} changed" for name in moved]


def format_changes(before: dict, after: dict) -> list[str]:
    """Why a source of another format moved, in its package's words."""
    if before.get("format") != after.get("format"):
        return [f"the film's format changed: {before.get('format') or 'composition'} → "
                f"{after.get('format') or 'composition'}"]
    from ..frames.source import describe_source_changes

    said = describe_source_changes(before["format"], before["canonical"].encode("utf-8"),
                                   after["canonical"].encode("utf-8"))
    said = [line.replace(" -> ", " → ") for line in said]
    if len(said) > MAX_DIFF_LINES:
        said = said[:MAX_DIFF_LINES] + [f"… ({len(said) - MAX_DIFF_LINES} more changes)"]
    return said or ["the source changed (no property differs in the projection)"]


def toolchain_change(part: str, before: str | None, after: str | None,
                     store: Store | None) -> list[str]:
    if part in VERSION_PARTS:
        return [f"{part} {before or 'absent'} → {after or 'absent'}"]
    if part == "modules":
        old, new = recorded(store, "modules", before), _modules()
        if old is None:
            return ["nanoframes' modules changed (which files: not known, the recorded list "
                    "is not in the store)"]
        changed = file_changes([[n, d, None] for n, d in old], [[n, d, None] for n, d in new])
        return changed or ["nanoframes' modules changed"]
    return [f"{part}: the file changed (sha256 {str(before)[:12]}… → {str(after)[:12]}…)"]


def explain(moved: list[dict], store_root: Path | None,
            fresh: Callable[[], Mapping[str, tuple[str, Any]] | None]) -> list[dict]:
    """``moved`` (pixels.moved_inputs) with ``details``: the words for each input.
    The current side is the store's record of the fresh digest where it holds one
    (a recording just kept it), else ``fresh()`` (computed from the composition)."""
    store = Store(store_root, warn=None) if store_root is not None else None
    computed: list = []

    def current(name: str, digest: str) -> Any:
        kept = recorded(store, name, digest)
        if kept is not None:
            return kept
        if not computed:
            computed.append(fresh())
        return None if computed[0] is None else computed[0][name][1]

    out = []
    for item in moved:
        name = item["input"]
        details: list[str] = []
        if name.startswith("toolchain: "):
            details = toolchain_change(name.split(": ", 1)[1], item["recorded"],
                                       item["fresh"], store)
        elif name in ("source", "media", "fonts"):
            before = recorded(store, name, item["recorded"])
            after = current(name, item["fresh"]) if before is not None else None
            if before is None:
                details = [f"the recorded {name} is not in the store (recorded without it, or "
                           "elsewhere): only its digest is known"]
            elif after is None:
                details = [f"the current {name} cannot be read: only its digest is known"]
            elif name == "source":
                details = source_changes(before, after)
            else:
                details = file_changes(before, after)
        out.append(dict(item, details=details))
    return out
