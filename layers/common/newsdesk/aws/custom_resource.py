"""CloudFormation custom resources: the response CloudFormation waits for, sent to the
pre-signed URL in the event (the protocol of the AWS::CloudFormation::CustomResource docs)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger

logger = Logger(child=True)


def respond(
    event: dict[str, Any],
    status: str,
    reason: str,
    physical_id: str,
    send: Callable[[str, bytes], None] | None = None,
) -> dict[str, Any]:
    body = {
        "Status": status,
        "Reason": reason[:1000],
        "PhysicalResourceId": physical_id,
        "StackId": event["StackId"],
        "RequestId": event["RequestId"],
        "LogicalResourceId": event["LogicalResourceId"],
        "NoEcho": False,
        "Data": {},
    }
    (send or _put)(event["ResponseURL"], json.dumps(body).encode())
    return body


def _put(url: str, data: bytes) -> None:
    request = urllib.request.Request(  # noqa: S310  (CloudFormation's https pre-signed URL)
        url, data=data, method="PUT", headers={"Content-Type": ""}
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
        logger.info("custom resource response sent", extra={"status": response.status})
