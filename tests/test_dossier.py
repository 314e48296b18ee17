"""An issue version's dossier (issue 40): built in the transaction that makes the version, from
the texts as they are then, and kept with its event; its representative, its texts without
repeats and within a budget, what is new since the last version, how big the story is. On a
real PostgreSQL, with tests/fixtures/dossier/ko_stories.json (three Korean stories written for
these tests)."""

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import jsonschema
import pytest

from newsdesk.aws.dossiers import DossierBucket
from newsdesk.aws.issue_bus import IssueBus
from newsdesk.cluster.events import relay_events
from newsdesk.cluster.job import ClusterPolicy, run_clustering
from newsdesk.core import dossier
from newsdesk.core.entry import Entry
from newsdesk.core.importance import importance
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.extractions import Extraction, ExtractionStore
from newsdesk.storage.issue_events import (
    MAX_REFUSALS,
    SOURCE,
    IssueEventStore,
    as_published,
    kept_dossier,
)
from newsdesk.storage.issue_lists import top_issues
from newsdesk.storage.issue_versions import DossierPolicy
from newsdesk.storage.issues import close_idle, create_issue, grow_issue, window
from newsdesk_local.cli import main
from tests.test_cli import environ
from tests.test_living_issues import SCHEMA

FIXTURE = json.loads(
    (Path(__file__).parent / "fixtures" / "dossier" / "ko_stories.json").read_text("utf-8")
)
STORIES = FIXTURE["stories"]
T0 = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def store_story(database, story, number=0):
    """The story's articles, each collected when published, its page extracted as the
    fixture says; their ids, in the fixture's order."""
    ids = []
    for n, item in enumerate(story["articles"]):
        link = f"https://news.example/{number}/{n}"
        entry = Entry(item["title"], link, "", None, at(item["hours"]))
        ArticleStore(database).insert_articles(
            item["outlet"], story["category"], [Article(entry, link)], at(item["hours"])
        )
        with database.transaction() as cursor:
            cursor.execute("SELECT id FROM raw_article WHERE origin_url = %s", (link,))
            ids.append(cursor.fetchone()[0])
    for n, item in enumerate(story["articles"]):
        extract(database, ids[n], item, None if "copy_of" not in item else ids[item["copy_of"]])
    return ids


def extract(database, article_id, item, copy_of=None, revision=1, text=None):
    text = item["text"] if text is None else text
    ExtractionStore(database).record(
        Extraction(
            article_id,
            revision,
            item.get("status", "extract_ok"),
            item.get("reason"),
            len(text or ""),
            at(item["hours"]),
            text=text,
            copy_of=copy_of,
            copy_reason=None if copy_of is None else "content_hash",
        )
    )


def members(database, ids):
    by_id = {a.id: a for a in window(database, T0 - timedelta(days=1), copies=True)}
    return [by_id[i] for i in ids]


def kept(database, issue_id, version):
    """The dossier kept with the version's event, as its JSON."""
    text = kept_dossier(database, issue_id, version)
    assert text is not None
    return text


def made_dossier(database, issue_id, version):
    return json.loads(kept(database, issue_id, version))


def rate_story_in_two_rounds(database, policy=None):
    """The rate story's first round as an issue, its second as its update; the issue's id and
    the articles' ids."""
    story = STORIES[0]
    ids = store_story(database, story)
    first, second = ([ids[i] for i in r] for r in story["rounds"])
    found = members(database, first)
    issue_id = create_issue(database, found, found[0], found[0], at(1.5), policy)
    assert grow_issue(database, issue_id, members(database, second), at(5), policy)
    return issue_id, ids


def test_an_update_that_repeats_three_sentences_has_only_its_two_new_ones_as_new(database):
    issue_id, ids = rate_story_in_two_rounds(database)
    update = made_dossier(database, issue_id, 2)
    item = STORIES[0]["articles"][4]
    # three of the update's five sentences repeat the first round's, one in other words
    assert [s["text"] for s in update["new"]["sentences"]] == item["new"]
    assert {s["article_id"] for s in update["new"]["sentences"]} == {ids[4]}
    assert update["new"]["repeated_sentences"] == 3
    assert update["new"]["texts_read"] == [ids[4]]  # the paywalled page has no text to read
    assert update["new"]["nothing_new"] is False
    first = made_dossier(database, issue_id, 1)
    assert first["new"]["texts_read"] == [ids[0], ids[1], ids[3]]  # not the copy


def test_an_update_that_brings_nothing_new_says_so(database):
    story = STORIES[0]
    ids = store_story(database, story)
    found = members(database, [ids[0], ids[1], ids[3]])
    issue_id = create_issue(database, found, found[0], found[0], at(1.5))
    # WHEN a later article says, in its own words, only what the issue had read
    link = "https://news.example/again"
    title = "한은 기준금리 동결 재확인"
    entry = Entry(title, link, "", None, at(3))
    ArticleStore(database).insert_articles("뉴스1", "경제", [Article(entry, link)], at(3))
    (again,) = [a for a in window(database, T0) if a.title == title]
    text = "한은이 이날 기준금리를 3.50%에서 묶었다.\n금통위원 6명이 만장일치로 동결에 찬성했다."
    extract(database, again.id, {"hours": 3}, text=text)
    assert grow_issue(database, issue_id, [again], at(3.5))
    update = made_dossier(database, issue_id, 2)
    assert update["new"] == {
        "texts_read": [again.id],
        "sentences": [],
        "repeated_sentences": 2,
        "nothing_new": True,
    }


def test_the_dossier_keeps_its_bytes_after_a_reextraction_and_the_texts_retention(database):
    issue_id, ids = rate_story_in_two_rounds(database)
    before = [kept(database, issue_id, v) for v in (1, 2)]
    # WHEN an article's page is extracted again with other text, and later every text is
    # removed by ARTICLE_TEXT_RETENTION_DAYS
    item = STORIES[0]["articles"][0]
    extract(database, ids[0], item, revision=2, text="전혀 다른 본문이다. 숫자 99도 있다.")
    assert [kept(database, issue_id, v) for v in (1, 2)] == before
    assert ExtractionStore(database).remove_text(at(1000), at(1000)) > 0
    assert [kept(database, issue_id, v) for v in (1, 2)] == before
    first = json.loads(before[0])
    assert first["representative"]["article_id"] == ids[0]
    assert (
        "한국은행은 25일 기준금리를 연 3.50%로 동결했다."
        in first["texts"][0]["passages"][0]["text"]
    )


def test_a_second_run_at_the_same_time_writes_no_second_event_or_dossier(database):
    """A redelivered cluster message runs again: the same issues, the same kept dossiers."""
    for number, story in enumerate(STORIES[1:], start=1):
        store_story(database, story, number)
    policy = ClusterPolicy(method="headline", threshold=0.15, min_size=3, window_hours=24)
    run_clustering(database, policy, clock=lambda: at(6))
    with database.transaction() as cursor:
        cursor.execute("SELECT issue_id, version, dossier FROM issue_event ORDER BY 1, 2")
        before = cursor.fetchall()
        cursor.execute("SELECT issue_id, article_id, fingerprints FROM issue_text_read")
        read_before = sorted(cursor.fetchall())
    assert before
    assert all(row[2] for row in before)
    again = run_clustering(database, policy, clock=lambda: at(6))
    assert (again.issues, again.updated) == ([], [])
    with database.transaction() as cursor:
        cursor.execute("SELECT issue_id, version, dossier FROM issue_event ORDER BY 1, 2")
        assert cursor.fetchall() == before
        cursor.execute("SELECT issue_id, article_id, fingerprints FROM issue_text_read")
        assert sorted(cursor.fetchall()) == read_before


def test_the_representative_is_the_central_article_with_text_never_a_copy_or_empty_page(
    database,
):
    story = STORIES[0]
    ids = store_story(database, story)
    everyone = members(database, ids)
    # the most central by the clustering's measure is the copy, then the paywalled page
    centrality = {ids[2]: 0.9, ids[5]: 0.85, ids[1]: 0.6, ids[3]: 0.58, ids[0]: 0.3, ids[4]: 0.2}
    issue_id = create_issue(
        database, everyone, everyone[0], everyone[0], at(5), DossierPolicy(centrality=centrality)
    )
    made = made_dossier(database, issue_id, 1)
    # of those with text, 뉴시스 (0.6) and 바른경제 (0.58) are near-ties: the earlier wins
    assert made["representative"]["article_id"] == ids[1]
    assert made["texts"][0]["article_id"] == ids[1]
    assert made["copies"] == [
        {"id": ids[2], "outlet": "한빛일보", "copy_of": ids[0], "reason": "content_hash"}
    ]
    assert made["without_text"] == [
        {"id": ids[5], "outlet": "서울타임스", "status": "extract_empty", "reason": "paywall"}
    ]
    # every article with text is there, the copy's text is not
    assert {t["article_id"] for t in made["texts"]} == {ids[0], ids[1], ids[3], ids[4]}


def test_an_issue_with_no_text_gets_a_dossier_that_says_why(database):
    story = {
        "category": "사회",
        "articles": [
            {
                "outlet": "연합뉴스",
                "hours": 0,
                "title": "🚨🚨 속보 ❗",
                "text": None,
                "status": "extract_error",
                "reason": "http_404",
            },
            {
                "outlet": "뉴시스",
                "hours": 0.1,
                "title": "?!…",
                "text": None,
                "status": "extract_empty",
                "reason": "consent_wall",
            },
            {"outlet": "뉴스1", "hours": 0.2, "title": "Seoul 폭설 snow 😀", "text": None},
        ],
    }
    ids = store_story(database, story)
    with database.transaction() as cursor:  # the third page is not extracted yet
        cursor.execute("DELETE FROM article_extraction WHERE article_id = %s", (ids[2],))
    everyone = members(database, ids)
    issue_id = create_issue(database, everyone, everyone[0], everyone[0], at(1))
    made = made_dossier(database, issue_id, 1)
    assert made["representative"] is None
    assert made["texts"] == []
    assert [(w["id"], w["reason"]) for w in made["without_text"]] == [
        (ids[0], "http_404"),
        (ids[1], "consent_wall"),
        (ids[2], "not_extracted_yet"),
    ]
    assert made["new"]["nothing_new"] is True


def test_the_budget_holds_for_200_long_articles_first_paragraphs_first():
    paragraph = "이 문단은 사실 {n}{p:02}1번을 전한다. 다음 문장은 {n}{p:02}2건을 말한다."
    articles = [
        dossier.Article(
            n,
            f"매체{n % 37}",
            f"제목 {n}",
            f"https://news.example/{n}",
            at(n / 60),
            at(n / 60),
            "extract_ok",
            None,
            "\n".join(paragraph.format(n=n, p=p) for p in range(40)),
        )
        for n in range(200)
    ]
    issue = dossier.Issue(1, 1, "open", "경제", at(0), at(4), 200)
    made = dossier.build(issue, articles, at=at(4), centrality={}, read_before={}).dossier
    kept = [p for t in made["texts"] for p in t["passages"]]
    kept_chars = sum(len(p["text"]) for p in kept)
    assert kept_chars + len(kept) <= dossier.DEFAULT_MAX_CHARS
    # every article's first paragraph, and no article's third before every one's second
    deepest = [max(p["paragraph"] for p in t["passages"]) for t in made["texts"]]
    assert len(deepest) == 200
    assert max(deepest) - min(deepest) <= 1
    # nothing repeats (each sentence has a number of its own); what was left out is counted
    total = sum(len(s.text) for a in articles for s in dossier.sentences(a.text or ""))
    assert made["left_out"]["repeated_sentences"] == 0
    sentences_kept = sum(p["text"].count("다.") for p in kept)
    joins = sentences_kept - len(kept)  # the spaces between a passage's sentences
    assert made["left_out"]["chars_over_budget"] == total - (kept_chars - joins)
    assert made["left_out"]["sentences_over_budget"] == 200 * 80 - sentences_kept


def test_a_2mb_text_is_read_in_part_and_cut_to_the_budget_between_sentences():
    sentence = "서해안에 폭설이 내려 고속도로가 통제됐다. "
    huge = sentence * (2_000_000 // len(sentence))
    article = dossier.Article(
        1, "연합뉴스", "폭설", "https://news.example/1", at(0), at(0), "extract_ok", None, huge
    )
    issue = dossier.Issue(1, 1, "open", "사회", at(0), at(0), 1)
    made = dossier.build(issue, [article], at=at(1), centrality={}, read_before={}, max_chars=500)
    (text,) = made.dossier["texts"]
    # one distinct sentence: its repeats are left out, whatever the page's length
    assert text["passages"] == [{"paragraph": 0, "text": sentence.strip()}]
    unpunctuated = "가" * 2_000_000
    article = dossier.Article(
        1,
        "연합뉴스",
        "폭설",
        "https://news.example/1",
        at(0),
        at(0),
        "extract_ok",
        None,
        unpunctuated,
    )
    made = dossier.build(issue, [article], at=at(1), centrality={}, read_before={}, max_chars=500)
    passages = made.dossier["texts"][0]["passages"]
    assert sum(len(p["text"]) for p in passages) <= 500


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '(서울=연합뉴스) 김하늘 기자 = 첫 문장이다. 둘째 "문장"이다.\n김하늘 기자\n셋째 문장?',
            [(0, "첫 문장이다."), (0, '둘째 "문장"이다.'), (1, "셋째 문장?")],
        ),
        (
            "금리는 3.50%다. U.S. 경제는 1.5% 성장했다!",
            [(0, "금리는 3.50%다."), (0, "U.S."), (0, "경제는 1.5% 성장했다!")],
        ),
        (
            "😀 emoji와 English가 섞인 문장。 다음",
            [(0, "😀 emoji와 English가 섞인 문장。"), (0, "다음")],
        ),
    ],
)
def test_sentences_are_split_after_their_end_and_credits_and_bylines_dropped(text, expected):
    assert [(s.paragraph, s.text) for s in dossier.sentences(text)] == expected


def test_a_sentence_with_a_number_of_its_own_is_not_a_repeat():
    earlier = [dossier.fingerprint("반도체 수출은 142억달러로 28% 늘었다.")]
    later = ["반도체 수출액은 142억달러로 28% 증가했다.", "자동차 수출은 62억달러로 5% 줄었다."]
    found = dossier.repeats([dossier.fingerprint(s) for s in later], earlier)
    assert found.toarray().tolist() == [[True], [False]]


def test_a_sentence_of_punctuation_alone_is_never_carried():
    carried = dossier.Carried([dossier.fingerprint(s) for s in ("…!?", "폭설이 내렸다.")])
    assert (carried.take(0), carried.take(1)) == (False, True)


def test_the_dossier_command_prints_the_representative_and_what_is_new(
    database, postgres_url, data_dir, capsys
):
    issue_id, ids = rate_story_in_two_rounds(database)
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["dossier", str(issue_id)], env) == 0
    shown = capsys.readouterr().out
    assert f"Issue #{issue_id} version 2 [경제] open: 6 articles from 6 outlets" in shown
    assert f"Representative: #{ids[0]} 연합뉴스 한은 기준금리 연 3.50% 동결" in shown
    new = STORIES[0]["articles"][4]["new"]
    assert (
        f"New in this version (2 sentences):\n  #{ids[4]} {new[0]}\n  #{ids[4]} {new[1]}\n" in shown
    )
    assert f"Copy: #{ids[2]} 한빛일보 of #{ids[0]} (content_hash)" in shown
    assert f"Without text: #{ids[5]} 서울타임스 (paywall)" in shown
    # --json: the bytes kept, as they are published
    assert main(["dossier", str(issue_id), "--version", "1", "--json"], env) == 0
    assert capsys.readouterr().out == kept(database, issue_id, 1) + "\n"


def test_the_dossier_command_refuses_an_issue_without_one_in_a_line(
    database, postgres_url, data_dir, capsys
):
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["dossier", "999"], env) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("newsdesk: no dossier for issue 999")


# --- the relay: each dossier written to the dossier bucket before its event is published ------


def relayed(database, bus_name, dossiers):
    """The outbox relayed to ``bus_name``, the dossiers to ``dossiers``: (published, failed)."""
    issue_bus = IssueBus(boto3.client("events"), bus_name, SOURCE)
    return relay_events(IssueEventStore(database), issue_bus, dossiers, at(6))


def test_the_dossier_is_written_before_its_event_is_published_with_the_kept_bytes(
    database, issue_consumer, dossier_bucket
):
    name, receive = issue_consumer
    rate_story_in_two_rounds(database)
    assert relayed(database, name, dossier_bucket) == (2, 0)
    details = sorted((m["detail"] for m in receive()), key=lambda d: d["version"])
    for detail in details:
        reference = detail["dossier"]
        body = dossier_bucket.get(reference["key"])
        # the object is the outbox's bytes, and the event says which, how big and its digest
        assert body.decode() == kept(database, detail["issue_id"], detail["version"])
        assert reference["bucket"] == dossier_bucket.name
        assert (reference["size"], reference["sha256"]) == (
            len(body),
            hashlib.sha256(body).hexdigest(),
        )
        jsonschema.validate(detail, SCHEMA)
    assert [d["dossier"]["key"] for d in details] == ["issues/1/v1.json", "issues/1/v2.json"]


def test_a_bucket_that_refuses_the_dossier_holds_its_event_back_and_gives_nothing_up(
    database, issue_consumer, dossier_bucket, aws_env
):
    name, receive = issue_consumer
    missing = DossierBucket(aws_env.client("s3"), "no-such-bucket")
    rate_story_in_two_rounds(database)
    # WHEN the bucket does not take the dossiers, more times than an event may be refused
    for _ in range(MAX_REFUSALS + 1):
        assert relayed(database, name, missing)[0] == 0
    # THEN no event went out without its dossier, and none was given up
    assert receive() == []
    waiting = IssueEventStore(database).events()
    assert [e.published_at for e in waiting] == [None, None]
    assert all("no-such-bucket" in (e.last_error or "") for e in waiting)
    # AND once the bucket takes them, both go out
    assert relayed(database, name, dossier_bucket) == (2, 0)
    assert len(receive()) == 2


def test_a_relay_that_dies_after_writing_the_dossier_writes_the_same_object_again(
    database, issue_consumer, dossier_bucket
):
    name, receive = issue_consumer
    # GIVEN a relay whose bus fails after the dossiers were written
    rate_story_in_two_rounds(database)
    assert relayed(database, "no-such-bus", dossier_bucket) == (0, 2)
    first = dossier_bucket.get("issues/1/v2.json")
    # WHEN the next run relays them THEN it writes the same bytes and publishes
    assert relayed(database, name, dossier_bucket) == (2, 0)
    assert dossier_bucket.get("issues/1/v2.json") == first
    assert len(receive()) == 2


def test_issues_top_lists_the_open_issues_by_importance(database, postgres_url, data_dir, capsys):
    rate_id, _ = rate_story_in_two_rounds(database)  # six outlets, collected 0–4.5 h
    snow_ids = store_story(database, STORIES[1], 1)  # four outlets, collected 0–5 h
    snow = members(database, snow_ids)
    snow_id = create_issue(database, snow, snow[0], snow[0], at(5))
    ranked = top_issues(database, 5, at(5))
    # at 5 h: the rate story has 6 outlets, 6 articles in 6 hours, 2 (4 h and 4.5 h) in the
    # last hour; the snow story 4, 4 and 1 (5 h)
    assert [(i["id"], i["importance"]) for i in ranked] == [
        (rate_id, importance(6, 6, 2)),
        (snow_id, importance(4, 4, 1)),
    ]
    assert [i["id"] for i in top_issues(database, 1, at(5))] == [rate_id]
    env = environ(data_dir, DATABASE_URL=postgres_url)
    assert main(["issues", "--top", "1"], env) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("#")]
    assert line.startswith(f"#{rate_id} [경제]")


def test_a_long_text_leaves_a_new_one_its_sentences_and_what_is_new_is_read():
    """Every article's first sentences before any article's later ones: a text of thousands of
    sentences in one paragraph does not leave the next version's text unread."""
    long = " ".join(f"긴 기사의 {n}번째 문장이다." for n in range(2_500))
    first = dossier.Article(1, "연합뉴스", "t", "u", at(0), at(0), "extract_ok", None, long)
    issue = dossier.Issue(1, 1, "open", "사회", at(0), at(0), 1)
    built = dossier.build(issue, [first], at=at(0), centrality={}, read_before={})
    later = dossier.Article(
        2, "뉴시스", "t", "u", at(1), at(1), "extract_ok", None, "폭설이 내렸다."
    )
    issue = dossier.Issue(1, 2, "open", "사회", at(0), at(1), 2)
    made = dossier.build(
        issue, [first, later], at=at(1), centrality={}, read_before=built.read, added=[2]
    ).dossier
    assert made["new"]["sentences"] == [{"article_id": 2, "text": "폭설이 내렸다."}]
    assert made["new"]["nothing_new"] is False


def test_a_feed_that_dates_an_article_long_before_it_was_collected_is_not_believed():
    early = dossier.Article(
        1,
        "시계틀린일보",
        "t",
        "u",
        datetime(1970, 1, 1, tzinfo=UTC),
        at(1),
        "extract_ok",
        None,
        "첫 보도라고 주장한다.",
    )
    honest = dossier.Article(
        2, "연합뉴스", "t", "u", at(0), at(0), "extract_ok", None, "먼저 보도했다."
    )
    size = dossier.story_size([early, honest], at(2))
    assert size["first_reporter"]["article_id"] == 2
    assert size["lead_seconds"] == 3600


def test_a_close_after_a_version_made_before_dossiers_names_none(database):
    story = STORIES[1]
    found = members(database, store_story(database, story, 1))
    issue_id = create_issue(database, found, found[0], found[0], at(6))
    with database.transaction() as cursor:  # as an earlier release wrote version 1
        cursor.execute(
            "UPDATE issue_event SET dossier = NULL, detail = detail - 'dossier' "
            "WHERE issue_id = %s",
            (issue_id,),
        )
    close_idle(database, at(30), at(30))
    (closed,) = [e for e in IssueEventStore(database).events() if e.type == "IssueClosed"]
    assert closed.detail["dossier"] is None
    jsonschema.validate(as_published(closed.detail, "b"), SCHEMA)
