"""The template as SAM expands it (the roles, policies and permissions SAM writes), for the
tests and for scanners that read plain CloudFormation. Code and image locations are stand-ins;
nothing is uploaded or looked up.

Usage: python infra/transform.py [infra/template.yaml] > template.transformed.json
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

TEMPLATE = Path(__file__).resolve().parent / "template.yaml"


def load(path: Path = TEMPLATE) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml_parse(path.read_text(encoding="utf-8"))
    return loaded


def transformed(template: dict[str, Any]) -> dict[str, Any]:
    document = json.loads(json.dumps(template))
    for resource in document["Resources"].values():
        props = resource.get("Properties", {})
        if "CodeUri" in props:
            props["CodeUri"] = "s3://bucket/code.zip"
        if "ContentUri" in props:
            props["ContentUri"] = "s3://bucket/layer.zip"
        if props.get("PackageType") == "Image":
            props["ImageUri"] = "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/cluster:1"

    class NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "ap-northeast-2")  # SAM needs one to expand
    result: dict[str, Any] = transform(document, {"Stage": "dev"}, NoManagedPolicies())
    return result


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else TEMPLATE
    json.dump(transformed(load(path)), sys.stdout, indent=1)
    sys.stdout.write("\n")
