"""CPUs under pytest-xdist: how many workers ``-n auto`` starts, and how many
threads each worker draws with.

A lone process draws a film through a three-stage pipeline (bake, raster,
hash) when it has a second CPU. Under ``-n N`` on a machine with C CPUs every
worker would do so at once, 3N busy threads on C CPUs; a worker pipelines
only when C/N >= 2 (``nanoframes.frames.workers.share_cpus``). The frames are
the same bytes either way (the self-test's ``pipeline-off`` variation).

``-n auto`` starts one worker per CPU this process may run on (its affinity
mask, not the machine's count), unless ``PYTEST_XDIST_AUTO_NUM_WORKERS`` says
otherwise; without ``--nf-check`` xdist's own rule stands.
"""

from __future__ import annotations

import os

import pytest


def auto_workers(config: pytest.Config) -> int | None:
    """The worker count for ``-n auto`` when the plugin checks compositions."""
    from pytest_nanoframes.session import read_options

    if not read_options(config).active or os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own rule (it reads the variable itself)
    from nanoframes.frames.workers import available_cpus

    return available_cpus()


def share_with_siblings(config: pytest.Config) -> None:
    """In an xdist worker: tell the library how many workers share the CPUs."""
    count = getattr(config, "workerinput", {}).get("workercount")
    if count:
        from nanoframes.frames.workers import share_cpus

        share_cpus(int(count))
