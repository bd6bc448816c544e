"""The determinism layer: what a film is a function of, and what a change means.

``identity`` digests the four inputs, ``reading`` takes a fresh reading,
``verdict`` judges it against the ``ledger``, ``sweep`` does that for many
compositions; ``policy`` holds the ledger's rules (the CLI and the plugin both
call it), ``recording`` commits a recording under the ledger's lock,
``threeway`` merges ledgers by key; ``selftest`` re-renders under variations
that must not matter (the jobs in ``variations``, each run by ``selftest_worker``
in a fresh process), ``cache`` keeps rendered frames keyed by identity for ``render``/``video``.
"""
