"""``nanoframes check``: findings with stable codes (docs/lint.md).

A finding is about one composition file, one element (``#id`` or ``<tag> line
N``) and, where it is about a moment, one time in seconds. Errors make the check
fail; warnings only under ``--strict``. A file that cannot be parsed is one
error finding carrying the parse error's own code, so a run over many files
reports every file instead of stopping at the first bad one.

A finding and the exit status of a run are in ``findings``. The checks live in
five modules: ``timeline`` (what the JSON says), ``canvas`` (where things are
on the canvas over time), ``assets`` (files, nested compositions, fonts,
paints), ``curve`` (text that overruns its curve) and ``markup`` (style-sheet
rules not applied, cyclic ``<use>``).
"""

from __future__ import annotations

from pathlib import Path

from ..engine import site
from ..errors import NanoframesError
from .findings import ERROR, WARNING, Finding, designate, exit_status, failed, finding


def lint_file(path: str | Path, project_root: Path | None = None) -> list[Finding]:
    """Every finding for one film file, in a stable order. A Lottie file is checked
    by opening it (its reader refuses what cannot be drawn, with the error's code);
    its own findings, where its source has any (``findings``), follow."""
    from ..frames.source import open_parsed
    from ..model.composition import Composition

    shown = str(path)
    try:
        comp = open_parsed(path, project_root)
    except NanoframesError as err:
        return [Finding(ERROR, err.code, None, None, err.message, shown, err.line, fatal=True)]
    if not isinstance(comp, Composition):
        findings = getattr(comp, "findings", None)
        return [Finding(sev, code, element, t, message, shown, None)
                for sev, code, element, t, message in (findings() if findings else ())]
    return lint_composition(comp, shown)


def lint_composition(comp, shown: str | None = None) -> list[Finding]:
    """Every finding for one parsed composition; ``shown`` names its file in findings."""
    from . import assets, canvas, curve, markup, timeline

    shown = str(comp.path) if shown is None else shown
    with site.working_on(comp.path):  # linting measures text with ThorVG
        context = canvas.Context.build(comp)
        found = [*timeline.check(comp), *assets.check(comp, context), *canvas.check(context),
                 *curve.check(context), *markup.check(comp)]
    out = {(f.code, f.element, f.t, f.message): f for f in found}  # one of each
    ordered = sorted(out.values(), key=lambda f: (f.line or 0, f.code, f.t or 0.0, f.message))
    return [Finding(f.severity, f.code, f.element, f.t, f.message, shown, f.line, f.fatal)
            for f in ordered]


__all__ = ["ERROR", "WARNING", "Finding", "designate", "exit_status", "failed", "finding",
           "lint_composition", "lint_file"]
