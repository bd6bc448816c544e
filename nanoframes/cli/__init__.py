"""The ``nanoframes`` command: argument parsing and printing only.

Each subcommand lives in its own module under ``nanoframes/cli/`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to a function
``(args) -> int`` returning the exit status. Library errors
(:class:`~nanoframes.errors.NanoframesError`) become one line on stderr and
exit status 2: never a traceback for bad input.

Start-up is kept cheap: this module and every ``register`` import no
command's dependencies (ThorVG, NumPy, PyAV are imported by the ``run`` that
uses them), only the named command's module is imported to parse its
arguments, and ``--version`` imports nothing at all.
"""

from __future__ import annotations

import os

# First of all, before anything slow is imported: SIGINT/SIGTERM end the command
# cleanly from here on (see interrupt.py).
from . import guard, interrupt

if interrupt.is_program():
    interrupt.install()
    # The command runs in a child; this process reports a crash in ThorVG (guard.py).
    guard.guard()
    # NumPy's BLAS starts a thread pool when it is imported. nanoframes does no
    # linear algebra, and a process with one thread may fork its render workers
    # (frames/workers.py: can_fork), so the command keeps BLAS on this thread.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import sys  # noqa: E402

from .. import __version__  # noqa: E402
from ..errors import NanoframesError  # noqa: E402

# Subcommand modules, in the order `nanoframes --help` lists them.
COMMANDS = (
    "render", "video", "svg", "digest", "ledger", "identity", "measure", "check", "fonts",
    "cache", "store", "diff", "strip", "init", "accept", "review",
)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``only``) just the parser of that command."""
    parser = argparse.ArgumentParser(
        prog="nanoframes",
        description="Render .nf.svg compositions with ThorVG and check that every frame "
        "is a pure function of its declared inputs.",
    )
    parser.add_argument("--version", action="version", version=f"nanoframes {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only not in COMMANDS else (only,):
        try:
            module = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as exc:
            if exc.name == f"{__name__}.{name}":
                continue  # not built yet
            raise
        module.register(sub)
    return parser


# Commands whose -j/--jobs workers are started before the library is imported.
POOLED_COMMANDS = ("digest",)


def _boot_workers(argv: list[str]) -> None:
    """Start ``digest -j N``'s workers first thing: they boot on the other CPUs
    while this process imports the library (about 0.2 s) and parses the films.

    A head start only (workers.prestart): a misread here costs nothing but the
    pool being started later, where it is used.
    """
    if not argv or argv[0] not in POOLED_COMMANDS:
        return
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("-j", "--jobs", type=int, default=1)
    try:
        jobs = early.parse_known_args(argv[1:])[0].jobs
    except SystemExit:  # bad usage: the real parser says so
        return
    if jobs == 0:
        jobs = os.cpu_count() or 1
    if jobs > 1:
        from ..config import find_project_root
        from ..frames import workers

        try:
            root = find_project_root(None)
        except OSError:
            root = None
        workers.prestart(jobs, root)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv == ["--version"]:  # what argparse would print, without building a parser
        print(f"nanoframes {__version__}")
        return 0
    interrupt.install()
    streams = _shown_streams()
    if "--allow-fallback" in argv[1:]:  # before any worker starts: workers read it too
        from ..config import ALLOW_FALLBACK_ENV

        os.environ[ALLOW_FALLBACK_ENV] = "1"
    try:
        _boot_workers(argv)
        try:
            status = _run(argv)
        finally:
            workers = _workers_if_loaded()
            if workers is not None:
                workers.discard_prestarted()  # a command that failed before using its pool
    finally:
        sys.stdout, sys.stderr = streams
        if not interrupt.is_program():
            interrupt.uninstall()  # a host calling main() in-process keeps its handlers
    if interrupt.is_program():
        _exit(status)
    return status


def _shown_streams() -> tuple:
    """Route every line the command prints through ``shown`` (control characters
    made visible: nanoframes/shown.py); returns the streams to put back."""
    from ..shown import ShownStream

    before = sys.stdout, sys.stderr
    if sys.stdout is not None and not isinstance(sys.stdout, ShownStream):
        sys.stdout = ShownStream(sys.stdout)
    if sys.stderr is not None and not isinstance(sys.stderr, ShownStream):
        sys.stderr = ShownStream(sys.stderr)
    return before


def _workers_if_loaded():
    """``frames.workers`` if this command used it (it imports multiprocessing, which
    a command drawing in this process alone never needs), else None."""
    return sys.modules.get("nanoframes.frames.workers")


def _exit(status: int) -> None:
    """End the command here, with the signal handlers still in place.

    The interpreter's own exit restores the default handlers before it is done
    (a signal then would kill the process silently), and leaves the forkserver
    and resource tracker to stop after it. So: run the exit hooks (multiprocessing
    unlinks its semaphores there), stop the helpers, flush, and ``os._exit``.
    """
    import atexit

    atexit._run_exitfuncs()
    workers = _workers_if_loaded()
    if workers is not None:
        workers.stop_helpers()
    interrupt.kill_descendants()  # nothing should be left; make sure
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    except OSError:
        status = status or 1
    try:
        sys.stderr.flush()
    except OSError:
        pass
    interrupt.exit_now(status)


def _run(argv: list[str]) -> int:
    parser = build_parser(argv[0] if argv else None)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except NanoframesError as exc:
        print(f"nanoframes: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("nanoframes: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if not _broken_pool(exc):
            raise
        # render-crashed where a worker's crash record names the frame, else worker-died
        print(f"nanoframes: {_workers_if_loaded().died(exc)}", file=sys.stderr)
        return 2


def _broken_pool(exc: Exception) -> bool:
    """A worker process was killed or crashed. Asked without importing
    concurrent.futures: a command that started no pool never loads it."""
    futures = sys.modules.get("concurrent.futures")
    return futures is not None and isinstance(exc, futures.BrokenExecutor)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
