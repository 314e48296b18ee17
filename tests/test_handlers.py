"""The Lambda entry points, invoked in-process with the files in events/ (the ones
`sam local invoke -e` takes), against moto, PostgreSQL and the loopback feed server."""

import json
import sys
from datetime import UTC, datetime, timedelta

import pytest
from botocore.stub import Stubber

from newsdesk.aws.clients import sqs_client
from newsdesk.aws.outlet_queue import OutletQueue
from newsdesk.aws.state_table import StateTable
from newsdesk.collect.fanout import fan_out
from newsdesk.core.breaker import BreakerPolicy
from newsdesk.core.errors import FanOutError
from newsdesk.core.messages import OutletMessage
from newsdesk.core.schedule import OutletState
from newsdesk.core.sources import Feed
from newsdesk.core.times import format_time, parse_time
from newsdesk_local.feedserver import Route
from tests.conftest import USER_AGENT, invoke, load_event, rows, served_bytes, worker, worker_event


def receive_all(sqs, queue_url):
    messages = []
    while batch := sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get(
        "Messages", []
    ):
        messages += batch
    return messages


def write_sources(tmp_path, outlets: int, feeds_each: int = 2):
    lines = []
    for o in range(outlets):
        for f in range(feeds_each):
            lines.append(
                f'- {{source: "언론사{o:02d}", url: "https://o{o}.test/{f}.xml", category: "정치"}}'
            )
    path = tmp_path / "sources.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_fanout_sends_one_message_per_outlet(aws_env, tmp_path):
    # GIVEN 25 outlets of 2 feeds (three SendMessageBatch calls)
    sources = write_sources(tmp_path, outlets=25)
    # WHEN the scheduled event arrives
    result = invoke("fanout", load_event("fanout"), SOURCES_PATH=str(sources))
    # THEN 25 messages, each one outlet with its feeds in order and the schedule time
    assert result == {
        "outlets": 25,
        "feeds": 50,
        "messages_sent": 25,
        "batches": 3,
        "retried": 0,
        "outlets_skipped_open": 0,
        "outlets_silent": 0,
        "outlets_cooling": [],
        "refused": None,
        "unreachable_round": None,  # no round before it reached nothing (issue 41)
        "outlets_forgiven": 0,
    }
    messages = receive_all(aws_env.client("sqs"), aws_env.queue_url("OutletQueue"))
    parsed = sorted(
        (OutletMessage.from_json(m["Body"]) for m in messages), key=lambda m: m.outlet.name
    )
    assert [m.outlet.name for m in parsed] == [f"언론사{o:02d}" for o in range(25)]
    assert [f.url for f in parsed[3].outlet.feeds] == [
        "https://o3.test/0.xml",
        "https://o3.test/1.xml",
    ]
    assert {m.scheduled_at for m in parsed} == {parse_time("2026-12-01T00:00:00Z")}


def test_fanout_skips_outlets_whose_breaker_is_open(aws_env, tmp_path):
    # GIVEN outlet 03 tripped at the last round (open for 30 min) and outlet 04 long ago
    sources = write_sources(tmp_path, outlets=6)
    table = StateTable(aws_env.client("dynamodb"), "newsdesk-state")
    scheduled = parse_time(load_event("fanout")["time"])
    for name, tripped_at in (
        ("언론사03", scheduled - timedelta(minutes=5)),
        ("언론사04", scheduled - timedelta(hours=2)),
    ):
        outlet = OutletState(name)
        outlet.breaker.tripped(tripped_at, BreakerPolicy())
        table.save(outlet)
    result = invoke("fanout", load_event("fanout"), SOURCES_PATH=str(sources))
    # THEN 03 is skipped (cooling down) and 04 is sent, to be probed half-open
    assert (result["messages_sent"], result["outlets_skipped_open"]) == (5, 1)
    assert result["outlets_cooling"] == [
        {
            "source": "언론사03",
            "open_until": format_time(scheduled + timedelta(minutes=25)),
            "trips": 1,
        }
    ]
    names = {
        OutletMessage.from_json(m["Body"]).outlet.name
        for m in receive_all(aws_env.client("sqs"), aws_env.queue_url("OutletQueue"))
    }
    assert "언론사03" not in names
    assert "언론사04" in names


def test_a_feeds_user_agent_goes_from_the_sources_file_through_sqs_to_its_fetch(
    aws_env, database, serve, feed_server, tmp_path
):
    # GIVEN an outlet whose second feed insists on a browser's User-Agent
    browser = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_7) Safari/605.1.15"
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        f'- {{source: A, url: "{serve("/p.xml", "good.xml")}", category: 정치}}\n'
        f'- {{source: A, url: "{serve("/e.xml", "atom.xml")}", category: 경제, '
        f'user_agent: "{browser}"}}\n',
        encoding="utf-8",
    )
    # WHEN the fan-out sends its message and the worker receives it from the queue
    invoke("fanout", load_event("fanout"), SOURCES_PATH=str(sources))
    (sent,) = receive_all(aws_env.client("sqs"), aws_env.queue_url("OutletQueue"))
    event = load_event("worker")
    body = json.loads(sent["Body"])
    body["scheduled_at"] = format_time(datetime.now(UTC))  # not stale
    event["Records"][0]["body"] = json.dumps(body, ensure_ascii=False)
    response = invoke("worker", event)
    # THEN that feed alone was asked with it, the other with newsdesk's own
    assert response["outlets"][0]["feeds_failed"] == 0
    assert feed_server.request_headers["/p.xml"][0]["User-Agent"] == USER_AGENT
    assert feed_server.request_headers["/e.xml"][0]["User-Agent"] == browser


def test_fanout_with_a_broken_sources_file_sends_nothing(aws_env, tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text('- {source: A, url: "https://a.test/1", category: 정치}\n- {source: B}\n')
    with pytest.raises(Exception, match="entry 2: field 'url'"):
        invoke("fanout", load_event("fanout"), SOURCES_PATH=str(path))
    assert receive_all(aws_env.client("sqs"), aws_env.queue_url("OutletQueue")) == []


def batch_response(ids, failed):
    return {
        "Successful": [
            {"Id": i, "MessageId": f"m{i}", "MD5OfMessageBody": "x"} for i in ids if i not in failed
        ],
        "Failed": [{"Id": i, "SenderFault": False, "Code": "InternalError"} for i in failed],
    }


def test_fanout_retries_the_entries_sqs_failed(aws_env):
    feeds = [Feed(f"O{n}", f"https://o{n}.test/feed", "정치") for n in range(3)]
    sqs = sqs_client()
    with Stubber(sqs) as stub:
        stub.add_response("send_message_batch", batch_response(["0", "1", "2"], {"1"}))
        stub.add_response("send_message_batch", batch_response(["1"], set()))
        queue = OutletQueue(sqs, "https://q.test/q", sleep=lambda _: None)
        result = fan_out(feeds, parse_time("2026-12-01T00:00:00Z"), queue)
        stub.assert_no_pending_responses()
    assert (result.messages_sent, result.batches, result.retried) == (3, 2, 1)


def test_fanout_raises_when_sqs_keeps_failing(aws_env):
    feeds = [Feed("O1", "https://o1.test/feed", "정치")]
    sqs = sqs_client()
    with Stubber(sqs) as stub:
        for _ in range(3):
            stub.add_response("send_message_batch", batch_response(["0"], {"0"}))
        queue = OutletQueue(sqs, "https://q.test/q", sleep=lambda _: None)
        with pytest.raises(FanOutError, match="O1"):
            fan_out(feeds, parse_time("2026-12-01T00:00:00Z"), queue)


def count_articles(database):
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*) FROM raw_article")
        return cursor.fetchone()[0]


def test_worker_event_file_is_processed(aws_env, database, serve):
    event = worker_event(
        [
            (serve("/p.xml", "good.xml"), "정치"),
            (serve("/e.xml", "atom.xml"), "경제"),
            (serve("/s.xml", status=500, body=b""), "사회"),
        ]
    )
    response = invoke("worker", event)
    assert response["batchItemFailures"] == []
    (outlet,) = response["outlets"]
    assert (outlet["source"], outlet["new"], outlet["feeds_failed"]) == ("연합뉴스", 4, 1)
    assert count_articles(database) == 4


def test_the_same_event_twice_leaves_the_same_rows(aws_env, database, feed_server, serve):
    # GIVEN an on-demand message whose feed is stored once
    event = worker_event([(serve("/p.xml", "good.xml"), "정치")], ignore_schedule=True)
    first = invoke("worker", event)
    stored = rows(database)
    # WHEN SQS delivers it again, the body changed by a byte so that it is parsed and stored
    # again rather than found not modified
    feed_server.add("/p.xml", Route(served_bytes("good.xml") + b"\n"))
    second = invoke("worker", event)
    # THEN the store met every article and wrote none of them twice
    assert (first["outlets"][0]["new"], second["outlets"][0]["new"]) == (3, 0)
    assert second["outlets"][0]["duplicate_url"] == 3
    assert rows(database) == stored


def test_postgres_unreachable_fails_the_record_and_loses_nothing(aws_env, database, serve):
    # GIVEN a worker whose database is down
    event = worker_event([(serve("/p.xml", "good.xml"), "정치")])
    # WHEN the record is processed THEN it is reported failed, for SQS to deliver again
    response = invoke("worker", event, DATABASE_URL="postgresql://newsdesk@127.0.0.1:9/none")
    assert response["batchItemFailures"] == [{"itemIdentifier": event["Records"][0]["messageId"]}]
    assert response["outlets"] == []
    # AND the redelivery, once the database is back, stores everything
    assert invoke("worker", event)["batchItemFailures"] == []
    assert count_articles(database) == 3


def test_dynamodb_failure_fails_the_record(aws_env, database, serve):
    event = worker_event([(serve("/p.xml", "good.xml"), "정치")])
    response = invoke("worker", event, STATE_TABLE_NAME="no-such-table")
    assert len(response["batchItemFailures"]) == 1


def test_one_bad_record_does_not_fail_the_batch(aws_env, database, serve):
    event = worker_event([(serve("/p.xml", "good.xml"), "정치")])
    poison = dict(event["Records"][0], messageId="poison", body="{not json")
    event["Records"].append(poison)
    response = invoke("worker", event)
    assert response["batchItemFailures"] == [{"itemIdentifier": "poison"}]
    assert [o["source"] for o in response["outlets"]] == ["연합뉴스"]


def test_worker_logs_the_seed_line_and_emits_the_funnel(aws_env, database, serve, capsys):
    url = serve("/p.xml", "good.xml")
    # Powertools' handler writes to the stdout of the module's import; point it at this test's.
    worker.logger.registered_handler.setStream(sys.stdout)
    invoke("worker", worker_event([(url, "정치")]))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line]
    (feed_log,) = [entry for entry in lines if entry.get("message", "").startswith("Source:")]
    assert feed_log["message"] == "Source: 연합뉴스 | New: 3 | Skip: 0 | Total: 3"
    assert (feed_log["outlet"], feed_log["feed"], feed_log["photo_filtered"]) == (
        "연합뉴스",
        url,
        2,
    )
    (emf,) = [entry for entry in lines if "_aws" in entry]
    assert emf["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "newsdesk-test"
    assert (emf["ArticlesNew"], emf["ArticlesPhotoFiltered"], emf["FeedsOk"]) == ([3], [2], [1])
    assert emf["MessagesFailed"] == [0]


POISON = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"'
    b' xmlns:cc="http://backend.userland.com/creativeCommonsRssModule"><channel><title>t</title>'
    b"<item><title>\xea\xb8\xb0\xec\x82\xac</title><link>https://example.test/poison</link></item>"
    # a broken tag, then a licence outside any item: feedparser's loose parser raises KeyError
    # (an emoji as a surrogate pair, the poison before issue 22, is now read)
    b"<i<title>tem><cc:license>x</cc:license></channel></rss>"
)


def test_a_feed_that_crashes_the_parser_is_that_feeds_failure_not_the_outlets(
    aws_env, database, serve
):
    # GIVEN an outlet whose first feed holds a poison entry and whose second is good
    event = worker_event(
        [(serve("/poison.xml", body=POISON), "정치"), (serve("/good.xml", "good.xml"), "경제")]
    )
    # WHEN the worker collects it
    response = invoke("worker", event)
    # THEN the record succeeds, the good feed is stored and the poison one counted failed
    assert response["batchItemFailures"] == []
    (outlet,) = response["outlets"]
    poisoned, good = outlet["feeds"]
    assert (poisoned["status"], poisoned["failure_class"]) == ("failed", "parse_error")
    assert "KeyError" in poisoned["error"]
    assert (good["status"], good["new"]) == ("ok", 3)
    assert outlet["failed_parse_error"] == 1
    assert count_articles(database) == 3


def test_a_raw_layer_fault_still_fails_the_record(aws_env, database, serve):
    # the raw body is written outside the per-feed catch: S3 refusing it is infrastructure
    event = worker_event([(serve("/good.xml", "good.xml"), "정치")])
    response = invoke("worker", event, RAW_BUCKET="no-such-bucket")
    assert response["batchItemFailures"] == [{"itemIdentifier": event["Records"][0]["messageId"]}]
    assert count_articles(database) == 0
