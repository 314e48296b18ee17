"""The command line's output in words (issue 26): plurals as English has them, no internal
names (a function's, a status code's, the docstrings' markup), a version, and a page without
main text that says why."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from importlib import metadata

import pytest

from newsdesk.core.hosts import HostState
from newsdesk.extract.extractor import status_words
from newsdesk_local.cli import main, parser
from newsdesk_local.command_docs import helps
from newsdesk_local.commands.cluster import print_run
from newsdesk_local.demo import serve_demo_feeds
from newsdesk_local.feeds import host_line
from newsdesk_local.feedserver import FeedServer
from newsdesk_local.output import plural


@pytest.mark.parametrize(
    ("count", "word", "said"),
    [
        (0, "feed", "0 feeds"),
        (1, "feed", "1 feed"),
        (2, "feed", "2 feeds"),
        (1, "copy", "1 copy"),
        (3, "copy", "3 copies"),
        (2, "entry", "2 entries"),
        (2, "category", "2 categories"),
        (2, "body", "2 bodies"),
        (2, "day", "2 days"),  # a vowel's y
        (1, "list page", "1 list page"),
        (2, "stale message", "2 stale messages"),
        (2, "child", "2 children"),
    ],
)
def test_plural(count, word, said):
    many = "children" if word == "child" else None
    assert plural(count, word, many) == said


def test_one_of_a_kind_is_said_in_the_singular(capsys):
    run = {
        "locked_out": False,
        "issues_created": 1,
        "issues_updated": 0,
        "issues_closed": 0,
        "articles_clustered": 1,
        "articles_joined": 1,
        "articles_left_single": 0,
        "copies_attached": 1,
        "issues": [{"id": 7, "category": "정치", "title": "t", "article_ids": [3]}],
        "updated": [],
    }
    print_run(run, sys.stdout)
    assert capsys.readouterr().out.splitlines() == [
        "Issues: 1 created, 0 grown, 0 closed; 1 article clustered (1 joined an open issue), "
        "0 left single, 1 copy put in their original's issue",
        "#7 [정치] t (1 article)",
    ]
    host = HostState("news.example", pages_fetched=1)
    assert host_line(host, datetime(2026, 12, 1, tzinfo=UTC), UTC).endswith("| 1 request")


def test_an_outcome_is_in_words():
    assert [status_words(s) for s in ("extract_ok", "filtered_thin", "list_page")] == [
        "ok",
        "thin",
        "list page",
    ]


def test_version_is_the_packages(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"newsdesk {metadata.version('newsdesk')}\n"


def test_newsdesk_alone_prints_the_help_not_a_usage_error(capsys):
    # WHEN newsdesk runs with no command
    code = main([])
    # THEN it prints the whole help, as --help does, on standard error: exit 2, a usage error
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == parser().format_help()
    assert "collect     run one collection round locally" in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["issues", "--limit", "x"], "argument --limit: not a whole number: 'x'"),
        (["issues", "--limit", "0"], "argument --limit: must be at least 1, not 0"),
        (["stack", "--aws-port", "70000"], "argument --aws-port: a port is from 0 to 65535"),
    ],
)
def test_a_bad_number_is_refused_in_words(argv, said, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert said in err
    assert "invalid" not in err  # argparse's "invalid _positive value" named our function


def test_no_help_shows_the_docstrings_markup():
    for name, text in helps().items():
        assert "``" not in text, name


@pytest.mark.integration
def test_a_page_without_main_text_says_why(capsys):
    # GIVEN the demo's page rendered by JavaScript alone, on a loopback server
    env = dict(os.environ, FETCH_ALLOW_PRIVATE_NETWORKS="true")
    with FeedServer() as server:
        serve_demo_feeds(server, datetime.now(UTC))
        url = server.url("/newsis/politics/0002")
        # WHEN extract-text reads it THEN it says the page is empty and why, as the judge does
        assert main(["extract-text", url], env) == 0
        lines = capsys.readouterr().out.splitlines()
        assert "outcome: empty (js_rendered)" in lines
        assert lines[-1] == "(no main text: js_rendered)"
        assert main(["extract-text", "--json", url], env) == 0
        document = json.loads(capsys.readouterr().out)
    assert (document["status"], document["reason"], document["text"]) == (
        "extract_empty",
        "js_rendered",
        "",
    )
