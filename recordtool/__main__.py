from __future__ import annotations

from recordtool.cli import run

if __name__ == "__main__":  # (not when a fresh worker interpreter imports the main module again)
    run()
