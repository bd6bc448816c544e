"""Accepting pending readings into the ledger without drawing them again.

Each chosen reading is checked against the local files first: its source,
media and fonts identity must equal theirs (else it is stale, refused one line
per key). A regression is accepted only when forced. A reading taken under
another toolchain than the local one becomes a platform entry tagged with the
machine that read it (``policy``'s rules: none where it draws the primary). Its
frames go into the local store, each verified against its digest. The ledger
is written through ``recording.commit``: locked, re-read, merged by key, sealed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..errors import NanoframesError
from ..files import loads_limited, read_limited
from .ledger import Entry, Ledger, is_test_key, read_ledger
from .pending import Pending, Source
from .verdict import Kind, Verdict

ACCEPTABLE = (Kind.CHANGED, Kind.ABSENT, Kind.MATCH)  # what --all-changed takes
MAX_LIST = 8 << 20
MAX_LIST_DEPTH = 4  # {"accept": [...]} nests 2 deep


@dataclass
class Outcome:
    accepted: list[str] = field(default_factory=list)   # one line each
    refused: list[str] = field(default_factory=list)    # one line each
    notes: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)       # the keys written

    @property
    def exit_status(self) -> int:
        return 1 if self.refused else 0


def choose(pending: Mapping[str, Pending], keys: Iterable[str], all_changed: bool = False,
           ledger: Ledger | None = None) -> list[Pending]:
    """The pending readings named (an unknown key: one error naming what is pending),
    plus, with ``all_changed``, every one that is not a regression (as ``judged``
    against ``ledger``, never as the reading says)."""
    chosen = {}
    for key in keys:
        if key not in pending:
            listed = ", ".join(sorted(pending)) or "none"
            raise NanoframesError("pending-unknown", f"{key} has no pending reading "
                                  f"(pending: {listed})")
        chosen[key] = pending[key]
    if all_changed:
        chosen.update({k: p for k, p in pending.items()
                       if (judged(p, ledger).kind if ledger is not None else p.kind)
                       in ACCEPTABLE})
    return [chosen[k] for k in sorted(chosen)]


def read_list(path: Path) -> list[str]:
    """The keys of an ``accept.json`` the HTML report saved: ``{"accept": [KEY, ...]}``;
    a regular file of at most ``MAX_LIST`` bytes, nested at most ``MAX_LIST_DEPTH``."""
    try:
        data = loads_limited(read_limited(path, MAX_LIST), MAX_LIST_DEPTH)
        keys = data["accept"]
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ValueError('"accept" must be a list of keys')
        return keys
    except OSError as exc:
        raise NanoframesError("accept-list-invalid", f"cannot read: {exc.strerror or exc}",
                              path) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise NanoframesError("accept-list-invalid", f'expected {{"accept": [KEY, ...]}} '
                              f"({exc})", path) from None


def offers_platform(item: Pending, ledger: Ledger) -> bool:
    """Drawn by another renderer build (libthorvg, its libraries) than the primary
    entry's: it may be that machine's platform entry beside the primary."""
    from .policy import other_renderer

    recorded = ledger.entries.get(item.key)
    return recorded is not None and other_renderer(item.entry, recorded)


def platform_for(item: Pending, ledger: Ledger) -> str | None:
    """The platform tag a reading taken elsewhere is accepted under: its reader's,
    where another renderer build drew it than the primary's; else None (primary)."""
    return item.platform if offers_platform(item, ledger) else None


def judged(item: Pending, ledger: Ledger) -> Verdict:
    """The reading's verdict as this machine computes it against its own ledger:
    what is shown and decided, never the verdict (or line) the reading carries."""
    from .policy import reading_of
    from .verdict import judge

    return judge(reading_of(item.key, item.entry), ledger.entries.get(item.key))


def verify_frames(item: Pending, source: Source, store_root: Path | None,
                  carried: bool) -> str | None:
    """Why the reading's entry is not what its frames say, or None. Its frame
    digests must be the frames the reading lists (no more, no fewer), its film
    digest the hash of those frames in order (a full reading), and, where
    ``carried`` (a reading from elsewhere), every frame decoded from the readings'
    folder (or already in the store) and hashed to its digest; verified frames are
    kept in the store."""
    from ..frames.digest import SHORT, film_digest

    entry = item.entry
    full = {d[:SHORT]: d for d in item.frames}
    if len(full) != len(item.frames) or set(full) != set(entry.frame_digests):
        return ("its entry's frame digests are not the frames the reading lists "
                "(edited?): not accepted")
    if not entry.sampled and film_digest([full[d] for d in entry.frame_digests]) != entry.digest:
        return "its film digest is not the hash of its frames (edited?): not accepted"
    if not carried:
        return None
    missing = _keep_frames(item, source, store_root)
    if missing:
        return (f"{missing} of its {len(item.frames)} frames are missing from the readings or "
                "do not hash to their digests: not accepted")
    return None


def local_identity(key: str, config: Config) -> dict[str, str]:
    from ..frames.film import Film
    from .reading import source_identity

    film = Film.open(config.root / key, config.root)
    return source_identity(film.source).as_dict()


def _stale(item: Pending, local: Mapping[str, str]) -> list[str]:
    return [n for n in ("source", "media", "fonts") if local[n] != item.entry.identity.get(n)]


def _keep_frames(item: Pending, source: Source, store_root: Path | None) -> int:
    """Copy the reading's frames into the store (each decoded and hashed to its
    digest; without a store, only verified); how many are missing or wrong."""
    from ..frames.digest import frame_digest
    from ..frames.store import Store, decode_png

    store = Store(store_root, warn=None) if store_root is not None else None
    missing = 0
    for digest in item.frames:
        if store is not None and store.has(digest):
            continue
        data = source.frame(digest)
        try:
            rgba = decode_png(data) if data is not None else None
        except (NanoframesError, ValueError, OSError):
            rgba = None
        if rgba is None or frame_digest(rgba) != digest:
            missing += 1
            continue
        if store is not None:
            store.put(rgba, digest)
    if store is not None:
        _keep_scenes(item, source, store)
    return missing


def _keep_scenes(item: Pending, source: Source, store) -> None:
    """Copy the scenes the reading's check diffed into the store (verified), so a
    later check against the accepted entry can diff its scenes too."""
    from ..frames.scenes import SCENE, from_portable, keep

    for digest in item.scenes:
        if store.has_record(SCENE, digest):
            continue
        data = source.scene(digest)
        document = from_portable(data, digest) if data is not None else None
        if document is not None:
            keep(store, digest, document)


def accept(chosen: list[Pending], source: Source, *, config: Config, ledger_path: Path,
           store_root: Path | None, force: bool = False, platform: str | None = None,
           from_elsewhere: bool = False) -> Outcome:
    """Write the ``chosen`` readings into the ledger; ``platform``: as that tag's
    platform entries whatever toolchain read them. ``from_elsewhere`` (``--from``):
    a reading drawn by another renderer build than the primary entry's becomes
    its reader's platform entry (``platform_for``); else, as ``--record`` does, the
    primary (review offers the platform entry: ``offers_platform``)."""
    from .recording import commit

    out = Outcome()
    groups: dict[str | None, dict[str, Entry]] = {}
    before = read_ledger(ledger_path, empty_ok=True)
    verdicts = {item.key: judged(item, before) for item in chosen}
    for item in chosen:
        if item.verdict.get("drill"):
            out.refused.append(f"{item.key}: drawn under a fire drill (NANOFRAMES_DRILL): "
                               "never accepted")
            continue
        if verdicts[item.key].kind is Kind.REGRESSION and not force:
            out.refused.append(f"{item.key}: a regression (the same inputs drew other pixels): "
                               "accept it with --force if intended")
            continue
        if is_test_key(item.key):
            out.refused.append(f"{item.key}: a test's composition (nf.check) cannot be compared "
                               f"with a file: record it with pytest '{item.key}' --nf-record")
            continue
        try:
            local = local_identity(item.key, config)
        except (NanoframesError, OSError) as exc:
            out.refused.append(f"{item.key}: cannot be compared with the local files ({exc})")
            continue
        moved = _stale(item, local)
        if moved:
            out.refused.append(f"{item.key}: stale: its {', '.join(moved)} differ"
                               f"{'s' if len(moved) == 1 else ''} from the local files' "
                               "(read under other inputs): not accepted")
            continue
        tag = platform
        if tag is None and from_elsewhere:
            tag = platform_for(item, before)
        wrong = verify_frames(item, source, store_root, carried=from_elsewhere)
        if wrong:
            out.refused.append(f"{item.key}: {wrong}")
            continue
        groups.setdefault(tag, {})[item.key] = item.entry
    shown = {key: verdict.summary() for key, verdict in verdicts.items()}
    for tag, fresh in sorted(groups.items(), key=lambda kv: kv[0] or ""):
        done = commit(ledger_path, fresh, force=force, root=config.root, platform=tag)
        out.notes += done.notes
        refused = {v.key for v in done.refused}
        out.refused += [f"{v.key}: {v.line()}" for v in done.refused]
        for key in sorted(set(fresh) - refused):
            out.keys.append(key)
            out.accepted.append(f"accepted {key}" + (f" (platform entry {tag})" if tag else "")
                                + f": {shown[key]}")
    out.keys.sort()
    return out
