"""The self-test: render each composition under variations that must not matter,
and compare frame digests with a baseline.

The baseline is one fresh process rendering every frame in order, serially,
with de-duplication on and the caller's environment. Each variation changes
one thing and runs in a fresh process of its own (except where the variation
is the process layout itself):

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

Every worker applies its environment's locale to all categories
(``setlocale(LC_ALL, "")``) and runs with ``PYTHONHASHSEED=0`` unless the
variation is the hash seed, so a difference is attributed to one variation.
A variation whose digests differ from the baseline's is reported by name with
the frames that differ. The self-test never reads or writes the frame cache or
the ledger.

The worker is this module run as ``python -m nanoframes.selftest --worker``
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
            names = sorted({v.name for _, v in bad})
            if names:
                summary += f": {len(bad)} differing variation{'s' * (len(bad) != 1)} " \
                           f"({', '.join(names)})"
            if errors:
                summary += f"; {errors} could not be rendered"
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
class _Job:
    variation: str                     # "baseline" or a variation name
    indices: tuple[int, ...]           # in rendering order
    env: Mapping[str, str]
    dedup: bool = True
    jobs: int = 1


def _jobs_for(indices: Sequence[int], per_frame: int, base_env: Mapping[str, str],
              variations: Sequence[str], seed: int) -> tuple[list[_Job], dict[str, str]]:
    """Every job to run, and the note each variation carries."""
    env = dict(base_env)
    env["PYTHONHASHSEED"] = BASE_HASH_SEED
    jobs = [_Job("baseline", tuple(indices), env)]
    notes: dict[str, str] = {}
    order = list(indices)
    for name in variations:
        if name == "fresh-process-per-frame":
            picked = _spread(order, per_frame)
            jobs += [_Job(name, (i,), env) for i in picked]
            notes[name] = ("one process per frame" if len(picked) == len(order)
                           else f"{len(picked)} of {len(order)} frames sampled, "
                                "one process each")
        elif name == "reversed-order":
            jobs.append(_Job(name, tuple(reversed(order)), env))
        elif name == "shuffled-order":
            shuffled = list(order)
            random.Random(seed).shuffle(shuffled)
            jobs.append(_Job(name, tuple(shuffled), env))
            notes[name] = f"seed {seed}"
        elif name == "worker-pool":
            jobs.append(_Job(name, tuple(order), env, jobs=2))
            notes[name] = "2 workers"
        elif name.startswith("threads-"):
            n = name.split("-", 1)[1]
            jobs.append(_Job(name, tuple(order), {**env, "NANOFRAMES_THORVG_THREADS": n}))
        elif name == "locale":
            alt = alternate_locale(base_env)
            alt_env = {**env, "LC_ALL": alt, "LANG": alt}
            jobs.append(_Job(name, tuple(order), alt_env))
            notes[name] = f"LC_ALL={alt}"
        elif name == "tz":
            tz = alternate_tz(base_env)
            jobs.append(_Job(name, tuple(order), {**env, "TZ": tz}))
            notes[name] = f"TZ={tz}"
        elif name == "hash-seed":
            jobs.append(_Job(name, tuple(order), {**env, "PYTHONHASHSEED": OTHER_HASH_SEED}))
            notes[name] = f"PYTHONHASHSEED {BASE_HASH_SEED} vs {OTHER_HASH_SEED}"
        elif name == "dedup-off":
            jobs.append(_Job(name, tuple(order), env, dedup=False))
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

def _run_job(job: _Job, path: Path, root: Path, setup: str | None, timeout: float
             ) -> dict[str, Any]:
    spec = {"path": str(path), "root": str(root), "indices": list(job.indices),
            "dedup": job.dedup, "jobs": job.jobs, "setup": setup}
    try:
        proc = subprocess.run([sys.executable, "-m", "nanoframes.selftest", "--worker"],
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


def run_one(path: str | Path, config=None, *, variations: Sequence[str] = VARIATIONS,
            samples: int | None = None, per_frame: int = DEFAULT_PER_FRAME, seed: int = 1,
            env: Mapping[str, str] | None = None, setup: str | None = None,
            max_parallel: int | None = None, timeout: float = _TIMEOUT_S,
            ) -> CompositionSelftest:
    """Self-test one composition (all frames, or ``samples`` evenly spaced ones)."""
    from .composition import parse
    from .config import find_project_root, load_config, relative_key
    from .errors import NanoframesError
    from .reading import sample_indices

    path = Path(path).absolute()
    if config is None:
        config = load_config(find_project_root(path.parent))
    key = relative_key(path, config.root)
    try:
        comp = parse(path, config.root)
    except NanoframesError as exc:
        return CompositionSelftest(key, path, error=str(exc))
    indices = (sample_indices(comp.frame_count, samples) if samples
               else tuple(range(comp.frame_count)))
    base_env = dict(os.environ if env is None else env)
    jobs, notes = _jobs_for(indices, per_frame, base_env, variations, seed)
    parallel = max_parallel or max(1, min(os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(max_workers=parallel) as ex:
        outs = list(ex.map(lambda j: _run_job(j, path, config.root, setup, timeout), jobs))

    from .digest import film_digest

    base = outs[0]
    if "error" in base:
        return CompositionSelftest(key, path, comp.frame_count, indices, error=base["error"])
    expected = dict(zip(jobs[0].indices, base["digests"]))
    got: dict[str, dict[int, str]] = {}
    errors: dict[str, str] = {}
    for job, out in zip(jobs[1:], outs[1:]):
        if "error" in out:
            errors.setdefault(job.variation, out["error"])
            continue
        got.setdefault(job.variation, {}).update(zip(job.indices, out["digests"]))
        if job.variation == "locale" and "locale" in out:
            notes["locale"] += f", in effect {out['locale']}"
    results = []
    for name in variations:
        compared = tuple(sorted(got.get(name, {})))
        if name in errors:
            results.append(VariationResult(name, compared, note=notes.get(name, ""),
                                           error=errors[name]))
            continue
        differing = tuple(i for i in compared if got[name][i] != expected[i])
        results.append(VariationResult(name, compared, differing, notes.get(name, "")))
    return CompositionSelftest(key, path, comp.frame_count, indices,
                               film_digest([expected[i] for i in indices]), tuple(results))


def run(paths: Iterable[str | Path], config=None, *,
        progress: Callable[[CompositionSelftest], None] | None = None,
        **options: Any) -> SelftestResult:
    """Self-test each composition in ``paths``; options as :func:`run_one`."""
    out = []
    for path in paths:
        one = run_one(path, config, **options)
        if progress is not None:
            progress(one)
        out.append(one)
    return SelftestResult(tuple(out))


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


def run_selftest_cli(args) -> int:
    """``nanoframes digest --selftest [PATH...] [--all] [--samples N] [--json]``."""
    from .config import find_project_root, load_config
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
                 per_frame=getattr(args, "selftest_per_frame", DEFAULT_PER_FRAME))
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
    from .errors import NanoframesError
    from .film import Film, film_digests

    try:
        film = Film.open(spec["path"], Path(spec["root"]), dedup=bool(spec["dedup"]))
        indices = [int(i) for i in spec["indices"]]
        jobs = int(spec.get("jobs", 1))
        if jobs > 1:  # film_digests returns them in the order asked for
            digests = film_digests(film, indices, jobs=jobs)
        else:
            digests = film.digests(indices)
    except NanoframesError as exc:
        return {"error": str(exc)}
    return {"digests": digests, "pid": os.getpid(), "locale": in_effect,
            "tz": list(time.tzname)}


def _main(argv: Sequence[str]) -> int:
    if list(argv) != ["--worker"]:
        print("usage: python -m nanoframes.selftest --worker < job.json", file=sys.stderr)
        return 2
    out = _worker(json.loads(sys.stdin.read()))
    sys.stdout.write(_MARK + json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
