"""The deploy-time migrations custom resource, with events/migrate.json."""

import json

from newsdesk.storage.migrate import available
from tests.conftest import invoke, load_event

DOWN = "postgresql://newsdesk@127.0.0.1:9/none"


def event_to(feed_server, request_type="Create"):
    event = load_event("migrate")
    event["RequestType"] = request_type
    event["ResponseURL"] = feed_server.url("/cfn-response?X-Amz-Signature=abc")
    return event


def test_create_applies_migrations_and_reports_success(feed_server, database, postgres_url):
    with database.transaction() as cursor:  # a database as RDS creates it: empty
        cursor.execute(
            "DROP TABLE raw_article, issue, category, schema_migration, article_revision,"
            " extraction_outbox, article_extraction, article_sketch, issue_event,"
            " article_embedding, issue_text_read CASCADE"
        )
    result = invoke("migrate", event_to(feed_server), DATABASE_URL=postgres_url)
    ((path, body),) = feed_server.uploads
    sent = json.loads(body)
    assert path == "/cfn-response?X-Amz-Signature=abc"
    assert sent == result
    assert (sent["Status"], sent["LogicalResourceId"]) == ("SUCCESS", "SchemaMigrations")
    assert sent["Reason"] == f"applied: {[version for version, _ in available()]}"
    with database.transaction() as cursor:
        cursor.execute("SELECT version FROM schema_migration ORDER BY version")
        assert [row[0] for row in cursor.fetchall()] == [v for v, _ in available()]


def test_a_database_fault_is_reported_failed(feed_server):
    invoke("migrate", event_to(feed_server, "Update"), DATABASE_URL=DOWN)
    ((_, body),) = feed_server.uploads
    sent = json.loads(body)
    assert sent["Status"] == "FAILED"
    assert "cannot connect to PostgreSQL" in sent["Reason"]


def test_delete_leaves_the_schema(feed_server):
    invoke("migrate", event_to(feed_server, "Delete"), DATABASE_URL=DOWN)
    ((_, body),) = feed_server.uploads
    assert json.loads(body)["Status"] == "SUCCESS"
