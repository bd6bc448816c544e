"""Many compositions at once: collect them, check them against the ledger, record them.

One worker pool serves the whole sweep; one bad composition is reported with
its error and the rest are still checked. Stale entries (a recorded file that
is gone) are only judged, and only removed, when the sweep covers everything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import Config, glob_compositions, relative_key
from ..errors import NanoframesError
from ..frames.source import FilmSource, is_film_name, open_parsed
from ..model.composition import Composition
from ..model.svg import COMPOSITION_SUFFIX
from .excuses import speak
from .ledger import Ledger, RecordSummary, is_test_key, read_ledger
from .policy import mixed_toolchains, stale_keys
from .verdict import (
    Kind,
    Reading,
    Verdict,
    error,
    excuse_for,
    excused_list,
    exit_status,
    judge,
    stale,
)

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

    from .reading import PendingReading

# The drawing stack (reading: the baker, text, ThorVG, NumPy) is imported where it
# is first used, after the compositions are parsed: a sweep starts parsing (and,
# with workers, queueing) without waiting for it.

# Called after each composition (for a progress bar); never prints by itself.
Progress = Callable[[Verdict], None]


def collect(paths: Iterable[str | Path], config: Config, all_: bool = False) -> list[Path]:
    """Explicit files and directories (the films inside: ``**/*.nf.svg``, and the
    Lottie films the configured globs name there: any ``*.json`` could be data), plus
    the configured
    globs when ``all_`` or when no path is given. Sorted by key, de-duplicated.

    A named file that does not exist is kept, so the sweep reports it as an error.
    """
    paths = list(paths)
    found: dict[str, Path] = {}

    def add(path: Path) -> None:
        path = path.absolute()
        found.setdefault(relative_key(path, config.root), path)

    configured: dict[Path, list[Path]] | None = None
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in path.rglob(f"*{COMPOSITION_SUFFIX}"):
                if child.is_file():
                    add(child)
            if configured is None:  # and the other films the globs name under it
                configured = configured_films(config)
            inside = path.resolve()
            for file, films in configured.items():
                if file.is_relative_to(inside):
                    for film in films:
                        add(film)
        else:
            add(path)
    if all_ or not paths:
        for child in glob_compositions(config):
            add(child)
    return [found[key] for key in sorted(found)]


def configured_films(config: Config) -> dict[Path, list[Path]]:
    """The films the configured globs name that are not compositions (Lottie files,
    and their markers' films: ``button.json#press``), by the file each reads (resolved):
    what the pytest plugin collects beside every ``*.nf.svg`` it meets."""
    from ..frames.source import file_of
    from ..model.svg import is_composition_name

    out: dict[Path, list[Path]] = {}
    for film in glob_compositions(config):
        file = file_of(film)
        if not is_composition_name(file.name) and is_film_name(film):
            out.setdefault(file.resolve(), []).append(film)
    return out


def require_coverage(paths: Sequence[str | Path], config: Config, ledger: Ledger,
                     all_: bool) -> None:
    """A full sweep whose configured globs match no composition while the ledger
    holds entries of files checks nothing: an error naming the globs and those
    entries, never "0 compositions: nothing to check" (a moved folder, a typo)."""
    if not is_full(paths, all_) or glob_compositions(config):
        return
    keys = sorted(key for key in ledger.entries if not is_test_key(key))
    if not keys:
        return
    globs = ", ".join(config.compositions) or "(none)"
    listed = ", ".join(keys[:10]) + (", …" if len(keys) > 10 else "")
    ledger_name = ledger.path.as_posix()
    try:
        ledger_name = relative_key(ledger.path, config.root)
    except NanoframesError:
        pass
    pyproject = config.root / "pyproject.toml"
    raise NanoframesError(
        "no-compositions", f"the compositions glob{'s' if len(config.compositions) != 1 else ''}"
        f" {globs} match{'es' if len(config.compositions) == 1 else ''} no composition, but "
        f"the ledger {ledger_name} holds {len(keys)} entr{'y' if len(keys) == 1 else 'ies'} "
        f"it would check: {listed}", pyproject if pyproject.is_file() else config.root)


def is_full(paths: Sequence[str | Path], all_: bool) -> bool:
    """A sweep covers everything (and may speak of stale entries) with --all or no paths."""
    return all_ or not paths


@dataclass
class SweepResult:
    verdicts: list[Verdict]
    readings: dict[str, Reading]
    ledger: Ledger
    full: bool
    problems: list[str] = field(default_factory=list)  # the ledger's own (full sweeps)

    @property
    def exit_status(self) -> int:
        status = exit_status(self.verdicts)
        return max(status, 1) if self.problems else status


@dataclass
class RecordResult:
    verdicts: list[Verdict]            # each composition as found before recording
    summary: RecordSummary
    refused: list[Verdict] = field(default_factory=list)   # regressions left as recorded
    errors: list[Verdict] = field(default_factory=list)
    written: bool = False
    replaced: str | None = None  # --force set an unreadable ledger aside: what it says
    store_warning: str | None = None  # the frame store could not keep every frame
    notes: list[str] = field(default_factory=list)  # the recording's own lines (platforms)
    platform: str | None = None  # the tag recorded under, for a platform recording

    @property
    def exit_status(self) -> int:
        if self.errors:
            return 2
        return 1 if self.refused else 0


def readings(paths: list[Path], config: Config, *, samples: int | None = None, jobs: int = 1,
             dedup: bool = True, store: Path | None = None, keep_scenes: bool = False
             ) -> Iterator[tuple[Path, Reading | Verdict]]:
    """Each composition's fresh reading, or its error verdict, in path order (frames
    kept in ``store``; with ``keep_scenes``, a recording's, their scenes too).

    Alone, one film at a time: nothing but that film in memory. With workers,
    every file is parsed here, then identified while the pool boots; the moment
    it is up, all frames are queued at once (biggest films first, big ones
    split), so the pool never idles between compositions. One bad composition
    never stops the rest.
    """
    if jobs <= 1:
        for path in paths:
            comp = _parse(path, config)
            yield path, comp if isinstance(comp, Verdict) else \
                _result(path, _start(path, config, samples, dedup, comp, store, keep_scenes))
        return
    from ..frames.workers import booting_pool

    parsed = [(path, _parse(path, config)) for path in paths]
    comps = [c for _, c in parsed if not isinstance(c, Verdict)]
    booting = booting_pool(jobs, config.root)
    try:
        queued: dict[int, list[Future]] | None = None
        started: list[tuple[Path, Composition | FilmSource | Verdict,
                            PendingReading | Verdict]] = []
        for path, comp in parsed:
            if queued is None and booting.done():
                queued = _queue(comps, booting.result(), jobs, samples, dedup, store,
                                keep_scenes)
            started.append((path, comp, comp if isinstance(comp, Verdict) else
                            _start(path, config, samples, dedup, comp, store, keep_scenes)))
        if queued is None:
            queued = _queue(comps, booting.result(), jobs, samples, dedup, store, keep_scenes)
        for path, comp, item in started:
            if not isinstance(comp, Verdict):
                if isinstance(item, Verdict):  # e.g. a missing image: drop its frames
                    for future in queued[id(comp)]:
                        future.cancel()
                else:
                    item.attach(queued[id(comp)])
            yield path, _result(path, item)
    finally:  # now, or (interrupted while it boots) once it is up
        booting.add_done_callback(
            lambda f: f.exception() is None and f.result().shutdown(cancel_futures=True))


def _read(paths: list[Path], config: Config, ledger: Ledger, samples: int | None, jobs: int,
          dedup: bool, progress: Progress | None, store: Path | None = None,
          keep_scenes: bool = False) -> tuple[list[Verdict], dict[str, Reading]]:
    """Read and judge every composition; verdicts come back in path order."""
    excused = excused_list(config)
    verdicts: list[Verdict] = []
    found: dict[str, Reading] = {}
    for _, got in readings(paths, config, samples=samples, jobs=jobs, dedup=dedup, store=store,
                           keep_scenes=keep_scenes):
        if isinstance(got, Reading):
            found[got.key] = got
            reason = excuse_for(got.key, excused, got.composition_id)
            got = speak(judge(got, ledger.entries.get(got.key), excused=reason), config, ledger,
                        found[got.key].composition_id)
        verdicts.append(got)
        if progress:
            progress(got)
    return verdicts, found


def _failed(path: Path, config: Config, exc: Exception) -> Verdict:
    if isinstance(exc, NanoframesError):
        return error(relative_key(path, config.root), str(exc))
    # e.g. a permission problem (OSError): this file only
    return error(relative_key(path, config.root), f"{path}: {exc.strerror or exc}")


def _parse(path: Path, config: Config) -> Composition | FilmSource | Verdict:
    try:
        return open_parsed(path, config.root)
    except (NanoframesError, OSError) as exc:
        return _failed(path, config, exc)


def _start(path: Path, config: Config, samples: int | None, dedup: bool,
           comp: Composition | FilmSource | None = None, store: Path | None = None,
           keep_scenes: bool = False) -> PendingReading | Verdict:
    from .reading import start_reading

    try:
        return start_reading(path, config=config, samples=samples, dedup=dedup, comp=comp,
                             store=store, keep_scenes=keep_scenes)
    except (NanoframesError, OSError) as exc:
        return _failed(path, config, exc)


def _queue(comps: list[Composition | FilmSource], pool: Executor, jobs: int, samples: int | None,
           dedup: bool, store: Path | None = None, keep_scenes: bool = False
           ) -> dict[int, list[Future]]:
    """Submit biggest first (frames × pixels); a film bigger than a fair share is
    split in contiguous runs. Returns each film's futures by ``id``."""
    from ..frames.parallel import submit_digests
    from .reading import frames_to_read

    frames = {id(c): frames_to_read(c, samples) for c in comps}
    cost = {id(c): len(frames[id(c)]) * c.width * c.height for c in comps}
    share = (sum(cost.values()) or 1) / (2 * jobs)
    queued: dict[int, list[Future]] = {}
    for comp in sorted(comps, key=lambda c: -cost[id(c)]):
        parts = max(1, min(2 * jobs, round(cost[id(comp)] / share)))
        queued[id(comp)] = submit_digests(comp, frames[id(comp)], pool, parts, dedup, store,
                                          keep_scenes)
    return queued


def _result(path: Path, started: PendingReading | Verdict) -> Reading | Verdict:
    if isinstance(started, Verdict):
        return started
    try:
        return started.result()
    except NanoframesError as exc:
        if exc.code in ("render-crashed", "render-timeout"):  # the pool is gone: it ends
            raise
        if exc.code == "worker-died":  # killed (out of memory, a signal): this film's error
            return error(started.key, f"{path}: error[worker-died]: a worker process died "
                         "while drawing it")
        return error(started.key, str(exc))


def check(paths: Sequence[str | Path], *, config: Config, ledger_path: Path | None = None,
          samples: int | None = None, jobs: int = 1, dedup: bool = True, all_: bool = False,
          progress: Progress | None = None, store: Path | None = None) -> SweepResult:
    """Verdicts for every collected composition, plus stale entries on a full sweep.
    With ``store``, the frames drawn are kept there (a pending reading's frames)."""
    ledger = read_ledger(Path(ledger_path) if ledger_path else config.ledger_path)
    require_coverage(paths, config, ledger, all_)
    full = is_full(paths, all_)
    targets = collect(paths, config, all_)
    verdicts, readings = _read(targets, config, ledger, samples, jobs, dedup, progress, store)
    if full:
        excused = excused_list(config)
        seen = {v.key for v in verdicts}
        verdicts += [stale(key, ledger.entries[key], excuse_for(key, excused))
                     for key in stale_keys(ledger, config.root, seen)]
        verdicts.sort(key=lambda v: v.key)
    mixed = mixed_toolchains(ledger.entries) if full else None
    return SweepResult(verdicts, readings, ledger, full, [mixed] if mixed else [])


def record(paths: Sequence[str | Path], *, config: Config, ledger_path: Path | None = None,
           samples: int | None = None, jobs: int = 1, force: bool = False, dedup: bool = True,
           all_: bool = False, progress: Progress | None = None, store: Path | None = None,
           platform: str | None = None,
           before_commit: Callable[[list[Verdict], dict[str, Reading], Ledger], None]
           | None = None) -> RecordResult:
    """Record fresh readings into the ledger (``recording.commit``: locked, re-read,
    merged by key, written once, atomically), by the rules of ``policy.plan_record``.

    With ``store``, every distinct frame digested is also kept there (frames/store.py).
    With ``platform`` (a tag), the readings become that platform's entries beside
    the primary ones (a platform recording never removes stale entries).

    A corrupt or conflicted ledger stops the recording unless ``force`` (then it
    is kept beside the new one, and the result says how many entries it replaced).
    ``before_commit`` is given the verdicts against the ledger as read, the readings
    and that ledger, before anything is written: a person sees what is accepted.
    """
    from ..frames.store import unkept_warning
    from .reading import entry_from_reading
    from .recording import commit, read_for_recording

    path = Path(ledger_path) if ledger_path else config.ledger_path
    ledger, _ = read_for_recording(path, force)  # fail before rendering anything
    require_coverage(paths, config, ledger, all_)
    full = is_full(paths, all_)
    targets = collect(paths, config, all_)
    verdicts, readings = _read(targets, config, ledger, samples, jobs, dedup, progress, store,
                               keep_scenes=True)  # what the entries' scene digests name
    store_warning = None if store is None else unkept_warning(
        store, (d for r in readings.values() for d in r.frame_digests))
    errors = [v for v in verdicts if v.kind is Kind.ERROR]
    fresh = {v.key: entry_from_reading(readings[v.key]) for v in verdicts
             if v.kind is not Kind.ERROR}
    seen = {v.key for v in verdicts} if full and platform is None else None
    if before_commit is not None:
        before_commit(verdicts, readings, ledger)
    done = commit(path, fresh, force=force, root=config.root, seen=seen, platform=platform)
    if done.summary.removed:
        verdicts += [_stale_verdict(key, ledger) for key in done.summary.removed]
        verdicts.sort(key=lambda v: v.key)
    return RecordResult(verdicts, done.summary, done.refused, errors, done.written,
                        done.replaced, store_warning, done.notes, platform)


def _stale_verdict(key: str, ledger: Ledger) -> Verdict:
    entry = ledger.entries.get(key)
    return stale(key, entry) if entry is not None else Verdict(key, Kind.STALE)
