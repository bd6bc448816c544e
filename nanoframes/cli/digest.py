"""``nanoframes digest``: film digests, and checking or recording them in the ledger."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import load_config, project_root
from ..determinism.accept import tally
from ..determinism.policy import allow_recording, verdict_to_json
from ..determinism.verdict import Kind, Verdict, exit_status
from ..progress import Progress
from .common import add_allow_fallback, add_jobs, jobs_value
from .evidence import add_evidence_args, gather_sweep
from .selftest import register_selftest_args, run_selftest_cli
from .store import add_store_args, store_path

EPILOG = """\
modes:
  (neither)   print each composition's film digest; the ledger is not read
  --check     judge each composition against the ledger: MATCH, CHANGED (an
              input moved; the reasons name it), REGRESSION (same inputs,
              different frames), ABSENT (no entry), STALE (an entry whose file
              is gone, only on a full sweep), or EXCUSED (from
              [tool.nanoframes.excused] or $EXCUSED_COMPOSITIONS; printed on
              every run, a match included). A failing regression's differing
              frames are first drawn again in fresh processes, and its
              "opinion:" line says whether they came back the same
              (--second-opinion N, default 3; --no-second-opinion)
  --record    write fresh readings into the ledger (locked, merged by key,
              atomically); a regression or an unreadable ledger is not
              overwritten without --force (which keeps the unreadable file
              beside the new one); where $CI is set, only with --ci
  --record --platform [TAG]
              record this machine's reading as a platform entry beside each
              primary entry (TAG: default $NANOFRAMES_PLATFORM, else OS and
              CPU, e.g. linux-x86_64); the primary is never touched. A check
              matches a platform entry of the same inputs, and judges a
              reading against the entry of its own toolchain
  --selftest  render each composition under variations that must not change a
              frame (docs/determinism.md) and name any that does; exit 1

With no PATH (or with --all) the sweep covers [tool.nanoframes] compositions
(default examples/**/*.nf.svg). Ledger keys are relative to the project root.

exit status (the same with --json):
  0  every composition matches or is excused (--record: all recorded)
  1  a non-excused changed, regression, absent or stale (--record: a
     regression refused)
  2  a composition that cannot be read or rendered, a bad ledger or
     configuration, or bad usage
"""


def register(sub) -> None:
    p = sub.add_parser(
        "digest", help="film digests; check or record them in the ledger",
        description="Digest compositions (SHA-256 over each frame's RGBA; a film's digest "
        "over its frame digests) and check or record them in the ledger.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                   help="composition files or directories (default: the configured globs)")
    p.add_argument("--all", action="store_true", dest="all_",
                   help="sweep every configured composition (and report stale entries)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="judge against the ledger")
    mode.add_argument("--record", action="store_true", help="record into the ledger")
    p.add_argument("--platform", nargs="?", const="", default=None, metavar="TAG",
                   help="with --record: record a platform entry (TAG: default this "
                   "machine's, e.g. linux-x86_64) beside the primary entry")
    p.add_argument("--force", action="store_true",
                   help="with --record: overwrite regressions and a corrupt ledger")
    p.add_argument("--ci", action="store_true",
                   help="with --record: record even though $CI is set (or set "
                   "NANOFRAMES_RECORD_IN_CI=1)")
    p.add_argument("--samples", type=_positive, metavar="N",
                   help="digest N evenly spaced frames instead of every frame")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--ledger", type=Path, metavar="PATH",
                   help="the ledger file (default: [tool.nanoframes] ledger)")
    p.add_argument("--no-dedup", action="store_false", dest="dedup",
                   help="rasterize held frames again (for benchmarks)")
    add_store_args(p)
    add_evidence_args(p)
    add_jobs(p)
    add_allow_fallback(p)
    register_selftest_args(p)
    p.set_defaults(func=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def run(args: argparse.Namespace) -> int:
    if args.selftest:
        return run_selftest_cli(args)
    if args.force and not args.record:
        print("nanoframes digest: --force only applies to --record", file=sys.stderr)
        return 2
    if args.platform is not None and not args.record:
        print("nanoframes digest: --platform only applies to --record", file=sys.stderr)
        return 2
    if args.record:
        allow_recording(args.ci, "--ci")
    platform = _platform(args.platform)
    from ..frames.drill import banner

    drill = banner()
    if drill is not None and not args.json:
        print(drill)  # first and last: a drilled run is never mistaken for a real one
    # imported here, not at the top: building the command line imports no renderer
    from ..determinism.sweep import check, collect, record

    config = load_config(project_root(args.paths))  # one project, whatever the order
    jobs = jobs_value(args.jobs)
    targets = collect(args.paths, config, args.all_)
    bar = Progress(len(targets), "digest")
    opts: dict[str, Any] = dict(config=config, samples=args.samples, jobs=jobs, dedup=args.dedup,
                                all_=args.all_, progress=lambda _v: bar.advance())
    ledger = args.ledger.absolute() if args.ledger else config.ledger_path
    with bar:
        if args.record:
            store = store_path(args, config)
            result = record(args.paths, ledger_path=ledger, force=args.force, store=store,
                            platform=platform,
                            before_commit=_accepting(config, store, args, bar), **opts)
            status = result.exit_status
            out = _record_output(result, args.json)
            if result.store_warning:
                print(f"nanoframes: warning: {result.store_warning}", file=sys.stderr)
        elif args.check:
            store = store_path(args, config)
            sweep = check(args.paths, ledger_path=ledger, store=store, **opts)
            verdicts, records = gather_sweep(sweep, config, args)  # pixels, artifacts, page
            _keep_pending(verdicts, sweep, config, store, args)
            # after the evidence: a bounded excuse holds only within its measured bounds
            status = max(exit_status(verdicts), 1 if sweep.problems else 0)
            out = _check_output(verdicts, records, args.json, sweep.problems, ledger)
            if args.json and args.artifacts:
                out["artifacts"] = os.fspath(args.artifacts)
            if args.json and args.html:
                out["html"] = os.fspath(args.html)
            if not args.json:
                _written(args)
        else:
            status, out = _plain(targets, config, args, jobs, bar.advance)
    if drill is not None and not args.json:
        print(drill)
    if args.json:
        out["exit_status"] = status
        out["ledger"] = os.fspath(ledger)
        if drill is not None:
            out["drill"] = drill
        print(json.dumps(out, indent=2, ensure_ascii=False))
    return status


def _keep_pending(verdicts: list[Verdict], sweep, config, store: Path | None,
                  args: argparse.Namespace) -> None:
    """What did not match, kept for `nanoframes accept` and `review` (a folder that
    cannot be written is a warning: the check's verdicts stand)."""
    from ..determinism.pending import keep
    from ..errors import NanoframesError

    try:
        keep(verdicts, sweep.readings, config.root, store,
             args.artifacts.absolute() if args.artifacts else None,
             args.html.absolute() if args.html else None)
    except NanoframesError as exc:
        print(f"nanoframes: warning: pending readings not kept: {exc}", file=sys.stderr)


def _platform(value: str | None) -> str | None:
    """The tag of ``--platform [TAG]``: the one given, else this machine's."""
    if value is None:
        return None
    from ..determinism.platforms import platform_tag, valid_tag

    return valid_tag(value) if value else platform_tag()


def verdict_json(v: Verdict) -> dict[str, Any]:
    return verdict_to_json(v)


def _tally(verdicts: list[Verdict]) -> str:
    return tally("excused" if v.excused else v.kind.value for v in verdicts)


def _excused_to_stderr(verdicts: list[Verdict]) -> None:
    # With --json stdout is one JSON object, yet an exemption is never silent.
    for v in verdicts:
        if v.excused:
            print(v.line(), file=sys.stderr)


def _written(args: argparse.Namespace) -> None:
    """Where the page and the artifacts are (as pytest-html says where its page is)."""
    if args.html:
        print(f"report: {args.html.absolute().as_uri()}")
    if args.artifacts:
        print(f"artifacts: {args.artifacts} (manifest.json lists every file)")


def _accepting(config, store: Path | None, args: argparse.Namespace, bar: Progress):
    """What a recording is about to accept, printed before the ledger is written."""
    def show(verdicts: list[Verdict], readings: dict, ledger) -> None:
        from ..evidence.words import accepted, accepting_lines

        stream = sys.stderr if args.json else sys.stdout
        for v in verdicts:
            entry = ledger.entries.get(v.key)
            if entry is None or v.key not in readings or not accepted(v, args.force):
                continue
            if bar.enabled:  # end the progress line before the first of ours
                bar.close()
                bar.enabled = False
            for line in accepting_lines(v, entry, readings[v.key], config, store):
                print(line, file=stream)
    return show


def _check_output(verdicts: list[Verdict], records: list[dict], as_json: bool,
                  problems: list[str], ledger: Path) -> dict[str, Any]:
    if as_json:
        _excused_to_stderr(verdicts)
        return {"mode": "check",
                "verdicts": [dict(verdict_json(v), moved=record.get("moved") or [])
                             for v, record in zip(verdicts, records)],
                "ledger_problems": problems, "summary": _tally(verdicts)}
    from ..evidence.words import evidence_lines

    for v, record in zip(verdicts, records):
        print(v.line())
        for line in evidence_lines(record) if v.kind is not Kind.MATCH else ():
            print(f"  {line}")
        if v.time_line:
            print(f"  {v.time_line}")
    from ..determinism.opinions import cause_lines

    for line in cause_lines((v.key, record.get("opinion")) for v, record in zip(verdicts, records)):
        print(line)  # regressions of one cause, said once with their films
    for problem in problems:
        print(f"LEDGER {ledger}: {problem}")
    print(_tally(verdicts))
    from ..determinism.accept import next_step

    step = next_step(verdicts)
    if step is not None:
        print(step)
    return {}


def _record_output(result, as_json: bool) -> dict[str, Any]:
    s = result.summary
    by_key = {v.key: v for v in result.verdicts}
    if as_json:
        _excused_to_stderr(result.verdicts)
        return {"mode": "record", "added": s.added, "updated": s.updated,
                "unchanged": s.unchanged, "removed": s.removed,
                "refused": [verdict_json(v) for v in result.refused],
                "errors": [verdict_json(v) for v in result.errors],
                "verdicts": [verdict_json(v) for v in result.verdicts],
                "written": result.written, "replaced": result.replaced,
                "platform": result.platform, "notes": result.notes}
    if result.replaced:
        print(f"REPLACED {result.replaced}")
    where = f" (platform entry {result.platform})" if result.platform else ""
    for key in s.added:
        print(f"added      {key}{where}")
    for key in s.updated:
        print(f"updated    {key}{where}: {by_key[key].summary()}" if key in by_key else
              f"updated    {key}{where}")
    for key in s.unchanged:
        print(f"unchanged  {key}")
    for key in s.removed:
        print(f"removed    {key} (stale: the file is gone)")
    for v in result.refused:
        tail = " (--force overwrites it)" if v.kind is Kind.REGRESSION else ""
        print(f"REFUSED {v.key}: {v.summary()}; not recorded{tail}")
    for note in result.notes:
        print(f"NOTE {note}")
    for v in result.errors:
        print(v.line())
    for v in result.verdicts:
        if v.excused and v.kind is not Kind.ERROR:
            print(v.line())
    print(f"{len(s.added)} added, {len(s.updated)} updated, {len(s.unchanged)} unchanged, "
          f"{len(s.removed)} removed, {len(result.refused)} refused, "
          f"{len(result.errors)} failed" + ("" if result.written else "; ledger not rewritten"))
    return {}


def _plain(targets: list[Path], config, args: argparse.Namespace, jobs: int,
           advance: Callable[[], None]) -> tuple[int, dict[str, Any]]:
    """Digests only: no ledger read, nothing judged. Scheduled like --check."""
    from ..determinism.sweep import readings

    rows: list[dict[str, Any]] = []
    status = 0
    for _, r in readings(targets, config, samples=args.samples, jobs=jobs, dedup=args.dedup):
        if isinstance(r, Verdict):  # could not be read or rendered
            status = 2
            rows.append({"key": r.key, "error": r.error})
            if not args.json:
                print(f"ERROR {r.key}: {r.error}")
        else:
            rows.append({"key": r.key, "digest": r.digest, "frames": r.frames,
                         "sampled": r.sampled, "indices": list(r.indices),
                         "identity": dict(r.identity), "frame_digests": list(r.frame_digests),
                         "scene_digests": list(r.scene_digests)})
            if not args.json:
                extent = (f"{len(r.indices)} of {r.frames} frames sampled" if r.sampled
                          else f"{r.frames} frames")
                print(f"{r.digest}  {r.key}  ({extent})")
        advance()
    return status, {"mode": "digest", "compositions": rows}
