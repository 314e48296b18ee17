"""What `newsdesk stack` tells an operator (issue 26): where a container reaches the stack, said
first, and the `sam local invoke` lines in the order the functions run; and the events those
lines use, which name the demo's feeds and pages at its placeholder origin, never an outlet's."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from newsdesk.core.messages import ArticleMessage, OutletMessage
from newsdesk_local.demo import serve_demo_feeds
from newsdesk_local.demo_site import DEMO_ORIGIN
from newsdesk_local.feedserver import FeedServer
from newsdesk_local.infrastructure import Infrastructure
from newsdesk_local.stack import (
    CONTAINER_HOST,
    DOCKER_BRIDGE,
    EXPOSE_FLAG,
    reach_note,
    run_order,
    sam_invoke_lines,
)
from tests.conftest import EVENTS, load_event

ENV_PATH = Path("/data/env.json")


def test_the_invoke_lines_are_in_the_order_the_functions_run():
    lines = sam_invoke_lines(Infrastructure.packaged(), ENV_PATH, platform="linux")
    names = [line.split()[3] for line in lines]
    assert names == [
        "MigrateFunction",
        "FanOutFunction",
        "WorkerFunction",
        "ExtractorFunction",
        "ClusterFunction",
        "ReadFunction",
    ]
    assert lines[2] == (
        "sam local invoke WorkerFunction -e ../events/worker.json --env-vars /data/env.json "
        f"--region ap-northeast-2 --add-host {CONTAINER_HOST}:host-gateway"
    )
    # a function the order does not name comes after those, not dropped
    assert run_order(["ZFunction", "ClusterFunction", "MigrateFunction"]) == [
        "MigrateFunction",
        "ClusterFunction",
        "ZFunction",
    ]


def test_every_function_of_the_template_has_its_place_in_the_order():
    assert set(run_order(Infrastructure.packaged().functions)) == set(
        Infrastructure.packaged().functions
    )
    assert {p.stem for p in EVENTS.glob("*.json")} == {
        name.removesuffix("Function").lower() for name in Infrastructure.packaged().functions
    }


def test_on_linux_a_stack_on_loopback_is_told_first_that_no_container_reaches_it():
    (note,) = reach_note("127.0.0.1", platform="linux")
    assert note.startswith(
        f"On Linux a container reaches this machine at the Docker bridge ({DOCKER_BRIDGE}"
    )
    assert "not at 127.0.0.1: `sam local invoke` cannot reach this stack" in note
    assert f"--bind {DOCKER_BRIDGE}" in note
    assert EXPOSE_FLAG in note
    # on the bridge, or elsewhere than Linux, nothing to warn of
    (bridge,) = reach_note(DOCKER_BRIDGE, platform="linux")
    assert "cannot reach" not in bridge
    (desktop,) = reach_note("127.0.0.1", platform="darwin")
    assert desktop == f"A container reaches this machine as {CONTAINER_HOST} (Docker Desktop)."


def event_urls() -> list[str]:
    """Every URL the outlet and article events carry in their messages."""
    worker = OutletMessage.from_json(load_event("worker")["Records"][0]["body"])
    article = ArticleMessage.from_json(load_event("extractor")["Records"][0]["body"])
    return [*(feed.url for feed in worker.outlet.feeds), article.url]


def test_the_events_name_no_outlets_address():
    # every URL in events/ is the demo's placeholder origin, or the stack's (host.docker.internal)
    for path in EVENTS.glob("*.json"):
        for url in re.findall(r"https?://[^\s\"\\]+", path.read_text(encoding="utf-8")):
            assert url.startswith((f"{DEMO_ORIGIN}/", f"http://{CONTAINER_HOST}:")), (path, url)
    assert event_urls()


@pytest.mark.integration
def test_the_events_urls_are_what_the_demo_serves():
    # GIVEN the demo's feeds and pages on a loopback server
    with FeedServer() as server:
        serve_demo_feeds(server, datetime.now(UTC))
        # WHEN each URL of the events is asked there THEN the demo answers it: a feed, a page
        for url in event_urls():
            here = url.replace(DEMO_ORIGIN, server.base_url)
            answer = requests.get(here, timeout=5)
            assert answer.status_code == 200, url
            kind = "xml" if url.endswith(".xml") else "html"
            assert kind in answer.headers["Content-Type"], url


def test_the_md5_of_each_events_body_is_its_own():
    for path in EVENTS.glob("*.json"):
        for record in json.loads(path.read_text(encoding="utf-8")).get("Records", []):
            if record.get("md5OfBody"):
                assert hashlib.md5(record["body"].encode()).hexdigest() == record["md5OfBody"]
