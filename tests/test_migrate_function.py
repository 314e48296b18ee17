"""The deploy-time migrations custom resource, with events/migrate.json."""

import importlib
import json

import pytest

from newsdesk.local import LocalContext
from newsdesk.migrate import available
from tests.conftest import load_event


@pytest.fixture
def migrate_handler(monkeypatch):
    def load(database_url):
        monkeypatch.setenv("DATABASE_URL", database_url)
        return importlib.reload(importlib.import_module("newsdesk_functions.migrate.app"))

    return load


def event_to(feed_server, request_type="Create"):
    event = load_event("migrate")
    event["RequestType"] = request_type
    event["ResponseURL"] = feed_server.url("/cfn-response?X-Amz-Signature=abc")
    return event


def test_create_applies_migrations_and_reports_success(
    migrate_handler, feed_server, database, postgres_url
):
    with database.transaction() as cursor:  # a database as RDS creates it: empty
        cursor.execute("DROP TABLE raw_article, issue, category, schema_migration CASCADE")
    handler = migrate_handler(postgres_url)
    result = handler.lambda_handler(event_to(feed_server), LocalContext("migrate"))
    ((path, body),) = feed_server.uploads
    sent = json.loads(body)
    assert path == "/cfn-response?X-Amz-Signature=abc"
    assert sent == result
    assert (sent["Status"], sent["LogicalResourceId"]) == ("SUCCESS", "SchemaMigrations")
    assert sent["Reason"] == f"applied: {[version for version, _ in available()]}"
    with database.transaction() as cursor:
        cursor.execute("SELECT version FROM schema_migration ORDER BY version")
        assert [row[0] for row in cursor.fetchall()] == [v for v, _ in available()]


def test_a_database_fault_is_reported_failed(migrate_handler, feed_server):
    handler = migrate_handler("postgresql://newsdesk@127.0.0.1:9/none")
    handler.lambda_handler(event_to(feed_server, "Update"), LocalContext("migrate"))
    ((_, body),) = feed_server.uploads
    sent = json.loads(body)
    assert sent["Status"] == "FAILED"
    assert "cannot connect to PostgreSQL" in sent["Reason"]


def test_delete_leaves_the_schema(migrate_handler, feed_server):
    handler = migrate_handler("postgresql://newsdesk@127.0.0.1:9/none")
    handler.lambda_handler(event_to(feed_server, "Delete"), LocalContext("migrate"))
    ((_, body),) = feed_server.uploads
    assert json.loads(body)["Status"] == "SUCCESS"
