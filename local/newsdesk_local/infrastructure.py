"""The template's resources as the local runtime creates them, from ``resources.json`` (which
infra/local_resources.py writes from infra/template.yaml; a test keeps the two in step).

Nothing here names a queue, table, bucket or function: every queue, DynamoDB table and S3
bucket in the template is created, every function gets the environment the template gives it,
and every SQS event source is driven with its own batch size and response types. Intrinsics
are resolved as CloudFormation would for a stack named ``newsdesk`` (``STACK_NAME``) with the
parameters' defaults; a reference to anything not emulated (the database, its proxy, the VPC)
resolves to nothing, and a variable that holds one is left out, so that the local value
(``DATABASE_URL``) or the setting's default applies.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

STACK_NAME = "newsdesk"
REGION = "ap-northeast-2"
ACCOUNT = "123456789012"
QUEUE_ATTRIBUTES = (
    "DelaySeconds",
    "FifoQueue",
    "ContentBasedDeduplication",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
)
TABLE_PROPERTIES = (
    "KeySchema",
    "AttributeDefinitions",
    "BillingMode",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
)


@dataclass(frozen=True)
class Queue:
    logical_id: str
    name: str
    attributes: dict[str, str]  # as CreateQueue takes them, RedrivePolicy resolved
    max_receive_count: int | None  # with a dead-letter queue

    @property
    def arn(self) -> str:
        return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{self.name}"


@dataclass(frozen=True)
class Table:
    logical_id: str
    name: str
    definition: dict[str, Any]  # as CreateTable takes it, without the name


@dataclass(frozen=True)
class Bucket:
    logical_id: str
    name: str


@dataclass(frozen=True)
class EventSource:
    """An SQS event source mapping: ``queue`` feeds the function ``batch_size`` at a time."""

    queue: str  # logical id
    batch_size: int
    partial_failures: bool  # ReportBatchItemFailures
    maximum_concurrency: int | None


@dataclass(frozen=True)
class Function:
    logical_id: str
    module: str  # the handler's module; its lambda_handler is the entry point
    timeout_seconds: int
    memory_mb: int
    variables: dict[str, Any]  # as the template writes them; see Infrastructure.environment
    event_sources: tuple[EventSource, ...]

    @property
    def name(self) -> str:
        return f"{STACK_NAME}-{self.logical_id}"


class Infrastructure:
    def __init__(self, document: dict[str, Any]) -> None:
        self._parameters: dict[str, Any] = document["parameters"]
        self._resources: dict[str, Any] = document["resources"]
        self.queues = [
            self._queue(name, r["Properties"])
            for name, r in self._resources.items()
            if r["Type"] == "AWS::SQS::Queue"
        ]
        self.tables = [
            self._table(name, r["Properties"])
            for name, r in self._resources.items()
            if r["Type"] == "AWS::DynamoDB::Table"
        ]
        self.buckets = [
            Bucket(name, self._name(name))
            for name, r in self._resources.items()
            if r["Type"] == "AWS::S3::Bucket"
        ]
        self.functions = {
            name: self._function(name, spec) for name, spec in document["functions"].items()
        }

    @classmethod
    def packaged(cls) -> Infrastructure:
        text = resources.files("newsdesk_local").joinpath("resources.json").read_text("utf-8")
        return cls(json.loads(text))

    def queue(self, logical_id: str) -> Queue:
        return next(q for q in self.queues if q.logical_id == logical_id)

    def queue_url(self, endpoint: str, logical_id: str) -> str:
        return f"{endpoint}/{ACCOUNT}/{self.queue(logical_id).name}"

    def environment(self, function: str, endpoint: str) -> dict[str, str]:
        """The function's variables with its references resolved (``endpoint``: the emulated
        AWS, for queue URLs); unresolvable ones left out."""
        resolved = {
            key: self.resolve(value, endpoint)
            for key, value in self.functions[function].variables.items()
        }
        return {key: value for key, value in resolved.items() if value is not None}

    def resolve(self, value: Any, endpoint: str = "") -> str | None:
        """A property value with Ref, Fn::GetAtt and Fn::Sub resolved; None if it refers to
        something the local runtime does not emulate."""
        if isinstance(value, str | int | float | bool):
            return str(value).lower() if isinstance(value, bool) else str(value)
        if not isinstance(value, dict) or len(value) != 1:
            return None
        ((kind, argument),) = value.items()
        if kind == "Ref":
            return self._ref(argument, endpoint)
        if kind == "Fn::GetAtt":
            target, attribute = argument if isinstance(argument, list) else argument.split(".", 1)
            return self._get_att(target, attribute)
        if kind == "Fn::Sub" and isinstance(argument, str):
            return self._sub(argument, endpoint)
        return None

    def _ref(self, name: str, endpoint: str) -> str | None:
        if name == "AWS::StackName":
            return STACK_NAME
        if name == "AWS::Region":
            return REGION
        if name == "AWS::AccountId":
            return ACCOUNT
        if name in self._parameters:
            default = self._parameters[name]
            return None if default is None else str(default)
        kind = self._resources.get(name, {}).get("Type")
        if kind == "AWS::SQS::Queue":
            return self.queue_url(endpoint, name)
        if kind in ("AWS::DynamoDB::Table", "AWS::S3::Bucket"):
            return self._name(name)
        return None

    def _get_att(self, target: str, attribute: str) -> str | None:
        kind = self._resources.get(target, {}).get("Type")
        if kind == "AWS::SQS::Queue":
            queue_name = self._name(target)
            return {
                "Arn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{queue_name}",
                "QueueName": queue_name,
            }.get(attribute)
        if kind == "AWS::DynamoDB::Table" and attribute == "Arn":
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{self._name(target)}"
        if kind == "AWS::S3::Bucket" and attribute == "Arn":
            return f"arn:aws:s3:::{self._name(target)}"
        return None

    def _sub(self, text: str, endpoint: str) -> str | None:
        parts: list[str] = []
        position = 0
        for match in re.finditer(r"\$\{([^}]+)\}", text):
            name = match.group(1)
            target, _, attribute = name.partition(".")
            value = self._get_att(target, attribute) if attribute else self._ref(name, endpoint)
            if value is None:
                return None
            parts += [text[position : match.start()], value]
            position = match.end()
        return "".join([*parts, text[position:]])

    def _name(self, logical_id: str) -> str:
        """The resource's name as the template sets it, else one made from the stack's."""
        props = self._resources[logical_id]["Properties"]
        for key in ("QueueName", "TableName", "BucketName"):
            if key in props:
                name = self.resolve(props[key])
                if name is not None:
                    return name
        return f"{STACK_NAME}-{logical_id.lower()}"

    def _queue(self, logical_id: str, props: dict[str, Any]) -> Queue:
        attributes = {
            key: str(self.resolve(props[key])) for key in QUEUE_ATTRIBUTES if key in props
        }
        redrive = props.get("RedrivePolicy")
        max_receive = None
        if redrive:
            max_receive = int(redrive["maxReceiveCount"])
            attributes["RedrivePolicy"] = json.dumps(
                {
                    "deadLetterTargetArn": self.resolve(redrive["deadLetterTargetArn"]),
                    "maxReceiveCount": max_receive,
                }
            )
        return Queue(logical_id, self._name(logical_id), attributes, max_receive)

    def _table(self, logical_id: str, props: dict[str, Any]) -> Table:
        definition = {key: props[key] for key in TABLE_PROPERTIES if key in props}
        return Table(logical_id, self._name(logical_id), definition)

    def _function(self, logical_id: str, spec: dict[str, Any]) -> Function:
        sources = tuple(
            EventSource(
                queue=_logical_id_of(event["Queue"]),
                batch_size=int(event.get("BatchSize", 10)),
                partial_failures="ReportBatchItemFailures"
                in event.get("FunctionResponseTypes", []),
                maximum_concurrency=_optional_int(
                    self.resolve(event.get("ScalingConfig", {}).get("MaximumConcurrency"))
                ),
            )
            for event in spec["SqsEvents"]
        )
        return Function(
            logical_id,
            spec["Module"],
            int(spec["Timeout"]),
            int(spec["MemorySize"]),
            spec["Variables"],
            sources,
        )


def _logical_id_of(reference: Any) -> str:
    """The queue an event source names, as ``!GetAtt Queue.Arn``."""
    argument = reference["Fn::GetAtt"]
    return str(argument[0] if isinstance(argument, list) else argument.split(".", 1)[0])


def _optional_int(value: str | None) -> int | None:
    return None if value is None else int(value)
