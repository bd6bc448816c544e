"""An excuse's word on this platform: where it applies, and whether it can go.

An excuse limited by ``platforms`` excuses nothing on another machine; there the
verdict says so (the excuse is listed as not applying here), rather than falling
silent. A match of an excused composition advises removing the exemption only
when nothing known shows it is still needed:

- with ``platforms``: the film must match on every platform the excuse names:
  here by this reading, elsewhere by the ledger (that platform has recorded
  platform entries, and this film's is current, or absent because it draws the
  primary);
- without ``platforms``: no platform entry of the ledger may show a machine
  that needs it (this film's entry for a platform taken under other inputs
  than the primary's: a check there is judged against the primary).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

from ..config import Config
from .ledger import Ledger
from .verdict import REMOVE_EXEMPTION, Kind, Verdict, excuse_bounds_for, excuse_for


def speak(verdict: Verdict, config: Config, ledger: Ledger,
          composition_id: str | None = None,
          environ: Mapping[str, str] = os.environ) -> Verdict:
    """``verdict`` with what its configured excuse says on this platform."""
    if verdict.kind in (Kind.ERROR, Kind.STALE) or not config.excused:
        return verdict
    bounds = excuse_bounds_for(verdict.key, config, composition_id)
    platforms = bounds.platforms if bounds is not None else None
    if verdict.excused is None:
        if platforms is None:
            return verdict
        from .platforms import platform_tag

        here = platform_tag(environ)
        reason = _reason(verdict.key, config, composition_id)
        if here in platforms or reason is None:
            return verdict
        said = (f"excused on {', '.join(platforms)} only ({reason}): does not apply on "
                f"{here}")
        return dataclasses.replace(
            verdict, note=f"{verdict.note}; {said}" if verdict.note else said)
    if verdict.kind is not Kind.MATCH:
        return verdict
    return dataclasses.replace(verdict, excuse_advice=advice(verdict.key, ledger, platforms,
                                                             environ))


def advice(key: str, ledger: Ledger, platforms: tuple[str, ...] | None,
           environ: Mapping[str, str] = os.environ) -> str:
    """What a match of an excused film says about its exemption."""
    from .platforms import platform_tag

    here = platform_tag(environ)
    known = {tag for entry in ledger.entries.values() for tag in entry.platforms}
    entry = ledger.entries.get(key)
    needing = []
    for tag in sorted(platforms if platforms is not None else known):
        if tag == here:
            continue
        own = entry.platforms.get(tag) if entry is not None else None
        if own is not None and entry is not None and own.inputs() != entry.inputs():
            needing.append(f"{tag} (its platform entry was taken under other inputs)")
        elif own is None and tag not in known:
            needing.append(f"{tag} (no reading of it in the ledger)")
    if needing:
        return f"it matches here; keep it for {', '.join(needing)}"
    return REMOVE_EXEMPTION


def _reason(key: str, config: Config, composition_id: str | None) -> str | None:
    from .verdict import _normalise

    named = {_normalise(name, config.root): r for name, r in config.excused.items()}
    return excuse_for(key, named, composition_id)
