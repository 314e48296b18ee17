"""`newsdesk collect` and `newsdesk demo` end to end: the fan-out and worker functions run in
their own processes, moto and PostgreSQL are real, the feeds come from 127.0.0.1."""

import json
import os
import re

import pytest

from newsdesk.core.report import CONTRACT_KEYS, COUNT_KEYS
from newsdesk.core.settings import LOCAL_CONTACT, user_agent_for
from newsdesk_local import feedserver
from newsdesk_local.cli import main
from tests.conftest import EXTRACT_ON, ROOT, article_page
from tests.demo_sample import canonical, difference, sample

pytestmark = pytest.mark.slow


def write_sources(path, entries):
    """A sources.yaml of ``(source, url, category)`` entries."""
    path.write_text(
        "".join(f'- {{source: "{s}", url: "{u}", category: "{c}"}}\n' for s, u, c in entries),
        encoding="utf-8",
    )
    return path


def environ(data_dir, **extra):
    env = {k: v for k, v in os.environ.items() if k != "AWS_ENDPOINT_URL"}
    env.update(NEWSDESK_DATA_DIR=str(data_dir), **extra)
    return env


def test_collect_json_with_a_dead_outlet(
    data_dir, tmp_path, serve, feed_server, database, postgres_url, capsys
):
    # GIVEN two live outlets and a dead one of six feeds that never answer
    entries = [
        ("연합뉴스", serve("/yna/politics.xml", "good.xml"), "정치"),
        ("연합뉴스", serve("/yna/economy.xml", "atom.xml"), "경제"),
        (
            "매일경제",
            serve(
                "/mk/economy.xml",
                "cp949-labelled-euc-kr.xml",
                content_type="text/xml; charset=euc-kr",
            ),
            "경제",
        ),
    ] + [("프레시안", serve(f"/pressian/{n}.xml", mode="hang"), "정치") for n in range(6)]
    sources = write_sources(tmp_path / "sources.yaml", entries)
    env = environ(data_dir, DATABASE_URL=postgres_url, FETCH_TIMEOUT_SECONDS="2")
    args = ["collect", "--sources", str(sources), "--json", "--concurrency", "3"]

    # WHEN a round runs
    assert main(args, env) == 0
    first = json.loads(capsys.readouterr().out)

    # THEN the dead outlet cost two requests and two timeouts, not six
    dead = [n for path, n in feed_server.requests.items() if path.startswith("/pressian/")]
    assert sum(dead) == 2
    by_source = {o["source"]: o for o in first["outlets"]}
    assert [o["source"] for o in first["outlets"]] == ["연합뉴스", "매일경제", "프레시안"]
    assert {k: v for k, v in by_source["프레시안"].items() if k in ("source", *CONTRACT_KEYS)} == {
        "source": "프레시안",
        "feeds_attempted": 2,
        "feeds_failed": 2,
        "feeds_skipped": 4,
        "new": 0,
        "duplicate": 0,
        "photo_filtered": 0,
        "total": 0,
    }
    assert by_source["연합뉴스"]["new"] == 4
    assert by_source["연합뉴스"]["photo_filtered"] == 2
    assert by_source["매일경제"]["new"] == 3
    assert set(first["totals"]) == set(COUNT_KEYS)
    assert first["totals"]["failed_timeout"] == 2
    assert {k: first["totals"][k] for k in CONTRACT_KEYS} == {
        "feeds_attempted": 5,
        "feeds_failed": 2,
        "feeds_skipped": 4,
        "new": 7,
        "duplicate": 0,
        "photo_filtered": 2,
        "total": 7,
    }

    # AND a second round stores nothing new, with the state kept between runs: the live feeds
    # come back unchanged, the dead outlet's breaker is open and it is not asked at all, but
    # it is reported, cooling down
    assert main(args, env) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["totals"]["new"] == 0
    assert second["totals"]["feeds_not_modified"] == 3
    assert second["totals"]["feeds_skipped_open_breaker"] == 6
    assert sum(n for p, n in feed_server.requests.items() if p.startswith("/pressian/")) == 2
    assert [o["source"] for o in second["outlets"]] == ["연합뉴스", "매일경제", "프레시안"]
    cooling = second["outlets"][2]
    assert (cooling["skipped"], cooling["trips"], cooling["feeds_attempted"]) == (
        "cooling_down",
        1,
        0,
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", cooling["open_until"])
    assert {f["status"] for f in cooling["feeds"]} == {"skipped_open_breaker"}
    assert second["outlets"][0]["skipped"] is None
    saved = json.loads((data_dir / "aws-state.json").read_text(encoding="utf-8"))
    breaker = [
        i
        for i in saved["tables"]["StateTable"]
        if i["pk"]["S"] == "outlet#프레시안" and i["sk"]["S"] == "outlet"
    ]
    assert breaker[0]["breaker"]["S"] == "open"


def test_a_second_run_asks_conditionally_and_gets_304s(
    data_dir, serve, feed_server, database, postgres_url, capsys
):
    urls = [
        serve(f"/{n}.xml", "good.xml" if n == 0 else "atom.xml", etag=f'"e{n}"') for n in range(2)
    ]
    sources = write_sources(
        data_dir.parent / f"{data_dir.name}-sources.yaml",
        [("연합뉴스", u, f"c{n}") for n, u in enumerate(urls)],
    )
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["collect", "--sources", str(sources), "--json"], env) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["new"] == 4
    assert main(["collect", "--sources", str(sources)], env) == 0
    out = capsys.readouterr().out
    assert out.count("| Not modified |") == 2
    assert "Articles: 0 new" in out
    assert "Schedule: 2 not modified" in out
    for n in range(2):
        assert feed_server.request_headers[f"/{n}.xml"][-1]["If-None-Match"] == f'"e{n}"'
    # AS a scheduled round it would not even ask: the feeds are not due yet
    assert main(["collect", "--sources", str(sources), "--scheduled", "--json"], env) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["feeds_not_due"] == 2


def test_feeds_and_collect_use_the_sources_file_the_data_folder_was_collected_with(
    data_dir, tmp_path, serve, feed_server, database, postgres_url, capsys
):
    # GIVEN a data folder collected with a sources file of one feed, given by --sources
    mine = write_sources(
        tmp_path / "mine.yaml", [("뉴시스", serve("/mine.xml", "good.xml"), "정치")]
    )
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["collect", "--sources", str(mine), "--json"], env) == 0
    capsys.readouterr()
    # WHEN `feeds` runs there, told of no sources file
    assert main(["feeds"], env) == 0
    # THEN it lists that file's feed alone, not the bundled outlets' feeds as never tried
    assert re.findall(r"^Feed: (\S+) \|", capsys.readouterr().out, re.M) == ["뉴시스"]
    # AND the next `collect` there, told of none either, collects that file's feed again
    assert main(["collect", "--json"], env) == 0
    assert [o["source"] for o in json.loads(capsys.readouterr().out)["outlets"]] == ["뉴시스"]
    assert feed_server.requests["/mine.xml"] == 2
    # AND SOURCES_PATH comes before the folder's file, and --sources before both
    other = write_sources(
        tmp_path / "other.yaml", [("한겨레", serve("/o.xml", "atom.xml"), "경제")]
    )
    third = write_sources(
        tmp_path / "third.yaml", [("프레시안", serve("/t.xml", "atom.xml"), "정치")]
    )
    assert main(["feeds"], {**env, "SOURCES_PATH": str(other)}) == 0
    assert "Feed: 한겨레 | 경제 | Never tried" in capsys.readouterr().out
    assert main(["feeds", "--sources", str(third)], {**env, "SOURCES_PATH": str(other)}) == 0
    assert "Feed: 프레시안 | 정치 | Never tried" in capsys.readouterr().out
    # AND once that file is gone, the folder's commands say so in one line, exit 2
    mine.unlink()
    for args in (["feeds"], ["collect"]):
        assert main(args, env) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"was collected with {mine}, which is gone: give --sources PATH" in err


def test_collect_prints_the_seed_line_per_feed_and_asks_as_a_local_run(
    data_dir, tmp_path, serve, feed_server, database, postgres_url, capsys
):
    sources_url = serve("/g.xml", "good.xml")
    sources = write_sources(tmp_path / "sources.yaml", [("뉴시스", sources_url, "정치")])
    env = environ(data_dir, DATABASE_URL=postgres_url)
    del env["OPERATOR_CONTACT"]  # none given: the local default
    assert main(["collect", "--sources", str(sources), "--concurrency", "1"], env) == 0
    out = capsys.readouterr().out
    assert f"Source: 뉴시스 | New: 3 | Skip: 0 | Total: 3 | 정치 {sources_url}\n" in out
    assert "Articles: 3 new, 0 duplicate, 2 photo-filtered" in out
    # the worker started (it refuses an unset contact) and said whose run it is
    (headers,) = feed_server.request_headers["/g.xml"]
    assert headers["User-Agent"] == user_agent_for(LOCAL_CONTACT)


def test_collect_refuses_a_broken_sources_file_before_sending(data_dir, tmp_path, capsys):
    sources = tmp_path / "sources.yaml"
    sources.write_text(
        '- {source: A, url: "https://a.test/x", category: 정치}\n- {source: B}\n', encoding="utf-8"
    )
    assert main(["collect", "--sources", str(sources)], environ(data_dir)) == 2
    assert "entry 2: field 'url'" in capsys.readouterr().err
    assert not data_dir.exists()  # nothing was started


def test_collect_with_the_database_down_fails_loudly(data_dir, tmp_path, serve, capsys):
    sources = write_sources(tmp_path / "sources.yaml", [("A", serve("/g.xml", "good.xml"), "정치")])
    env = environ(data_dir, DATABASE_URL="postgresql://newsdesk@127.0.0.1:9/none")
    assert main(["collect", "--sources", str(sources)], env) == 2
    assert "cannot connect to PostgreSQL" in capsys.readouterr().err


def test_demo_runs_a_round_on_embedded_services_as_the_readme_shows(
    data_dir, tmp_path, monkeypatch, capsys
):
    env = environ(data_dir, DATABASE_URL="postgresql://ignored@127.0.0.1:9/x", EXTRACT_ENABLED="")
    del env["OPERATOR_CONTACT"]  # none given: the local default
    servers = []  # the demo's own feed server (the real one, kept to read what it was asked)

    class Kept(feedserver.FeedServer):
        def __init__(self):
            super().__init__()
            servers.append(self)

    monkeypatch.setattr(feedserver, "FeedServer", Kept)
    assert main(["demo"], env) == 0
    out = capsys.readouterr().out
    # every request the demo made (feeds, robots.txt, pages) said whose run it is: a local one
    (server,) = servers
    asked = [headers for sent in server.request_headers.values() for headers in sent]
    assert {paths.rsplit("/", 1)[-1] for paths in server.request_headers} >= {"robots.txt"}
    assert {headers["User-Agent"] for headers in asked} == {user_agent_for(LOCAL_CONTACT)}
    assert not any("From" in headers for headers in asked)
    assert re.search(
        r"^Source: 연합뉴스 \| New: \d+ \| Skip: 0 \| Total: \d+ \| 정치 http", out, re.M
    )
    assert "Source: 프레시안 | Skipped: outlet breaker open" in out
    assert re.search(r"Feeds: 12 attempted, 10 ok, 2 failed, 1 skipped", out)
    assert re.search(r"Articles: 32 new, 0 duplicate, 12 photo-filtered", out)
    # each article page's outcome: the JavaScript-only page and the consent wall empty, the
    # untagged photo article thin, the wire copy found (its original published first)
    article = r"^Article: {} \| #\d+ {} \| {}$"
    assert re.search(
        article.format("뉴시스", r"empty \(js_rendered\)", "여야 원내대표 회동.*"), out, re.M
    )
    assert re.search(
        article.format("한겨레", r"empty \(consent_wall\)", "대통령, 중동 .*"), out, re.M
    )
    assert re.search(article.format("연합뉴스", r"thin \d+ chars", "원·달러 환율 .*"), out, re.M)
    # (the copy, extracted after its original, as every run extracts them)
    copy = r"^Article: 매일경제 \| #25 ok \d+ chars, copy of #5 \(duplicate_by_near_duplicate\) \|"
    assert re.search(copy, out, re.M)
    assert "original of" not in out
    assert "Pages: 29 ok, 1 thin, 2 empty, 0 list pages, 0 failed" in out
    # the issues: the copy under its original, not counted; the thin page in none
    issues = re.findall(r"^#\d+ \[(\S+)\] .+ \((\d+) articles, .+\)$", out, re.M)
    assert len(issues) == 9
    assert {category for category, _ in issues} == {"정치", "경제", "사회"}
    assert re.search(
        r"^        copy \(near_duplicate\): #\d+ 매일경제: 한국은행 기준금리", out, re.M
    )
    assert "원·달러" not in out.split("Issues: ", 1)[1]
    # AND the README's sample is this run's output as it is, but for its times, port and folder
    unlike = difference(sample(ROOT / "README.md"), canonical(out))
    assert unlike is None, unlike
    # AND `feeds` in the demo's folder, as its Next: line says, lists the demo's 13 feeds alone
    assert main(["feeds"], environ(data_dir / "demo")) == 0
    assert re.search(r"^Outlets: 5 \(.*\); feeds: 13 \(", capsys.readouterr().out, re.M)


def test_cluster_and_issues_commands(data_dir, serve, database, postgres_url, capsys):
    # GIVEN three outlets that carry the same story, collected
    feed = (
        '<rss version="2.0"><channel><title>t</title><item><title>{}</title>'
        "<link>https://example.test/{}</link></item></channel></rss>"
    )
    title = "한국은행 기준금리 연 2.50% 동결 물가 안정 우선"
    urls = [serve(f"/{n}.xml", body=feed.format(title, n).encode()) for n in range(3)]
    sources = write_sources(
        data_dir.parent / f"{data_dir.name}-sources.yaml",
        [(f"언론사{n}", u, "경제") for n, u in enumerate(urls)],
    )
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["collect", "--sources", str(sources), "--json"], env) == 0
    capsys.readouterr()
    # a replay as of a time before the articles were collected finds nothing
    assert main(["cluster", "--at", "2026-01-01T00:00:00Z", "--json"], env) == 0
    assert json.loads(capsys.readouterr().out)["issues_created"] == 0
    # WHEN a clustering pass runs THEN one issue of the three, in the contract's shape
    assert main(["cluster", "--json"], env) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {
        "issues_created",
        "issues_updated",
        "issues_closed",
        "articles_clustered",
        "articles_joined",
        "issues",
        "updated",
        "closed",
    }
    assert (result["issues_created"], result["articles_clustered"]) == (1, 3)
    (issue,) = result["issues"]
    assert set(issue) == {"id", "category", "title", "article_ids", "version"}
    assert (issue["category"], issue["title"], len(issue["article_ids"])) == ("경제", title, 3)
    # AND a second pass creates nothing
    assert main(["cluster"], env) == 0
    assert (
        "Issues: 0 created, 0 grown, 0 closed; 0 articles clustered (0 joined an open issue), "
        "0 left single" in capsys.readouterr().out
    )
    # AND `issues` lists it with its articles
    assert main(["issues", "--json"], env) == 0
    (listed,) = json.loads(capsys.readouterr().out)["issues"]
    assert listed["article_ids"] == issue["article_ids"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", listed["created_at"])  # UTC
    assert main(["issues"], env) == 0
    out = capsys.readouterr().out
    # the articles' times are their collection's (no pubDate): one minute, or two when the
    # round crossed one (a span, as `issues` prints it)
    moment = r"\d{4}-\d\d-\d\d \d\d:\d\d KST"
    assert re.search(
        rf"\[경제\] {re.escape(title)} \(3 articles, {moment}( – {moment})?; open, version 1\)",
        out,
    )
    assert re.search(rf"^    #\d+ 언론사1: {re.escape(title)} \(no text\)$", out, re.M)


def test_reparse_reads_the_bodies_kept_by_an_earlier_run(
    data_dir, serve, feed_server, database, postgres_url, capsys
):
    url = serve("/good.xml", "good.xml")
    sources = write_sources(
        data_dir.parent / f"{data_dir.name}-sources.yaml", [("뉴시스", url, "정치")]
    )
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["collect", "--sources", str(sources), "--json"], env) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["raw_bodies_stored"] == 1
    with database.transaction() as cursor:
        cursor.execute("DELETE FROM raw_article")
    fetched = feed_server.requests["/good.xml"]
    # WHEN another run (a new emulated AWS, restored from the data folder) reparses
    assert main(["reparse", "--since", "2000-01-01", "--json"], env) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["totals"] == {
        "bodies": 1,
        "failed": 0,
        "entries_seen": 5,
        "new": 3,
        "duplicate": 0,
        "photo_filtered": 2,
        "too_old": 0,
    }
    assert result["bodies"][0]["url"] == url
    assert feed_server.requests["/good.xml"] == fetched
    assert main(["reparse", "--since", "2000-01-01"], env) == 0
    assert "Reparsed 1 body (0 not a feed): 5 entries, 0 new, 3 duplicate" in (
        capsys.readouterr().out
    )


def test_reparse_needs_a_time(capsys):
    with pytest.raises(SystemExit):
        main(["reparse", "--since", "the day before"], {})
    assert "argument --since: not a time: 'the day before'" in capsys.readouterr().err


def test_migrate_uses_the_embedded_database(data_dir, capsys):
    # GIVEN no DATABASE_URL, as every other command runs
    env = environ(data_dir)
    assert "DATABASE_URL" not in env
    # WHEN the migrations are applied twice THEN the first applies them, the second finds none
    assert main(["migrate"], env) == 0
    assert capsys.readouterr().out.startswith("applied: 0001_")
    assert main(["migrate"], env) == 0
    assert capsys.readouterr().out == "up to date\n"


def test_stack_refuses_services_it_does_not_run(data_dir, capsys):
    env = environ(data_dir, AWS_ENDPOINT_URL="http://127.0.0.1:9")
    assert main(["stack"], env) == 2
    assert capsys.readouterr().err == (
        "newsdesk: newsdesk stack runs its own AWS and PostgreSQL: unset AWS_ENDPOINT_URL\n"
    )


def test_a_round_extracts_its_pages_and_the_commands_show_them(
    data_dir, serve, feed_server, database, postgres_url, capsys
):
    # GIVEN a feed of an article page and a page that is gone, extraction on
    ok = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    gone = serve("/view/2", status=404, body=b"", content_type="text/html")
    body = (
        '<rss version="2.0"><channel><title>t</title>'
        f"<item><title>국회 예산안 통과</title><link>{ok}</link></item>"
        f"<item><title>사라진 기사</title><link>{gone}</link></item></channel></rss>"
    )
    sources = write_sources(
        data_dir.parent / f"{data_dir.name}-sources.yaml",
        [("연합뉴스", serve("/f.xml", body=body.encode()), "정치")],
    )
    env = environ(data_dir, DATABASE_URL=postgres_url, **EXTRACT_ON)
    # WHEN a round runs THEN each page's outcome is a line, and the round's JSON has them
    assert main(["collect", "--sources", str(sources)], env) == 0
    out = capsys.readouterr().out
    assert re.search(r"^Article: 연합뉴스 \| #\d+ ok \d+ chars \| 국회 예산안 통과$", out, re.M)
    assert re.search(r"^Article: 연합뉴스 \| #\d+ error \(http_404\) \| 사라진 기사$", out, re.M)
    assert (
        "Pages: 1 ok, 0 thin, 0 empty, 0 list pages, 1 failed, 0 waiting for their host; 0 found"
        in out
    )
    # AND `articles` lists them in the contract's shape
    assert main(["articles", "--json"], env) == 0
    articles = json.loads(capsys.readouterr().out)["articles"]
    assert [set(a) for a in articles] == [
        {"id", "source", "category", "title", "url", "extraction", "copy_of"}
    ] * 2
    assert [(a["extraction"]["status"], a["extraction"]["reason"]) for a in articles] == [
        ("extract_ok", None),
        ("extract_error", "http_404"),
    ]
    assert main(["articles"], env) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"^#\d+ 연합뉴스 \| 정치 \| ok \d+ chars \| no issue \| 국회 예산안 통과 \| http", out, re.M
    )
    assert re.search(
        r"^#\d+ 연합뉴스 \| 정치 \| error \(http_404\) \| no issue \| 사라진 기사", out, re.M
    )
    # AND `reextract` judges the kept page again without fetching it
    fetched = feed_server.requests["/view/1"]
    assert main(["reextract", "--since", "2000-01-01"], env) == 0
    out = capsys.readouterr().out
    assert re.search(
        r"^Article: 연합뉴스 \| #\d+ ok \d+ chars \| 국회 예산안 통과 \(was ok\)$",
        out,
        re.M,
    )
    assert "Re-extracted 1 page from the raw layer; 0 changed outcome; 0 no longer kept" in out
    assert feed_server.requests["/view/1"] == fetched
    # AND `feeds` shows the host the pages came from
    assert main(["feeds"], env) == 0
    assert re.search(
        r"^Host: 127\.0\.0\.1 \| Breaker: closed \| 0 failures in a row \| robots\.txt missing",
        capsys.readouterr().out,
        re.M,
    )
