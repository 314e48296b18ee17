"""Every setting, metric and alarm is declared once (the settings tables, newsdesk.aws.metrics and
the jobs' metric_counts(), the template's alarms); the template's environment blocks,
infra/env.example.json and the docs that list them are checked against that, or written from
it (infra/reference.py, `make docs`)."""

import json
import re
from pathlib import Path

import pytest

from infra.reference import (
    CONFIGURING,
    OPERATING,
    documents,
    function_variables,
    published,
)
from infra.transform import load
from newsdesk.aws.metrics import DESCRIBED
from newsdesk.core.settings import CollectSettings, Settings, variables
from newsdesk.core.settings.table import FUNCTIONS
from tests.conftest import ROOT

EVERY = [v for rows in variables().values() for v in rows]


@pytest.fixture(scope="module")
def template():
    return load()


def test_each_function_declares_the_variables_the_tables_give_it(template):
    functions = {n for n, r in template["Resources"].items() if r["Type"].endswith("::Function")}
    assert functions == set(FUNCTIONS)
    for function in FUNCTIONS:
        # GIVEN what the tables say the function reads and the template gives it
        expected = {v.name for v in EVERY if function in v.read_by}
        # WHEN the template's environment block is read (Globals, then the function's own)
        declared = set(function_variables(template, function))
        # THEN they are the same variables
        assert declared - expected == set(), f"{function}: declared, not in its tables' rows"
        assert expected - declared == set(), f"{function}: its tables' rows, not declared"


@pytest.mark.parametrize("row", [v for v in EVERY if v.attribute], ids=lambda v: v.name)
def test_the_template_sets_the_tables_defaults(template, row):
    # a literal the template writes, or the default of the parameter it refers to, reads as
    # the row's default (an empty one is unset); a resource's name or address is its own
    parameters = template["Parameters"]
    for function in row.read_by:
        value = function_variables(template, function).get(row.name)  # (declared: above)
        if isinstance(value, dict) and "Ref" in value and value["Ref"] in parameters:
            if "Default" not in parameters[value["Ref"]]:
                continue  # a deploy must give it (OperatorContact)
            value = str(parameters[value["Ref"]]["Default"])
        if isinstance(value, str):
            assert row.read({row.name: value}) == row.read({}), (function, row.name, value)


RATE = re.compile(r"rate\((\d+) (minute|minutes|hour|hours)\)")


def test_the_collection_period_is_the_schedules(template):
    # GIVEN the schedule the fan-out runs on
    schedule = template["Resources"]["FanOutFunction"]["Properties"]["Events"]["Every30Minutes"]
    assert schedule["Properties"]["ScheduleExpression"] == {"Ref": "CollectSchedule"}
    rate = RATE.fullmatch(template["Parameters"]["CollectSchedule"]["Default"])
    assert rate is not None
    amount, unit = rate.groups()
    seconds = int(amount) * (60 if unit.startswith("minute") else 3600)
    # THEN COLLECT_PERIOD_SECONDS, declared once in the collect table, is its period (and the
    # template's three literals are that default: the test above)
    assert CollectSettings.collect_period_seconds == seconds


def test_env_example_sets_variables_its_functions_read():
    example = json.loads((ROOT / "infra" / "env.example.json").read_text(encoding="utf-8"))
    read_by = {f: {v.name for v in EVERY if f in v.read_by} for f in FUNCTIONS}
    # Parameters apply to every function that declares the variable
    assert set(example["Parameters"]) <= set().union(*read_by.values())
    for function, values in example.items():
        if function == "Parameters":
            continue
        assert set(values) <= read_by[function], function
        given = {k: v for k, v in example["Parameters"].items() if k in read_by[function]}
        Settings.from_env(given | values)  # and each function's values read


def test_a_default_computed_per_machine_is_written_for_the_docs():
    # the docs would differ from one machine to another (NEWSDESK_DATA_DIR's home)
    for row in EVERY:
        if row.factory is not None:
            assert row.shown is not None, row.name
            assert Path(row.shown.strip("`")).expanduser() == row.factory(), row.name


def test_the_generated_docs_are_current():
    # GIVEN the docs as infra/reference.py writes them from the code and the template
    for path, text in documents().items():
        # THEN the files are those (`make docs` writes them)
        assert path.read_text(encoding="utf-8") == text, f"{path}: run `make docs`"
    text = CONFIGURING.read_text(encoding="utf-8")
    assert all(f"| `{v.name}` |" in text for v in EVERY)


def test_the_readme_and_the_architecture_link_the_lists_and_copy_none(template):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    architecture = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for text in (readme, architecture):
        assert "docs/configuring.md" in text
        assert "docs/operating.md" in text
    alarms = re.findall(r"\| `(…-[a-z0-9-]+)` \|", OPERATING.read_text(encoding="utf-8"))
    assert len(alarms) == sum(
        r["Type"] == "AWS::CloudWatch::Alarm" for r in template["Resources"].values()
    )
    rows = [line for line in readme.splitlines() if line.startswith("| ")]
    for row in rows:
        # a row of a copied table starts with the variable alone in its cell
        assert not any(row.startswith(f"| `{v.name}` |") for v in EVERY), row
        # (the troubleshooting table names alarms as symptoms: the alarms' table is gone)
        assert not row.startswith("| alarm |"), row


def test_every_note_on_a_metric_names_one_a_function_publishes(template):
    names = {name for metrics in published(template).values() for name in metrics}
    assert set(DESCRIBED) - names == set()
    assert {"SilentOutlets", "MessagesFailed", "PagesExtracted", "IssuesCreated"} <= names
