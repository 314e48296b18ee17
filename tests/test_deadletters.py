"""`newsdesk dlq redrive`: dead letters kept between local runs and sent back — outlet
messages to the worker's queue (and collected, as the event source mapping would), schedule
events to the function each names."""

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from newsdesk.core.entry import Entry
from newsdesk.core.messages import ArticleMessage, OutletMessage
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed, Outlet
from newsdesk.storage.articles import Article, ArticleStore, Outbox
from newsdesk_local.cli import main
from newsdesk_local.commands.dlq import (
    ARTICLE_DEAD_LETTERS,
    OUTLET_DEAD_LETTERS,
    SCHEDULE_DEAD_LETTERS,
)
from newsdesk_local.deadletters import TARGET_ATTRIBUTE
from newsdesk_local.invocations import FANOUT, scheduled_event
from newsdesk_local.services import LocalServices
from tests.conftest import EXTRACT_ON, article_page, rows

pytestmark = [pytest.mark.slow, pytest.mark.integration]


@pytest.fixture
def env(data_dir, postgres_url, tmp_path, serve):
    sources = tmp_path / "sources.yaml"
    url = serve("/sources/p.xml", "good.xml")
    sources.write_text(f'- {{source: 뉴시스, url: "{url}", category: 정치}}\n', "utf-8")
    environ = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    return environ | {
        "NEWSDESK_DATA_DIR": str(data_dir),
        "DATABASE_URL": postgres_url,
        "FETCH_ALLOW_PRIVATE_NETWORKS": "true",
        "SOURCES_PATH": str(sources),
    }


def dead_letter(env, queue, body, group=None, **attributes):
    """``body`` left in ``queue`` by an earlier run (kept in the data folder between runs); in
    a FIFO queue, in message group ``group``."""
    fifo = {"MessageGroupId": group, "MessageDeduplicationId": body[:100]} if group else {}
    with LocalServices(Settings.from_env(env), env) as services:
        extra = {
            "MessageAttributes": {
                name: {"DataType": "String", "StringValue": value}
                for name, value in attributes.items()
            }
        }
        services.client("sqs").send_message(
            QueueUrl=services.queue_url(queue),
            MessageBody=body,
            **(extra if attributes else {}),
            **fifo,
        )


def waiting(env, queue):
    """What the last run kept of ``queue`` in the data folder."""
    saved = json.loads((Path(env["NEWSDESK_DATA_DIR"]) / "aws-state.json").read_text("utf-8"))
    return [m["body"] for m in saved["queues"].get(queue, [])]


def test_outlet_dead_letters_are_kept_between_runs_then_sent_back_and_collected(
    env, serve, database, capsys
):
    # GIVEN a message the worker gave up on in an earlier run, for a feed that answers now
    url = serve("/p.xml", "good.xml")
    message = OutletMessage(Outlet("연합뉴스", (Feed("연합뉴스", url, "정치"),)), datetime.now(UTC))
    dead_letter(env, OUTLET_DEAD_LETTERS, message.to_json())
    assert waiting(env, OUTLET_DEAD_LETTERS) == [message.to_json()]  # kept by the last run

    # WHEN it is redriven
    assert main(["dlq", "redrive"], env) == 0

    # THEN it went back to the worker, which collected the feed, and the queue is empty
    out = capsys.readouterr().out
    assert f"{OUTLET_DEAD_LETTERS}: 1 message sent back" in out
    assert "Worker: 1 collected, 0 stale" in out
    assert len(rows(database)) == 3
    assert waiting(env, OUTLET_DEAD_LETTERS) == []
    assert main(["dlq", "redrive"], env) == 0
    assert f"{OUTLET_DEAD_LETTERS}: 0 messages sent back" in capsys.readouterr().out


def test_schedule_dead_letters_go_to_the_function_they_name(env, capsys):
    # GIVEN a scheduled event the fan-out never received, and one naming no target
    target = f"arn:aws:lambda:ap-northeast-2:123456789012:function:newsdesk-{FANOUT}"
    event = json.dumps(scheduled_event(datetime.now(UTC)))
    dead_letter(env, SCHEDULE_DEAD_LETTERS, event, **{TARGET_ATTRIBUTE: target})
    dead_letter(env, SCHEDULE_DEAD_LETTERS, event)

    # WHEN redriven THEN the fan-out ran on it, and the worker on its message; the other stays
    assert main(["dlq", "redrive", "--queue", "schedule"], env) == 0
    out = capsys.readouterr().out
    assert f"{SCHEDULE_DEAD_LETTERS}: 1 message sent back, 1 kept" in out
    assert "Worker: 1 collected" in out
    assert waiting(env, SCHEDULE_DEAD_LETTERS) == [event]


def test_a_message_the_worker_refuses_is_kept_counted_and_dead_lettered_after_three_receives(
    env, capsys
):
    # GIVEN a message that is no outlet message, waiting in the outlet queue from a last run
    dead_letter(env, "OutletQueue", "not an outlet message")
    # WHEN the worker is given it THEN it fails, in one line, and is kept with its receive
    assert main(["dlq", "redrive"], env) == 1
    captured = capsys.readouterr()
    assert "1 failed again" in captured.out
    assert "Traceback" not in captured.err
    assert waiting(env, "OutletQueue") == ["not an outlet message"]
    assert saved_receives(env, "OutletQueue") == [1]
    # AND after three receives in all, across runs, the next start dead-letters it, as SQS would
    for _ in range(2):
        assert main(["dlq", "redrive", "--queue", "schedule"], env) == 1
    assert saved_receives(env, "OutletQueue") == [3]
    with LocalServices(Settings.from_env(env), env):
        pass
    assert waiting(env, "OutletQueue") == []
    assert waiting(env, OUTLET_DEAD_LETTERS) == ["not an outlet message"]


def saved_receives(env, queue):
    saved = json.loads((Path(env["NEWSDESK_DATA_DIR"]) / "aws-state.json").read_text("utf-8"))
    return [m["receives"] for m in saved["queues"].get(queue, [])]


def test_a_broken_state_file_is_one_line_not_a_traceback(env, capsys):
    (Path(env["NEWSDESK_DATA_DIR"])).mkdir(parents=True, exist_ok=True)
    (Path(env["NEWSDESK_DATA_DIR"]) / "aws-state.json").write_text('{"tables": [', "utf-8")
    assert main(["feeds"], env) == 2
    assert main(["dlq", "redrive"], env) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert all("aws-state.json: not the saved state of a local run" in line for line in err)


def test_article_dead_letters_go_back_in_their_hosts_group_and_are_extracted(
    env, serve, database, capsys
):
    # GIVEN an article whose message the extractor gave up on (its outbox row still waits)
    url = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    entry = Entry("국회 예산안 통과", url, "", None, None)
    ArticleStore(database).insert_articles(
        "연합뉴스", "정치", [Article(entry, url)], datetime.now(UTC), Outbox()
    )
    with database.transaction() as cursor:
        cursor.execute("UPDATE extraction_outbox SET sent_at = now()")
    message = ArticleMessage(1, 0, url)
    with LocalServices(Settings.from_env(env), env) as services:
        services.client("sqs").send_message(
            QueueUrl=services.queue_url(ARTICLE_DEAD_LETTERS),
            MessageBody=message.to_json(),
            MessageGroupId=message.host,
            MessageDeduplicationId=message.deduplication_id,
        )
    dead_letter(env, ARTICLE_DEAD_LETTERS, "not an article message", group="x")
    # WHEN redriven THEN it went back and was extracted; what is no article message stays
    assert main(["dlq", "redrive", "--queue", "article"], env | EXTRACT_ON) == 0
    out = capsys.readouterr().out
    assert f"{ARTICLE_DEAD_LETTERS}: 1 message sent back, 1 kept (not an article message)" in out
    assert "Extractor: 1 extracted, 0 already done, 0 failed again" in out
    with database.transaction() as cursor:
        cursor.execute("SELECT status FROM article_extraction")
        assert cursor.fetchall() == [("extract_ok",)]
    assert waiting(env, ARTICLE_DEAD_LETTERS) == ["not an article message"]
