"""`newsdesk sources check --live` against feed files served on 127.0.0.1: one line per feed,
a summary, exit 1 when a feed failed, and each feed asked with its own User-Agent."""

import json
import os

import pytest

from newsdesk.core.settings import LOCAL_CONTACT, user_agent_for
from newsdesk_local.cli import main
from tests.conftest import CONTACT, USER_AGENT, feed_bytes

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"


@pytest.fixture
def sources(tmp_path, serve):
    """Three outlets: A (a good feed, a redirected one asking as a browser), B (EUC-KR, and a
    page that is no feed), C (every feed failing)."""
    # as the files are, so the newest dates printed are the files' own
    good = serve("/a/good.xml", body=feed_bytes("good.xml"))
    moved = serve("/a/moved", status=301, headers=(("Location", "/a/atom.xml"),))
    serve("/a/atom.xml", body=feed_bytes("atom.xml"))
    korean = serve(
        "/b/economy.xml",
        "cp949-labelled-euc-kr.xml",
        content_type="application/rss+xml; charset=EUC-KR",
    )
    page = serve("/b/page", "not-a-feed.html", content_type="text/html; charset=utf-8")
    missing = serve("/c/gone.xml", status=404, body=b"not here", content_type="text/plain")
    down = serve("/c/down.xml", status=503, body=b"", content_type="text/plain")
    path = tmp_path / "sources.yaml"
    path.write_text(
        f'- {{source: A, url: "{good}", category: 정치}}\n'
        f'- {{source: A, url: "{moved}", category: 경제, user_agent: "{BROWSER}"}}\n'
        f'- {{source: B, url: "{korean}", category: 경제}}\n'
        f'- {{source: B, url: "{page}", category: 사회}}\n'
        f'- {{source: C, url: "{missing}", category: 정치}}\n'
        f'- {{source: C, url: "{down}", category: 사회}}\n',
        encoding="utf-8",
    )
    return path


def check(path, *flags, **env):
    return main(["sources", "check", str(path), "--live", *flags], {**os.environ, **env})


def test_each_feed_is_described_in_one_line_then_summed_up(sources, feed_server, capsys):
    assert check(sources) == 1  # a feed failed
    lines = capsys.readouterr().out.splitlines()
    base = feed_server.base_url
    assert lines == [
        f"{sources}: valid; fetching its 6 feeds of 3 outlets once each",
        "Source: A | 정치 | HTTP 200 | utf-8 | 5 entries | newest 2026-12-01 09:10 KST | "
        f"{base}/a/good.xml",
        "Source: A | 경제 | HTTP 200 | utf-8 | 2 entries | newest 2026-12-01 10:00 KST | "
        f"{base}/a/moved -> {base}/a/atom.xml",
        "Source: B | 경제 | HTTP 200 | cp949 (declared EUC-KR) | 3 entries | no entry dated | "
        f"{base}/b/economy.xml",
        f"Source: B | 사회 | Failed: not an RSS or Atom feed: an HTML page | {base}/b/page",
        f"Source: C | 정치 | Failed: HTTP 404 | {base}/c/gone.xml",
        f"Source: C | 사회 | Failed: HTTP 503 | {base}/c/down.xml",
        "Feeds: 3 ok, 3 failed (6 feeds, 3 outlets); dates in Asia/Seoul time (KST); "
        "every feed failed: C",
    ]


def test_each_feed_is_asked_once_with_its_own_user_agent(sources, feed_server, capsys):
    check(sources)
    sent = {path: [h["User-Agent"] for h in h_] for path, h_ in feed_server.request_headers.items()}
    assert sent["/a/moved"] == sent["/a/atom.xml"] == [BROWSER]  # the redirect's too
    assert sent["/a/good.xml"] == sent["/b/economy.xml"] == sent["/c/gone.xml"] == [USER_AGENT]
    assert sum(feed_server.requests.values()) == 7  # six feeds, one redirect
    # the operator's address goes with every request, a browser's User-Agent's too
    sent_from = {h["From"] for h_ in feed_server.request_headers.values() for h in h_}
    assert sent_from == {CONTACT}


def test_a_live_check_without_a_contact_says_it_is_a_local_run(sources, feed_server, capsys):
    env = {k: v for k, v in os.environ.items() if k != "OPERATOR_CONTACT"}
    main(["sources", "check", str(sources), "--live"], env)
    (headers,) = feed_server.request_headers["/a/good.xml"]
    assert headers["User-Agent"] == user_agent_for(LOCAL_CONTACT)
    assert "local run, no operator contact" in headers["User-Agent"]
    assert "From" not in headers


def test_json_gives_every_feed_and_the_totals(sources, feed_server, capsys):
    assert check(sources, "--json") == 1
    document = json.loads(capsys.readouterr().out)
    assert document["totals"] == {
        "feeds": 6,
        "outlets": 3,
        "ok": 3,
        "failed": 3,
        "outlets_failed": ["C"],
    }
    moved, korean, page, gone = (document["feeds"][i] for i in (1, 2, 3, 4))
    assert moved["final_url"] == feed_server.url("/a/atom.xml")
    assert moved["newest_published_at"] == "2026-12-01T01:00:00Z"
    assert (korean["ok"], korean["status"], korean["encoding"], korean["entries"]) == (
        True,
        200,
        "cp949 (declared EUC-KR)",
        3,
    )
    assert (page["ok"], page["status"], page["failure_class"]) == (False, 200, "not_a_feed")
    assert (gone["status"], gone["failure_class"], gone["error"]) == (404, "http_4xx", "HTTP 404")


def test_all_good_is_exit_0(tmp_path, serve, capsys):
    path = tmp_path / "sources.yaml"
    path.write_text(f'- {{source: A, url: "{serve("/g.xml", "good.xml")}", category: 정치}}\n')
    assert check(path) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "Feeds: 1 ok, 0 failed (1 feed, 1 outlet); dates in Asia/Seoul time (KST)"
    )


def test_a_refused_private_address_names_the_setting(tmp_path, serve, feed_server, capsys):
    path = tmp_path / "sources.yaml"
    path.write_text(f'- {{source: A, url: "{serve("/g.xml", "good.xml")}", category: 정치}}\n')
    assert check(path, FETCH_ALLOW_PRIVATE_NETWORKS="false") == 1
    line = capsys.readouterr().out.splitlines()[1]
    assert line.startswith("Source: A | 정치 | Failed: refused 127.0.0.1: a loopback address")
    assert line.count("FETCH_ALLOW_PRIVATE_NETWORKS=true") == 1
    assert feed_server.requests["/g.xml"] == 0  # refused before a byte was sent


def test_a_broken_file_is_refused_before_anything_is_fetched(tmp_path, serve, feed_server, capsys):
    path = tmp_path / "sources.yaml"
    path.write_text(
        f'- {{source: A, url: "{serve("/g.xml", "good.xml")}", category: 정치, '
        'user_agent: "브라우저"}\n',
        encoding="utf-8",
    )
    assert check(path) == 2
    err = capsys.readouterr().err
    assert err == (
        f"newsdesk: {path}: entry 1: field 'user_agent': not one line of printable ASCII "
        "(contains '브')\n"
    )
    assert feed_server.requests == {}
