"""The SAM template agrees with the code: handlers exist, limits fit, events are there."""

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "infra" / "template.yaml"


class _CfnLoader(yaml.SafeLoader):
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return {suffix: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {suffix: loader.construct_sequence(node, deep=True)}
    return {suffix: loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _tag)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(TEMPLATE.read_text(encoding="utf-8"), Loader=_CfnLoader)
    return loaded


def functions(template):
    return {
        name: resource["Properties"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def test_every_zip_handler_exists(template):
    for name, props in functions(template).items():
        if props.get("PackageType") == "Image":
            continue
        module, function = props["Handler"].rsplit(".", 1)
        source = (TEMPLATE.parent / props["CodeUri"] / f"{module}.py").resolve()
        assert source.is_file(), f"{name}: {source} missing"
        defined = {
            n.name for n in ast.parse(source.read_text()).body if isinstance(n, ast.FunctionDef)
        }
        assert function in defined, f"{name}: {function} not in {source}"
        assert props["Runtime"] == "python3.12", name


def test_runtime_is_not_global(template):
    assert "Runtime" not in template["Globals"]["Function"]


def test_queue_visibility_covers_six_worker_timeouts(template):
    worker = template["Resources"]["WorkerFunction"]["Properties"]
    queue = template["Resources"]["OutletQueue"]["Properties"]
    assert queue["VisibilityTimeout"] >= 6 * worker["Timeout"]
    event = worker["Events"]["Outlets"]["Properties"]
    assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] >= 1


def test_schedule_passes_the_scheduled_time(template):
    schedule = template["Resources"]["FanOutFunction"]["Properties"]["Events"]["Every30Minutes"]
    assert json.loads(schedule["Properties"]["Input"])["time"] == "<aws.scheduler.scheduled-time>"


def test_each_zip_function_has_an_event_file(template):
    for props in functions(template).values():
        if props.get("PackageType") == "Image":
            continue
        module = props["Handler"].split(".")[0]
        assert (ROOT / "events" / f"{module}.json").is_file()


def test_layer_requirements_match_the_package():
    requirements = (ROOT / "layers" / "common" / "requirements.txt").read_text().split()
    pyproject = (ROOT / "pyproject.toml").read_text()
    for requirement in (r for r in requirements if not r.startswith("#") and ">=" in r):
        assert f'"{requirement}"' in pyproject, requirement


def test_collect_functions_do_not_import_the_numeric_stack():
    code = (
        "import sys\n"
        "import newsdesk_functions.collect.fanout, newsdesk_functions.collect.worker\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'numpy', 'scipy'})\n"
        "print(','.join(heavy))\n"
    )
    env = {
        "DATABASE_URL": "postgresql://unused@127.0.0.1:9/x",
        "AWS_DEFAULT_REGION": "ap-northeast-2",
        "PATH": "/usr/bin:/bin",
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == ""


def test_cluster_image_function(template):
    cluster = template["Resources"]["ClusterFunction"]
    props, metadata = cluster["Properties"], cluster["Metadata"]
    assert props["PackageType"] == "Image"
    assert "Runtime" not in props
    assert "Layers" not in props
    assert "Handler" not in props
    dockerfile = (TEMPLATE.parent / metadata["DockerContext"] / metadata["Dockerfile"]).resolve()
    text = dockerfile.read_text()
    assert text.startswith("#")
    assert "FROM public.ecr.aws/lambda/python:3.12" in text
    (cmd,) = [line for line in text.splitlines() if line.startswith("CMD")]
    module, function = json.loads(cmd.removeprefix("CMD").strip())[0].rsplit(".", 1)
    source = ROOT / "functions" / "cluster" / f"{module}.py"
    assert f"def {function}(" in source.read_text()
    schedules = [e["Properties"] for e in props["Events"].values()]
    assert {s["ScheduleExpressionTimezone"] for s in schedules} == {"Asia/Seoul"}
    assert len(schedules) == 2
    assert (ROOT / "events" / "cluster.json").is_file()


def test_cluster_requirements_match_the_package():
    requirement = (ROOT / "functions" / "cluster" / "requirements.txt").read_text().split()[-1]
    assert f'"{requirement}"' in (ROOT / "pyproject.toml").read_text()
