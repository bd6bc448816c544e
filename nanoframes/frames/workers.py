"""Worker processes: how they start, and starting them before they are needed.

Parallelism is processes, never a fork of a process that has loaded ThorVG: a
forked child can hang in ``Canvas.update`` (docs/thorvg.md). Two ways to start
them:

- ``forkserver`` (Linux) or ``spawn``, anywhere: a fresh interpreter imports
  the renderer (about 0.3 s before a worker can draw). This module imports
  nothing heavy, so the command line can start a pool first thing
  (``prestart``) and the workers boot on the other CPUs while this process is
  still importing the library and parsing compositions.
- ``fork`` from this process, only where ``can_fork`` says it is safe (Linux,
  ThorVG not loaded here yet, no other thread): the workers start in a few
  milliseconds with everything this process has imported and parsed
  (``forked_pool``). ``render -o DIR`` takes this way: its workers are needed
  just after the film is parsed and before its first frame is drawn.

What a worker draws does not depend on when, where or how it started: every
worker renders whole frames with its own engine, and results are put back in
frame order by the caller.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from ..engine import site
from .shared_ends import SharedEnds

# Modules the forkserver imports once (no ThorVG engine exists there yet, so
# forking it is safe); each worker then starts with the renderer imported.
# forkserver_init first: workers start with SIGINT ignored.
PRELOAD = ["nanoframes.frames.forkserver_init", "nanoframes.frames.parallel",
           "nanoframes.text.fonts"]

# Set in each worker by its initializer: whether it has a second CPU to itself
# for the drawing and hashing threads of ``Film.digests``.
threads_to_spare = False
# Set in each worker by its initializer: its pool's ``WorkerPool.ends``.
shared_ends: SharedEnds | None = None

# jobs -> a pool being started on a thread (starting one waits for the
# forkserver's imports, about 0.2 s, which the caller should not wait for)
_prestarted: dict[int, Future] = {}


def pool_context():
    """forkserver where it exists (cheap starts, no fork of a ThorVG process), else spawn."""
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method)


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, e.g. under ``taskset``
    or a container's cpuset), not every CPU of the machine."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


# How many processes like this one share the CPUs (an xdist worker: the worker
# count); set by whoever started it with ``share_cpus``.
_sharing = 1


def share_cpus(processes: int) -> None:
    """Say that ``processes`` processes like this one draw at once (pytest-xdist's
    workers): each then pipelines only with two CPUs of its own."""
    global _sharing
    _sharing = max(1, int(processes))


def spare_threads(jobs: int) -> bool:
    """Each of ``jobs`` workers may pipeline (3 threads, about 1.5 CPUs) when the
    machine has at least two CPUs per worker; otherwise the pool alone fills them.
    ``spare_threads(1)`` is whether this process's own ``Film.digests`` pipelines."""
    return available_cpus() >= 2 * jobs * _sharing


# Held while processes are being created (a pool, its forkserver, the resource
# tracker). An interrupt takes it for good before it kills every descendant, so no
# thread can start a process after the kill: one started then would outlive us.
_SPAWNING = threading.RLock()
_closed = False


def stop_spawning(wait: float = 1.5) -> None:
    """No process is created from now on (an interrupt's teardown calls this)."""
    global _closed
    _SPAWNING.acquire(timeout=wait)  # never released: the process is ending
    _closed = True


class WorkerPool(ProcessPoolExecutor):
    """A pool of worker processes, and the ``SharedEnds`` each of them was started
    with: how ``render -o DIR`` shares a film's frames with them (``shared_ends.py``)."""

    ends: SharedEnds


_own_crash_dir: str | None = None


def crash_dir() -> str:
    """Where this process's workers keep their crash records (``engine/site.py``):
    the command's (``$NANOFRAMES_CRASH_DIR``, made by its guard), or one made for
    this process (a host such as pytest) and removed when it exits."""
    global _own_crash_dir
    given = os.environ.get(site.DIR_ENV, "")
    if given and os.path.isdir(given):
        return given
    if _own_crash_dir is None:
        import atexit
        import shutil
        import tempfile

        _own_crash_dir = tempfile.mkdtemp(prefix="nanoframes-crashes-")
        atexit.register(shutil.rmtree, _own_crash_dir, True)
    return _own_crash_dir


def died(exc: BaseException):
    """The error for a pool broken by ``exc``: ``render-crashed`` naming the
    composition and frame where a worker's crash record says ThorVG crashed,
    else ``worker-died`` (killed: out of memory, a signal)."""
    from ..errors import NanoframesError

    directory = crash_dir()
    crash = site.find_crash(directory)
    if crash is not None:
        try:  # reported once: a later pool's death is judged by its own records
            os.unlink(os.path.join(directory, str(crash.pid)))
        except OSError:
            pass
        return NanoframesError(crash.code, crash.line(), crash.shown_path())
    return NanoframesError("worker-died", f"a worker process died ({exc})")


def is_broken(pool: ProcessPoolExecutor) -> bool:
    """Whether a worker of ``pool`` died, so it takes no more tasks."""
    return bool(getattr(pool, "_broken", False))


_STOP_WITHIN_S = 10.0  # for a worker to take SIGTERM before it is killed


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Shut ``pool`` down now: what is queued is cancelled and a worker still
    drawing is stopped (SIGTERM), so an interrupted host (a pytest session) ends
    at once instead of waiting for the film being drawn. Returns once the
    workers and the pool's manager thread have ended: one left running raced
    the interpreter's exit for its wake-up pipe ("Bad file descriptor")."""
    # shutdown(wait=False) forgets the processes and the manager thread: taken first
    processes = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        try:
            process.terminate()
        except Exception:  # noqa: BLE001 - gone already
            pass
    for process in processes:
        process.join(_STOP_WITHIN_S)
        if process.exitcode is None:  # SIGTERM not taken in time
            process.kill()
            process.join()
    if manager is not None:
        manager.join()


def _pool(jobs: int, ctx, root: Path | None, spare: bool, forked: bool = False
          ) -> WorkerPool:
    ends = SharedEnds(ctx)  # before the workers: each is handed it as it starts
    pool = WorkerPool(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                      initargs=(str(root) if root else None, spare, forked, ends,
                                crash_dir()))
    pool.ends = ends
    return pool


def _new_pool(jobs: int, root: Path | None, pipeline: bool | None = None
              ) -> WorkerPool:
    with _SPAWNING:
        if _closed:
            raise RuntimeError("nanoframes is shutting down: no new worker processes")
        return _spawn_pool(jobs, root, pipeline)


def _spawn_pool(jobs: int, root: Path | None, pipeline: bool | None) -> WorkerPool:
    ctx = pool_context()
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)
    spare = spare_threads(jobs) if pipeline is None else pipeline
    # The forkserver is a new interpreter: a Ctrl-C while it imports its site
    # would print "Fatal Python error: init_import_site" and a traceback. It
    # starts with SIGINT blocked (a mask survives exec, as for the resource
    # tracker), and ignores it from its first preloaded module on, so the held
    # signal is dropped; its workers are forked ignoring it. This thread gets it
    # back after; the main thread, where Python handles signals, never lost it.
    # The resource tracker first: starting it unblocks both signals in this thread.
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        pool = _pool(jobs, ctx, root, spare)
        for _ in range(jobs):  # start every worker now, not at the first real task
            pool.submit(int)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return pool


# Stopped from the moment a worker is forked until its initializer has set its
# own handlers: until then it would run the command's (cli/interrupt.py).
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def can_fork() -> bool:
    """Whether workers may be forked from this process now: on Linux, before
    ThorVG is loaded here (a child forked after it can hang in the engine), and
    while this process runs one thread (a fork copies only the calling thread:
    a lock another one held would stay locked in the child)."""
    if not sys.platform.startswith("linux") or \
            "fork" not in multiprocessing.get_all_start_methods():
        return False
    from ..engine.library import library_path

    try:
        if len(os.listdir("/proc/self/task")) != 1:
            return False
        with open("/proc/self/maps") as fh:
            maps = fh.read()
        library = str(library_path())
    except Exception:  # noqa: BLE001 - unsure is no: the forkserver is always safe
        return False
    return "libthorvg" not in maps and library not in maps  # the wheel's, or the chosen build


def forked_pool(jobs: int, root: Path | None = None) -> WorkerPool:
    """A pool of ``jobs`` workers forked from this process now, which the caller
    has checked with ``can_fork``; every worker exists when this returns. The
    caller shuts the pool down."""
    with _SPAWNING:
        if _closed:
            raise RuntimeError("nanoframes is shutting down: no new worker processes")
        before = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            pool = _pool(jobs, multiprocessing.get_context("fork"), root,
                         spare_threads(jobs), forked=True)
            pool.submit(int)  # forks every worker, here, before the pool starts its threads
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
    return pool


def _starting(jobs: int, root: Path | None, pipeline: bool | None = None) -> Future:
    """A pool being started on a thread: the caller need not wait for the forkserver."""
    starting: Future = Future()

    def start() -> None:
        try:
            starting.set_result(_new_pool(jobs, root, pipeline))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever takes the pool
            starting.set_exception(exc)

    threading.Thread(target=start, name="nanoframes-pool-start", daemon=True).start()
    return starting


def prestart(jobs: int, root: Path | None = None) -> None:
    """Start a pool of ``jobs`` workers now; the next ``booting_pool(jobs)`` or
    ``worker_pool(jobs)`` takes it. Only a head start: ``discard_prestarted``
    shuts down one nobody took."""
    if jobs > 1 and jobs not in _prestarted:
        _prestarted[jobs] = _starting(jobs, root)


def booting_pool(jobs: int, root: Path | None = None) -> Future:
    """A pool of ``jobs`` workers as a future: the prestarted one if any, else one
    started now. Do other work until ``done()``; ``result()`` waits for it."""
    starting = _prestarted.pop(jobs, None)
    return starting if starting is not None else _starting(jobs, root)


def worker_pool(jobs: int, root: Path | None = None, pipeline: bool | None = None
                ) -> WorkerPool:
    """A pool of ``jobs`` worker processes, already starting (the prestarted one if any).

    ``root``, when known, is the project whose font book the workers load while
    they boot. ``pipeline`` forces the workers' drawing and hashing threads on
    or off (default: ``spare_threads``). The caller shuts the pool down.
    """
    if pipeline is not None:
        return _new_pool(jobs, root, pipeline)
    return booting_pool(jobs, root).result()


def shut_down(booting: Future) -> None:
    """Shut down a pool started as a future (one that failed to start has nothing to stop)."""
    if booting.exception() is None:
        booting.result().shutdown(wait=True, cancel_futures=True)


def discard_prestarted() -> None:
    """Shut down prestarted pools nobody took (a command that failed early)."""
    while _prestarted:
        shut_down(_prestarted.popitem()[1])


def stop_helpers() -> None:
    """Stop the forkserver and the resource tracker now, once every pool is shut down.

    They would stop on their own just after this process exits, but until then
    they hold the caller's stdout open; a command stops them before it exits.
    Uses the private ``_stop`` both have had since Python 3.8; where it is
    missing they stop as before, on their own.
    """
    helpers = []
    if "multiprocessing.forkserver" in sys.modules:
        helpers.append(getattr(sys.modules["multiprocessing.forkserver"], "_forkserver", None))
    if "multiprocessing.resource_tracker" in sys.modules:  # after the forkserver, its client
        helpers.append(getattr(sys.modules["multiprocessing.resource_tracker"],
                               "_resource_tracker", None))
    for helper in helpers:
        stop = getattr(helper, "_stop", None)
        if stop is not None:
            try:
                stop()
            except Exception:  # noqa: BLE001 - stopping early is a courtesy, not a need
                pass


def _worker_init(root: str | None, spare: bool, forked: bool = False,
                 ends: SharedEnds | None = None, crashes: str | None = None) -> None:
    # Workers inherit the parent's environment (thread count, locale); they must
    # not print progress or read stdin.
    global threads_to_spare, shared_ends
    # Ctrl-C reaches the whole process group: the command tears the pool down
    # (cli/interrupt.py); a worker must not print a KeyboardInterrupt traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if forked:  # the command's handlers came with the fork, with both signals held
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    die_with_parent()
    site.open_record(crashes)  # a crash in ThorVG is then named by our owner (died)
    sys.stdin = open(os.devnull)  # noqa: SIM115
    threads_to_spare, shared_ends = spare, ends
    # Warm up what every first task needs, so no task pays for it: the engine
    # and canvas, and the project's font book (a scan of the font directories).
    from ..engine.raster import get_rasterizer
    from ..errors import NanoframesError

    try:
        get_rasterizer()
    except NanoframesError:
        pass  # a build that cannot draw: the first task reports it in one line, not the pool
    if root is not None:
        try:
            from ..config import load_config
            from ..text.fonts import font_book

            font_book(load_config(Path(root)))
        except Exception:  # noqa: BLE001 - a bad config is reported by the task that needs it
            pass


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent (the forkserver, which
    exits with the command) dies, so no worker outlives the command."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - best effort; the teardown kills workers anyway
        return
    if os.getppid() == 1:  # the parent died before the line above
        os._exit(1)
