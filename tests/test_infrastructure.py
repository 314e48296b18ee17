"""The whole SAM application against the code: environment, metrics, IAM, migrations."""

import ast
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from infra.reference import published
from infra.transform import load, transformed
from newsdesk.aws.state_table import StateTable
from newsdesk.core.breaker import BreakerPolicy
from newsdesk.core.schedule import FeedState, OutletState, SchedulePolicy
from newsdesk.core.settings import Settings, variables
from newsdesk.core.times import parse_time
from newsdesk.storage.migrate import available
from tests.conftest import (
    BODY,
    EXTRACT_ON,
    OTHER_BODIES,
    ROOT,
    article_page,
    extract_all,
    invoke,
    load_event,
    worker,
    worker_event,
)

TEMPLATE = ROOT / "infra" / "template.yaml"
# what a deploy must give the parameters without a default
DEPLOYED = {"OperatorContact": "newsdesk-ops@example.org"}
POWERTOOLS = {"POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"}
# What each function cannot run without in AWS (the rest have defaults that hold there).
REQUIRED = {
    "FanOutFunction": {"OUTLET_QUEUE_URL", "STATE_TABLE_NAME"},
    "WorkerFunction": {
        "DB_SECRET_ARN",
        "DB_HOST",
        "STATE_TABLE_NAME",
        "RAW_BUCKET",
        "ARTICLE_QUEUE_URL",
        "OPERATOR_CONTACT",
    },
    "ExtractorFunction": {
        "DB_SECRET_ARN",
        "DB_HOST",
        "STATE_TABLE_NAME",
        "RAW_BUCKET",
        "ARTICLE_QUEUE_URL",
        "OPERATOR_CONTACT",
    },
    "ClusterFunction": {"DB_SECRET_ARN", "DB_HOST"},
    "MigrateFunction": {"DB_SECRET_ARN", "DB_HOST"},
    "ReadFunction": {"DB_SECRET_ARN", "DB_HOST"},
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
    """Every variable of the settings tables (newsdesk.core.settings)."""
    return {v.name for rows in variables().values() for v in rows}


def literal_value(template, value: Any) -> str:
    if isinstance(value, str):
        return value
    parameter = template["Parameters"].get(value.get("Ref", ""))
    if parameter is None:
        return "placeholder"
    # a parameter without a default (OperatorContact) stands in as a value a deploy gives it
    return str(parameter.get("Default", DEPLOYED.get(value["Ref"])))


def test_every_function_has_what_it_reads(template):
    known = variables_the_code_reads() | POWERTOOLS
    assert set(REQUIRED) == set(functions(template))
    for name, required in REQUIRED.items():
        variables = environment(template, name)
        assert required | POWERTOOLS <= set(variables), name
        assert set(variables) <= known, f"{name} sets variables no code reads"
        # literal values parse (a parameter stands in as its default, other intrinsics as
        # placeholders)
        literal = {k: literal_value(template, v) for k, v in variables.items()}
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


@pytest.mark.parametrize(
    "inputs",
    ["layers/common/requirements.in", "layers/extract/requirements.in", "infra/lambda-runtime.in"],
)
def test_the_locks_inputs_are_the_packages_ranges(inputs):
    requirements = (ROOT / inputs).read_text().split()
    pyproject = (ROOT / "pyproject.toml").read_text()
    ranges = [r for r in requirements if not r.startswith("#") and ">=" in r]
    assert ranges
    for requirement in ranges:
        assert f'"{requirement}"' in pyproject, requirement


@pytest.mark.integration
def test_collect_functions_do_not_import_the_numeric_stack():
    code = (
        "import sys\n"
        "import newsdesk_functions.collect.fanout, newsdesk_functions.collect.worker\n"
        "import newsdesk_functions.extract.app\n"
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
    events = {name: e for name, e in props["Events"].items() if e["Type"] == "ScheduleV2"}
    schedules = [e["Properties"] for e in events.values()]
    assert {s["ScheduleExpressionTimezone"] for s in schedules} == {"Asia/Seoul"}
    # every round, or the two editions (ClusterCadence): one of the two is enabled
    states = {name: e["Properties"]["State"]["Fn::If"] for name, e in events.items()}
    assert states == {
        "AfterEachRound": ["ClusterEveryRound", "ENABLED", "DISABLED"],
        "BeforeMorningEdition": ["ClusterEveryRound", "DISABLED", "ENABLED"],
        "BeforeEveningEdition": ["ClusterEveryRound", "DISABLED", "ENABLED"],
    }
    assert props["Events"]["AfterEachRound"]["Properties"]["ScheduleExpression"] == {
        "Ref": "ClusterRoundSchedule"
    }
    assert (ROOT / "events" / "cluster.json").is_file()
    # issue 24: one invocation per category, from the cluster queue; no reserved concurrency
    (queue,) = [e["Properties"] for e in props["Events"].values() if e["Type"] == "SQS"]
    assert queue["Queue"] == {"Fn::GetAtt": ["ClusterQueue", "Arn"]}
    assert queue["BatchSize"] == 1
    assert queue["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert "ReservedConcurrentExecutions" not in props
    # a new account's concurrency quota may be 10: the bound is a parameter, nothing reserved
    assert queue["ScalingConfig"]["MaximumConcurrency"] == {"Ref": "ClusterMaximumConcurrency"}
    assert template["Parameters"]["ClusterMaximumConcurrency"]["Default"] == 4
    assert not any("ReservedConcurrentExecutions" in f for f in functions(template).values())
    assert props["Environment"]["Variables"]["CLUSTER_QUEUE_URL"] == {"Ref": "ClusterQueue"}
    visibility = template["Resources"]["ClusterQueue"]["Properties"]["VisibilityTimeout"]
    assert visibility >= props["Timeout"]


def test_cluster_requirements_match_the_package():
    requirement = (ROOT / "functions" / "cluster" / "requirements.in").read_text().split()[-1]
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


@dataclass
class Round:
    """What a round emitted: metric names, and each function's structured log lines."""

    metrics: dict[str, set[str]]  # by function (FanOutFunction, …)
    logs: dict[str, list[dict[str, Any]]]  # by function


@pytest.fixture
def a_round(aws_env, database, serve, tmp_path, capsys) -> Round:
    """A round: the fan-out (one outlet silent for seven hours, one cooling down), a worker
    with good, failing and breaker-skipped feeds, the extractor over their article pages, and
    a clustering pass over three outlets' articles of one story."""
    pages = [
        serve(
            f"/view/{n}",
            body=article_page("국회 예산안 통과", (BODY, *OTHER_BODIES)[n]),
            content_type="text/html",
        )
        for n in range(3)
    ]
    good = [
        serve(
            f"/{n}.xml",
            body=(
                '<rss version="2.0"><channel><title>t</title>'
                f"<item><title>[포토] 사진</title><link>https://example.test/p{n}</link></item>"
                f"<item><title>국회 예산안 통과</title><link>{pages[n]}</link></item>"
                "</channel></rss>"
            ).encode(),
        )
        for n in range(3)
    ]
    bad = [serve(f"/bad{n}.xml", status=500, body=b"") for n in range(3)]
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        f'- {{source: "연합뉴스", url: "{good[0]}", category: 정치}}\n'
        f'- {{source: "Silent", url: "{bad[0]}", category: 정치}}\n'
        f'- {{source: "Cooling", url: "{bad[1]}", category: 정치}}\n'
    )
    at = parse_time(load_event("fanout")["time"])
    states = StateTable(aws_env.client("dynamodb"), "newsdesk-state")
    silent = FeedState("Silent", bad[0])
    silent.attempted(at - timedelta(hours=9), "정치")
    silent.failed(at - timedelta(hours=9), "HTTP 500", SchedulePolicy())
    states.save(silent)
    cooling = OutletState("Cooling")
    cooling.breaker.tripped(at - timedelta(minutes=5), BreakerPolicy())
    states.save(cooling)
    handler = worker.logger.registered_handler  # every function's: one service, one handler
    original, handler.stream = handler.stream, sys.stdout
    capsys.readouterr()
    outputs: dict[str, str] = {}
    try:
        invoke("fanout", load_event("fanout"), SOURCES_PATH=str(sources))
        outputs["FanOutFunction"] = capsys.readouterr().out
        event = worker_event([(u, "정치") for u in good] + [(u, "정치") for u in bad])
        invoke("worker", event, **EXTRACT_ON)
        outputs["WorkerFunction"] = capsys.readouterr().out
        assert [a["status"] for a in extract_all(aws_env)] == ["extract_ok"] * 3
        outputs["ExtractorFunction"] = capsys.readouterr().out
        assert invoke("cluster", load_event("cluster"))["issues_created"] == 1
        outputs["ClusterFunction"] = capsys.readouterr().out
    finally:
        handler.stream = original
    return Round(
        metrics={name: emitted(out) for name, out in outputs.items()},
        logs={name: log_lines(out) for name, out in outputs.items()},
    )


def log_lines(out: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [line for line in lines if "_aws" not in line and "message" in line]


def test_dashboard_alarms_and_docs_show_what_a_round_emits(template, a_round):
    # every metric of ours on the dashboard and in the alarms is among those a round emits
    shown = dashboard_metrics(template) | alarm_metrics(template)
    assert {"ArticlesNew", "FeedsFailed", "IssuesCreated", "MessagesFailed", "SilentOutlets"} <= (
        shown
    )
    assert shown - set().union(*a_round.metrics.values()) == set()
    # and docs/operating.md lists every metric each function emitted (infra/reference.py)
    documented = published(template)
    for function, names in a_round.metrics.items():
        assert names - set(documented[function]) == set(), function


# --- log groups, Contributor Insights rules and log queries name what the code logs ---------

# CloudFormation's RetentionInDays values (AWS::Logs::LogGroup).
RETENTION_DAYS = {1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827}
RETENTION_DAYS |= {2192, 2557, 2922, 3288, 3653}


def log_group_of(template) -> dict[str, str]:
    """Each function's log group resource, by function."""
    found = {}
    for name, props in functions(template).items():
        group = props["LoggingConfig"]["LogGroup"]
        assert set(group) == {"Ref"}, name
        found[name] = group["Ref"]
    return found


def test_every_function_logs_to_a_group_of_its_own_that_expires(template):
    resources, parameters = template["Resources"], template["Parameters"]
    groups = log_group_of(template)
    assert set(groups) == set(REQUIRED)
    assert len(set(groups.values())) == len(groups)
    for function, group in groups.items():
        assert resources[group]["Type"] == "AWS::Logs::LogGroup"
        props = resources[group]["Properties"]
        # the name Lambda would give it, so that nothing else creates it first
        name = functions(template)[function]["FunctionName"]["Fn::Sub"]
        assert props["LogGroupName"] == {"Fn::Sub": f"/aws/lambda/{name}"}
        assert props["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    # the JSON log format the rules and queries read is every function's
    assert template["Globals"]["Function"]["LoggingConfig"]["LogFormat"] == "JSON"
    retention = parameters["LogRetentionDays"]
    assert set(retention["AllowedValues"]) <= RETENTION_DAYS
    assert retention["Default"] in retention["AllowedValues"]


def substituted(value: Any) -> str:
    """A !Sub string with its variables as bare names (``${WorkerLogGroup}`` -> WorkerLogGroup)."""
    text = value["Fn::Sub"] if isinstance(value, dict) else value
    text = text[0] if isinstance(text, list) else text
    return re.sub(r"\$\{([^}]+)\}", r"\1", text)


def insight_rules(template) -> dict[str, dict[str, Any]]:
    return {
        name: r["Properties"]
        for name, r in template["Resources"].items()
        if r["Type"] == "AWS::CloudWatch::InsightRule"
    }


def fields_logged(lines: list[dict[str, Any]]) -> set[str]:
    return set().union(*(line.keys() for line in lines)) if lines else set()


def matches(line: dict[str, Any], rule_filter: dict[str, Any]) -> bool:
    value = line.get(rule_filter["Match"].removeprefix("$."))
    if "In" in rule_filter:
        return value is not None and str(value) in rule_filter["In"]
    if "IsPresent" in rule_filter:
        return (value is not None) is rule_filter["IsPresent"]
    raise AssertionError(f"a filter the test does not know: {rule_filter}")


def test_every_insight_rule_parses_and_names_what_the_code_logs(template, a_round):
    rules = insight_rules(template)
    assert {"FailingOutletsRule", "OpenBreakersRule", "SilentOutletsRule"} <= set(rules)
    groups = {group: function for function, group in log_group_of(template).items()}
    for name, props in rules.items():
        assert props["RuleState"] == "ENABLED"
        body = json.loads(substituted(props["RuleBody"]))
        assert body["Schema"] == {"Name": "CloudWatchLogRule", "Version": 1}, name
        assert body["LogFormat"] == "JSON"
        assert body["AggregateOn"] in ("Count", "Sum")
        assert set(body) <= {"Schema", "LogGroupNames", "LogFormat", "Contribution", "AggregateOn"}
        # over our own log groups, named whole (a wildcard could match, and bill, others')
        lines = [line for group in body["LogGroupNames"] for line in a_round.logs[groups[group]]]
        contribution = body["Contribution"]
        assert set(contribution) <= {"Keys", "ValueOf", "Filters"}
        assert 1 <= len(contribution["Keys"]) <= 4
        filters = contribution["Filters"]
        assert filters, f"{name} would count every line"
        # every value a filter takes is one a round logs, and lines of the round match the rule
        for f in filters:
            assert set(f) - {"Match"} in ({"In"}, {"IsPresent"}), f
            for value in f.get("In", []):
                assert any(matches(line, {**f, "In": [value]}) for line in lines), (name, value)
        counted = [line for line in lines if all(matches(line, f) for f in filters)]
        assert counted, name
        # and what it keys on (and sums) is in every line it counts
        named = set(contribution["Keys"]) | {contribution.get("ValueOf", "$.message")}
        for field in named:
            assert field.startswith("$."), field
            assert all(field.removeprefix("$.") in line for line in counted), (name, field)


def dashboard(template) -> dict[str, Any]:
    body, _ = template["Resources"]["Dashboard"]["Properties"]["DashboardBody"]["Fn::Sub"]
    document: dict[str, Any] = json.loads(re.sub(r"\$\{([^}]+)\}", r"\1", body))
    return document


QUERY_WORDS = {"and", "or", "not", "like", "in", "by", "as", "desc", "asc", "true", "false"}


def query_fields(query: str) -> tuple[str, set[str]]:
    """(the SOURCE log group, the fields a Logs Insights query reads): functions, keywords,
    aliases (``as x``) and @-fields left out."""
    without = re.sub(r"'[^']*'|\"[^\"]*\"|/(?:\\/|[^/])*/", " ", query)
    source = re.match(r"\s*SOURCE\s+'([^']+)'", query)
    assert source, query
    aliases: set[str] = set()
    fields: set[str] = set()
    for command in without.split("|")[1:]:
        words = re.findall(r"@?[A-Za-z_][\w.]*\s*\(?", command)
        verb, rest = words[0].strip(), words[1:]
        previous = ""
        for word in rest:
            name = word.rstrip("( ").strip()
            if word.rstrip().endswith("(") or name.lower() in QUERY_WORDS or name[0] == "@":
                previous = name.lower()
                continue
            if previous == "as":
                aliases.add(name)
            elif not (verb in ("sort", "limit", "display") and name in aliases):
                fields.add(name)
            previous = name.lower()
    return source.group(1), fields


def test_every_log_widget_reads_fields_the_code_logs(template, a_round):
    groups = {group: function for function, group in log_group_of(template).items()}
    queries = [
        w["properties"]["query"] for w in dashboard(template)["widgets"] if w["type"] == "log"
    ]
    assert len(queries) >= 3  # per outlet, fetch latency per outlet, silent outlets
    for query in queries:
        group, fields = query_fields(query)
        logged = fields_logged(a_round.logs[groups[group]])
        assert fields, query
        assert fields <= logged, (query, fields - logged)
    latency = [q for q in queries if "pct(seconds, 95)" in q]
    assert latency, "a widget with fetch latency p50/p95 per outlet"


def test_insight_widgets_show_the_rules(template):
    rules = insight_rules(template)
    shown = {
        w["properties"]["insightRule"]["ruleName"]
        for w in dashboard(template)["widgets"]
        if "insightRule" in w.get("properties", {})
    }
    # ruleName is the rule's name, by its resource's attribute (RuleName)
    assert shown == {f"{name}.RuleName" for name in rules}


def test_an_alarm_fires_when_an_outlet_falls_silent(template):
    props = template["Resources"]["OutletSilentAlarm"]["Properties"]
    assert (props["MetricName"], props["Namespace"]) == (
        "SilentOutlets",
        {"Fn::Sub": "newsdesk-${Stage}"},
    )
    assert props["ComparisonOperator"] == "GreaterThanThreshold"
    assert props["Threshold"] == 0
    assert props["AlarmActions"] == [{"Ref": "AlarmTopic"}]
    silent = functions(template)["FanOutFunction"]["Environment"]["Variables"]
    assert silent["OUTLET_SILENT_HOURS"] == {"Ref": "OutletSilentHours"}
    assert template["Parameters"]["OutletSilentHours"]["Default"] == 6


def test_the_deploy_guide_names_every_output_and_parameter(template):
    guide = (ROOT / "docs" / "deploying.md").read_text(encoding="utf-8")
    for name in [*template["Outputs"], *template["Parameters"]]:
        assert f"`{name}`" in guide, name


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
