"""Options of ``digest --check`` for pixel evidence, artifacts and the HTML report."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from .store import store_path

if TYPE_CHECKING:
    from ..config import Config
    from ..determinism.sweep import SweepResult
    from ..determinism.verdict import Verdict


def add_evidence_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--artifacts", type=Path, metavar="DIR", default=None,
                   help="with --check: write expected/actual/diff PNGs of differing frames "
                        "and DIR/manifest.json")
    p.add_argument("--artifacts-frames", type=int, metavar="N", default=5,
                   help="differing frames written per composition (default 5)")
    p.add_argument("--html", type=Path, metavar="PATH", default=None,
                   help="with --check: write a report page (images in PATH's _files folder "
                        "unless --artifacts)")
    opinion = p.add_mutually_exclusive_group()
    opinion.add_argument("--second-opinion", type=_renders, metavar="N", default=None,
                         help="with --check: draw a regression's differing frames again N "
                              "times in fresh processes, under the self-test's variations, "
                              "before reporting it (default: [tool.nanoframes] "
                              "second_opinion, else 3; 0: off)")
    opinion.add_argument("--no-second-opinion", action="store_const", const=0,
                         dest="second_opinion", help="with --check: no second opinion")


def _renders(text: str) -> int:
    import argparse

    from ..config import second_opinion_count

    try:
        return second_opinion_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def gather_sweep(sweep: SweepResult, config: Config, args: argparse.Namespace
                 ) -> tuple[list[Verdict], list[dict]]:
    from ..evidence.check import EvidenceOptions, evidence_for_check

    options = EvidenceOptions(
        store=store_path(args, config),
        artifacts=args.artifacts.absolute() if args.artifacts else None,
        frames=max(0, args.artifacts_frames),
        html=args.html.absolute() if args.html else None,
        second_opinion=(config.second_opinion if args.second_opinion is None
                        else args.second_opinion))
    return evidence_for_check(sweep.verdicts, sweep.ledger, sweep.readings, config, options)
