"""recordtool: a knowledge record whose claims check themselves.

Data flows one way through the stages: ``record`` (read), ``verify`` (run checks, keep
verdicts), ``render`` (write pages). Check authors import only ``CheckContext``,
``kernel_probe`` and ``write_atomic`` from here, each loaded on first use so that
``import recordtool`` stays cheap for the CLI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["CheckContext", "__version__", "kernel_probe", "write_atomic"]

if TYPE_CHECKING:
    from recordtool.atomic import write_atomic
    from recordtool.verify.context import CheckContext
    from recordtool.verify.kernels import probe as kernel_probe


def __getattr__(name: str) -> Any:
    if name == "CheckContext":
        from recordtool.verify.context import CheckContext

        return CheckContext
    if name == "write_atomic":
        from recordtool.atomic import write_atomic

        return write_atomic
    if name == "kernel_probe":
        from recordtool.verify.kernels import probe

        return probe
    raise AttributeError(f"module 'recordtool' has no attribute {name!r}")
