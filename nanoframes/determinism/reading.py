"""A fresh reading of one film: its identity and its frame digests.

A film is drawn from a film source (frames/source.py): a composition, whose
identity is worked out here from its parsed tree, or another format, whose
source supplies its identity parts (``identity_parts``) already digested.

The one place the CLI (``nanoframes digest``) and the pytest plugin both go to
render a composition for judging, so a verdict means the same in both.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..bake.baker import Baker
from ..config import Config, find_project_root, load_config, relative_key
from ..errors import NanoframesError
from ..frames import drill
from ..frames.digest import SHORT, film_digest
from ..frames.film import Film
from ..frames.parallel import checked, film_readings, joined, result_of, submit_film
from ..frames.source import FilmSource, as_source, baker_of
from ..frames.store import Store
from ..model.composition import Composition
from ..model.numbers import evenly_spaced
from ..text.fonts import face_digest
from .excuses import speak
from .identity import (
    Identity,
    fonts_digest,
    media_digest,
    source_digest,
    toolchain_digest,
    toolchain_parts,
)
from .ledger import Entry, Ledger, read_ledger
from .verdict import (
    Reading,
    Verdict,
    error,
    excuse_bounds_for,
    excuse_for,
    excused_list,
    judge,
)

if TYPE_CHECKING:
    from .ahead import DrawnAhead

# file versions (path, mtime_ns, size, inode) of a composition and its nested
# children -> source digest. The projection is the only costly part: media and
# fonts reuse the digests media.py and text/fonts.py cache per file version.
_SOURCE_CACHE: dict[tuple[tuple[str, int, int, int], ...], str] = {}


def _children(baker: Baker) -> list[Path]:
    """Every nested composition ``baker`` draws, recursively (nested.py's NestedImage)."""
    out: list[Path] = []
    for image in baker.images.values():
        child = getattr(image, "baker", None)
        if child is not None:
            out.append(image.path)
            out.extend(_children(child))
    return out


def _version(path: Path) -> tuple[str, int, int, int]:
    st = path.stat()
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ino)


def source_extras(comp: Composition) -> list[tuple[str, str]]:
    """``(child path, child's canonical source digest)`` for every nested composition,
    recursively: the ``extra`` of ``identity.source_digest``."""
    from ..bake.nested import child_sources

    return [(name, source_digest(child.root)) for name, child in child_sources(comp)]


def _source(comp: Composition, baker: Baker) -> str:
    if comp.text is not None:  # loaded from text: no file version to key a cache entry on
        return source_digest(comp.root, source_extras(comp))
    try:
        key = tuple(_version(p) for p in (comp.path, *sorted(set(_children(baker)))))
    except OSError:  # parsed from bytes no longer on disk: never cache
        return source_digest(comp.root, source_extras(comp))
    digest = _SOURCE_CACHE.get(key)
    if digest is None:
        digest = _SOURCE_CACHE[key] = source_digest(comp.root, source_extras(comp))
    return digest


def media_items(comp: Composition, baker: Baker) -> list[tuple[str, str]]:
    """``(path relative to the composition, SHA-256)`` of each raster image drawn,
    nested compositions' images included (their sources count in ``source``)."""
    from ..bake.nested import all_images

    base = comp.directory.resolve()
    items = {(Path(os.path.relpath(img.path, base)).as_posix(), img.sha256)
             for _, img in all_images(baker)}
    return sorted(items)


def font_items(baker: Baker) -> list[tuple[str, str]]:
    """``(face file basename, SHA-256)`` of each face the text resolves to (a face of a
    collection: ``file.ttc#N``, the whole file hashed), fallback and
    nested compositions' text included."""
    return sorted({(face.label, face_digest(face)) for face in baker.faces()})


def composition_identity(comp: Composition, baker: Baker, *, load_engine: bool = True
                         ) -> Identity:
    """The four components of ``comp``'s identity, as docs/digest.md defines them.

    The toolchain (library bytes, module digest) is computed once per process;
    the source projection once per file version. ``load_engine``: see
    ``identity.toolchain_parts``.
    """
    return Identity(
        source=_source(comp, baker),
        media=media_digest(media_items(comp, baker)),
        fonts=fonts_digest(font_items(baker)),
        toolchain=toolchain_digest(toolchain_parts(baker.uses_video(),
                                                   load_engine=load_engine)),
    )



def source_identity(source: FilmSource | Composition, *, load_engine: bool = True
                    ) -> Identity:
    """The four components of a film source's identity: a composition's from its
    parsed tree (``composition_identity``), any other source's from the parts it
    digests itself (``identity_parts``: source digest, media and font items, and
    toolchain parts of its own, e.g. a Lottie film's player settings)."""
    source = as_source(source)
    baker = baker_of(source)
    if baker is not None:
        if load_engine:  # (comp, baker): the call tests hook to move an identity
            return composition_identity(source.comp, baker)
        return composition_identity(source.comp, baker, load_engine=False)
    parts = source.identity_parts()
    return Identity(
        source=parts["source"],
        media=media_digest(parts["media"]),
        fonts=fonts_digest(parts["fonts"]),
        toolchain=toolchain_digest(film_toolchain(source, load_engine=load_engine)),
    )


def film_items(source: FilmSource | Composition
               ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], dict[str, str]]:
    """What ``media`` and ``fonts`` cover, as ``(name, SHA-256)``, and the faces that
    do not travel (found in this machine's font directories only: name -> path)."""
    source = as_source(source)
    baker = baker_of(source)
    if baker is None:
        parts = source.identity_parts()
        return sorted(parts["media"]), sorted(parts["fonts"]), dict(parts.get("host", {}))
    host = {face.label: str(face.path) for face in baker.faces() if not face.travels}
    return media_items(source.comp, baker), font_items(baker), host


def film_toolchain(source: FilmSource | Composition, *, load_engine: bool = True
                   ) -> dict[str, str]:
    """The toolchain parts a film source is drawn with: ``toolchain_parts`` (the
    decoder's with video), plus any parts the source adds (``toolchain_extra``)."""
    source = as_source(source)
    parts = toolchain_parts(source.uses_video(), load_engine=load_engine)
    parts.update(_extra_parts(source))
    return parts


def _extra_parts(source: FilmSource) -> dict[str, str]:
    extra = getattr(source, "toolchain_extra", None)
    return dict(extra()) if extra is not None else {}


def film_identity(film: Film) -> dict[str, str]:
    """The identity components the frame cache keys a film's frames on
    (``FrameCache.film_of``). ThorVG is not loaded for them: a warm render draws
    nothing, and the workers of a render with frames to draw are forked after
    the lookups (``frames.through_cache.cached_pngs``)."""
    film.inputs()  # first: the key is of these versions (what is drawn is checked on them)
    return source_identity(film.source, load_engine=False).as_dict()

def sample_indices(frame_count: int, n: int) -> tuple[int, ...]:
    """``n`` evenly spaced frame indices, first and last included; every frame if
    ``n >= frame_count``. Integer arithmetic, so the same on every machine."""
    return evenly_spaced(frame_count, n)


def _config_for(path: str | Path, config: Config | None) -> Config:
    return config if config is not None else load_config(find_project_root(Path(path).parent))


@dataclass
class PendingReading:
    """A reading whose frames are being drawn (here, or on worker processes)."""

    key: str
    identity: Identity
    frames: int
    indices: tuple[int, ...]
    composition_id: str
    video: bool = False  # the film draws a clip: the decoder is in its toolchain
    extra_parts: dict = field(default_factory=dict)  # the source's own toolchain parts
    # the files as read for the identity (Film.inputs): what workers must have drawn
    inputs: tuple = ()
    path: Path | None = None  # the composition's
    _film: Film | None = None       # drawn here on result(), when there is no pool
    _futures: list[Future] = field(default_factory=list)

    def attach(self, futures: list[Future]) -> None:
        """Take the frames from ``futures`` (``submit_digests``) instead of drawing here."""
        self._futures = futures
        self._film = None  # the workers have it: keep no film alive in this process

    def result(self) -> Reading:
        if self._film is not None:
            digests, scenes = film_readings(self._film, self.indices)
        else:
            digests, scenes = joined(checked(self.inputs, result_of(f), self.path)
                                     for f in self._futures)
        return Reading(
            key=self.key,
            identity=self.identity.as_dict(),
            toolchain_parts={**toolchain_parts(self.video), **self.extra_parts},
            frames=self.frames,
            indices=self.indices,
            frame_digests=tuple(digests),
            digest=film_digest(digests),
            composition_id=self.composition_id,
            scene_digests=tuple(scenes),
            drilled=drill.names(self.path),
        )


def frames_to_read(comp: FilmSource | Composition, samples: int | None) -> tuple[int, ...]:
    """The frame indices a reading digests: every frame, or ``samples`` of them."""
    if samples:
        return sample_indices(comp.frame_count, samples)
    return tuple(range(comp.frame_count))


def start_reading(path: str | Path, *, config: Config | None = None,
                  samples: int | None = None, dedup: bool = True,
                  comp: FilmSource | Composition | None = None, store: Path | None = None,
                  keep_scenes: bool = False) -> PendingReading:
    """Open (unless ``comp``, what was parsed, is given) and identify one film; its frames are
    drawn by ``result()`` (or on a pool after ``submit``/``attach``). Errors in the
    composition itself are raised here. With ``store`` the frames drawn are kept
    there; with ``keep_scenes`` (a recording) their scenes too."""
    config = _config_for(path, config)
    film = Film(comp, dedup=dedup) if comp is not None else Film.open(path, config.root, dedup)
    if store is not None and drill.names(film.comp.path):
        store = None  # frames drawn under a fire drill never enter the store
    film.store = Store(store) if store is not None else None  # recording keeps its frames
    film.keep_scenes = keep_scenes and store is not None
    source = film.source
    indices = frames_to_read(source, samples)
    inputs = film.inputs()  # first: the identity is of these versions
    identity = source_identity(source)
    if film.store is not None:  # what each recorded input is made of, told when it moves
        from .inputs import film_records, keep

        keep(film.store, film_records(source, identity.as_dict(),
                                      film_toolchain(source, load_engine=False)))
    return PendingReading(
        key=relative_key(path, config.root),
        identity=identity,
        frames=source.frame_count,
        indices=tuple(indices),
        composition_id=source.id,
        video=source.uses_video(),
        extra_parts=_extra_parts(source),
        inputs=inputs,
        path=source.path,
        _film=film,
    )


def queued_reading(path: str | Path, pool: Executor, **how) -> PendingReading:
    """``start_reading``, with the film's frames queued on ``pool`` (one worker's or
    more) before this returns; ``result()`` waits for them."""
    pending = start_reading(path, **how)
    film = pending._film
    pending.attach(submit_film(film, film.indices(pending.indices), pool, 2))
    return pending


def read_film(path: str | Path, *, config: Config | None = None, samples: int | None = None,
              jobs: int = 1, dedup: bool = True, pool: Executor | None = None,
              store: Path | None = None, keep_scenes: bool = False,
              ahead: DrawnAhead | None = None, then: str | Path | None = None) -> Reading:
    """Parse, identify and digest one composition (all frames, or ``samples`` of them).

    With a ``pool`` and ``ahead``, the film may have been queued already; ``then``, the
    film to be read next, is queued behind it before this one is awaited."""
    how = dict(config=config, samples=samples, dedup=dedup, store=store,
               keep_scenes=keep_scenes)
    pending = ahead.take(path, **how) if ahead is not None else None
    if pending is None and pool is not None:
        pending = queued_reading(path, pool, **how)
    elif pending is None:
        pending = start_reading(path, **how)
        if jobs > 1:
            made = film_readings(pending._film, pending.indices, jobs=jobs)
            pending.attach([_done((made, pending.inputs))])
    if ahead is not None and pool is not None and then is not None:
        ahead.queue(then, pool, **how)
    return pending.result()


def _done(value) -> Future:
    future: Future = Future()
    future.set_result(value)
    return future


def entry_from_reading(reading: Reading) -> Entry:
    """The ledger entry that records ``reading``."""
    return Entry(
        digest=reading.digest,
        frames=reading.frames,
        sampled=reading.sampled,
        samples=reading.indices if reading.sampled else None,
        identity=dict(reading.identity),
        toolchain_parts=dict(reading.toolchain_parts),
        frame_digests=tuple(d[:SHORT] for d in reading.frame_digests),
        scene_digests=(tuple(d[:SHORT] for d in reading.scene_digests)
                       if reading.scene_digests else None),
    )


def check_one(path: str | Path, *, config: Config | None = None, ledger: Ledger | None = None,
              samples: int | None = None, jobs: int = 1, dedup: bool = True,
              excused: Mapping[str, str] | None = None, pool: Executor | None = None,
              store: Path | None = None, keep_scenes: bool = False,
              ahead: DrawnAhead | None = None, then: str | Path | None = None
              ) -> tuple[Verdict, Reading | None]:
    """Read ``path`` and judge it against its ledger entry (``keep_scenes``: a
    recording's reading, whose scenes are kept in ``store``; ``ahead`` and ``then``:
    ``read_film``'s, the film checked next drawn behind this one).

    A composition that cannot be read or rendered is an ``error`` verdict with
    the one-line message (never excused: an exemption covers a verdict, not a
    broken file). A bad ledger or configuration raises: it concerns every
    composition, not this one.
    """
    config = _config_for(path, config)
    if ledger is None:
        ledger = read_ledger(config.ledger_path)
    if excused is None:
        excused = excused_list(config)
    key = relative_key(path, config.root)
    try:
        reading = read_film(path, config=config, samples=samples, jobs=jobs, dedup=dedup,
                            pool=pool, store=store, keep_scenes=keep_scenes, ahead=ahead,
                            then=then)
    except NanoframesError as exc:
        if ahead is not None:  # a crash took what was queued behind this film
            ahead.forget_broken()
        return error(key, str(exc)), None
    reason = excuse_for(key, excused, reading.composition_id)
    # An excuse with bounds is judged by the caller, with the pixels (evidence/pixels.py).
    verdict = judge(reading, ledger.entries.get(key), excused=reason)
    return speak(verdict, config, ledger, reading.composition_id), reading


def check_composition(comp: FilmSource | Composition, key: str, *, config: Config | None = None,
                      ledger: Ledger | None = None, samples: int | None = None,
                      excused: Mapping[str, str] | None = None, store: Path | None = None,
                      measure: bool = False, pool: Executor | None = None,
                      keep_scenes: bool = False) -> tuple[Verdict, Reading | None]:
    """``check_one`` for a film already parsed (a composition or film source; from a
    file, or from text with ``key`` naming its ledger entry), drawn in this process or,
    with ``pool``, by its worker (where a crash in ThorVG is this check's ``render-crashed``). With
    ``store``, its frames are kept there. ``measure``: the caller measures a bounded excuse
    against the pixels (evidence/pixels.py), so it is left for the caller to judge."""
    config = config if config is not None else load_config(comp.project_root)
    if ledger is None:
        ledger = read_ledger(config.ledger_path)
    if excused is None:
        excused = excused_list(config)
    try:
        pending = start_reading(comp.path, config=config, samples=samples, comp=comp,
                                store=store, keep_scenes=keep_scenes)
        pending.key = key
        if pool is not None:  # drawn there: a crash in ThorVG is this check's error
            made = film_readings(pending._film, pending.indices, pool=pool)
            pending.attach([_done((made, pending.inputs))])
        reading = pending.result()
    except NanoframesError as exc:
        return error(key, str(exc)), None
    reason = excuse_for(key, excused, reading.composition_id)
    verdict = speak(judge(reading, ledger.entries.get(key), excused=reason), config, ledger,
                    reading.composition_id)
    if measure:
        return verdict, reading
    # No frames are compared here: an excuse with bounds cannot be shown to hold,
    # so it does not (the command line and collected items measure them).
    from .tolerance import apply_bounds

    bounds = excuse_bounds_for(key, config, reading.composition_id)
    return apply_bounds(verdict, bounds, None), reading
