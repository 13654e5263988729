from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from checks import separation
from recordtool.verify.context import CheckContext


def test_separation_holds_and_its_control_fails(
    tmp_path: Path,
    check_spec: Callable[[str, str], dict[str, Any]],
    unmet: Callable[[dict[str, str], dict[str, Any]], list[str]],
) -> None:
    check = check_spec("THEORY-1342", "selection-transport-separation")
    ctx = CheckContext.for_testing(tmp_path)
    metrics = separation.measure(ctx, **check.params)
    assert unmet(check.expect, metrics) == []
    assert metrics["pattern_shift_ov"] == 0.0  # bit-for-bit
    (control,) = check.all_controls
    under = separation.measure(ctx, **{**check.params, **control.params})
    assert unmet(check.expect, under) == ["pattern_shift_ov"]
