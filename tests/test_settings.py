import tomllib
from pathlib import Path

import pytest

from newsdesk import PROJECT_URL
from newsdesk.core.errors import SettingsError
from newsdesk.core.settings import DEFAULT_PHOTO_TITLE_PATTERNS, Settings
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
    assert settings.cluster_threshold is None  # the method's own: 0.60 for the seed's
    assert settings.cluster_method == "seed"
    assert settings.cluster_min_size == 3
    assert settings.photo_title_patterns == DEFAULT_PHOTO_TITLE_PATTERNS
    assert settings.user_agent.startswith("newsdesk/")
    assert PROJECT_URL in settings.user_agent
    assert "python-requests" not in settings.user_agent


def test_the_user_agent_names_the_project_page_the_package_declares():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["urls"]["Homepage"] == PROJECT_URL


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
        ({"FETCH_USER_AGENT": "Mozilla/5.0 (X11)"}, "user_agent", "Mozilla/5.0 (X11)"),
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
