"""Stage 3, rendering pages: ``site.render`` plans the pages (``plan``), composes those that may
have changed (``page``, ``index``), writes them (``write``) and checks their links (``linkcheck``).

Reads the record and the verdicts; writes only into the pages folder.
"""
