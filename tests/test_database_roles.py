"""Least privilege in the database (issue 22): each function that uses the database connects as
a role of its own (migration 0007), which can do that function's work and is refused what the
function does not own. Against the embedded PostgreSQL, connected as each role."""

import base64
import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg2
import psycopg2.errors
import pytest

from newsdesk.storage.database import Database
from newsdesk.storage.extractions import BY_CONTENT_HASH, Copies, Extraction, ExtractionStore
from newsdesk.storage.roles import CLUSTER, EXTRACTOR, READER, ROLES, WORKER
from tests.conftest import (
    BODY,
    EXTRACT_ON,
    OTHER_BODIES,
    article_page,
    as_role,
    extract_all,
    invoke,
    load_event,
    worker_event,
)
from tests.test_migrate_function import event_to

# What each role may do on each table: (worker, extractor, cluster); a name in parentheses is
# a column it may update. Every table of the schema is here: a migration that adds one says
# what each role may do there (nothing is a choice too).
RIGHTS: dict[str, tuple[set[str], set[str], set[str], set[str]]] = {
    "category": ({"SELECT", "INSERT"}, set(), {"SELECT"}, {"SELECT"}),
    "raw_article": (
        {"SELECT", "INSERT", "(title)", "(published_at)", "(revision)", "(last_changed_at)"}
        | {"(last_seen_at)"},
        {"SELECT", "(issue_id)"},
        {"SELECT", "(issue_id)"},
        {"SELECT"},
    ),
    "article_revision": ({"INSERT"}, set(), set(), set()),
    "extraction_outbox": (
        {"SELECT", "INSERT", "DELETE", "(sent_at)", "(sends)"},
        {"SELECT", "DELETE", "(sent_at)", "(sends)", "(not_before)", "(attempts)"},
        {"SELECT"},
        {"SELECT"},
    ),
    # the reader's SELECT is of some columns (no text): has_table_privilege says none
    "article_extraction": (set(), {"SELECT", "INSERT", "UPDATE"}, {"SELECT"}, set()),
    "article_sketch": (set(), {"SELECT", "INSERT", "DELETE"}, set(), set()),
    "issue": (set(), set(), {"SELECT", "INSERT", "UPDATE"}, {"SELECT"}),
    "issue_event": (set(), set(), {"SELECT", "INSERT", "UPDATE", "DELETE"}, {"SELECT"}),
    "article_embedding": (set(), set(), {"SELECT", "INSERT", "UPDATE"}, set()),
    "issue_text_read": (set(), set(), {"SELECT", "INSERT"}, set()),
    # the migrations' own record: the owner's alone
    "schema_migration": (set(), set(), set(), set()),
}
PRIVILEGES = ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER")


def rights(database: Database, role: str) -> dict[str, set[str]]:
    """What ``role`` may do on each table of the schema, as PostgreSQL answers."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            WITH public_table AS (
                SELECT c.oid, c.relname FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
            )
            SELECT t.relname, p.privilege
            FROM public_table t CROSS JOIN unnest(%(privileges)s) AS p(privilege)
            WHERE has_table_privilege(%(role)s, t.oid, p.privilege)
            UNION
            SELECT t.relname, '(' || a.attname || ')'
            FROM public_table t JOIN pg_attribute a ON a.attrelid = t.oid
            WHERE a.attnum > 0 AND NOT a.attisdropped
              AND NOT has_table_privilege(%(role)s, t.oid, 'UPDATE')
              AND has_column_privilege(%(role)s, t.oid, a.attnum, 'UPDATE')
            UNION
            SELECT t.relname, NULL FROM public_table t
            """,
            {"role": role, "privileges": list(PRIVILEGES)},
        )
        found: dict[str, set[str]] = {}
        for table, privilege in cursor.fetchall():
            found.setdefault(table, set()).update({privilege} if privilege else set())
        return found


def test_every_table_names_what_each_role_may_do_there(database):
    tables = set(rights(database, WORKER))
    assert tables == set(RIGHTS), "a table without its roles' rights: grant them in its migration"
    for index, role in enumerate(ROLES):
        assert rights(database, role) == {t: r[index] for t, r in RIGHTS.items()}, role


@pytest.fixture
def connect(postgres_url: str) -> Iterator[Any]:
    """connect(role) -> a connection as ``role``; every statement is rolled back after."""
    opened: list[Any] = []

    def open_as(role: str) -> Any:
        connection = psycopg2.connect(as_role(postgres_url, role))
        opened.append(connection)
        return connection

    yield open_as
    for connection in opened:
        connection.close()


def test_each_function_connects_as_its_role(connect):
    for role in ROLES:
        with connect(role).cursor() as cursor:
            cursor.execute(
                "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user"
            )
            assert cursor.fetchone() == (role, False)


REFUSED = [
    # the worker (feeds: untrusted content) writes its articles and their outbox, nothing else
    (WORKER, "UPDATE issue SET title = 'x'"),
    (WORKER, "UPDATE raw_article SET issue_id = NULL"),
    (WORKER, "DELETE FROM raw_article"),
    (WORKER, "INSERT INTO issue_event (issue_id, version, type, detail) VALUES (1, 1, 'x', '{}')"),
    (WORKER, "UPDATE article_extraction SET text = 'x'"),
    (WORKER, "SELECT text FROM article_extraction"),
    # the extractor (pages: untrusted content) records extractions; an article's issue only
    (EXTRACTOR, "UPDATE raw_article SET title = 'x'"),
    (EXTRACTOR, "UPDATE raw_article SET canonical_url = 'x'"),
    (EXTRACTOR, "INSERT INTO extraction_outbox (article_id, revision, url) VALUES (1, 1, 'u')"),
    (EXTRACTOR, "UPDATE issue SET state = 'closed'"),
    (EXTRACTOR, "DELETE FROM issue_event"),
    # the cluster function owns issues and their events; of an article, its issue only
    (CLUSTER, "UPDATE raw_article SET title = 'x'"),
    (CLUSTER, "UPDATE raw_article SET summary = 'x'"),
    (CLUSTER, "UPDATE article_extraction SET text = NULL"),
    (CLUSTER, "DELETE FROM raw_article"),
    (CLUSTER, "DELETE FROM extraction_outbox"),
    (CLUSTER, "INSERT INTO category (name) VALUES ('x')"),
    # the read-only function (issue 40) changes nothing, and reads no article's text
    (READER, "UPDATE issue SET title = 'x'"),
    (READER, "DELETE FROM issue_event"),
    (READER, "INSERT INTO category (name) VALUES ('x')"),
    (READER, "UPDATE raw_article SET issue_id = NULL"),
    (READER, "UPDATE issue_event SET published_at = now()"),
    (READER, "SELECT text FROM article_extraction"),
    (READER, "SELECT fingerprints FROM issue_text_read"),
] + [
    # none may change the schema, empty a table or touch the migrations' record
    (role, statement)
    for role in ROLES
    for statement in (
        "DROP TABLE raw_article",
        "ALTER TABLE raw_article ADD COLUMN x INTEGER",
        "ALTER TABLE issue DROP COLUMN title",
        "TRUNCATE raw_article CASCADE",
        "CREATE TABLE x (a INTEGER)",
        "CREATE INDEX x ON raw_article (title)",
        "DELETE FROM schema_migration",
        "ALTER ROLE newsdesk_worker SUPERUSER",
    )
]


@pytest.mark.parametrize(("role", "statement"), REFUSED)
def test_a_role_is_refused_what_its_function_does_not_own(database, connect, role, statement):
    connection = connect(role)
    with pytest.raises(psycopg2.errors.InsufficientPrivilege), connection.cursor() as cursor:
        cursor.execute(statement)
    connection.rollback()


def served_round(serve) -> list[str]:
    """Three outlets' feeds of one story, each linking to its page: three articles, one issue."""
    pages = [
        serve(
            f"/view/{n}",
            body=article_page("국회 예산안 통과", (BODY, *OTHER_BODIES)[n]),
            content_type="text/html",
        )
        for n in range(3)
    ]
    return [
        serve(
            f"/{n}.xml",
            body=(
                '<rss version="2.0"><channel><title>t</title>'
                f"<item><title>국회 예산안 통과</title><link>{pages[n]}</link></item>"
                "</channel></rss>"
            ).encode(),
        )
        for n in range(3)
    ]


def test_each_role_does_its_functions_work(aws_env, database, serve, postgres_url):
    # GIVEN a round's feeds; each function connects as its own role, stated here
    feeds = served_round(serve)
    # WHEN the worker stores the articles, the extractor their pages, the cluster function
    # folds them into an issue
    worker = invoke(
        "worker",
        worker_event([(u, "정치") for u in feeds]),
        DATABASE_URL=as_role(postgres_url, WORKER),
        **EXTRACT_ON,
    )
    pages = extract_all(aws_env, DATABASE_URL=as_role(postgres_url, EXTRACTOR))
    cluster = invoke("cluster", load_event("cluster"), DATABASE_URL=as_role(postgres_url, CLUSTER))
    # THEN each did all of it
    assert worker["outlets"][0]["new"] == 3
    assert [p["status"] for p in pages] == ["extract_ok"] * 3
    assert cluster["issues_created"] == 1
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*) FROM raw_article WHERE issue_id IS NOT NULL")
        assert cursor.fetchone() == (3,)
        cursor.execute("SELECT type FROM issue_event")
        assert cursor.fetchall() == [("IssueCreated",)]


def test_the_extractor_gives_a_late_original_its_copys_issue(database, postgres_url):
    # GIVEN a reprint B already in an issue, and A, published before it (as the superuser)
    at = datetime(2026, 12, 1, tzinfo=UTC)
    with database.transaction() as cursor:
        cursor.execute("INSERT INTO category (name) VALUES ('정치') RETURNING id")
        (category,) = cursor.fetchone()
        cursor.execute(
            "INSERT INTO issue (category_id, title, size) VALUES (%s, 't', 3) RETURNING id",
            (category,),
        )
        (issue,) = cursor.fetchone()
        ids = []
        for n, (published, issue_id) in enumerate(((at, None), (at.replace(hour=5), issue))):
            cursor.execute(
                "INSERT INTO raw_article (origin_url, canonical_url, source, category_id, title,"
                " published_at, issue_id) VALUES (%s, %s, 's', %s, 't', %s, %s) RETURNING id",
                (f"https://a.test/{n}", f"https://a.test/{n}", category, published, issue_id),
            )
            ids.append(cursor.fetchone()[0])
    a, b = ids
    store = ExtractionStore(Database(lambda: as_role(postgres_url, EXTRACTOR)))
    store.record(Extraction(b, 0, "extract_ok", None, 500, at))
    # WHEN the extractor, as its role, finds A to be B's original
    _, adopted = store.record(
        Extraction(a, 0, "extract_ok", None, 500, at), copies=Copies({b}, BY_CONTENT_HASH)
    )
    # THEN B is A's copy and A joined B's issue (the one column of an article it may set)
    assert adopted == [b]
    with database.transaction() as cursor:
        cursor.execute("SELECT issue_id FROM raw_article WHERE id = %s", (a,))
        assert cursor.fetchone() == (issue,)


# --- the passwords: set by the migrate function from each role's secret ----------------------


def scram_matches(verifier: str, password: str) -> bool:
    """Whether a SCRAM-SHA-256 verifier (pg_authid.rolpassword) is ``password``'s (RFC 5802)."""
    scheme, rest = verifier.split("$", 1)
    assert scheme == "SCRAM-SHA-256"
    iterations_salt, keys = rest.split("$")
    iterations, salt = iterations_salt.split(":")
    stored_key = base64.b64decode(keys.split(":")[0])
    salted = hashlib.pbkdf2_hmac(
        "sha256", password.encode(), base64.b64decode(salt), int(iterations)
    )
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    return hmac.compare_digest(hashlib.sha256(client_key).digest(), stored_key)


def role_secrets(aws_env, users: list[str]) -> dict[str, tuple[str, str]]:
    """Each user's secret as the template declares it: {user: (arn, password)}."""
    client = aws_env.client("secretsmanager")
    found = {}
    for user in users:
        password = client.get_random_password(PasswordLength=40, ExcludePunctuation=True)[
            "RandomPassword"
        ]
        value = json.dumps({"username": user, "password": password})
        arn = client.create_secret(Name=f"newsdesk/database/{user}", SecretString=value)["ARN"]
        found[user] = (arn, password)
    return found


def passwords(database: Database) -> dict[str, str | None]:
    with database.transaction() as cursor:
        cursor.execute(
            "SELECT rolname, rolpassword FROM pg_authid WHERE rolname = ANY(%s)", (list(ROLES),)
        )
        return dict(cursor.fetchall())


def test_the_migrate_function_gives_each_role_its_secrets_password(
    aws_env, feed_server, database, postgres_url
):
    # GIVEN each role's secret, named in the custom resource (SchemaMigrations' RoleSecrets)
    secrets = role_secrets(aws_env, list(ROLES))
    event = event_to(feed_server, "Update")
    event["ResourceProperties"]["RoleSecrets"] = [arn for arn, _ in secrets.values()]
    # WHEN CloudFormation calls the migrate function
    result = invoke("migrate", event, DATABASE_URL=postgres_url)
    # THEN it succeeds and each role's password is its secret's, stored as a SCRAM verifier
    assert result["Status"] == "SUCCESS", result["Reason"]
    assert result["Reason"].endswith(f"passwords set: {list(ROLES)}")
    stored = passwords(database)
    for role, (_, password) in secrets.items():
        assert scram_matches(str(stored[role]), password), role
        assert password not in str(stored[role])


def test_a_secret_naming_another_user_changes_no_password(
    aws_env, feed_server, database, postgres_url
):
    # GIVEN a role's secret and one naming the master user (a template mistake)
    before = passwords(database)
    secrets = role_secrets(aws_env, [WORKER, "postgres"])
    event = event_to(feed_server, "Update")
    event["ResourceProperties"]["RoleSecrets"] = [arn for arn, _ in secrets.values()]
    # WHEN the migrate function runs
    result = invoke("migrate", event, DATABASE_URL=postgres_url)
    # THEN the deploy fails, naming the user, and no password changed
    assert result["Status"] == "FAILED"
    assert "a role secret names postgres" in result["Reason"]
    assert passwords(database) == before
