"""The emulated AWS state between local runs: ``NEWSDESK_DATA_DIR/aws-state.json``, as
``{"tables": {logical id: [item, …]}, "queues": {logical id: [{"body", "attributes"}, …]}}``
(items in DynamoDB's JSON; the queues' messages, the dead letters mostly, for `newsdesk dlq
redrive`). The local runtime restores them into moto when it starts and writes them back when
it stops (a queue's messages taken, each with how often it was received in all, its group and
id), `newsdesk feeds` reads the tables here, with nothing started, and `newsdesk feeds reset`
writes them here."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from newsdesk.core.errors import ConfigError

STATE_FILE = "aws-state.json"
OLD_STATE_TABLE = "StateTable"  # an earlier release's file held this table alone: {"items": …}

Saved = dict[str, list[dict[str, Any]]]


def _load(data_dir: Path) -> dict[str, Any]:
    path = data_dir / STATE_FILE
    if not path.exists():
        return {}
    try:
        saved: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not the saved state of a local run ({e}); move it away") from e
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    if not isinstance(saved, dict):
        raise ConfigError(f"{path}: not the saved state of a local run; move it away")
    if "items" in saved:
        return {"tables": {OLD_STATE_TABLE: saved["items"]}}
    return saved


def load_tables(data_dir: Path) -> Saved:
    """The saved items by table's logical id; nothing when no run has saved any."""
    tables: Saved = _load(data_dir).get("tables", {})
    return tables


def load_queues(data_dir: Path) -> Saved:
    """The saved messages by queue's logical id."""
    queues: Saved = _load(data_dir).get("queues", {})
    return queues


def store_tables(data_dir: Path, tables: Saved, queues: Saved | None = None) -> None:
    """Whole or not at all: an interrupted save must not leave half a file to start from.
    Without ``queues``, the saved ones are kept."""
    kept = load_queues(data_dir) if queues is None else {k: v for k, v in queues.items() if v}
    partial = data_dir / (STATE_FILE + ".partial")
    state = {"tables": tables, "queues": kept}
    partial.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    partial.replace(data_dir / STATE_FILE)


# The receives of a message's earlier runs, carried by the message between runs.
RECEIVES = "newsdesk-receives"


def taken_messages(sqs: Any, queue_url: str) -> list[dict[str, Any]]:
    """Every message of the queue, each deleted once received (the emulator is stopping): a
    FIFO queue gives no more of a message group while some of it is in flight."""
    taken: list[dict[str, Any]] = []
    while True:
        received = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            AttributeNames=["ApproximateReceiveCount", "MessageGroupId", "MessageDeduplicationId"],
        ).get("Messages", [])
        if not received:
            return taken
        for message in received:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
        taken += received


def saved_message(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the state file keeps it: body, attributes, how often it was received in
    all (this save's own receive not counted) and, in a FIFO queue, its group and id."""
    attributes = dict(message.get("MessageAttributes") or {})
    earlier = int(attributes.pop(RECEIVES, {}).get("StringValue", 0))
    receives = earlier + int(message["Attributes"]["ApproximateReceiveCount"]) - 1
    saved = {"body": message["Body"], "attributes": attributes or None, "receives": receives}
    if "MessageGroupId" in message["Attributes"]:
        saved["group"] = message["Attributes"]["MessageGroupId"]
        saved["deduplication_id"] = message["Attributes"]["MessageDeduplicationId"]
    return saved


META = ".meta.json"  # beside a bucket's object kept between runs: its key, metadata, type


def object_path(folder: Path, key: str) -> Path | None:
    """Where a bucket's object ``key`` is kept under ``folder``; None for one already kept
    (its meta file is written last) or a key that would leave the folder (``..``, ``/…``)."""
    target = folder / key
    if folder.resolve() not in target.resolve().parents or (folder / (key + META)).exists():
        return None
    return target


def keep_object(
    target: Path, key: str, body: bytes, metadata: dict[str, str], content_type: str | None
) -> None:
    """An object's body at ``target`` and what GetObject says of it in ``<target>.meta.json``,
    each written whole under another name and renamed, the meta file last: a save cut short
    leaves the object unsaved, to be saved again, rather than half of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    meta = {"key": key, "metadata": metadata, "content_type": content_type}
    for path, data in ((target, body), (Path(f"{target}{META}"), json.dumps(meta).encode())):
        partial = Path(f"{path}.partial")
        partial.write_bytes(data)
        partial.replace(path)


def fetch_bucket(s3: Any, bucket: str, folder: Path) -> None:
    """The bucket's objects not yet kept in ``folder`` saved there through S3, a GetObject
    each (an emulator the runtime did not start; moto's process it started saves them from
    its own store: ``newsdesk_local.moto_process``)."""

    def save(key: str) -> None:
        target = object_path(folder, key)
        if target is not None:
            stored = s3.get_object(Bucket=bucket, Key=key)
            body = stored["Body"].read()
            keep_object(target, key, body, stored["Metadata"], stored.get("ContentType"))

    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
    each(save, [entry["Key"] for page in pages for entry in page.get("Contents", [])])


def each(action: Callable[[Any], None], items: Sequence[Any]) -> None:
    """``action`` on every item, a few at a time: each is one round trip to the emulator."""
    with ThreadPoolExecutor(8) as pool:
        for _ in pool.map(action, items):
            pass
