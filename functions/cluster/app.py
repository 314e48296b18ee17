"""Cluster function: placeholder until the clustering issue builds it."""

from __future__ import annotations

from typing import Any


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    raise NotImplementedError("clustering is not built yet")
