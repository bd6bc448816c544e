"""The self-test's variations: the environment and process layout each one runs
under, as the jobs that the self-test (:mod:`.selftest`) hands to worker
processes. The table of variations is in that module's docstring."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model.numbers import evenly_spaced

VARIATIONS = (
    "fresh-process-per-frame",
    "reversed-order",
    "shuffled-order",
    "worker-pool",
    "threads-0",
    "threads-1",
    "threads-2",
    "locale",
    "tz",
    "hash-seed",
    "dedup-off",
    "pipeline-off",
    "interleaved",
)
DEFAULT_PER_FRAME = 8  # frames given a process each in fresh-process-per-frame
BASE_HASH_SEED = "0"
OTHER_HASH_SEED = "1729"
_LOCALE_CANDIDATES = ("de_DE.UTF-8", "fr_FR.UTF-8", "tr_TR.UTF-8", "C.UTF-8", "POSIX")


def _norm_locale(name: str) -> str:
    return name.lower().replace("-", "")


def loads(name: str) -> bool:
    """Whether this interpreter's C library can set locale ``name`` (asked here, not
    of ``locale -a``: under emulation that command is the host's own program)."""
    import locale

    try:
        before = locale.setlocale(locale.LC_ALL)
    except locale.Error:
        return False
    try:
        locale.setlocale(locale.LC_ALL, name)
        return True
    except locale.Error:
        return False
    finally:
        locale.setlocale(locale.LC_ALL, before)


def alternate_locale(env: Mapping[str, str]) -> str:
    """An installed locale that differs from the one ``env`` runs under; one with a
    decimal comma when the host has it."""
    current = _norm_locale(env.get("LC_ALL") or env.get("LC_NUMERIC") or env.get("LANG") or "C")
    for name in _LOCALE_CANDIDATES:
        norm = _norm_locale(name)
        if norm == current:
            continue
        if name == "POSIX" or loads(name):
            return name
    return "C" if current != "c" else "POSIX"


def locale_note(alt: str) -> str:
    """What the locale variation runs under, and whether that varies much."""
    if alt in _LOCALE_CANDIDATES[:3]:
        return f"LC_ALL={alt}"
    return (f"LC_ALL={alt}; no second locale here (none of {', '.join(_LOCALE_CANDIDATES[:3])} "
            f"loads): only the C locales vary")


def alternate_tz(env: Mapping[str, str]) -> str:
    """A zone far from UTC with a 45-minute offset; a POSIX TZ string when the host
    has no zone database."""
    current = env.get("TZ", "")
    if current == "Pacific/Chatham":
        return "UTC"
    for base in ("/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo"):
        if Path(base, "Pacific", "Chatham").is_file():
            return "Pacific/Chatham"
    return "<+1245>-12:45"


@dataclass(frozen=True)
class Target:
    key: str
    path: Path
    frames: int
    indices: tuple[int, ...]
    # drawn with 0 engine threads only, NANOFRAMES_THORVG_THREADS > 0 refuses it (a Lottie film:
    # ThorVG disables expressions with threads): the threads-N variations leave it out
    pinned_threads: bool = False


@dataclass(frozen=True)
class Job:
    """One worker process: ``segments`` are (target number, frame indices in rendering
    order); each segment is one ``Film.digests`` call (one pool call with jobs > 1)."""

    variation: str                     # "baseline" or a variation name
    segments: tuple[tuple[int, tuple[int, ...]], ...]
    env: Mapping[str, str]
    dedup: bool = True
    jobs: int = 1
    pipeline: bool = True


def jobs_for(targets: Sequence[Target], per_frame: int, base_env: Mapping[str, str],
              variations: Sequence[str], seed: int) -> tuple[list[Job], dict[str, str]]:
    """Every job to run, and the note each variation carries.

    One process per variation covers every composition, in sequence, as
    ``nanoframes digest`` does; the order variations also reverse or shuffle the
    order of the compositions. fresh-process-per-frame is one process per frame.
    """
    env = dict(base_env)
    env["PYTHONHASHSEED"] = BASE_HASH_SEED
    forward = tuple((n, t.indices) for n, t in enumerate(targets))
    jobs = [Job("baseline", forward, env)]
    notes: dict[str, str] = {}
    for name in variations:
        if name == "fresh-process-per-frame":
            for n, t in enumerate(targets):
                jobs += [Job(name, ((n, (i,)),), env) for i in _spread(t.indices, per_frame)]
        elif name == "reversed-order":
            jobs.append(Job(name, tuple((n, tuple(reversed(ix))) for n, ix in reversed(forward)),
                             env))
        elif name == "shuffled-order":
            import random

            rng = random.Random(seed)
            segments = []
            for n, ix in forward:
                shuffled = list(ix)
                rng.shuffle(shuffled)
                segments.append((n, tuple(shuffled)))
            rng.shuffle(segments)
            jobs.append(Job(name, tuple(segments), env))
            notes[name] = f"seed {seed}"
        elif name == "worker-pool":
            jobs.append(Job(name, forward, env, jobs=2))
            notes[name] = "2 workers"
        elif name.startswith("threads-") and name in VARIATIONS:
            n = name.split("-", 1)[1]
            varied = tuple((k, ix) for k, ix in forward
                           if n == "0" or not targets[k].pinned_threads)
            jobs.append(Job(name, varied, {**env, "NANOFRAMES_THORVG_THREADS": n}))
        elif name == "locale":
            alt = alternate_locale(base_env)
            jobs.append(Job(name, forward, {**env, "LC_ALL": alt, "LANG": alt}))
            notes[name] = locale_note(alt)
        elif name == "tz":
            tz = alternate_tz(base_env)
            jobs.append(Job(name, forward, {**env, "TZ": tz}))
            notes[name] = f"TZ={tz}"
        elif name == "hash-seed":
            jobs.append(Job(name, forward, {**env, "PYTHONHASHSEED": OTHER_HASH_SEED}))
            notes[name] = f"PYTHONHASHSEED {BASE_HASH_SEED} vs {OTHER_HASH_SEED}"
        elif name == "dedup-off":
            jobs.append(Job(name, forward, env, dedup=False))
        elif name == "pipeline-off":
            jobs.append(Job(name, forward, env, pipeline=False))
        elif name == "interleaved":
            jobs.append(Job(name, interleaved(forward), env))
            notes[name] = ("the films' frames in turn, one frame each" if len(targets) > 1
                           else "one frame at a time")
        else:
            raise ValueError(f"unknown self-test variation {name!r}; "
                             f"known: {', '.join(VARIATIONS)}")
    return jobs, notes


def interleaved(forward: Sequence[tuple[int, tuple[int, ...]]]
                ) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """One frame of each film in turn (round robin), each its own segment: every
    frame is drawn right after another film's (a Lottie film's animation is loaded
    again for each; nothing one film leaves behind may move another's pixels)."""
    out: list[tuple[int, tuple[int, ...]]] = []
    longest = max((len(ix) for _, ix in forward), default=0)
    for k in range(longest):
        out += [(n, (ix[k],)) for n, ix in forward if k < len(ix)]
    return tuple(out)


def _spread(order: Sequence[int], n: int) -> list[int]:
    """``n`` evenly spaced entries of ``order`` (all of them for n <= 0)."""
    if n <= 0:
        return list(order)
    return [order[k] for k in evenly_spaced(len(order), n)]
