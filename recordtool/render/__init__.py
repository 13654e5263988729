"""Stage 3, rendering pages: prose, escaping, entry pages with their evidence and graph
views, index pages, the site writer and link checking.

Reads the record and the verdicts; writes only into the pages folder.
"""
