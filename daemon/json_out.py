"""JSON as the service and its command line write it: never NaN or Infinity (JSON has
neither; browsers, node and ``jq`` refuse them): a number that is not finite is null."""

from __future__ import annotations

import json
import math


def finite(value):
    """``value`` with every NaN or infinity replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def dumps(value, **kwargs) -> str:
    """``value`` as JSON, non-finite numbers as null; the encoder raises on one the
    replacement missed (a numpy float in a set, say) rather than write it."""
    return json.dumps(finite(value), allow_nan=False, **kwargs)
