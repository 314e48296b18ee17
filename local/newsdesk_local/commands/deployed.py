"""What `newsdesk issues|articles|events|dossier --stack NAME` reads of a deployed stack: its
read-only function (``<stack>-read``, issue 40; functions/read/app.py) invoked with the
operator's AWS credentials (``lambda:InvokeFunction``, nothing else), a page at a time. The
function reads PostgreSQL inside the VPC as its own role, so no bastion or port forward is
needed. The stack is looked for where `dlq redrive --stack` looks (``context.deployed``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from newsdesk.core.errors import ConfigError, InfrastructureError
from newsdesk_local.commands import context


def function_name(stack: str) -> str:
    """The template names it so (``FunctionName: ${AWS::StackName}-read``)."""
    return f"{stack}-read"


def pages(stack: str, request: dict[str, Any], env: dict[str, str]) -> Iterator[dict[str, Any]]:
    """The read function's answers to ``request``, each page's ``next`` asked in turn; a
    request it refuses is a ConfigError, a stack or call that fails an InfrastructureError,
    each in one line."""
    import botocore.exceptions
    import botocore.parsers

    from newsdesk.aws.clients import operator_client

    name = function_name(stack)
    asked = dict(request)
    try:
        client = operator_client("lambda", **context.deployed(env))
        while True:
            response = client.invoke(FunctionName=name, Payload=json.dumps(asked).encode())
            answer = json.loads(response["Payload"].read() or b"null")
            if response.get("FunctionError") or not isinstance(answer, dict):
                failed = answer.get("errorMessage") if isinstance(answer, dict) else answer
                raise InfrastructureError(f"stack {stack!r}: {name} failed: {failed}")
            if "error" in answer:
                raise ConfigError(f"stack {stack!r}: {answer['error']}")
            yield answer
            if not answer.get("next"):
                return
            asked = request | answer["next"]
    except (
        botocore.exceptions.BotoCoreError,
        botocore.exceptions.ClientError,
        botocore.parsers.ResponseParserError,
        ValueError,  # an answer that is no JSON
    ) as e:
        raise InfrastructureError(f"stack {stack!r}: {e}") from e


def items(
    stack: str, request: dict[str, Any], key: str, most: int, env: dict[str, str]
) -> list[Any]:
    """Up to ``most`` of the pages' ``key`` items, in the order the function gives them."""
    found: list[Any] = []
    for page in pages(stack, request, env):
        found += page[key]
        if len(found) >= most:
            return found[:most]
    return found
