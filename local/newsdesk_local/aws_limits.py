"""AWS's request limits that moto does not enforce, as a local stand-in (issue 22): a boto3
client given to ``enforce_limits`` answers as AWS would a request over them, before moto sees
it. The tests use it where a limit is what they check.

- EventBridge ``PutEvents``: the entries of one request together at most 256 KB, each
  counted as AWS counts it (eb-putevent-size: the time's 14 bytes when given, then the UTF-8
  bytes of Source, DetailType, Detail and each Resource); over it, the whole request is refused
  (``ValidationException: Total size of the entries in the request is over the limit.``).
- S3 ``PutObject``: user metadata at most 2 KB, its keys and values in UTF-8
  (``MetadataTooLarge``).
- SQS ``SendMessageBatch``: a ``MessageGroupId`` at most 128 characters; a longer one refuses
  the call (``InvalidParameterValue``: the worst of what SQS may answer).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from botocore.awsrequest import AWSResponse, HTTPHeaders

PUT_EVENTS_MAX_BYTES = 256 * 1024
S3_METADATA_MAX_BYTES = 2 * 1024
SQS_GROUP_MAX_CHARS = 128
_META = "x-amz-meta-"

Client = TypeVar("Client")


def enforce_limits(client: Client) -> Client:
    """``client``, refusing what AWS refuses; returned for chaining."""
    events = client.meta.events  # type: ignore[attr-defined]
    events.register("before-call.eventbridge.PutEvents", _put_events)
    events.register("before-call.s3.PutObject", _put_object)
    events.register("before-call.sqs.SendMessageBatch", _send_message_batch)
    return client


def entry_size(entry: dict[str, Any]) -> int:
    """One PutEvents entry's size, as AWS counts it."""
    size = 14 if entry.get("Time") else 0
    for name in ("Source", "DetailType", "Detail"):
        size += len(str(entry.get(name, "")).encode())
    return size + sum(len(str(r).encode()) for r in entry.get("Resources", []))


def _put_events(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
    entries = json.loads(params["body"] or b"{}").get("Entries", [])
    if sum(entry_size(e) for e in entries) <= PUT_EVENTS_MAX_BYTES:
        return None
    return refused(
        "ValidationException", "Total size of the entries in the request is over the limit."
    )


def _put_object(params: dict[str, Any], **_: Any) -> tuple[AWSResponse, dict[str, Any]] | None:
    headers = params.get("headers", {})
    size = sum(
        len(name[len(_META) :].encode()) + len(str(value).encode())
        for name, value in headers.items()
        if name.lower().startswith(_META)
    )
    if size <= S3_METADATA_MAX_BYTES:
        return None
    return refused(
        "MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size."
    )


def _send_message_batch(
    params: dict[str, Any], **_: Any
) -> tuple[AWSResponse, dict[str, Any]] | None:
    entries = json.loads(params["body"] or b"{}").get("Entries", [])
    if all(len(str(e.get("MessageGroupId", ""))) <= SQS_GROUP_MAX_CHARS for e in entries):
        return None
    return refused(
        "InvalidParameterValue",
        "Value for parameter MessageGroupId is invalid. "
        f"Reason: it is over {SQS_GROUP_MAX_CHARS} characters.",
    )


def refused(code: str, message: str) -> tuple[AWSResponse, dict[str, Any]]:
    """AWS's answer refusing a call with ``code`` (a before-call handler's return)."""
    response = AWSResponse("https://aws.invalid/", 400, HTTPHeaders(), None)
    parsed = {
        "Error": {"Code": code, "Message": message},
        "ResponseMetadata": {"HTTPStatusCode": 400, "RetryAttempts": 0},
    }
    return response, parsed
