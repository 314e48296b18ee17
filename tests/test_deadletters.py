"""`newsdesk dlq redrive`: dead letters kept between local runs and sent back — outlet
messages to the worker's queue (and collected, as the event source mapping would), schedule
events to the function each names."""

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from newsdesk.core.messages import OutletMessage
from newsdesk.core.settings import Settings
from newsdesk.core.sources import Feed, Outlet
from newsdesk_local.cli import OUTLET_DEAD_LETTERS, SCHEDULE_DEAD_LETTERS, main
from newsdesk_local.deadletters import TARGET_ATTRIBUTE
from newsdesk_local.driver import FANOUT, scheduled_event
from newsdesk_local.services import LocalServices
from tests.conftest import rows

pytestmark = pytest.mark.slow


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


def dead_letter(env, queue, body, **attributes):
    """``body`` left in ``queue`` by an earlier run (kept in the data folder between runs)."""
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
    assert f"{OUTLET_DEAD_LETTERS}: 1 messages sent back" in out
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
    assert f"{SCHEDULE_DEAD_LETTERS}: 1 messages sent back, 1 kept" in out
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
