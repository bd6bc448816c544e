"""Tabulate an emulated arm64 check against this machine's scratch ledger.

Reads the ``digest --all --check --json`` output of tools/arm64/table (every
example drawn on arm64, judged against the same checkout drawn here, with the
pixel evidence of each differing frame) and prints the table that
docs/determinism.md carries; ``--write`` replaces it there, between its markers.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "determinism.md"
START = "<!-- tools/arm64/table: start -->"
END = "<!-- tools/arm64/table: end -->"


def rows(verdicts: list[dict]) -> tuple[list[str], dict[str, int]]:
    lines = ["| film | frames | frames differing | max delta | pixels per differing frame "
             "| where (x, y) |", "|---|---:|---:|---:|---:|---|"]
    total = {"films": 0, "identical": 0, "frames": 0, "differing": 0, "delta": 0, "low": 255}
    for v in sorted(verdicts, key=lambda v: v["key"]):
        if v["verdict"] not in ("match", "changed", "regression"):
            raise SystemExit(f"table: {v['key']}: {v['line']}")
        frames = v["compared_frames"]
        differing = len(v["differing_frames"])
        total["films"] += 1
        total["frames"] += frames
        total["differing"] += differing
        name = v["key"].removeprefix("examples/").removesuffix(".nf.svg")
        if not differing:
            total["identical"] += 1
            lines.append(f"| {name} | {frames} | 0 | | | byte-identical |")
            continue
        evidence = v.get("evidence") or {}
        drawn = [d for d in evidence.get("frames", ()) if d.get("size") is None]
        if evidence.get("unavailable") or len(drawn) != differing:
            raise SystemExit(f"table: {v['key']}: frames not measured: {evidence.get('summary')}")
        delta = max(d["max_delta"] for d in drawn)
        total["delta"] = max(total["delta"], delta)
        total["low"] = min([total["low"], *(d["max_delta"] for d in drawn)])
        pixels = sorted(d["pixels"] for d in drawn)
        span = f"{pixels[0]}" if pixels[0] == pixels[-1] else f"{pixels[0]}–{pixels[-1]}"
        boxes = [d["bbox"] for d in drawn if d.get("bbox")]
        where = (f"({min(b[0] for b in boxes)}, {min(b[1] for b in boxes)})–"
                 f"({max(b[2] for b in boxes)}, {max(b[3] for b in boxes)})") if boxes else ""
        lines.append(f"| {name} | {frames} | {differing} | ±{delta}/255 | {span} | {where} |")
    return lines, total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("check_json", type=Path)
    p.add_argument("--times", nargs=3, type=float, metavar=("T0", "T1", "T2"))
    p.add_argument("--host", default="linux-x86_64")
    p.add_argument("--write", action="store_true", help=f"replace the table in {DOC}")
    args = p.parse_args(argv)
    data = json.loads(args.check_json.read_text())
    lines, t = rows(data["verdicts"])
    text = [START, "",
            f"Linux arm64 (emulated) against {args.host}, every example, every frame, "
            "as `tools/arm64/table` measured it:", "", *lines, "",
            f"**{t['identical']} of {t['films']} films byte-identical; {t['differing']:,} of "
            f"{t['frames']:,} frames differ**"
            + (f"; the largest channel difference of a differing frame is ±{t['low']} to "
               f"±{t['delta']}/255" if t["differing"] else "") + "."]
    if args.times:
        t0, t1, t2 = args.times
        text += ["", f"Wall time: every example recorded here in {t1 - t0:.0f} s, checked under "
                 f"emulation in {t2 - t1:.0f} s ({(t2 - t1) / (t1 - t0):.1f}x; the check also "
                 "redraws each differing frame for its evidence; a machine shared with other "
                 "work, so rough)."]
    text += ["", END]
    block = "\n".join(text)
    print(block)
    if args.write:
        doc = DOC.read_text()
        if START not in doc or END not in doc:
            print(f"table: {DOC} has no {START} ... {END} markers", file=sys.stderr)
            return 2
        head, rest = doc.split(START, 1)
        DOC.write_text(head + block + rest.split(END, 1)[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
