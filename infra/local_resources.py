"""The template's facts the local runtime follows, as package data
(local/newsdesk_local/resources.json): the queues, tables, buckets and event buses with their
properties,
every function's handler module, timeout, memory and environment, its SQS event sources, and
the parameters' defaults. Intrinsics are kept as written; newsdesk_local.infrastructure
resolves them. A test fails when the file is out of date with the template
(`make local-resources` writes it again).

Usage: python -m infra.local_resources [infra/template.yaml] > local/newsdesk_local/resources.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from infra.artifacts import ROOT, units
from infra.transform import TEMPLATE, load

KINDS = ("AWS::SQS::Queue", "AWS::DynamoDB::Table", "AWS::S3::Bucket", "AWS::Events::EventBus")
FUNCTION_KEYS = ("Timeout", "MemorySize", "Environment")


def extract(template: dict[str, Any]) -> dict[str, Any]:
    resources = template["Resources"]
    defaults = template.get("Globals", {}).get("Function", {})
    return {
        "parameters": {
            name: spec.get("Default") for name, spec in template.get("Parameters", {}).items()
        },
        "resources": {
            name: {"Type": r["Type"], "Properties": r.get("Properties", {})}
            for name, r in resources.items()
            # a resource deployed only under a condition (the example consumer's queue) is not
            # the stack's own: not emulated
            if r["Type"] in KINDS and "Condition" not in r
        },
        "functions": {
            name: _function(r, defaults)
            for name, r in resources.items()
            if r["Type"] == "AWS::Serverless::Function"
        },
        # each function's artifact as a container's import path: our folders (relative to the
        # repository), then what the locks installed (relative to <venv>/lambda/)
        "artifacts": {
            unit.name: {
                "Handler": unit.handler,
                "Image": unit.image,
                "Sources": [str(s.relative_to(ROOT)) for s in unit.sources],
                "Installed": list(unit.installed()),
            }
            for unit in units(template)
        },
    }


def _function(resource: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    props = resource["Properties"]
    variables = dict(defaults.get("Environment", {}).get("Variables", {}))
    variables |= props.get("Environment", {}).get("Variables", {})
    return {
        "Module": _module(resource),
        "Timeout": props.get("Timeout", defaults.get("Timeout", 3)),
        "MemorySize": props.get("MemorySize", defaults.get("MemorySize", 128)),
        "Variables": variables,
        "SqsEvents": [
            event["Properties"]
            for event in props.get("Events", {}).values()
            if event["Type"] == "SQS"
        ],
    }


def _module(resource: dict[str, Any]) -> str:
    """The handler's module as the package installs it (functions/ is newsdesk_functions)."""
    props = resource["Properties"]
    if props.get("PackageType") == "Image":
        dockerfile = ROOT / resource["Metadata"]["Dockerfile"]
        handler = re.findall(r'^CMD \["([^"]+)"\]', dockerfile.read_text("utf-8"), re.MULTILINE)[-1]
        folder = Path(resource["Metadata"]["Dockerfile"]).parent
    else:
        handler = props["Handler"]
        folder = (TEMPLATE.parent / props["CodeUri"]).resolve().relative_to(ROOT)
    module = handler.rsplit(".", 1)[0]
    return ".".join(("newsdesk_functions", *folder.parts[1:], module))


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else TEMPLATE
    json.dump(extract(load(path)), sys.stdout, indent=1, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")
