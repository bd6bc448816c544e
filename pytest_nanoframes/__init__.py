"""pytest plugin: compositions as test items with ledger verdicts (see plugin.py)."""
