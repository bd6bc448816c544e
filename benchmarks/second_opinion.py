"""What a second opinion on a regression costs, against the differing frames' own
drawing, as ratios measured side by side in one run.

A real regression of a real example (default: spinner-loop, 41 frames of
240×240, confetti-burst, 48 frames of 480×270, and a generated film where
drawing is not negligible, 36 frames of 1920×1080 turning arcs), recorded with a preloaded
library that nudges libm's ``sinf``/``cosf``/``sincosf`` one ulp switched off
(tests/switched_nudge.py), checked with it switched on (the same file, so the
same toolchain: every frame that rotates differs). In one child process under
that preload, each figure the best of ``--repeat``:

1. ``draw``: the frames the opinion redraws, drawn in this warm process (the
   differing frames' own drawing time; every differing frame too, ``draw_all``);
2. ``opinion``: ``second_opinion.consult`` with N re-renders (default 3), wall time;
3. ``start``: one re-render's process with no frame to draw (interpreter, imports,
   ThorVG, the font book, parsing and the identity): what a fresh process costs
   before its first frame;
4. ``one``: one re-render's process drawing the frames.

Printed per example: each time, opinion/draw, opinion/draw_all and start/one.
No test asserts them. Usage:
python benchmarks/second_opinion.py [--repeat 3] [--renders 3] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

CHILD = """
import json, sys, time
from pathlib import Path
from nanoframes.config import load_config
from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.reading import check_one
from nanoframes.determinism.second_opinion import consult, redrawn
from nanoframes.determinism.selftest import run_job
from nanoframes.determinism.variations import Job, Target
from nanoframes.frames.film import Film

root, repeat, renders = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
path = root / "examples" / sys.argv[4]
config = load_config(root)
verdict, reading = check_one(path, config=config)
assert verdict.kind.value == "regression", verdict.line()
entry = read_ledger(config.ledger_path).entries[verdict.key]
frames = redrawn(verdict.differing_frames)
Film.open(path, root).digests(frames)  # warm: the engine and the fonts

def best(work, fresh=lambda: None):
    times = []
    for _ in range(repeat):
        arg = fresh()  # outside the timing: a film of its own (a film reuses what it drew)
        t = time.perf_counter(); work(arg); times.append(time.perf_counter() - t)
    return min(times)

opened = lambda: Film.open(path, root)

target = Target(verdict.key, path, reading.frames, frames)
env = dict(__import__("os").environ)
out = {
    "frames": len(frames), "differing": len(verdict.differing_frames),
    "draw": best(lambda film: film.digests(frames), opened),
    "draw_all": best(lambda film: film.digests(verdict.differing_frames), opened),
    "opinion": best(lambda _: consult(verdict, entry, reading, config, renders)),
    "start": best(lambda _: run_job(Job("baseline", ((0, ()),), env), [target], root, None,
                                    300)),
    "one": best(lambda _: run_job(Job("baseline", ((0, frames),), env), [target], root, None,
                                  300)),
}
kind = consult(verdict, entry, reading, config, renders).opinion.kind
out["kind"] = kind
print(json.dumps(out))
"""

# A generated film where drawing is not negligible: 1920×1080, 36 frames, 48 dashed
# gradient arcs each turning about its own centre (ThorVG's sinf/cosf on every one).
BIG = "rotating-1080p"


def big_film() -> str:
    arcs, moves = [], []
    for n in range(48):
        cx, cy = 120 + (n % 8) * 240, 135 + (n // 8) * 180
        arcs.append(f'<circle id="a{n}" cx="{cx}" cy="{cy}" r="{60 + n % 5 * 6}" fill="none" '
                    f'stroke="url(#g)" stroke-width="14" stroke-dasharray="90 40" '
                    f'stroke-linecap="round"/>')
        moves.append(f'{{"target": "#a{n}", "keyframes": [{{"t": 0, "transform": '
                     f'{{"rotate": 0, "center": [{cx}, {cy}]}}}}, {{"t": 1.2, "transform": '
                     f'{{"rotate": {360 if n % 2 else -360}, "center": [{cx}, {cy}]}}}}]}}')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" data-width="1920" data-height="1080" '
            f'data-fps="30" data-duration="1.2"><defs><linearGradient id="g" x1="0" y1="0" '
            f'x2="1" y2="1"><stop offset="0" stop-color="#22d3ee"/><stop offset="1" '
            f'stop-color="#a78bfa"/></linearGradient></defs><rect width="1920" height="1080" '
            f'fill="#121329"/>{"".join(arcs)}<script type="application/nanoframes+json">'
            f'{{"animations": [{", ".join(moves)}]}}</script></svg>\n')


def main() -> int:
    import switched_nudge

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--renders", type=int, default=3)
    parser.add_argument("examples", nargs="*", default=["spinner-loop", "confetti-burst", BIG],
                        help=f"examples/NAME.nf.svg, or {BIG} (generated); default: "
                             f"spinner-loop confetti-burst {BIG}")
    args = parser.parse_args()
    if switched_nudge.compiler() is None or not sys.platform.startswith("linux"):
        print("needs Linux and a C compiler (the preloaded nudge)", file=sys.stderr)
        return 2
    print(f"second opinion: {args.renders} re-renders, best of {args.repeat}, "
          f"{os.cpu_count()} CPUs; the examples checked under a one-ulp libm nudge")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "p"
        (root / "examples").mkdir(parents=True)
        (root / "pyproject.toml").write_text("[tool.nanoframes]\n")
        for name in args.examples:
            if name == BIG:
                (root / "examples" / f"{BIG}.nf.svg").write_text(big_film())
            else:
                shutil.copy(ROOT / "examples" / f"{name}.nf.svg", root / "examples")
        library = switched_nudge.build(Path(tmp))
        env = {k: v for k, v in os.environ.items()
               if k not in ("EXCUSED_COMPOSITIONS", "NF_NUDGE_WHEN", "NF_CRASH_WHEN")}
        env.update(LD_PRELOAD=str(library), XDG_CACHE_HOME=str(Path(tmp) / "cache"))
        subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--record"], cwd=root,
                       env=env, check=True, capture_output=True, timeout=600)
        env["NF_NUDGE_WHEN"] = "always"
        for name in args.examples:
            done = subprocess.run([sys.executable, "-c", CHILD, str(root), str(args.repeat),
                                   str(args.renders), f"{name}.nf.svg"], cwd=root, env=env,
                                  capture_output=True, text=True, timeout=1800)
            if done.returncode != 0:
                print(f"{name}: {done.stderr.strip().splitlines()[-1]}")
                continue
            _show(name, args.renders, json.loads(done.stdout.splitlines()[-1]))
    return 0


def _show(name: str, renders: int, m: dict) -> None:
    print(f"\n{name}: {m['differing']} differing frames, {m['frames']} redrawn by each "
          f"re-render (opinion: {m['kind']})")
    print(f"  draw (redrawn frames, warm process)    {m['draw'] * 1000:8.1f} ms")
    print(f"  draw_all (every differing frame)       {m['draw_all'] * 1000:8.1f} ms")
    print(f"  start (a re-render with no frame)      {m['start'] * 1000:8.1f} ms")
    print(f"  one (a re-render drawing the frames)   {m['one'] * 1000:8.1f} ms")
    print(f"  opinion ({renders} re-renders, wall)        {m['opinion'] * 1000:8.1f} ms")
    print(f"  opinion / draw      {m['opinion'] / m['draw']:6.1f}x")
    print(f"  opinion / draw_all  {m['opinion'] / m['draw_all']:6.1f}x")
    print(f"  start / one         {m['start'] / m['one']:6.2f}  (the share of a re-render "
          "spent before its first frame)")


if __name__ == "__main__":
    sys.exit(main())
