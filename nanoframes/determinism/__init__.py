"""The determinism layer: what a film is a function of, and what a change means.

``identity`` digests the four inputs, ``reading`` takes a fresh reading,
``verdict`` judges it against the ``ledger``, ``sweep`` does that for many
compositions, ``selftest`` re-renders under variations that must not matter (the jobs
in ``variations``, each run by ``selftest_worker`` in a fresh process),
``cache`` keeps rendered frames keyed by identity for ``render``/``video``.
"""
