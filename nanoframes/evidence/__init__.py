"""Evidence of what moved: pixel numbers, artifacts, contact sheets, the HTML report.

Above ``determinism`` (it reads verdicts, ledger entries and readings), below
the command line and the plugin.
"""
