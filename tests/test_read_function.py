"""The read-only function (issue 40): what `newsdesk issues|articles|events|dossier --stack`
reads of a deployed stack, answered as the function's own database role (newsdesk_reader:
SELECT only, no article text), a page at a time and bounded in size. On a real PostgreSQL, the
handler in-process as its container runs it."""

import json

import pytest

from newsdesk.storage.issue_events import kept_dossier
from newsdesk.storage.issues import create_issue
from newsdesk_local.cli import main
from tests.conftest import container
from tests.lambda_api import lambda_api
from tests.test_dossier import STORIES, at, members, rate_story_in_two_rounds, store_story


@pytest.fixture
def read(postgres_url):
    return container("read", DATABASE_URL=postgres_url)


def three_issues(database):
    rate_id, _ = rate_story_in_two_rounds(database)
    created = [rate_id]
    for number, story in enumerate(STORIES[1:], start=1):
        found = members(database, store_story(database, story, number))
        created.append(create_issue(database, found, found[0], found[0], at(6)))
    return created


def pages(read, event, key):
    """Every page of ``event``'s answers, following ``next``."""
    found, request = [], dict(event)
    while True:
        answer = read(request)
        found.append(answer[key])
        if answer["next"] is None:
            return found
        request = event | answer["next"]


def test_issues_come_a_page_at_a_time_newest_first(database, read):
    created = three_issues(database)
    got = pages(read, {"command": "issues", "limit": 2}, "issues")
    assert [[i["id"] for i in page] for page in got] == [created[:0:-1], created[:1]]
    assert got[1][0]["version"] == 2


def test_articles_and_events_come_a_page_at_a_time(database, read):
    three_issues(database)
    since = "2026-11-30T00:00:00Z"
    got = pages(read, {"command": "articles", "since": since, "limit": 5}, "articles")
    ids = [a["id"] for page in got for a in page]
    assert ids == sorted(ids)
    assert len(ids) == sum(len(s["articles"]) for s in STORIES)
    assert {len(page) for page in got[:-1]} == {5}
    events = pages(read, {"command": "events", "limit": 2}, "events")
    listed = [e["id"] for page in events for e in page]
    # newest first, each once: the rate story's two versions and the other two issues' first
    assert len(listed) == len(set(listed)) == 4
    assert listed.index("issue:1:v2") < listed.index("issue:1:v1")


def test_a_dossier_is_read_as_it_was_kept(database, read):
    issue_id, _ = rate_story_in_two_rounds(database)
    answer = read({"command": "dossier", "issue": issue_id, "version": 1})
    assert answer["dossier"] == json.loads(kept_dossier(database, issue_id, 1) or "")
    assert read({"command": "dossier", "issue": issue_id})["dossier"]["issue"]["version"] == 2
    assert read({"command": "dossier", "issue": 999}) == {"dossier": None}


def test_a_page_over_the_answer_bound_leaves_the_rest_to_the_next(database, read, monkeypatch):
    read_app = pytest.importorskip("newsdesk_functions.read.app")
    three_issues(database)
    one = len(json.dumps(read({"command": "issues", "limit": 1})["issues"]).encode())
    monkeypatch.setattr(read_app, "ANSWER_MAX_BYTES", one * 2)
    answer = read({"command": "issues", "limit": 100})
    assert len(answer["issues"]) < 3
    assert answer["next"] == {"before": answer["issues"][-1]["id"]}


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ({"command": "drop"}, "unknown command 'drop'"),
        ({}, "unknown command None"),
        ({"command": "issues", "limit": -1}, "'limit' must be a whole number"),
        ({"command": "issues", "before": "1; DROP TABLE issue"}, "'before' must be a whole number"),
        ({"command": "articles", "since": "yesterday"}, "not an ISO 8601 time"),
        ({"command": "events", "before": [1, 2]}, "'before' must be [time, issue id, version]"),
        ({"command": "dossier"}, "'issue' is required"),
    ],
)
def test_a_request_it_cannot_read_is_answered_in_one_line(database, read, event, said):
    answer = read(event)
    assert list(answer) == ["error"]
    assert answer["error"].startswith(said)
    assert "\n" not in answer["error"]


# --- `newsdesk … --stack NAME`: the operator's commands through the function -----------------


@pytest.fixture
def deployed(read, data_dir):
    """A deployed stack `newsdesk-dev` as the commands reach it: its read function behind
    Lambda's Invoke API on 127.0.0.1; (the commands' environment, the events it received)."""
    with lambda_api({"newsdesk-dev-read": read}) as (url, received):
        env = {
            "AWS_ENDPOINT_URL": url,
            "AWS_REGION": "ap-northeast-2",
            "NEWSDESK_DATA_DIR": str(data_dir / "empty"),
        }
        yield env, received


def test_the_read_commands_read_a_deployed_stack_through_its_function(database, deployed, capsys):
    env, received = deployed
    created = three_issues(database)
    # issues: 2 pages of at most 100 asked for 150: all three
    assert main(["issues", "--stack", "newsdesk-dev", "--limit", "150"], env) == 0
    shown = [x for x in capsys.readouterr().out.splitlines() if x.startswith("#")]
    assert [x.split()[0] for x in shown] == [f"#{i}" for i in reversed(created)]
    assert received[-1] == {"command": "issues", "limit": 150}
    # the dossier, as its JSON was kept
    assert main(["dossier", str(created[0]), "--stack", "newsdesk-dev", "--json"], env) == 0
    assert capsys.readouterr().out == (kept_dossier(database, created[0], 2) or "") + "\n"
    # events and articles, every page
    assert main(["events", "--stack", "newsdesk-dev", "--limit", "3"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert all("dossier issues/" in line for line in lines)
    assert main(["articles", "--stack", "newsdesk-dev", "--since", "2026-11-30"], env) == 0
    assert len(capsys.readouterr().out.splitlines()) == sum(len(s["articles"]) for s in STORIES)


def test_a_stack_without_the_function_or_a_refused_request_is_one_line(deployed, capsys):
    env, _ = deployed
    assert main(["issues", "--stack", "no-such-stack"], env) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("newsdesk: stack 'no-such-stack': ")
    assert "no-such-stack-read" in line
