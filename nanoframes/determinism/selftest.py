"""The self-test: render each composition under variations that must not matter,
and compare frame digests with a baseline.

The baseline is one fresh process rendering every composition's frames in
order, serially, with de-duplication on and the caller's environment (as
``nanoframes digest`` does). Each variation changes one thing and runs in a
fresh process of its own (except where the variation is the process layout
itself); the order variations reorder the compositions as well as the frames:

| name | what changes |
|---|---|
| fresh-process-per-frame | a new process per frame (``per_frame`` sampled frames in longer films) |
| reversed-order | frames rendered last to first |
| shuffled-order | frames rendered in a seeded random order |
| worker-pool | frames spread over 2 worker processes (``film_digests(jobs=2)``) |
| threads-0, threads-1, threads-2 | ``NANOFRAMES_THORVG_THREADS``: ThorVG's own scheduler threads |
| locale | ``LC_ALL``/``LANG`` set to another installed locale (all categories applied) |
| tz | ``TZ`` set to another zone (Pacific/Chatham, +12:45) |
| hash-seed | ``PYTHONHASHSEED`` 0 vs 1729 (set and dict-of-str iteration order) |
| dedup-off | held frames rasterized again instead of reused |
| pipeline-off | one thread bakes, draws and hashes (no drawing and hashing threads) |

Every worker applies its environment's locale to all categories
(``setlocale(LC_ALL, "")``) and runs with ``PYTHONHASHSEED=0`` unless the
variation is the hash seed, so a difference is attributed to one variation.
A variation whose digests differ from the baseline's is reported by name with
the frames that differ. Each worker also reports the identity it computed; one
that differs from the baseline's means the inputs moved during the run (a file
was edited), which is reported as such rather than blamed on the variation.
The self-test never reads or writes the frame cache or the ledger.

The worker is this module run as ``python -m nanoframes.determinism.selftest --worker``
with a JSON job on stdin. A job may name a ``setup`` callable
(``"module:function"``) that the worker calls before rendering; the test suite
uses it to install a deliberately order-dependent render hook and show that the
self-test catches it. Nothing in nanoframes uses it otherwise.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
)
DEFAULT_PER_FRAME = 8  # frames given a process each in fresh-process-per-frame
BASE_HASH_SEED = "0"
OTHER_HASH_SEED = "1729"
_LOCALE_CANDIDATES = ("de_DE.UTF-8", "fr_FR.UTF-8", "tr_TR.UTF-8", "C.UTF-8", "POSIX")
_MARK = "NFSELFTEST "
_TIMEOUT_S = 1800


# --- results -------------------------------------------------------------------

@dataclass(frozen=True)
class VariationResult:
    name: str
    compared: tuple[int, ...]          # frame indices compared with the baseline
    differing: tuple[int, ...] = ()    # those whose digest differs
    note: str = ""                     # e.g. "LC_ALL=de_DE.UTF-8", "8 of 120 frames sampled"
    error: str | None = None           # the worker failed (crash, timeout, error)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.differing

    def line(self) -> str:
        if self.error is not None:
            status, text = "ERROR", self.error
        elif self.differing:
            status = "DIFF"
            text = (f"{len(self.differing)} of {len(self.compared)} frames differ, "
                    f"first at frame {self.differing[0]}")
        else:
            status, text = "ok", f"{len(self.compared)} frames"
        if self.note:
            text += f" ({self.note})"
        return f"{status:<5} {self.name:<24} {text}"


@dataclass(frozen=True)
class CompositionSelftest:
    key: str
    path: Path
    frames: int = 0
    indices: tuple[int, ...] = ()      # the frames the baseline rendered
    film_digest: str | None = None     # the baseline's, over ``indices``
    variations: tuple[VariationResult, ...] = ()
    error: str | None = None           # the baseline itself failed

    @property
    def ok(self) -> bool:
        return self.error is None and all(v.ok for v in self.variations)

    @property
    def failures(self) -> tuple[VariationResult, ...]:
        return tuple(v for v in self.variations if not v.ok)

    def lines(self) -> list[str]:
        if self.error is not None:
            return [f"selftest {self.key}: ERROR {self.error}"]
        sampled = "" if len(self.indices) == self.frames else f", {len(self.indices)} sampled"
        head = (f"selftest {self.key}: {self.frames} frames{sampled}, "
                f"baseline film digest {(self.film_digest or '')[:16]}")
        return [head] + ["  " + v.line() for v in self.variations]


@dataclass(frozen=True)
class SelftestResult:
    compositions: tuple[CompositionSelftest, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.compositions)

    @property
    def exit_status(self) -> int:
        if any(c.error is not None for c in self.compositions):
            return 2
        return 0 if self.ok else 1

    def failures(self) -> list[tuple[str, VariationResult]]:
        return [(c.key, v) for c in self.compositions for v in c.failures]

    def lines(self) -> list[str]:
        out = [line for c in self.compositions for line in c.lines()]
        bad = self.failures()
        errors = sum(c.error is not None for c in self.compositions)
        n = len(self.compositions)
        summary = f"selftest: {n} composition{'s' * (n != 1)}"
        if not bad and not errors:
            summary += ": every variation reproduces the baseline"
        else:
            parts = []
            differ = [v for _, v in bad if v.error is None]
            failed = [v for _, v in bad if v.error is not None]
            for found, what in ((differ, "differing"), (failed, "failed")):
                if found:
                    names = ", ".join(sorted({v.name for v in found}))
                    parts.append(f"{len(found)} {what} variation{'s' * (len(found) != 1)} "
                                 f"({names})")
            if errors:
                parts.append(f"{errors} could not be rendered")
            summary += ": " + "; ".join(parts)
        out.append(summary)
        return out


# --- the environment of each variation ----------------------------------------------

def _norm_locale(name: str) -> str:
    return name.lower().replace("-", "")


def available_locales() -> set[str]:
    """Normalised names from ``locale -a`` (empty where there is no such command)."""
    exe = shutil.which("locale")
    if not exe:
        return set()
    try:
        out = subprocess.run([exe, "-a"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {_norm_locale(line.strip()) for line in out.splitlines() if line.strip()}


def alternate_locale(env: Mapping[str, str]) -> str:
    """An installed locale that differs from the one ``env`` runs under; one with a
    decimal comma when the host has it."""
    current = _norm_locale(env.get("LC_ALL") or env.get("LC_NUMERIC") or env.get("LANG") or "C")
    installed = available_locales()
    for name in _LOCALE_CANDIDATES:
        norm = _norm_locale(name)
        if norm == current:
            continue
        if name == "POSIX" or norm in installed:
            return name
    return "C" if current != "c" else "POSIX"


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
class _Target:
    key: str
    path: Path
    frames: int
    indices: tuple[int, ...]


@dataclass(frozen=True)
class _Job:
    """One worker process: ``segments`` are (target number, frame indices in rendering
    order); each segment is one ``Film.digests`` call (one pool call with jobs > 1)."""

    variation: str                     # "baseline" or a variation name
    segments: tuple[tuple[int, tuple[int, ...]], ...]
    env: Mapping[str, str]
    dedup: bool = True
    jobs: int = 1
    pipeline: bool = True


def _jobs_for(targets: Sequence[_Target], per_frame: int, base_env: Mapping[str, str],
              variations: Sequence[str], seed: int) -> tuple[list[_Job], dict[str, str]]:
    """Every job to run, and the note each variation carries.

    One process per variation covers every composition, in sequence, as
    ``nanoframes digest`` does; the order variations also reverse or shuffle the
    order of the compositions. fresh-process-per-frame is one process per frame.
    """
    env = dict(base_env)
    env["PYTHONHASHSEED"] = BASE_HASH_SEED
    forward = tuple((n, t.indices) for n, t in enumerate(targets))
    jobs = [_Job("baseline", forward, env)]
    notes: dict[str, str] = {}
    for name in variations:
        if name == "fresh-process-per-frame":
            for n, t in enumerate(targets):
                jobs += [_Job(name, ((n, (i,)),), env) for i in _spread(t.indices, per_frame)]
        elif name == "reversed-order":
            jobs.append(_Job(name, tuple((n, tuple(reversed(ix))) for n, ix in reversed(forward)),
                             env))
        elif name == "shuffled-order":
            rng = random.Random(seed)
            segments = []
            for n, ix in forward:
                shuffled = list(ix)
                rng.shuffle(shuffled)
                segments.append((n, tuple(shuffled)))
            rng.shuffle(segments)
            jobs.append(_Job(name, tuple(segments), env))
            notes[name] = f"seed {seed}"
        elif name == "worker-pool":
            jobs.append(_Job(name, forward, env, jobs=2))
            notes[name] = "2 workers"
        elif name.startswith("threads-") and name in VARIATIONS:
            n = name.split("-", 1)[1]
            jobs.append(_Job(name, forward, {**env, "NANOFRAMES_THORVG_THREADS": n}))
        elif name == "locale":
            alt = alternate_locale(base_env)
            jobs.append(_Job(name, forward, {**env, "LC_ALL": alt, "LANG": alt}))
            notes[name] = f"LC_ALL={alt}"
        elif name == "tz":
            tz = alternate_tz(base_env)
            jobs.append(_Job(name, forward, {**env, "TZ": tz}))
            notes[name] = f"TZ={tz}"
        elif name == "hash-seed":
            jobs.append(_Job(name, forward, {**env, "PYTHONHASHSEED": OTHER_HASH_SEED}))
            notes[name] = f"PYTHONHASHSEED {BASE_HASH_SEED} vs {OTHER_HASH_SEED}"
        elif name == "dedup-off":
            jobs.append(_Job(name, forward, env, dedup=False))
        elif name == "pipeline-off":
            jobs.append(_Job(name, forward, env, pipeline=False))
        else:
            raise ValueError(f"unknown self-test variation {name!r}; "
                             f"known: {', '.join(VARIATIONS)}")
    return jobs, notes


def _spread(order: Sequence[int], n: int) -> list[int]:
    """``n`` evenly spaced entries of ``order`` (all of them for n <= 0 or n >= len)."""
    if n <= 0 or n >= len(order):
        return list(order)
    if n == 1:
        return [order[0]]
    span, steps = len(order) - 1, n - 1
    return [order[(2 * k * span + steps) // (2 * steps)] for k in range(n)]


# --- running -----------------------------------------------------------------------

def _run_job(job: _Job, targets: Sequence[_Target], root: Path, setup: str | None,
             timeout: float) -> dict[str, Any]:
    spec = {"root": str(root), "paths": [str(t.path) for t in targets],
            "segments": [[n, list(ix)] for n, ix in job.segments],
            "dedup": job.dedup, "jobs": job.jobs, "pipeline": job.pipeline, "setup": setup}
    try:
        proc = subprocess.run([sys.executable, "-m", "nanoframes.determinism.selftest", "--worker"],
                              input=json.dumps(spec), capture_output=True, text=True,
                              env=dict(job.env), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    except OSError as exc:
        return {"error": f"could not start a worker: {exc}"}
    for line in proc.stdout.splitlines():
        if line.startswith(_MARK):
            return json.loads(line[len(_MARK):])
    tail = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
    return {"error": f"worker failed (exit status {proc.returncode}): {tail}"}


def run(paths: Iterable[str | Path], config=None, *, variations: Sequence[str] = VARIATIONS,
        samples: int | None = None, per_frame: int = DEFAULT_PER_FRAME, seed: int = 1,
        env: Mapping[str, str] | None = None, setup: str | None = None,
        max_parallel: int | None = None, timeout: float = _TIMEOUT_S,
        progress: Callable[[CompositionSelftest], None] | None = None) -> SelftestResult:
    """Self-test each composition in ``paths`` (all frames, or ``samples`` evenly
    spaced ones) under ``variations``; see the module docstring.

    ``env`` replaces the environment the workers start from (default: this
    process's); ``setup`` is a ``"module:function"`` each worker calls first.
    """
    from ..config import find_project_root, load_config, relative_key
    from ..errors import NanoframesError
    from ..model.composition import parse
    from .reading import sample_indices

    paths = [Path(p).absolute() for p in paths]
    for name in variations:
        if name not in VARIATIONS:
            raise ValueError(f"unknown self-test variation {name!r}; "
                             f"known: {', '.join(VARIATIONS)}")
    if config is None:
        config = load_config(find_project_root(paths[0].parent if paths else None))
    targets: list[_Target] = []
    broken: dict[str, CompositionSelftest] = {}
    order: list[str] = []
    for path in paths:
        key = relative_key(path, config.root)
        order.append(key)
        try:
            comp = parse(path, config.root)
        except NanoframesError as exc:
            broken[key] = CompositionSelftest(key, path, error=str(exc))
            continue
        indices = (sample_indices(comp.frame_count, samples) if samples
                   else tuple(range(comp.frame_count)))
        targets.append(_Target(key, path, comp.frame_count, indices))
    base_env = dict(os.environ if env is None else env)
    jobs, notes = _jobs_for(targets, per_frame, base_env, variations, seed)
    outs: list[dict[str, Any]] = []
    if targets:
        parallel = max_parallel or max(1, min(os.cpu_count() or 1, 8))
        with ThreadPoolExecutor(max_workers=parallel) as ex:
            outs = list(ex.map(lambda j: _run_job(j, targets, config.root, setup, timeout),
                               jobs))
    done = {t.key: _judge(n, t, jobs, outs, variations, notes) for n, t in enumerate(targets)}
    results = []
    for key in order:
        one = done.get(key) or broken[key]
        if progress is not None:
            progress(one)
        results.append(one)
    return SelftestResult(tuple(results))


def run_one(path: str | Path, config=None, **options: Any) -> CompositionSelftest:
    """Self-test one composition; options as :func:`run`."""
    return run([path], config, **options).compositions[0]


def _judge(n: int, target: _Target, jobs: Sequence[_Job], outs: Sequence[dict[str, Any]],
           variations: Sequence[str], notes: Mapping[str, str]) -> CompositionSelftest:
    """Compare each variation's digests of target ``n`` with the baseline's."""
    from ..frames.digest import film_digest

    def frames_of(job: _Job, out: dict[str, Any]) -> tuple[dict[int, str], str | None, Any]:
        if "error" in out:
            return {}, out["error"], None
        film = out["films"][n]
        if film is None:  # this job did not render target n
            return {}, None, None
        if film.get("error"):
            return {}, film["error"], None
        got: dict[int, str] = {}
        for (m, ix), digests in zip(job.segments, out["segments"]):
            if m == n:
                got.update(zip(ix, digests))
        return got, None, film.get("identity")

    expected, error, identity = frames_of(jobs[0], outs[0])
    if error is not None:
        return CompositionSelftest(target.key, target.path, target.frames, target.indices,
                                   error=error)
    got: dict[str, dict[int, str]] = {}
    errors: dict[str, str] = {}
    local_notes = dict(notes)
    for job, out in zip(jobs[1:], outs[1:]):
        frames, err, ident = frames_of(job, out)
        if err is None and ident is not None and ident != identity:
            moved = [k for k in sorted(identity or {}) if (ident or {}).get(k) != identity[k]]
            err = (f"inputs moved during the self-test: {', '.join(moved)} differs from "
                   "the baseline's (files edited meanwhile?)")
        if err is not None:
            errors.setdefault(job.variation, err)
            continue
        if frames:
            got.setdefault(job.variation, {}).update(frames)
        if job.variation == "locale" and "locale" in out:
            local_notes["locale"] = f"{notes['locale']}, in effect {out['locale']}"
    results = []
    for name in variations:
        compared = tuple(sorted(got.get(name, {})))
        note = local_notes.get(name, "")
        if name == "fresh-process-per-frame" and compared:
            note = ("one process per frame" if len(compared) == len(target.indices)
                    else f"{len(compared)} of {len(target.indices)} frames sampled, "
                         "one process each")
        if name in errors:
            results.append(VariationResult(name, compared, note=note, error=errors[name]))
            continue
        differing = tuple(i for i in compared if got[name][i] != expected[i])
        results.append(VariationResult(name, compared, differing, note))
    return CompositionSelftest(target.key, target.path, target.frames, target.indices,
                               film_digest([expected[i] for i in target.indices]),
                               tuple(results))


# --- the command line (wired into ``nanoframes digest --selftest``) --------------------

def register_selftest_args(parser) -> None:
    parser.add_argument(
        "--selftest", action="store_true",
        help="render each composition under variations that must not matter (process "
        "layout, frame order, worker pool, ThorVG threads, locale, TZ, hash seed, "
        "de-duplication) and compare frame digests; exit 1 naming any that differ")
    parser.add_argument(
        "--selftest-per-frame", type=int, default=DEFAULT_PER_FRAME, metavar="N",
        help=f"frames given a fresh process each in fresh-process-per-frame "
        f"(default {DEFAULT_PER_FRAME}; 0 = every frame)")
    parser.add_argument(
        "--selftest-variation", action="append", choices=VARIATIONS, metavar="NAME",
        help="run only this variation (repeatable; default: all of "
        f"{', '.join(VARIATIONS)})")


def run_selftest_cli(args) -> int:
    """``nanoframes digest --selftest [PATH...] [--all] [--samples N] [--json]``."""
    from ..config import find_project_root, load_config
    from .sweep import collect

    if getattr(args, "check", False) or getattr(args, "record", False):
        print("nanoframes digest: --selftest cannot be combined with --check or --record",
              file=sys.stderr)
        return 2
    paths = list(getattr(args, "paths", []) or [])
    start = paths[0] if paths else Path.cwd()
    config = load_config(find_project_root(start))
    targets = collect(paths, config, getattr(args, "all_", False))
    as_json = getattr(args, "json", False)

    def show(one: CompositionSelftest) -> None:
        if not as_json:
            for line in one.lines():
                print(line, flush=True)

    result = run(targets, config, progress=show, samples=getattr(args, "samples", None),
                 per_frame=getattr(args, "selftest_per_frame", DEFAULT_PER_FRAME),
                 variations=getattr(args, "selftest_variation", None) or VARIATIONS)
    if as_json:
        print(json.dumps(result_json(result), indent=2))
    else:
        print(result.lines()[-1])
    return result.exit_status


def result_json(result: SelftestResult) -> dict[str, Any]:
    return {
        "ok": result.ok,
        "exit_status": result.exit_status,
        "compositions": [
            {"key": c.key, "frames": c.frames, "indices": list(c.indices),
             "film_digest": c.film_digest, "error": c.error,
             "variations": [{"name": v.name, "ok": v.ok, "compared": len(v.compared),
                             "differing": list(v.differing), "note": v.note,
                             "error": v.error} for v in c.variations]}
            for c in result.compositions],
    }


# --- the worker ---------------------------------------------------------------------

def _worker(spec: Mapping[str, Any]) -> dict[str, Any]:
    import locale
    import time

    try:
        locale.setlocale(locale.LC_ALL, "")
        in_effect = locale.setlocale(locale.LC_ALL)
    except locale.Error as exc:
        in_effect = f"unavailable ({exc})"
    setup = spec.get("setup")
    if setup:
        import importlib

        module, _, func = setup.partition(":")
        getattr(importlib.import_module(module), func or "setup")()
    from ..errors import NanoframesError
    from ..frames.film import Film, film_digests, worker_pool
    from .reading import composition_identity

    root = Path(spec["root"])
    dedup = bool(spec["dedup"])
    jobs = int(spec.get("jobs", 1))
    used = {int(n) for n, _ in spec["segments"]}
    films: list[Any] = [None] * len(spec["paths"])
    info: list[dict[str, Any] | None] = [None] * len(spec["paths"])
    for n in sorted(used):
        try:
            films[n] = Film.open(spec["paths"][n], root, dedup=dedup)
            films[n].draw_thread &= bool(spec.get("pipeline", True))
            ident = composition_identity(films[n].comp, films[n].baker).as_dict()
            info[n] = {"identity": ident}
        except NanoframesError as exc:
            info[n] = {"error": str(exc)}
    pool = worker_pool(jobs) if jobs > 1 else None
    segments: list[list[str]] = []
    try:
        for n, indices in spec["segments"]:
            film = films[int(n)]
            if film is None:
                segments.append([])
                continue
            indices = [int(i) for i in indices]
            try:
                if pool is not None:  # in the order asked for
                    segments.append(film_digests(film, indices, jobs=jobs, pool=pool))
                else:
                    segments.append(film.digests(indices))
            except NanoframesError as exc:
                info[int(n)] = {"error": str(exc)}
                segments.append([])
    finally:
        if pool is not None:
            pool.shutdown()
    return {"films": info, "segments": segments, "pid": os.getpid(), "locale": in_effect,
            "tz": list(time.tzname)}


def _main(argv: Sequence[str]) -> int:
    if list(argv) != ["--worker"]:
        print("usage: python -m nanoframes.determinism.selftest --worker < job.json",
              file=sys.stderr)
        return 2
    out = _worker(json.loads(sys.stdin.read()))
    sys.stdout.write(_MARK + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
