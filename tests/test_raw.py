"""The raw layer on moto's S3: bodies kept with their metadata, and parsed again later."""

import gzip
import os
from datetime import UTC, datetime, timedelta

import pytest

from newsdesk.aws.clients import dynamodb_client
from newsdesk.aws.raw import RawStore, feed_prefix
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.collector import CollectPolicy, EntryFilter, OutletCollector
from newsdesk.collect.reparse import reparse
from newsdesk.core.messages import OutletMessage
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed, Outlet
from newsdesk.storage.articles import ArticleStore
from tests.conftest import served_bytes

START = datetime(2026, 12, 1, tzinfo=UTC)


@pytest.fixture
def raw(aws_env):
    return RawStore(aws_env.client("s3"), os.environ["RAW_BUCKET"])


@pytest.fixture
def collect(database, aws_env, raw):
    policy = CollectPolicy.from_settings(
        Settings(
            fetch_allow_private_networks=True, fetch_timeout_seconds=2, fetch_interval_seconds=0
        )
    )
    states = StateTable(dynamodb_client(), "newsdesk-state")

    def run(feeds, at=START):
        clock = lambda: at + timedelta(minutes=5)  # noqa: E731
        collector = OutletCollector(policy, ArticleStore(database), states, clock=clock, raw=raw)
        outlet = Outlet("연합뉴스", tuple(Feed("연합뉴스", u, c) for u, c in feeds))
        return collector.collect(OutletMessage(outlet, at, ignore_schedule=True))

    return run


def objects(aws_env):
    listed = aws_env.client("s3").list_objects_v2(Bucket=os.environ["RAW_BUCKET"])
    return [o["Key"] for o in listed.get("Contents", [])]


def test_each_fetched_body_is_kept_once_with_its_metadata(collect, serve, aws_env):
    good = serve(
        "/good.xml", "good.xml", headers=(("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT"),)
    )
    html = serve("/html", "not-a-feed.html", content_type="text/html")
    first = collect([(good, "정치"), (html, "경제")])
    assert first.counts()["raw_bodies_stored"] == 2
    keys = objects(aws_env)
    assert len(keys) == 2
    feed = Feed("연합뉴스", good, "정치")
    (key,) = [k for k in keys if k.startswith(feed_prefix(feed))]
    # under feeds/, the prefix the worker's policy names (the extractor's is pages/)
    assert key.split("/")[::3] == ["feeds", "2026-12-01"]
    stored = aws_env.client("s3").get_object(Bucket=os.environ["RAW_BUCKET"], Key=key)
    assert gzip.decompress(stored["Body"].read()) == served_bytes("good.xml")
    meta = stored["Metadata"]
    assert (meta["status"], meta["category"]) == ("200", "%EC%A0%95%EC%B9%98")
    assert meta["h-last-modified"] == "Tue%2C%2001%20Dec%202026%2000%3A00%3A00%20GMT"
    # an unchanged body is not stored again
    second = collect([(good, "정치"), (html, "경제")], at=START + timedelta(minutes=30))
    assert second.counts()["raw_bodies_stored"] == 0
    assert len(objects(aws_env)) == 2


def test_reparse_stores_again_without_fetching(collect, serve, feed_server, raw, database):
    good = serve("/good.xml", "good.xml")
    html = serve("/html", "not-a-feed.html", content_type="text/html")
    collect([(good, "정치"), (html, "경제")])
    with database.transaction() as cursor:  # as if a bug had lost the round's articles
        cursor.execute("DELETE FROM raw_article")
    requests_before = sum(feed_server.requests.values())
    # WHEN the stored bodies are parsed again
    run = reparse(raw, ArticleStore(database), EntryFilter.from_settings(Settings()), START)
    # THEN the articles are back, the HTML body is explained, and nothing was fetched
    assert run.totals() == {
        "bodies": 2,
        "failed": 1,
        "entries_seen": 5,
        "new": 3,
        "duplicate": 0,
        "photo_filtered": 2,
        "too_old": 0,
    }
    assert sum(feed_server.requests.values()) == requests_before
    (body,) = [b for b in raw.since(START) if b.feed.url == good]
    assert body.content.startswith(b"<?xml")
    assert (body.status, body.feed.category) == (200, "정치")
    # AND a second reparse finds everything stored
    again = reparse(raw, ArticleStore(database), EntryFilter.from_settings(Settings()), START)
    assert again.totals()["new"] == 0


def test_since_excludes_older_bodies(collect, serve, raw):
    collect([(serve("/good.xml", "good.xml"), "정치")])
    assert list(raw.since(START + timedelta(days=1))) == []
    assert len(list(raw.since(START))) == 1


def test_bodies_kept_before_the_feeds_prefix_are_read_too(collect, serve, raw, aws_env):
    # GIVEN a body stored now (feeds/…) and one stored by an earlier release (<outlet>/…,
    # kept until the bucket's lifecycle expires it), and an article page (pages/…)
    collect([(serve("/good.xml", "good.xml"), "정치")])
    (key,) = objects(aws_env)
    s3, bucket = aws_env.client("s3"), os.environ["RAW_BUCKET"]
    s3.copy_object(Bucket=bucket, Key=key.removeprefix("feeds/"), CopySource=f"{bucket}/{key}")
    s3.put_object(Bucket=bucket, Key="pages/2026-12-01/1-r0.html.gz", Body=gzip.compress(b"x"))
    # WHEN the bodies since the day are read
    bodies = list(raw.since(START))
    # THEN both feed bodies are, and the page is not
    assert sorted(b.key for b in bodies) == sorted([key, key.removeprefix("feeds/")])
