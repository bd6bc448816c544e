"""Render workers forked from the command's own process: only while that is safe.

A fork copies the calling thread only and every library already loaded, so the
workers of ``render -o DIR`` are forked only before ThorVG is loaded here and
while this process runs one thread; otherwise the forkserver starts them. Both
give the same frames. Run in fresh interpreters: pytest's own process has
threads (and NumPy's BLAS pool), so it never qualifies.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from nanoframes.frames.film import Film
from nanoframes.frames.output import read_png_rgba

SLIDE = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="64" data-height="36"
     data-fps="12" data-duration="1">
  <rect width="64" height="36" fill="#203040"/>
  <circle id="dot" cx="6" cy="18" r="5" fill="#ffaa00"/>
  <script type="application/nanoframes+json">
    {"animations": [{"target": "#dot",
      "keyframes": [{"t": 0, "cx": 6}, {"t": 0.5, "cx": 58}]}]}
  </script>
</svg>
"""

PROBE = textwrap.dedent("""
    import os
    import sys
    import threading
    import time
    from pathlib import Path

    from nanoframes.frames import parallel as film_mod
    from nanoframes.frames import workers
    from nanoframes.frames.film import Film
    from nanoframes.frames.parallel import pool_for, task_args


    def probe(path, root, dedup, scale):
        # (who started this worker, which film object it draws with)
        return os.getppid(), id(film_mod._worker_film(path, root, dedup, scale))


    def started_by(film):
        pool = pool_for(film, 1).result()
        try:
            return pool.submit(probe, *task_args(film)).result(timeout=120)
        finally:
            pool.shutdown()


    def main():
        path = Path(sys.argv[1])
        film = Film.open(path, path.parent)
        assert workers.can_fork(), "a fresh process with one thread may fork"
        parent, drawn_with = started_by(film)
        assert parent == os.getpid(), "forked from this process"
        assert drawn_with == id(film), "the worker draws with its copy of this film"
        assert not film_mod._worker_films, "this process keeps no worker film"

        held = threading.Event()
        other = threading.Thread(target=held.wait, daemon=True)
        other.start()
        try:
            assert not workers.can_fork(), "never with a second thread running"
        finally:
            held.set()
            other.join()
        # a joined thread (and the first pool's) leaves /proc/self/task a moment later
        deadline = time.monotonic() + 30
        while not workers.can_fork() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert workers.can_fork(), "once the other threads have gone"

        film.raster(film.document(0))  # ThorVG is loaded here from now on
        assert not workers.can_fork(), "never once ThorVG is loaded"
        parent, drawn_with = started_by(film)
        assert parent != os.getpid(), "the forkserver started it"
        print("ok")


    if __name__ == "__main__":  # forkserver workers import this file again
        main()
""")


def fresh_env() -> dict[str, str]:
    # what the command sets for itself (cli/__init__.py): BLAS on one thread
    return dict(os.environ, OPENBLAS_NUM_THREADS="1")


def test_workers_are_forked_only_before_thorvg_and_with_one_thread(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    comp = tmp_path / "slide.nf.svg"
    comp.write_text(SLIDE)
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    done = subprocess.run([sys.executable, str(script), str(comp)], env=fresh_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_the_command_keeps_blas_on_one_thread() -> None:
    # As `python -m nanoframes --version` runs it; then NumPy starts no BLAS thread.
    code = textwrap.dedent("""
        import os, runpy, sys
        sys.argv = ["nanoframes", "--version"]
        try:
            runpy.run_module("nanoframes", run_name="__main__", alter_sys=True)
        except SystemExit:
            pass
        import numpy
        print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
    """)
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["1", "1"], done.stdout


def test_a_forked_render_writes_the_frames_of_one_process(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    comp = tmp_path / "slide.nf.svg"
    comp.write_text(SLIDE)
    expected = Film.open(comp, comp.parent).digests()
    for jobs in ("1", "2", "3"):
        out = tmp_path / f"j{jobs}"
        done = subprocess.run([sys.executable, "-m", "nanoframes", "render", str(comp), "-o",
                               str(out), "-j", jobs, "--no-cache"], env=fresh_env(),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        got = [hashlib.sha256(read_png_rgba(p)).hexdigest()
               for p in sorted(out.glob("*.png"))]
        assert got == expected, jobs


CACHED = textwrap.dedent("""
    import sys
    from pathlib import Path

    from nanoframes.determinism.reading import film_identity
    from nanoframes.frames.cache import FrameCache
    from nanoframes.frames import workers
    from nanoframes.frames.film import Film
    from nanoframes.frames.through_cache import cached_pngs

    def refused(*args, **kwargs):
        raise AssertionError("this pool must not start")

    path, out, warm = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3] == "warm"
    workers.booting_pool = refused  # cold: forked (ThorVG not loaded yet), never the forkserver
    if warm:
        workers.forked_pool = refused  # warm: nothing to draw, no worker at all
    film = Film.open(path, path.parent)
    out.mkdir()
    files = [(i, out / f"{i}.png") for i in range(film.comp.frame_count)]
    cache = FrameCache()
    assert sum(cached_pngs(film, files, jobs=2,
                           stored=cache.film_of(film, film_identity(film)))) == len(files)
    loaded = "libthorvg" in Path("/proc/self/maps").read_text()
    print(cache.hits, film.rasterized, loaded)
""")


def test_with_the_cache_workers_start_only_for_missing_frames(tmp_path: Path) -> None:
    # The cache's key (the film's identity) loads no renderer, so a cold render still
    # forks its workers, and a warm one starts none and never loads ThorVG.
    (tmp_path / "pyproject.toml").write_text("[tool.nanoframes]\n")
    comp = tmp_path / "slide.nf.svg"
    comp.write_text(SLIDE)
    expected = Film.open(comp, comp.parent).digests()
    env = dict(fresh_env(), NANOFRAMES_CACHE_DIR=str(tmp_path / "cache"))
    for run in ("cold", "warm"):
        out = tmp_path / run
        done = subprocess.run([sys.executable, "-c", CACHED, str(comp), str(out), run],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        hits, drawn, loaded = done.stdout.split()
        if run == "cold":
            assert hits == "0" and int(drawn) > 0 and loaded == "True"
        else:
            assert hits == str(len(expected)) and drawn == "0" and loaded == "False"
        got = [hashlib.sha256(read_png_rgba(out / f"{i}.png")).hexdigest()
               for i in range(len(expected))]
        assert got == expected, run
