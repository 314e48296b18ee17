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
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from newsdesk.core.errors import ConfigError

STACK_NAME = "newsdesk"
# a clone's folders (the local package is installed from one, editable) and what `make`
# installed for the functions into this environment (infra/artifacts.py)
REPOSITORY = Path(__file__).resolve().parents[2]
LAMBDA_ROOT = Path(sys.prefix) / "lambda"
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
    attributes: dict[str, str]  # as CreateQueue takes them, but the redrive policy
    dead_letter_queue: str | None = None  # logical id
    max_receive_count: int | None = None

    def redrive_policy(self, dead_letter_arn: str) -> str:
        return json.dumps(
            {"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": self.max_receive_count}
        )


@dataclass(frozen=True)
class QueueAddress:
    """A queue as the emulator made it (its account and region are the emulator's)."""

    url: str
    arn: str


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
class Bus:
    logical_id: str
    name: str


@dataclass(frozen=True)
class EventSource:
    """An SQS event source mapping: ``queue`` feeds the function ``batch_size`` at a time."""

    queue: str  # logical id
    batch_size: int
    partial_failures: bool  # ReportBatchItemFailures


@dataclass(frozen=True)
class Artifact:
    """What a function's container imports from, as Lambda lays it out: the handler as Lambda
    names it, our folders (its code, its layers' content; relative to the repository) and the
    installed locks (its layers', the runtime's; relative to ``<venv>/lambda``)."""

    handler: str
    image: bool
    sources: tuple[str, ...]
    installed: tuple[str, ...]

    def path(self) -> list[str]:
        """The container's import path; a ConfigError if the installed folders are missing."""
        missing = [name for name in self.installed if not (LAMBDA_ROOT / name).is_dir()]
        if missing:
            raise ConfigError(
                f"the functions' packages are not installed in {LAMBDA_ROOT} "
                f"({missing[0]} is missing): run make"
            )
        return [
            *(str(REPOSITORY / name) for name in self.sources),
            *(str(LAMBDA_ROOT / name) for name in self.installed),
        ]


@dataclass(frozen=True)
class Function:
    logical_id: str
    module: str  # the handler's module as the package installs it (for in-process tests)
    timeout_seconds: int
    memory_mb: int
    variables: dict[str, Any]  # as the template writes them; see Infrastructure.environment
    event_sources: tuple[EventSource, ...]
    artifact: Artifact

    @property
    def name(self) -> str:
        return f"{STACK_NAME}-{self.logical_id}"


class Infrastructure:
    def __init__(self, document: dict[str, Any]) -> None:
        self._parameters: dict[str, Any] = document["parameters"]
        self._resources: dict[str, Any] = document["resources"]
        self._artifacts: dict[str, Any] = document.get("artifacts", {})
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
        # the issue bus (issue 40): the relay publishes to it locally as deployed
        self.buses = [
            Bus(name, str(self.resolve(r["Properties"]["Name"])))
            for name, r in self._resources.items()
            if r["Type"] == "AWS::Events::EventBus"
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

    def table(self, logical_id: str) -> Table:
        return next(t for t in self.tables if t.logical_id == logical_id)

    def environment(
        self, function: str, queues: Mapping[str, QueueAddress]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The function's variables, resolved: (settings, the names and addresses of the
        emulated resources it uses). Unresolvable ones are left out."""
        values: dict[str, str] = {}
        references: dict[str, str] = {}
        for key, value in self.functions[function].variables.items():
            resolved = self.resolve(value, queues)
            if resolved is not None:
                (references if self._names_a_resource(value) else values)[key] = resolved
        return values, references

    def unemulated(self, function: str) -> list[str]:
        """The function's variables that name, by ``Ref``, a resource the local runtime does
        not emulate: neither a parameter, a pseudo parameter nor an emulated resource (none
        since issue 40 emulated the issue bus)."""
        return [
            key
            for key, value in self.functions[function].variables.items()
            if isinstance(value, dict)
            and isinstance(value.get("Ref"), str)
            and not value["Ref"].startswith("AWS::")
            and value["Ref"] not in self._parameters
            and value["Ref"] not in self._resources
        ]

    def _names_a_resource(self, value: Any) -> bool:
        if isinstance(value, dict):
            ((kind, argument),) = value.items()
            if kind == "Fn::Sub" and isinstance(argument, str):
                names = [n.split(".")[0] for n in re.findall(r"\$\{([^}]+)\}", argument)]
            elif kind == "Fn::GetAtt":
                names = [_get_att_parts(argument)[0]]
            else:
                names = [str(argument)]
            return any(name in self._resources for name in names)
        return False

    def resolve(self, value: Any, queues: Mapping[str, QueueAddress] | None = None) -> str | None:
        """A property value with Ref, Fn::GetAtt and Fn::Sub resolved (a queue's URL and ARN
        from ``queues``); None if it refers to something the local runtime does not emulate."""
        if isinstance(value, str | int | float | bool):
            return str(value).lower() if isinstance(value, bool) else str(value)
        if not isinstance(value, dict) or len(value) != 1:
            return None
        ((kind, argument),) = value.items()
        if kind == "Ref":
            return self._ref(argument, queues or {})
        if kind == "Fn::GetAtt":
            return self._get_att(*_get_att_parts(argument), queues or {})
        if kind == "Fn::Sub" and isinstance(argument, str):
            return self._sub(argument, queues or {})
        return None

    def _ref(self, name: str, queues: Mapping[str, QueueAddress]) -> str | None:
        pseudo = {"AWS::StackName": STACK_NAME, "AWS::Region": REGION, "AWS::AccountId": ACCOUNT}
        if name in pseudo:
            return pseudo[name]
        if name in self._parameters:
            default = self._parameters[name]
            return None if default is None else str(default)
        kind = self._resources.get(name, {}).get("Type")
        if kind == "AWS::SQS::Queue":
            return queues[name].url if name in queues else None
        if kind in ("AWS::DynamoDB::Table", "AWS::S3::Bucket"):
            return self._name(name)
        if kind == "AWS::Events::EventBus":
            return self.resolve(self._resources[name]["Properties"]["Name"])
        return None

    def _get_att(
        self, target: str, attribute: str, queues: Mapping[str, QueueAddress]
    ) -> str | None:
        kind = self._resources.get(target, {}).get("Type")
        if kind == "AWS::SQS::Queue" and attribute == "QueueName":
            return self._name(target)
        if kind == "AWS::SQS::Queue" and attribute == "Arn":
            return queues[target].arn if target in queues else None
        return None

    def _sub(self, text: str, queues: Mapping[str, QueueAddress]) -> str | None:
        parts: list[str] = []
        position = 0
        for match in re.finditer(r"\$\{([^}]+)\}", text):
            name = match.group(1)
            target, _, attribute = name.partition(".")
            value = (
                self._get_att(target, attribute, queues) if attribute else self._ref(name, queues)
            )
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
        if not redrive:
            return Queue(logical_id, self._name(logical_id), attributes)
        target = _logical_id_of(redrive["deadLetterTargetArn"])
        return Queue(
            logical_id, self._name(logical_id), attributes, target, int(redrive["maxReceiveCount"])
        )

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
            )
            for event in spec["SqsEvents"]
        )
        artifact = self._artifacts[logical_id]
        return Function(
            logical_id,
            spec["Module"],
            int(spec["Timeout"]),
            int(spec["MemorySize"]),
            spec["Variables"],
            sources,
            Artifact(
                artifact["Handler"],
                artifact["Image"],
                tuple(artifact["Sources"]),
                tuple(artifact["Installed"]),
            ),
        )


def _get_att_parts(argument: Any) -> tuple[str, str]:
    """``Fn::GetAtt``'s (resource, attribute), written as a list or as ``Resource.Attribute``."""
    target, attribute = argument if isinstance(argument, list) else str(argument).split(".", 1)
    return str(target), str(attribute)


def _logical_id_of(reference: Any) -> str:
    """The queue a ``!GetAtt Queue.Arn`` names (an event source's, a redrive policy's)."""
    return _get_att_parts(reference["Fn::GetAtt"])[0]
