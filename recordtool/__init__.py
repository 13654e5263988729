"""recordtool: a knowledge record whose claims check themselves.

The stages live in folders, and data flows one way through them:

- ``recordtool.record``: read the record (configuration, schema, YAML with places, the graph);
- ``recordtool.verify``: run the claims' checks, judge them, keep the verdicts;
- ``recordtool.render``: write the pages.

Check authors import only from here, the one stable surface for them::

    from recordtool import CheckContext, kernel_probe, write_atomic

``kernel_probe(torch)`` hashes what this CPU's kernels compute (``recordtool.verify.kernels``): a
cache of trained models keys by it. All three are loaded on first use, so ``import recordtool``
stays cheap for the CLI.
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
