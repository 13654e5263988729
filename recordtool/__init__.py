"""recordtool: a knowledge record whose claims check themselves."""

from __future__ import annotations

__version__ = "0.1.0"
