from __future__ import annotations

from recordtool.cli import run

run()
