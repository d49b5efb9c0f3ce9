"""A record's figures read as numbers: one rule for every reader of a row (a missing key, None, text or a bool is
no figure)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def number(row: Mapping[str, Any], key: str) -> float:
    """The row's ``key`` as a float; NaN when it is missing or not a number."""
    value = row.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else math.nan
