"""The emulated tables' items between local runs: ``NEWSDESK_DATA_DIR/aws-state.json``, as
``{"tables": {logical id: [item, …]}}`` (DynamoDB's JSON). The local runtime restores them
into moto when it starts and writes them back when it stops; `newsdesk feeds` reads them here,
with nothing started, and `newsdesk feeds reset` writes them here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

STATE_FILE = "aws-state.json"
OLD_STATE_TABLE = "StateTable"  # an earlier release's file held this table alone: {"items": …}


def load_tables(data_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The saved items by table's logical id; nothing when no run has saved any."""
    path = data_dir / STATE_FILE
    if not path.exists():
        return {}
    saved = json.loads(path.read_text(encoding="utf-8"))
    if "items" in saved:
        return {OLD_STATE_TABLE: saved["items"]}
    tables: dict[str, list[dict[str, Any]]] = saved["tables"]
    return tables


def store_tables(data_dir: Path, tables: dict[str, list[dict[str, Any]]]) -> None:
    """Whole or not at all: an interrupted save must not leave half a file to start from."""
    partial = data_dir / (STATE_FILE + ".partial")
    partial.write_text(json.dumps({"tables": tables}, ensure_ascii=False), encoding="utf-8")
    partial.replace(data_dir / STATE_FILE)
