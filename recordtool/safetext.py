"""Text made safe for a terminal: what the record says never drives the terminal.

The record may hold control characters (an escape sequence would recolour the terminal or
plant a link, a bidirectional override reorder a line): everything printed from it goes
through ``terminal``, which writes them as visible escapes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# C0 and C1 controls but newline and tab, DEL, and the bidirectional embeddings, overrides
# and isolates (which reorder what follows them on the line).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal(text: str) -> str:
    """``text`` with every control character (newline and tab kept) written as ``\\x1b``,
    ``\\u202e``, ...: readable, and inert on any terminal."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(lambda m: ascii(m.group(0))[1:-1], text)


def one_line(text: str) -> str:
    """``terminal(text)`` with newlines and tabs written as escapes too (a field on one line)."""
    return terminal(text).replace("\n", "\\n").replace("\t", "\\t")


def some(items: Sequence[str], shown: int) -> str:
    """``items`` joined by commas, the first ``shown`` of them only when there are more, then
    how many more: ``THEORY-1, THEORY-3 and 3587 more``."""
    head = ", ".join(items[:shown])
    return head + (f" and {len(items) - shown} more" if len(items) > shown else "")
