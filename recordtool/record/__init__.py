"""Stage 1, the record: configuration, the schema of entries, reading YAML with places,
problems, mentions, the graph of citations and mentions, and templates for new entries.

Knows neither verify nor render: everything here is about what the record says.
"""
