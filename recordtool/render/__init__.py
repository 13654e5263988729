"""Stage 3, rendering pages: prose, escaping, entry pages with their evidence and graph
views, index pages, link checking, and the site: ``site.render`` plans the pages
(``plan``), writes what changed (``write``), keeps the ``manifest`` and the ``snapshot``.

Reads the record and the verdicts; writes only into the pages folder.
"""
