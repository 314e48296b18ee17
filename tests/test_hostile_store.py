"""Hostile input at the stores (issue 22, points 1 and 9), on a real PostgreSQL: every key and
text stored has a bound its index and its readers hold, an entry or page PostgreSQL refuses is
that item's outcome (never a failed record, never "connection failed"), and the two guarantees
the article store gives, one row per canonical URL and an outbox row with every article, hold
when two writers race or a writer dies between its two writes."""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg2
import pytest

from newsdesk.aws.article_queue import ArticleQueue
from newsdesk.aws.raw import RawStore
from newsdesk.core.entry import Entry
from newsdesk.core.errors import StoreError
from newsdesk.core.fetched import FetchResult
from newsdesk.core.messages import ArticleMessage
from newsdesk.storage.articles import Article, ArticleStore, Outbox
from newsdesk.storage.database import Database
from newsdesk_local.aws_limits import enforce_limits
from tests.conftest import EXTRACT_ON, LogLines, article_page, container, worker_event

AT = datetime(2026, 12, 1, 9, tzinfo=UTC)


def incompressible(chars: int) -> str:
    """Hex of SHA-256 digests: text PostgreSQL's compression cannot shrink."""
    hexes = (hashlib.sha256(str(n).encode()).hexdigest() for n in range(chars // 64 + 1))
    return "".join(hexes)[:chars]


LONG = incompressible(3000)  # over btree's 2,704 bytes, however compressed


def article(n: int, title: str = "", link: str = "", **entry: Any) -> Article:
    link = link or f"https://news.example/a/{n}"
    canonical = entry.pop("canonical", link)
    values = {"summary": "", "guid": None, "published_at": AT - timedelta(hours=1), **entry}
    return Article(Entry(title=title or f"기사 {n}", link=link, **values), canonical)


def rows(database: Database, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with database.transaction() as cursor:
        cursor.execute(sql, args)
        return list(cursor.fetchall())


def articles(database: Database) -> list[tuple[Any, ...]]:
    return rows(database, "SELECT title, summary, guid FROM raw_article ORDER BY id")


# --- the article store's bounds --------------------------------------------------------------


def test_a_link_no_index_can_hold_is_refused_and_the_rest_stored(database):
    # GIVEN a feed's three entries, one whose link (or canonical URL) passes a key's bound
    batch = [
        article(1),
        article(2, link=f"https://news.example/a/2?x={LONG}"),
        article(3, canonical=f"https://news.example/a/3?x={LONG}"),
    ]
    # WHEN they are stored THEN the two are refused and counted, the other stored: no
    # "PostgreSQL connection failed" for the whole outlet's message
    result = ArticleStore(database).insert_articles("연합뉴스", "정치", batch, AT)
    assert (result.inserted, result.unstorable) == (1, 2)
    assert [title for title, _, _ in articles(database)] == ["기사 1"]


def test_a_guid_no_index_can_hold_is_left_out(database):
    result = ArticleStore(database).insert_articles("연합뉴스", "정치", [article(1, guid=LONG)], AT)
    assert result.inserted == 1
    assert articles(database) == [("기사 1", "", None)]


def test_titles_and_summaries_are_cut_to_their_bound_and_counted(database):
    store = ArticleStore(database)
    long_title, long_summary = "가" * 2_000, "나" * 100_000
    batch = [article(1, title=long_title, summary=long_summary), article(2)]
    # WHEN stored THEN cut, the cut said and counted
    result = store.insert_articles("연합뉴스", "정치", batch, AT)
    assert (result.inserted, result.truncated) == (2, 1)
    (title, summary, _), _ = articles(database)
    assert (len(title), len(summary)) == (500, 5000)
    assert title.endswith("…")
    assert summary.endswith("…")
    # AND the same entry seen again is no revision (its cut title is the stored one)
    again = store.insert_articles("연합뉴스", "정치", batch, AT + timedelta(minutes=30))
    assert (again.inserted, again.revised, again.duplicate_url) == (0, 0, 2)


def test_nul_and_lone_surrogates_are_stored_without_them(database):
    batch = [article(1, title="널\x00문자 \ud83d 하나", summary="요약\x00", guid="g\x00")]
    assert ArticleStore(database).insert_articles("연합뉴스", "정치", batch, AT).inserted == 1
    assert articles(database) == [("널문자 \ufffd 하나", "요약", "g")]


@pytest.fixture
def poison_title(database: Database) -> Iterator[str]:
    """A title PostgreSQL refuses as data (SQLSTATE class 22), as it would a value out of its
    range: a stand-in for whatever value a bound does not foresee."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.title = 'poison' THEN
                    RAISE EXCEPTION 'value refused' USING ERRCODE = '22023';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON raw_article
                FOR EACH ROW EXECUTE FUNCTION refuse_poison();
            """
        )
    yield "poison"
    with database.transaction() as cursor:
        cursor.execute("DROP TRIGGER refuse_poison ON raw_article; DROP FUNCTION refuse_poison()")


def test_an_entry_postgresql_refuses_is_refused_alone(database, poison_title):
    # GIVEN three entries, the second one PostgreSQL refuses for its data
    batch = [article(1), article(2, title=poison_title), article(3)]
    # WHEN they are stored (with the outbox) THEN the others are stored and queued, the one
    # refused counted: no StoreError fails the outlet's message every round
    result = ArticleStore(database).insert_articles("연합뉴스", "정치", batch, AT, Outbox())
    assert (result.inserted, result.unstorable) == (2, 1)
    assert [t for t, _, _ in articles(database)] == ["기사 1", "기사 3"]
    assert len(rows(database, "SELECT * FROM extraction_outbox")) == 2


def test_a_refusal_is_said_as_the_datas_not_as_a_lost_connection(database, poison_title):
    with pytest.raises(StoreError) as caught, database.transaction() as cursor:
        cursor.execute(
            "INSERT INTO raw_article (origin_url, canonical_url, source, title, category_id)"
            " VALUES ('u', 'u', 's', %s, (SELECT min(id) FROM category))",
            (poison_title,),
        )
    assert "connection failed" not in str(caught.value)
    assert str(caught.value).startswith("PostgreSQL refused the data")
    assert type(caught.value).__name__ == "StoreDataError"


def test_the_worker_stores_a_feed_with_an_overlong_link_and_counts_it(
    aws_env, database, serve, feed_server
):
    # GIVEN a feed whose second entry links to a URL no index can hold (the parser refuses
    # it: counted without a link); the store refuses what reaches it the same way
    long_link = f"{feed_server.url('/a/2')}?x={LONG}"
    items = "".join(
        f"<item><title>기사 {n}</title><link>{link}</link></item>"
        for n, link in ((1, feed_server.url("/a/1")), (2, long_link))
    )
    body = (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>{items}</channel></rss>'
    )
    url = serve("/f.xml", body=body.encode())
    response = container("worker")(worker_event([(url, "정치")], ignore_schedule=True))
    # THEN the outlet's message succeeds, one article stored
    assert response["batchItemFailures"] == []
    (outlet,) = response["outlets"]
    assert (outlet["entries_seen"], outlet["new"], outlet["unstorable"]) == (2, 1, 0)
    # AND the other counted: refused before the store, as an entry without a link it can keep
    (feed,) = outlet["feeds"]
    assert (feed["without_link"], feed["unstorable"]) == (1, 0)


# --- the extraction store and the extractor --------------------------------------------------


def queued_article(
    aws_env: Any, database: Database, serve: Any, path: str = "/view/1", **page: Any
) -> int:
    """An article stored by the worker whose page is served at ``path``; its id."""
    url = serve(path, body=article_page("국회 예산안 통과", **page), content_type="text/html")
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        f"<item><title>국회 예산안 통과</title><link>{url}</link></item></channel></rss>"
    )
    event = worker_event(
        [(serve(f"/feed{path}", body=feed.encode()), "정치")], ignore_schedule=True
    )
    container("worker", **EXTRACT_ON)(event)
    ((article_id,),) = rows(database, "SELECT id FROM raw_article WHERE origin_url = %s", url)
    return int(article_id)


def extract_queued(aws_env: Any) -> dict[str, Any]:
    """The article queue's messages, one batch, through a fresh extractor container."""
    sqs, queue = aws_env.client("sqs"), aws_env.queue_url("ArticleQueue")
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    event = {"Records": [_record(m["Body"], m["MessageId"]) for m in messages]}
    return container("extract", **EXTRACT_ON)(event)


def _record(body: str, message_id: str) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "receiptHandle": message_id,
        "body": body,
        "attributes": {"MessageGroupId": "127.0.0.1", "ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:ap-northeast-2:123456789012:newsdesk-articles.fifo",
        "awsRegion": "ap-northeast-2",
    }


def extraction(database: Database, article_id: int) -> tuple[Any, ...]:
    ((row),) = rows(
        database,
        "SELECT status, reason, page_key, canonical_ignored FROM article_extraction"
        " WHERE article_id = %s",
        article_id,
    )
    return tuple(row)


def test_a_page_redirecting_to_a_url_no_index_can_hold_gets_its_outcome(aws_env, database, serve):
    # GIVEN two articles of one host, the first's page redirecting to a URL of 3 kB
    target = serve(
        f"/story?x={LONG}", body=article_page("국회 예산안 통과"), content_type="text/html"
    )
    first = queued_article(aws_env, database, serve, "/view/1")
    serve("/view/1", status=302, headers=(("Location", target),))
    second = queued_article(aws_env, database, serve, "/view/2")
    # WHEN the host's batch is extracted
    response = extract_queued(aws_env)
    # THEN no record fails (the host's other article goes on), and each has its outcome: the
    # long one extracted with no page key (its own canonical URL stands for it)
    assert response["batchItemFailures"] == []
    assert extraction(database, first)[:3] == ("extract_ok", None, None)
    assert extraction(database, second)[0] == "extract_ok"
    assert rows(database, "SELECT * FROM extraction_outbox") == []


def test_a_same_site_canonical_no_index_can_hold_is_ignored_with_its_reason(
    aws_env, database, serve
):
    canonical = f"/view/1?x={LONG}"
    article_id = queued_article(aws_env, database, serve, "/view/1", canonical=canonical)
    response = extract_queued(aws_env)
    assert response["batchItemFailures"] == []
    status, _, page_key, ignored = extraction(database, article_id)
    assert (status, ignored) == ("extract_ok", "too_long")
    assert page_key is not None
    assert LONG not in page_key
    (report,) = response["articles"]
    assert report["canonical_ignored"] == "too_long"


@pytest.fixture
def poison_page(database: Database) -> Iterator[None]:
    """Pages PostgreSQL refuses as data (SQLSTATE class 22) when extracted whole."""
    with database.transaction() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION refuse_page() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NEW.status = 'extract_ok' THEN
                    RAISE EXCEPTION 'value refused' USING ERRCODE = '22023';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER refuse_page BEFORE INSERT OR UPDATE ON article_extraction
                FOR EACH ROW EXECUTE FUNCTION refuse_page();
            """
        )
    yield
    with database.transaction() as cursor:
        cursor.execute(
            "DROP TRIGGER refuse_page ON article_extraction; DROP FUNCTION refuse_page()"
        )


def test_a_page_postgresql_refuses_is_recorded_unstorable(aws_env, database, serve, poison_page):
    article_id = queued_article(aws_env, database, serve)
    response = extract_queued(aws_env)
    # THEN the message succeeds, the outcome is recorded with its reason, the row closed
    assert response["batchItemFailures"] == []
    assert extraction(database, article_id)[:2] == ("extract_error", "unstorable")
    assert [a["reason"] for a in response["articles"]] == ["unstorable"]
    assert rows(database, "SELECT * FROM extraction_outbox") == []


def test_the_extractor_fetches_the_url_stored_not_the_messages(
    aws_env, database, serve, feed_server
):
    # GIVEN an article and a message for it naming another URL
    article_id = queued_article(aws_env, database, serve)
    elsewhere = serve("/elsewhere", body=article_page("다른 기사"), content_type="text/html")
    message = ArticleMessage(article_id, 0, elsewhere)
    event = {"Records": [_record(message.to_json(), "m1")]}
    # WHEN it is extracted THEN the stored page is fetched, the other never
    response = container("extract", **EXTRACT_ON)(event)
    (report,) = response["articles"]
    assert report["status"] == "extract_ok"
    assert report["url"].endswith("/view/1")
    assert feed_server.requests.get("/elsewhere", 0) == 0
    assert feed_server.requests["/view/1"] == 1


def test_the_extractor_logs_pages_by_host_and_path(aws_env, database, serve, capsys):
    article_id = queued_article(aws_env, database, serve, "/view/1?token=secret")
    log = LogLines(capsys)
    log.start()
    try:
        extract_queued(aws_env)
        lines = log.read()
    finally:
        log.stop()
    (logged,) = [line for line in lines if line.get("message") == "article extracted"]
    assert logged["article_id"] == article_id
    assert logged["url"].endswith("/view/1?…")
    assert "secret" not in json.dumps(lines)


# --- the raw layer's metadata (S3 refuses over 2 KB; moto does not: aws_limits does) ----------


def test_a_page_with_a_huge_final_url_and_headers_is_kept(aws_env):
    client = enforce_limits(aws_env.client("s3"))
    bucket = aws_env.function_env("ExtractorFunction")["RAW_BUCKET"]
    fetched = FetchResult(
        url=f"https://news.example/a/1?x={LONG}",
        status=200,
        content=b"<html></html>",
        headers={"ETag": LONG, "Cache-Control": LONG, "Content-Type": "text/html"},
    )
    store = RawStore(client, bucket)
    key = store.put_page(1, 0, fetched, AT)
    kept = store.page(key)
    assert kept.content == b"<html></html>"
    assert kept.final_url.startswith("https://news.example/a/1?x=")
    assert kept.headers["Content-Type"] == "text/html"


def test_the_s3_stand_in_refuses_what_s3_refuses(aws_env):
    client = enforce_limits(aws_env.client("s3"))
    bucket = aws_env.function_env("ExtractorFunction")["RAW_BUCKET"]
    with pytest.raises(Exception, match="MetadataTooLarge"):
        client.put_object(Bucket=bucket, Key="k", Body=b"x", Metadata={"a": "b" * 2100})


# --- the two guarantees ------------------------------------------------------------------------


class _Paused(Database):
    """A database whose transactions stop before a statement (``before``) until ``at``
    (a callable) returns: where a test holds a writer between two of its writes."""

    def __init__(self, url: str, before: bytes, at: Any) -> None:
        super().__init__(lambda: url)
        self._before, self._at = before, at

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Any]:
        with super().transaction() as cursor:
            yield _PausingCursor(cursor, self._before, self._at)


class _PausingCursor:
    def __init__(self, cursor: Any, before: bytes, at: Any) -> None:
        self._cursor, self._before, self._at = cursor, before, at

    def execute(self, query: Any, *args: Any) -> Any:
        text = query if isinstance(query, bytes) else str(query).encode()
        if self._before in text:
            self._at(self._cursor)
        return self._cursor.execute(query, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


def test_two_writers_racing_store_one_article_per_canonical_url(database, postgres_url):
    # GIVEN two workers with the same article under two links (a tracking parameter apart:
    # one canonical URL), each past its check of what is stored before either inserts
    with database.transaction() as cursor:  # the category exists: neither waits on the other's
        cursor.execute("INSERT INTO category (name) VALUES ('정치')")
    both_checked = threading.Barrier(2, timeout=10)
    writers = [
        ArticleStore(
            _Paused(postgres_url, b"INSERT INTO raw_article", lambda _: both_checked.wait())
        )
        for _ in range(2)
    ]
    links = ["https://news.example/a/1", "https://news.example/a/1?utm_source=rss"]
    results: list[Any] = []

    def write(store: ArticleStore, link: str) -> None:
        batch = [article(1, link=link, canonical="https://news.example/a/1")]
        results.append(store.insert_articles("연합뉴스", "정치", batch, AT))

    threads = [
        threading.Thread(target=write, args=pair) for pair in zip(writers, links, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # THEN one row: the unique index on the canonical URL decided, and the other writer
    # counted it a duplicate
    assert rows(database, "SELECT count(*) FROM raw_article") == [(1,)]
    assert sorted((r.inserted, r.duplicate_url) for r in results) == [(0, 1), (1, 0)]


def test_a_writer_killed_between_its_writes_leaves_no_article_without_its_outbox_row(
    database, postgres_url
):
    # GIVEN a worker whose connection is killed as it is about to write the outbox row
    def kill(cursor: Any) -> None:
        with psycopg2.connect(postgres_url) as other, other.cursor() as killer:
            killer.execute(
                "SELECT pg_terminate_backend(%s)", (cursor.connection.get_backend_pid(),)
            )

    store = ArticleStore(_Paused(postgres_url, b"INSERT INTO extraction_outbox", kill))
    # WHEN it stores an article THEN it fails (SQS retries it) and stored nothing
    with pytest.raises(StoreError):
        store.insert_articles("연합뉴스", "정치", [article(1)], AT, Outbox())
    articles_stored = rows(database, "SELECT count(*) FROM raw_article")
    queued = rows(database, "SELECT count(*) FROM extraction_outbox")
    assert articles_stored == queued == [(0,)]
    # AND the retry stores both
    ArticleStore(database).insert_articles("연합뉴스", "정치", [article(1)], AT, Outbox())
    assert rows(database, "SELECT count(*) FROM extraction_outbox") == [(1,)]


def test_a_host_too_long_for_a_message_group_still_queues_its_pages(aws_env):
    # GIVEN pages of a host of 200 characters (DNS allows 253; a group id 128), and another's
    sqs = enforce_limits(aws_env.client("sqs"))
    queue = ArticleQueue(sqs, aws_env.queue_url("ArticleQueue"))
    host = ".".join(["a" * 49] * 4)
    messages = [
        ArticleMessage(1, 0, f"https://{host}/a/1"),
        ArticleMessage(2, 0, f"https://{host}/a/2"),
        ArticleMessage(3, 0, "https://news.example/a/3"),
    ]
    # WHEN they are sent THEN all go, the long host's two in one group of its own
    assert queue.send(messages) == messages
    received = sqs.receive_message(
        QueueUrl=aws_env.queue_url("ArticleQueue"),
        MaxNumberOfMessages=10,
        AttributeNames=["MessageGroupId"],
    )["Messages"]
    groups = {m["Attributes"]["MessageGroupId"] for m in received}
    assert len(groups) == 2
    assert all(len(group) <= 128 for group in groups)
