"""Stage 2, verifying claims: fingerprints, running checks in child processes, judging
their metrics against the claims' expectations, verdicts and their store, status and reports.

Reads the record; knows nothing of pages.
"""
