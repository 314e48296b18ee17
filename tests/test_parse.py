from datetime import UTC, datetime

import pytest

from newsdesk.collect.decode import UTF8_REPLACED, declared_encoding
from newsdesk.collect.parse import parse_feed
from newsdesk.core.errors import FeedParseError
from tests.conftest import feed_bytes


def test_rss_entries_keep_title_link_summary_and_date():
    feed = parse_feed(feed_bytes("good.xml"), "application/rss+xml; charset=utf-8")
    assert feed.version == "rss20"
    first, second = feed.entries[:2]
    assert first.title == "국회, 내년도 예산안 본회의 통과"
    assert first.link == "https://example.test/article/1001"
    assert first.guid == "https://example.test/article/1001"
    assert first.summary == "예산안이 통과 됐다."
    assert first.published_at == datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
    assert second.title == "<속보> 여야 원내대표 회동"  # angle brackets in a title are text


def test_a_broken_date_is_no_date():
    feed = parse_feed(feed_bytes("good.xml"))
    assert feed.entries[4].published_at is None


def test_atom_entries_without_link_are_counted_not_kept():
    feed = parse_feed(feed_bytes("atom.xml"), "application/atom+xml")
    assert feed.version.startswith("atom")
    assert [e.link for e in feed.entries] == ["https://example.test/atom/1"]
    assert feed.entries_without_link == 1


CP949_TITLES = ["드라마 '똠방각하' 리메이크 확정", "쀍 소리 나는 주식시장…코스피 급락"]


@pytest.mark.parametrize(
    "content_type",
    [
        "application/rss+xml; charset=EUC-KR",
        "text/xml; charset=ks_c_5601-1987",
        "text/xml",  # only the XML declaration says euc-kr
        None,
    ],
)
def test_cp949_labelled_euc_kr_decodes(content_type):
    # GIVEN a feed whose bytes are CP949 with syllables EUC-KR lacks, labelled EUC-KR
    content = feed_bytes("cp949-labelled-euc-kr.xml")
    with pytest.raises(UnicodeDecodeError):
        content.decode("euc-kr")
    # WHEN parsed THEN every title reads right
    feed = parse_feed(content, content_type)
    assert [e.title for e in feed.entries] == [*CP949_TITLES, "한국은행 기준금리 동결"]


def test_a_cp949_feed_labelled_utf8_decodes():
    content = feed_bytes("cp949-labelled-euc-kr.xml").replace(
        b'encoding="euc-kr"', b'encoding="utf-8"'
    )
    assert b'encoding="utf-8"' in content
    feed = parse_feed(content, "application/rss+xml; charset=utf-8")
    assert [e.title for e in feed.entries][:2] == CP949_TITLES


KOREAN_RSS = (
    '<?xml version="1.0" encoding="{label}"?><rss version="2.0"><channel><title>뉴스</title>'
    "<item><title>한국은행 기준금리 동결</title><link>https://example.test/1</link></item>"
    "</channel></rss>"
)


@pytest.mark.parametrize(
    ("label", "content_type"),
    [
        ("euc-kr", "application/rss+xml; charset=EUC-KR"),
        ("ks_c_5601-1987", "text/xml; charset=ks_c_5601-1987"),
        ("euc-kr", None),  # only the XML declaration claims EUC-KR
        ("utf-8", "text/xml; charset=euc-kr"),
    ],
)
def test_a_utf8_body_labelled_euc_kr_is_utf8(label, content_type):
    # GIVEN UTF-8 bytes whose header or declaration says EUC-KR
    content = KOREAN_RSS.format(label=label).encode("utf-8")
    # WHEN parsed THEN the evidence (valid UTF-8) wins over the claim
    feed = parse_feed(content, content_type)
    assert [e.title for e in feed.entries] == ["한국은행 기준금리 동결"]
    assert feed.encoding == "utf-8"


@pytest.mark.parametrize("codec", ["utf-32-be", "utf-32-le", "utf-16-be", "utf-16-le"])
def test_a_byte_order_mark_decides(codec):
    content = "\ufeff".encode(codec) + KOREAN_RSS.format(label=codec[:6]).encode(codec)
    feed = parse_feed(content, "application/rss+xml")
    assert [e.title for e in feed.entries] == ["한국은행 기준금리 동결"]


def test_a_euc_kr_body_reports_cp949_and_one_bad_byte_is_replaced():
    content = KOREAN_RSS.format(label="euc-kr").encode("cp949")
    assert parse_feed(content).encoding == "cp949"
    broken = KOREAN_RSS.format(label="utf-8").encode("utf-8").replace("동결".encode(), b"\xff")
    feed = parse_feed(broken)
    assert (feed.entries[0].title, feed.encoding) == ("한국은행 기준금리 \ufffd", UTF8_REPLACED)


def test_character_entities_declared_in_the_doctype_still_expand():
    content = (
        '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY copy "&#169;"><!ENTITY org "연합뉴스">]>'
        "<rss version='2.0'><channel><item><title>&org; &copy; 2026</title>"
        "<link>https://example.test/e</link></item></channel></rss>"
    ).encode()
    assert [e.title for e in parse_feed(content).entries] == ["연합뉴스 © 2026"]


def test_a_utf8_feed_is_left_to_feedparser():
    feed = parse_feed(
        "<rss version='2.0'><channel><item><title>한글 제목</title>"
        "<link>https://example.test/u</link></item></channel></rss>".encode()
    )
    assert feed.entries[0].title == "한글 제목"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("<rss version='2.0'><channel><title>한글</title></channel></rss>".encode(), "utf-8"),
        (
            "\ufeff<rss version='2.0'><channel><title>한글</title></channel></rss>".encode(
                "utf-16-le"
            ),
            "utf-16le",
        ),
        (
            b"<?xml version='1.0' encoding='iso-8859-1'?><rss version='2.0'><channel/></rss>",
            "iso-8859-1",
        ),
    ],
)
def test_the_encoding_the_feed_was_read_in_is_reported(content, expected):
    assert parse_feed(content).encoding == expected


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"", "application/rss+xml"),
        (b"   \n", None),
        (feed_bytes("not-a-feed.html"), "text/html; charset=utf-8"),
        (b'{"items": []}', "application/json"),
        (b"\x00\xff\xfe garbage", None),
    ],
)
def test_what_is_not_a_feed_fails(content, content_type):
    with pytest.raises(FeedParseError):
        parse_feed(content, content_type)


def test_an_empty_feed_is_a_feed():
    feed = parse_feed(b"<rss version='2.0'><channel><title>t</title></channel></rss>")
    assert feed.entries == []


@pytest.mark.parametrize(
    ("content", "content_type", "expected"),
    [
        (b"<?xml version='1.0' encoding='EUC-KR'?><rss/>", None, "EUC-KR"),
        (b'<?xml version="1.0" encoding="utf-8"?><rss/>', "text/xml; charset=euc-kr", "euc-kr"),
        (b"<rss/>", "text/xml", None),
        (b"<rss/>", None, None),
    ],
)
def test_declared_encoding_prefers_the_header(content, content_type, expected):
    assert declared_encoding(content, content_type) == expected


def rss_with_links(*links):
    items = "".join(
        f"<item><title>t{n}</title><link>{link}</link></item>" for n, link in enumerate(links)
    )
    return f'<rss version="2.0"><channel><title>t</title>{items}</channel></rss>'.encode()


@pytest.mark.parametrize(
    ("link", "stored"),
    [
        ("/news/1", "https://www.example.test/news/1"),
        ("news/2?id=3", "https://www.example.test/rss/news/2?id=3"),
        ("//m.example.test/news/4", "https://m.example.test/news/4"),
        ("https://other.test/5", "https://other.test/5"),
    ],
)
def test_relative_links_resolve_against_the_feeds_final_url(link, stored):
    parsed = parse_feed(rss_with_links(link), base_url="https://www.example.test/rss/all.xml")
    assert [e.link for e in parsed.entries] == [stored]
    assert parsed.entries_without_link == 0


def test_a_relative_link_without_a_base_or_a_broken_one_is_counted_without_link():
    assert parse_feed(rss_with_links("/news/1")).entries_without_link == 1
    broken = parse_feed(rss_with_links("http://[oops/1"), base_url="https://x.test/feed")
    assert (broken.entries, broken.entries_without_link) == ([], 1)
