"""Values as standard JSON takes them, for every layer that writes JSON (results, the CLI)."""

from __future__ import annotations

import math

# typing's import costs ≈ 3 ms of every command's start; checkers treat this name as typing's.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def clean(value: Any) -> Any:
    """NaN/inf → None and NumPy scalars → Python, so JSON stays standard."""
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if value is None or type(value).__name__ == "NAType":  # pandas' missing value (nullable ints)
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
