"""The whole SAM application against the code: environment, metrics, IAM, migrations."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra.transform import load, transformed
from newsdesk.core.settings import Settings
from newsdesk.storage.migrate import available
from tests.conftest import ROOT, invoke, load_event, worker_event

TEMPLATE = ROOT / "infra" / "template.yaml"
POWERTOOLS = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"}
# What each function cannot run without in AWS (the rest have defaults that hold there).
REQUIRED = {
    "FanOutFunction": {"OUTLET_QUEUE_URL", "STATE_TABLE_NAME"},
    "WorkerFunction": {"DB_SECRET_ARN", "DB_HOST", "STATE_TABLE_NAME", "RAW_BUCKET"},
    "ClusterFunction": {"DB_SECRET_ARN", "DB_HOST"},
    "MigrateFunction": {"DB_SECRET_ARN", "DB_HOST"},
}


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load(TEMPLATE)


def functions(template):
    return {
        name: resource["Properties"]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def environment(template, name):
    variables = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    variables |= functions(template)[name].get("Environment", {}).get("Variables", {})
    return variables


def variables_the_code_reads() -> set[str]:
    """Every name passed to the settings reader in settings.py."""
    tree = ast.parse((ROOT / "layers/common/newsdesk/core/settings.py").read_text(encoding="utf-8"))
    return {
        str(node.args[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "reader"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    }


def test_every_function_has_what_it_reads(template):
    known = variables_the_code_reads() | POWERTOOLS
    assert set(REQUIRED) == set(functions(template))
    for name, required in REQUIRED.items():
        variables = environment(template, name)
        assert required | POWERTOOLS <= set(variables), name
        assert set(variables) <= known, f"{name} sets variables no code reads"
        # literal values parse (intrinsics stand in as placeholders)
        literal = {k: v if isinstance(v, str) else "placeholder" for k, v in variables.items()}
        Settings.from_env(literal | {"DB_PORT": "5432"})


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


def test_each_function_has_an_event_file(template):
    for name in functions(template):  # FanOutFunction -> events/fanout.json
        assert (ROOT / "events" / f"{name.removesuffix('Function').lower()}.json").is_file()


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


def test_migrations_revision_is_the_newest_migration(template):
    revision = template["Resources"]["SchemaMigrations"]["Properties"]["Revision"]
    assert revision == available()[-1][0]


def statements(document):
    for resource in document["Resources"].values():
        props = resource.get("Properties", {})
        policies = props.get("Policies", [])
        if resource["Type"] == "AWS::IAM::Policy":
            policies = [props]
        for policy in policies:
            yield from policy["PolicyDocument"]["Statement"]


def test_no_wildcard_actions(template, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-northeast-2")
    document = transformed(template)
    found = list(statements(document))
    assert len(found) > 10  # the SAM policy templates were expanded
    for statement in found:
        actions = statement["Action"]
        for action in [actions] if isinstance(actions, str) else actions:
            assert action != "*", statement
            assert not action.endswith(":*"), statement


def test_data_is_encrypted_and_the_database_private(template):
    resources = template["Resources"]
    for name in ("OutletQueue", "OutletDeadLetterQueue", "ScheduleDeadLetterQueue"):
        assert resources[name]["Properties"]["SqsManagedSseEnabled"] is True
    bucket = resources["RawBucket"]["Properties"]
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert all(bucket["PublicAccessBlockConfiguration"].values())
    assert bucket["LifecycleConfiguration"]["Rules"][0]["ExpirationInDays"] == 30
    assert resources["StateTable"]["Properties"]["SSESpecification"]["SSEEnabled"] is True
    database = resources["Database"]["Properties"]
    assert database["StorageEncrypted"] is True
    assert database["PubliclyAccessible"] is False
    assert database["ManageMasterUserPassword"] is True
    assert resources["DatabaseProxy"]["Properties"]["RequireTLS"] is True


# --- the dashboard and the alarms name only metrics the code emits -------------------------


def dashboard_metrics(template) -> set[str]:
    body, _ = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    document = json.loads(re.sub(r"\$\{([^}]+)\}", r"\1", body))
    names: set[str] = set()
    for widget in document["widgets"]:
        previous: list[Any] = []
        for row in widget.get("properties", {}).get("metrics", []):
            fields = [f for f in row if not isinstance(f, dict)]
            if fields == ["..."]:
                fields = previous
            fields = [previous[i] if f == "." else f for i, f in enumerate(fields)]
            previous = fields
            if fields[0] == "Namespace":
                names.add(fields[1])
    return names


def alarm_metrics(template) -> set[str]:
    ours = {"Fn::Sub": "newsdesk-${Stage}"}
    names: set[str] = set()
    for resource in template["Resources"].values():
        if resource["Type"] != "AWS::CloudWatch::Alarm":
            continue
        props = resource["Properties"]
        metrics = [props] + [
            m["MetricStat"]["Metric"] for m in props.get("Metrics", []) if "MetricStat" in m
        ]
        names |= {m["MetricName"] for m in metrics if m.get("Namespace") == ours}
    return names


def emitted(out: str) -> set[str]:
    names: set[str] = set()
    for line in out.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            for directive in json.loads(line)["_aws"]["CloudWatchMetrics"]:
                names |= {metric["Name"] for metric in directive["Metrics"]}
    return names


def test_dashboard_and_alarms_show_what_a_round_emits(
    template, aws_env, database, serve, tmp_path, capsys
):
    # GIVEN a round: the fan-out, a worker with good, failing and breaker-skipped feeds, and a
    # clustering pass over three copies of one story
    good = [
        serve(
            f"/{n}.xml",
            body=(
                '<rss version="2.0"><channel><title>t</title>'
                f"<item><title>[포토] 사진</title><link>https://example.test/p{n}</link></item>"
                f"<item><title>국회 예산안 통과</title><link>https://example.test/{n}</link></item>"
                "</channel></rss>"
            ).encode(),
        )
        for n in range(3)
    ]
    bad = [serve(f"/bad{n}.xml", status=500, body=b"") for n in range(3)]
    sources = tmp_path / "sources.yaml"
    sources.write_text(f'- {{source: "연합뉴스", url: "{good[0]}", category: 정치}}\n')
    invoke("fanout", load_event("fanout"), SOURCES_PATH=str(sources))
    invoke("worker", worker_event([(u, "정치") for u in good] + [(u, "정치") for u in bad]))
    assert invoke("cluster", load_event("cluster"))["issues_created"] == 1
    names = emitted(capsys.readouterr().out)
    # THEN every metric of ours on the dashboard and in the alarms is among them
    shown = dashboard_metrics(template) | alarm_metrics(template)
    assert {"ArticlesNew", "FeedsFailed", "IssuesCreated", "MessagesFailed"} <= shown
    assert shown - names == set()


def test_readme_names_every_output(template):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for output in template["Outputs"]:
        assert output in readme, output


def test_every_event_file_is_json():
    for path in Path(ROOT / "events").glob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))


# Lambda sets these itself and refuses a function that declares one.
LAMBDA_RESERVED = {
    "_HANDLER", "_X_AMZN_TRACE_ID", "AWS_DEFAULT_REGION", "AWS_REGION", "AWS_EXECUTION_ENV",
    "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_VERSION",
    "AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
    "AWS_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
    "AWS_LAMBDA_RUNTIME_API", "LAMBDA_TASK_ROOT", "LAMBDA_RUNTIME_DIR", "TZ",
}  # fmt: skip


def test_env_example_sets_only_what_each_function_declares(template):
    # SAM CLI applies env.json only to variables the template declares for the function
    example = json.loads((ROOT / "infra" / "env.example.json").read_text(encoding="utf-8"))
    for name in functions(template):
        variables = environment(template, name)
        assert not set(variables) & LAMBDA_RESERVED, name
        # never to real AWS: every function can be pointed at the emulator, unset in AWS
        assert variables["AWS_ENDPOINT_URL"] == "", name
        overridden = set(example.get(name, {})) | {
            key for key in example["Parameters"] if key in variables
        }
        assert set(example.get(name, {})) <= set(variables), name
        if "DB_SECRET_ARN" in variables:
            assert variables["DATABASE_URL"] == "", name
            assert "DATABASE_URL" in overridden, name
        assert "AWS_ENDPOINT_URL" in overridden, name
