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
| interleaved | one frame of each film in turn, so every frame follows another film's |

A Lottie film is drawn with 0 engine threads only (``NANOFRAMES_THORVG_THREADS`` > 0
refuses it) (ThorVG disables expressions with threads), so ``threads-1`` and ``threads-2``
leave it out and say so.

Every worker applies its environment's locale to all categories
(``setlocale(LC_ALL, "")``) and runs with ``PYTHONHASHSEED=0`` unless the
variation is the hash seed, so a difference is attributed to one variation.
A variation whose digests differ from the baseline's is reported by name with
the frames that differ. Each worker also reports the identity it computed; one
that differs from the baseline's means the inputs moved during the run (a file
was edited), which is reported as such rather than blamed on the variation.
The self-test never reads or writes the frame cache or the ledger.

The jobs of each variation are built in :mod:`.variations`; each runs in
:mod:`.selftest_worker`, a fresh Python process. The command line
(``nanoframes digest --selftest``) is ``nanoframes.cli.selftest``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .selftest_worker import MARK
from .variations import DEFAULT_PER_FRAME, VARIATIONS, Job, Target, jobs_for

_TIMEOUT_S = 1800
WORKER_MODULE = "nanoframes.determinism.selftest_worker"


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


# --- running -----------------------------------------------------------------------

def run_job(job: Job, targets: Sequence[Target], root: Path, setup: str | None,
            timeout: float, texts: Sequence[str | None] | None = None) -> dict[str, Any]:
    """Run ``job`` in a fresh interpreter (:mod:`.selftest_worker`); its result, or
    ``{"error": one line}`` (a crash named by its signal, a timeout). ``texts``: the
    base64 bytes of compositions built from text, beside ``targets``' paths."""
    spec = {"root": str(root), "paths": [str(t.path) for t in targets],
            "segments": [[n, list(ix)] for n, ix in job.segments],
            "dedup": job.dedup, "jobs": job.jobs, "pipeline": job.pipeline, "setup": setup}
    if texts is not None:
        spec["texts"] = list(texts)
    try:
        proc = subprocess.run([sys.executable, "-m", WORKER_MODULE, "--worker"],
                               input=json.dumps(spec), capture_output=True, text=True,
                               env=dict(job.env), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:g} s"}
    except OSError as exc:
        return {"error": f"could not start a worker: {exc}"}
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    if proc.returncode < 0:  # killed by a signal: a crash in ThorVG (or what it calls)
        import signal

        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        return {"error": f"worker crashed ({name})"}
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
    from ..frames.source import open_parsed
    from .reading import sample_indices

    paths = [Path(p).absolute() for p in paths]
    for name in variations:
        if name not in VARIATIONS:
            raise ValueError(f"unknown self-test variation {name!r}; "
                             f"known: {', '.join(VARIATIONS)}")
    if config is None:
        config = load_config(find_project_root(paths[0].parent if paths else None))
    targets: list[Target] = []
    broken: dict[str, CompositionSelftest] = {}
    order: list[str] = []
    for path in paths:
        key = relative_key(path, config.root)
        order.append(key)
        try:
            comp = open_parsed(path, config.root)
        except NanoframesError as exc:
            broken[key] = CompositionSelftest(key, path, error=str(exc))
            continue
        indices = (sample_indices(comp.frame_count, samples) if samples
                   else tuple(range(comp.frame_count)))
        targets.append(Target(key, path, comp.frame_count, indices,
                              getattr(comp, "kind", "composition") == "lottie"))
    base_env = dict(os.environ if env is None else env)
    jobs, notes = jobs_for(targets, per_frame, base_env, variations, seed)
    outs: list[dict[str, Any]] = []
    if targets:
        parallel = max_parallel or max(1, min(os.cpu_count() or 1, 8))
        with ThreadPoolExecutor(max_workers=parallel) as ex:
            outs = list(ex.map(lambda j: run_job(j, targets, config.root, setup, timeout),
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


def _judge(n: int, target: Target, jobs: Sequence[Job], outs: Sequence[dict[str, Any]],
           variations: Sequence[str], notes: Mapping[str, str]) -> CompositionSelftest:
    """Compare each variation's digests of target ``n`` with the baseline's."""
    from ..frames.digest import film_digest

    def frames_of(job: Job, out: dict[str, Any]) -> tuple[dict[int, str], str | None, Any]:
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
        if target.pinned_threads and name in ("threads-1", "threads-2"):
            note = ("not varied: a Lottie film is drawn with 0 engine threads whatever "
                    "NANOFRAMES_THORVG_THREADS says")
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
