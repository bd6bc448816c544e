"""Ledger entries keyed by a test (``nf.check``, the ``nanoframes`` marker), and when
one is stale.

A test's entry is keyed by its node id (``tests/test_charts.py::test_bar[de]``),
plus ``::key`` when one test checks several compositions. An entry is stale
when its test is gone, and that can only be said on a run that collected every
test: not under ``-k``/``-m``/``--lf``/``--deselect``, a path or node id subset,
or a collection error (as syrupy treats unused snapshots).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import pytest

from nanoframes.determinism.ledger import is_test_key  # the library's rule, one place

SEP = "::"


def entry_key(nodeid: str, key: str | None) -> str:
    return nodeid if key is None else f"{nodeid}{SEP}{key}"


@dataclass
class Collection:
    """What this process collected, and whether that was every test."""

    nodeids: set[str] = field(default_factory=set)
    partial: list[str] = field(default_factory=list)  # why it was not every test

    @property
    def complete(self) -> bool:
        return not self.partial


COLLECTION = pytest.StashKey[Collection]()


def collection(config: pytest.Config) -> Collection:
    found = config.stash.get(COLLECTION, None)
    if found is None:
        found = config.stash[COLLECTION] = Collection(partial=_narrowed_by_options(config))
    return found


def _narrowed_by_options(config: pytest.Config) -> list[str]:
    reasons = []
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        reasons.append("paths or node ids given")
    for option, name in (("keyword", "-k"), ("markexpr", "-m"), ("lf", "--lf"),
                         ("stepwise", "--sw"), ("deselect", "--deselect"),
                         ("ignore", "--ignore"), ("ignore_glob", "--ignore-glob")):
        if config.getoption(option, None):
            reasons.append(name)
    return reasons


def collected(config: pytest.Config, items: Iterable[pytest.Item]) -> None:
    """Every item collected, before ``-k``/``-m`` deselect any."""
    collection(config).nodeids.update(item.nodeid for item in items)


def deselected(config: pytest.Config) -> None:
    collection(config).partial.append("tests deselected")


def collect_failed(config: pytest.Config) -> None:
    collection(config).partial.append("a collection error")


def stale_test_keys(config: pytest.Config, keys: Iterable[str]) -> list[str]:
    """Test-keyed entries whose test this run did not collect; none unless it
    collected every test."""
    found = collection(config)
    if not found.complete:
        return []
    live = found.nodeids
    return sorted(key for key in keys if is_test_key(key) and not _alive(key, live))


def _alive(key: str, nodeids: set[str]) -> bool:
    if key in nodeids:
        return True
    head = key
    while SEP in head:  # "<nodeid>::<key>": the test is the longest collected prefix
        head = head.rsplit(SEP, 1)[0]
        if head in nodeids:
            return True
    return False


def stale_problem(key: str, hint: str) -> str:
    return f"STALE {key}: the ledger has an entry but the test is gone; {hint} drops it"
