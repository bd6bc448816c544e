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


def gather_sweep(sweep: SweepResult, config: Config, args: argparse.Namespace
                 ) -> tuple[list[Verdict], list[dict]]:
    from ..evidence.check import EvidenceOptions, evidence_for_check

    options = EvidenceOptions(
        store=store_path(args, config),
        artifacts=args.artifacts.absolute() if args.artifacts else None,
        frames=max(0, args.artifacts_frames),
        html=args.html.absolute() if args.html else None)
    return evidence_for_check(sweep.verdicts, sweep.ledger, sweep.readings, config, options)
