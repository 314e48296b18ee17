import importlib
import re
import tomllib
from pathlib import Path

import pytest

from newsdesk import __version__
from newsdesk.core.errors import SettingsError
from newsdesk.core.settings import (
    CONTACT_PATTERN,
    DEFAULT_PHOTO_TITLE_PATTERNS,
    LOCAL_CONTACT,
    MAX_CONTACT_LENGTH,
    Settings,
    contact_problem,
)
from tests.conftest import ROOT


def test_defaults_follow_the_design():
    # GIVEN an empty environment WHEN settings are read
    settings = Settings.from_env({})
    # THEN the documented defaults hold
    assert settings.fetch_timeout_seconds == 10
    assert settings.fetch_max_bytes == 5 * 1024 * 1024
    assert settings.fetch_allow_private_networks is False
    assert settings.fetch_interval_seconds == 0.1
    assert settings.outlet_max_failures == 2
    assert settings.cluster_threshold is None  # the method's own: 0.30 for meaning's Hangul pairs
    assert settings.cluster_method == "meaning"
    assert settings.cluster_min_size == 3
    assert settings.photo_title_patterns == DEFAULT_PHOTO_TITLE_PATTERNS
    assert settings.operator_contact is None  # the functions that fetch refuse to start
    assert settings.user_agent.startswith("newsdesk/")
    assert "python-requests" not in settings.user_agent


WHAT = "collects news feeds and the article pages they link to"


@pytest.mark.parametrize(
    ("contact", "user_agent", "from_address"),
    [
        (
            "https://ops.example.org/newsdesk",
            f"newsdesk/{__version__} (+https://ops.example.org/newsdesk; {WHAT})",
            None,
        ),
        (
            "newsdesk-ops@example.org",
            f"newsdesk/{__version__} (newsdesk-ops@example.org; {WHAT})",
            "newsdesk-ops@example.org",
        ),
        (
            LOCAL_CONTACT,
            f"newsdesk/{__version__} (local run, no operator contact; {WHAT})",
            None,
        ),
    ],
)
def test_the_user_agent_names_the_operator_and_what_newsdesk_fetches(
    contact, user_agent, from_address
):
    # GIVEN the operator's contact WHEN settings are read
    settings = Settings.from_env({"OPERATOR_CONTACT": f" {contact} "})
    # THEN every request names newsdesk, whom to ask and that it fetches pages too; an e-mail
    # address is also the From header (RFC 9110 10.1.2)
    assert settings.operator_contact == contact
    assert settings.user_agent == user_agent
    assert settings.from_address == from_address


def test_no_unconfirmed_address_stands_for_the_project():
    # no public address of the project is confirmed: the package declares none, and the
    # User-Agent names the operator's contact and nothing else
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "urls" not in pyproject["project"]
    newsdesk = importlib.import_module("newsdesk")
    assert not hasattr(newsdesk, "PROJECT_URL")
    for contact in (LOCAL_CONTACT, "ops@example.org"):
        assert "http" not in Settings(operator_contact=contact).user_agent


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("https://ops.example.org/newsdesk", True),
        ("http://ops.example.org:8080/bot?x=1#contact", True),
        ("newsdesk.ops+bot@mail.example.co.kr", True),
        ("https://ops.example.org/a;b=c", True),
        ("ops.example.org", False),  # no scheme
        ("ftp://ops.example.org/", False),
        ("https://localhost/", False),  # no domain a webmaster can reach
        ("ops@localhost", False),
        ("https://ops.example.org/a b", False),  # a space
        ("https://ops.example.org/(bot)", False),  # would end the User-Agent's comment
        ("https://ops.example.org/\\", False),
        ("운영자@example.org", False),  # not ASCII: not a header value
        ("https://ops.example.org/\nX-Evil: 1", False),
        ("https://ops.example.org/" + "a" * 200, False),  # too long
    ],
)
def test_a_contact_is_a_url_or_an_address_and_the_template_agrees(value, ok):
    # the settings' check and the template's AllowedPattern accept and refuse the same values
    assert (contact_problem(value) is None) is ok
    parameter = _template()["Parameters"]["OperatorContact"]
    assert (parameter["AllowedPattern"], parameter["MaxLength"]) == (
        CONTACT_PATTERN,
        MAX_CONTACT_LENGTH,
    )
    accepted = re.fullmatch(parameter["AllowedPattern"], value) is not None
    assert (accepted and len(value) <= parameter["MaxLength"]) is ok


@pytest.mark.parametrize("value", ["someone", "https://ops.example.org/(x)", "a b@example.org"])
def test_a_contact_that_is_neither_is_refused_in_one_line(value):
    with pytest.raises(SettingsError) as raised:
        Settings.from_env({"OPERATOR_CONTACT": value})
    message = str(raised.value)
    assert message.startswith("OPERATOR_CONTACT: not a URL or an e-mail address")
    assert "\n" not in message


def test_fetch_user_agent_is_retired_with_a_pointer_to_what_replaced_it():
    with pytest.raises(
        SettingsError, match=r"FETCH_USER_AGENT is no longer read.*OPERATOR_CONTACT"
    ):
        Settings.from_env({"FETCH_USER_AGENT": "Mozilla/5.0 (X11)"})


def test_a_deploy_without_a_contact_is_refused():
    # GIVEN the template: the parameter has no default, a pattern and a one-line reason
    template = _template()
    parameter = template["Parameters"]["OperatorContact"]
    assert "Default" not in parameter
    assert "\n" not in parameter["ConstraintDescription"]
    # and it reaches every function that sends a request
    for name in ("WorkerFunction", "ExtractorFunction"):
        variables = template["Resources"][name]["Properties"]["Environment"]["Variables"]
        assert variables["OPERATOR_CONTACT"] == {"Ref": "OperatorContact"}, name
    # WHEN such a function starts without it THEN it refuses in one line
    worker = importlib.import_module("newsdesk_functions.collect.worker")
    extract = importlib.import_module("newsdesk_functions.extract.app")
    starts = (
        lambda s: worker.worker_from(s),
        lambda s: extract.extractor_from(s),
    )
    env = {"ARTICLE_QUEUE_URL": "https://sqs.example/q", "OPERATOR_CONTACT": ""}
    for start in starts:
        with pytest.raises(SettingsError) as raised:
            start(Settings.from_env(env))
        assert str(raised.value).startswith("OPERATOR_CONTACT is not set")
        assert "\n" not in str(raised.value)


def _template():
    from infra.transform import TEMPLATE, load

    return load(TEMPLATE)


@pytest.mark.parametrize(
    ("env", "attribute", "expected"),
    [
        ({"FETCH_TIMEOUT_SECONDS": "2.5"}, "fetch_timeout_seconds", 2.5),
        ({"FETCH_MAX_BYTES": "1000"}, "fetch_max_bytes", 1000),
        ({"FETCH_ALLOW_PRIVATE_NETWORKS": "TRUE"}, "fetch_allow_private_networks", True),
        ({"FETCH_ALLOW_PRIVATE_NETWORKS": "0"}, "fetch_allow_private_networks", False),
        ({"OUTLET_MAX_FAILURES": "3"}, "outlet_max_failures", 3),
        ({"PHOTO_TITLE_PATTERNS": '["\\\\[화보\\\\]"]'}, "photo_title_patterns", (r"\[화보\]",)),
        ({"SOURCES_PATH": "/srv/sources.yaml"}, "sources_path", Path("/srv/sources.yaml")),
        ({"NEWSDESK_DATA_DIR": "/var/nd"}, "data_dir", Path("/var/nd")),
        ({"DATABASE_URL": " postgresql://x/y "}, "database_url", "postgresql://x/y"),
        ({"DATABASE_URL": ""}, "database_url", None),
        ({"STATE_TABLE_NAME": "t"}, "state_table_name", "t"),
        ({"CLUSTER_METHOD": "centroid"}, "cluster_method", "centroid"),
        ({"CLUSTER_THRESHOLD": "0.6"}, "cluster_threshold", 0.6),
        ({"OPERATOR_CONTACT": "ops@example.org"}, "operator_contact", "ops@example.org"),
    ],
)
def test_variables_are_parsed(env, attribute, expected):
    assert getattr(Settings.from_env(env), attribute) == expected


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"FETCH_TIMEOUT_SECONDS": "ten"}, "FETCH_TIMEOUT_SECONDS"),
        ({"FETCH_TIMEOUT_SECONDS": "0"}, "FETCH_TIMEOUT_SECONDS"),
        ({"FETCH_MAX_BYTES": "1.5"}, "FETCH_MAX_BYTES"),
        ({"OUTLET_MAX_FAILURES": "0"}, "OUTLET_MAX_FAILURES"),
        ({"FETCH_ALLOW_PRIVATE_NETWORKS": "maybe"}, "FETCH_ALLOW_PRIVATE_NETWORKS"),
        ({"PHOTO_TITLE_PATTERNS": "[포토]"}, "PHOTO_TITLE_PATTERNS"),
        ({"PHOTO_TITLE_PATTERNS": '["[포토"]'}, "PHOTO_TITLE_PATTERNS"),
        ({"PHOTO_TITLE_PATTERNS": '{"a": 1}'}, "PHOTO_TITLE_PATTERNS"),
        ({"CLUSTER_THRESHOLD": "1.5"}, "CLUSTER_THRESHOLD"),
        ({"CLUSTER_METHOD": "kmeans"}, "CLUSTER_METHOD"),
        ({"FETCH_USER_AGENT": "뉴스데스크/1.0"}, "FETCH_USER_AGENT"),
        ({"OPERATOR_CONTACT": "뉴스데스크"}, "OPERATOR_CONTACT"),
    ],
)
def test_bad_values_name_the_variable(env, named):
    with pytest.raises(SettingsError, match=named):
        Settings.from_env(env)


def test_queue_url_is_required_where_messages_are_sent():
    with pytest.raises(SettingsError, match="OUTLET_QUEUE_URL"):
        Settings.from_env({}).require_queue_url()


def test_the_templates_empty_defaults_are_unset():
    # GIVEN the empty values the template declares for env.json to override
    settings = Settings.from_env({"DATABASE_URL": "", "AWS_ENDPOINT_URL": "", "DB_SECRET_ARN": ""})
    # THEN they are not set (in Lambda the secret and AWS itself apply)
    assert settings.database_url is None
    assert settings.db_secret_arn is None


def test_sam_local_without_an_aws_endpoint_is_refused():
    # GIVEN `sam local invoke` without env.json: the template's empty AWS_ENDPOINT_URL
    env = {"AWS_SAM_LOCAL": "true", "AWS_ENDPOINT_URL": ""}
    # THEN nothing is built that would call real AWS
    with pytest.raises(SettingsError, match="AWS_ENDPOINT_URL is not set under sam local"):
        Settings.from_env(env)
    # and with an emulator's address it runs
    Settings.from_env(env | {"AWS_ENDPOINT_URL": "http://host.docker.internal:4566"})
