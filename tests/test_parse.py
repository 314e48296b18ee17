import codecs
from datetime import UTC, datetime

import feedparser
import pytest

from newsdesk.collect.decode import (
    CP949_REPLACED,
    EUC_KR_LABELS,
    UTF8_REPLACED,
    declared_encoding,
    decode_feed,
)
from newsdesk.collect.parse import parse_feed, summary_text
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


@pytest.mark.parametrize(
    ("content", "encoding"),
    [
        (("\ufeff" + KOREAN_RSS.format(label="utf-16")).encode("utf-16-le"), "utf-16le"),
        (KOREAN_RSS.format(label="utf-16").encode("utf-16-be"), "utf-16be"),
        (KOREAN_RSS.format(label="utf-32").encode("utf-32-be"), "utf-32be"),
        (  # a lone surrogate in the bytes, and a last character cut short
            KOREAN_RSS.format(label="utf-16")
            .encode("utf-16-be")
            .replace("동".encode("utf-16-be"), b"\xd8\x3d")
            + b"\x00",
            "utf-16be (invalid bytes replaced)",
        ),
    ],
)
def test_a_wide_body_is_read_into_utf8_by_its_first_bytes(content, encoding):
    # GIVEN a body its first bytes say is UTF-16 or UTF-32, under a header saying UTF-8
    decoded = decode_feed(content, "application/rss+xml; charset=utf-8")
    # THEN it is UTF-8, its declaration and header saying so, what the bytes said reported
    assert decoded.content.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    assert (decoded.headers["content-type"], decoded.encoding, decoded.utf8) == (
        "application/rss+xml; charset=utf-8",
        encoding,
        True,
    )
    feed = parse_feed(content, "application/rss+xml; charset=utf-8")
    assert (len(feed.entries), feed.encoding) == (1, encoding)


@pytest.mark.parametrize(("declared", "title"), [("cp500", "Ø [x]!"), ("cp037", "Ø [x]!")])
def test_ebcdic_is_read_in_the_code_page_its_declaration_names(declared, title):
    # cp500 and cp037 write "[", "]" and "!" with other bytes (feedparser's corpus: x80_*.xml)
    text = (
        f'<?xml version="1.0" encoding="{declared}"?><rss version="2.0"><channel><title>t'
        f"</title><item><title>{title}</title><link>https://example.test/1</link></item>"
        "</channel></rss>"
    )
    assert decode_feed(text.encode(declared), None).encoding == declared
    assert [e.title for e in parse_feed(text.encode(declared)).entries] == [title]


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


# ---- decoding by evidence (issue 23, points 1 and 2) ------------------------------------------

TITLES = ["국회 본회의 통과", "한국은행 기준금리 동결"]


def titled(label: str, *titles: str, declaration: bool = True) -> str:
    items = "".join(
        f"<item><title>{title}</title><link>https://example.test/{n}</link></item>"
        for n, title in enumerate(titles)
    )
    head = f'<?xml version="1.0" encoding="{label}"?>' if declaration else ""
    return f'{head}<rss version="2.0"><channel><title>News</title>{items}</channel></rss>'


def one_bad_byte(text: str, codec: str) -> bytes:
    """``text`` encoded, one byte that is no character in ``codec`` after its first title."""
    first = TITLES[0].encode(codec)
    return text.encode(codec).replace(first, first + b"\xff", 1)


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (one_bad_byte(titled("euc-kr", *TITLES), "utf-8"), None),
        (one_bad_byte(titled("utf-8", *TITLES), "utf-8"), "text/xml; charset=EUC-KR"),
        (one_bad_byte(titled("windows-949", *TITLES), "utf-8"), None),
    ],
)
def test_a_utf8_feed_labelled_euc_kr_with_one_bad_byte_loses_that_byte(content, content_type):
    # GIVEN UTF-8 with one invalid byte, labelled EUC-KR (before: every title CP949 mojibake,
    # '援��쉶 蹂명쉶�쓽 …')
    feed = parse_feed(content, content_type)
    # THEN UTF-8, the fewest errors, wins: one U+FFFD, the Hangul intact
    assert [e.title for e in feed.entries] == [TITLES[0] + "\ufffd", TITLES[1]]
    assert feed.encoding == UTF8_REPLACED


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (one_bad_byte(titled("utf-8", *TITLES), "cp949"), None),
        (one_bad_byte(titled("utf-8", *TITLES), "cp949"), "application/rss+xml; charset=utf-8"),
        (one_bad_byte(titled("", *TITLES, declaration=False), "cp949"), None),  # unlabelled
        (one_bad_byte(titled("euc-kr", *TITLES), "cp949"), None),
    ],
)
def test_a_cp949_feed_with_one_bad_byte_keeps_its_hangul(content, content_type):
    # GIVEN CP949 with one invalid byte, labelled UTF-8, unlabelled or EUC-KR (before: under a
    # UTF-8 label every Hangul syllable became U+FFFD)
    feed = parse_feed(content, content_type)
    assert [e.title for e in feed.entries] == [TITLES[0] + "\ufffd", TITLES[1]]
    assert feed.encoding == CP949_REPLACED


def test_latin1_labelled_utf8_is_read_as_feedparser_reads_it():
    # GIVEN Latin-1 bytes labelled UTF-8 (before: 'Caf� cr�me'): neither UTF-8 nor CP949 reads
    # more than it breaks, so the bytes go to feedparser, whose windows-1252 reads them
    content = titled("utf-8", "Café crème").encode("latin-1")
    feed = parse_feed(content, "application/rss+xml; charset=utf-8")
    assert [e.title for e in feed.entries] == ["Café crème"]
    assert feed.encoding == "windows-1252"


def test_windows_1252_does_not_win_by_its_error_count():
    # GIVEN broken UTF-8 Korean, unlabelled, that windows-1252 decodes without an error
    content = titled("", "대통령 발표", "예산안 처리", declaration=False).encode()
    content = content.replace("발표".encode(), "발표".encode() + b"\xff")
    assert content.decode("windows-1252")
    # THEN windows-1252 is no candidate: UTF-8's one error wins
    feed = parse_feed(content)
    assert [e.title for e in feed.entries] == ["대통령 발표\ufffd", "예산안 처리"]


def test_a_euc_kr_label_needs_hangul_in_the_reading_that_wins():
    # GIVEN Latin-1 labelled EUC-KR: neither reading has Hangul, so feedparser reads the bytes
    content = titled("euc-kr", "Café crème").encode("latin-1")
    assert [e.title for e in parse_feed(content).entries] == ["Café crème"]


@pytest.mark.parametrize("label", sorted(EUC_KR_LABELS - {"euc-kr", "korean"}))
@pytest.mark.parametrize("where", ["header", "declaration"])
def test_every_whatwg_label_of_euc_kr_is_read_as_korean(label, where):
    # GIVEN CP949 bytes whose only label is one of WHATWG's (Java's x-windows-949 too), which
    # Python does not know for windows-949, cseuckr, csksc56011987, iso-ir-149,
    # ks_c_5601-1989, ksc_5601, x-windows-949 (before: windows-1252, '±¹È¸ º»È¸ÀÇ Åë°ú')
    if where == "header":
        content = titled("", *TITLES, declaration=False).encode("cp949")
        feed = parse_feed(content, f"application/rss+xml; charset={label}")
    else:
        feed = parse_feed(titled(label, *TITLES).encode("cp949"))
    assert [e.title for e in feed.entries] == TITLES
    assert (feed.encoding, feed.fast) == ("cp949", True)


def test_python_does_not_know_the_labels_this_reads():
    unknown = []
    for label in sorted(EUC_KR_LABELS):
        try:
            codecs.lookup(label)
        except LookupError:
            unknown.append(label)
    assert unknown == [
        "cseuckr",
        "csksc56011987",
        "iso-ir-149",
        "ks_c_5601-1989",
        "ksc_5601",
        "windows-949",
        "x-windows-949",
    ]


ATOM_RELATIVE = (
    b'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
    b"<title>t</title><entry><title>a</title><id>tag:n.test,2026:1</id>"
    b'<link rel="alternate" href="2026/a.html"/></entry></feed>'
)


def test_a_content_location_is_no_base_but_reaches_feedparser_when_given_to_decode():
    # GIVEN a feed fetched from /feed.xml whose response says Content-Location: /news/
    headers = {"Content-Location": "/news/", "Content-Language": "ko"}
    feed = parse_feed(
        ATOM_RELATIVE, "application/atom+xml", "https://n.test/feed.xml", True, headers
    )
    # THEN the link is resolved against the URL it was fetched from (RFC 9110, 8.7)
    assert [e.link for e in feed.entries] == ["https://n.test/2026/a.html"]
    # AND decode_feed passes what it is given to feedparser (the corpus test's document URL)
    decoded = decode_feed(ATOM_RELATIVE, None, {"Content-Location": "https://n.test/news/"})
    parsed = feedparser.parse(decoded.content, response_headers=decoded.headers)
    assert parsed.entries[0].link == "https://n.test/news/2026/a.html"


# A feed whose xml:base is relative, on the feed and again on an entry, with relative ids
NESTED_BASES = (
    b'<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"'
    b' xml:base="news/"><title>t</title>'
    b'<entry xml:base="2026/"><title>a</title><id>items/1</id>'
    b'<link rel="alternate" href="a.html"/></entry>'
    b'<entry><title>b</title><id>/items/2</id><link rel="alternate" href="/b.html"/></entry>'
    b"</feed>"
)


def test_nested_xml_bases_and_relative_ids_resolve_as_feedparser_given_the_url_resolves_them(
    serve,
):
    # GIVEN the feed fetched from .../feeds/all.xml, whose server also says Content-Location
    url = serve("/feeds/all.xml", body=NESTED_BASES, content_type="application/atom+xml")
    headers = {"Content-Location": "http://intranet.invalid/news/"}
    # WHEN newsdesk parses the bytes with the URL they came from
    feed = parse_feed(NESTED_BASES, "application/atom+xml", url, True, headers)
    # THEN the entry's base is its own xml:base on the feed's (before: feedparser had no
    # document URL, lost the nested base and the link was .../feeds/news/a.html), and the
    # relative Atom ids are resolved too (before: stored as "items/1", "/items/2")
    root = url.removesuffix("/feeds/all.xml")
    assert [(e.link, e.guid) for e in feed.entries] == [
        (f"{root}/feeds/news/2026/a.html", f"{root}/feeds/news/2026/items/1"),
        (f"{root}/b.html", f"{root}/items/2"),
    ]
    # AND that is what feedparser reads when it fetches the URL itself (on the loopback server)
    alone = feedparser.parse(url)
    assert [(e.link, e.id) for e in alone.entries] == [(e.link, e.guid) for e in feed.entries]


@pytest.mark.parametrize("fast", [True, False], ids=["fast reader", "feedparser"])
def test_a_relative_permalink_guid_resolves_against_the_feeds_url(fast):
    # GIVEN an RSS feed whose guids are relative: a permalink one and one that is not
    body = rss_with_links("news/1").replace(
        b"</link></item>",
        b'</link><guid>g/1</guid></item><item><link>news/2</link><guid isPermaLink="false">'
        b"g/2</guid></item>",
    )
    feed = parse_feed(body, base_url="https://n.test/rss/all.xml", fast=fast)
    # THEN the permalink is resolved, as feedparser resolves it, and the other left as it is
    assert [(e.link, e.guid) for e in feed.entries] == [
        ("https://n.test/rss/news/1", "https://n.test/rss/g/1"),
        ("https://n.test/rss/news/2", "g/2"),
    ]
    assert feed.fast == fast


def test_the_decoded_headers_keep_what_the_response_said():
    decoded = decode_feed(
        "<rss version='2.0'><channel><title>한</title></channel></rss>".encode("cp949"),
        "text/xml; charset=euc-kr",
        {"Content-Location": "https://n.test/news/", "Content-Language": "ko", "X-Foo": "bar"},
    )
    assert decoded.headers == {
        "content-type": "text/xml; charset=utf-8",
        "content-location": "https://n.test/news/",
        "content-language": "ko",
        "x-foo": "bar",
    }


# ---- titles and summaries as readers see them (issue 23, point 3) -------------------------------


def one_item(title: str, description: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>t</title>'
        f"<item><title>{title}</title><link>https://n.test/1</link>"
        f"<description>{description}</description></item></channel></rss>"
    ).encode()


@pytest.mark.parametrize("fast", [True, False], ids=["fast reader", "feedparser"])
@pytest.mark.parametrize(
    ("title", "text"),
    [
        # double-escaped by the outlet, as Korean feeds often are: feedparser gives a quote
        ("&amp;#39;미치고 환장&amp;#39;", "'미치고 환장'"),
        ("AT&amp;amp;T &amp;quot;5G&amp;quot;", 'AT&T "5G"'),
        # markup as text, escaped in the XML
        ("진입 &lt;b&gt;굵게&lt;/b&gt; 끝", "진입 굵게 끝"),
        # text that only looks like markup stays as it is
        ("&lt;속보&gt; 여야 원내대표 회동", "<속보> 여야 원내대표 회동"),
        ("3 &lt; 5 그리고 7 &gt; 2", "3 < 5 그리고 7 > 2"),
        ("진입&lt;br&gt;", "진입<br>"),  # no end tag, no reference: feedparser says text
    ],
)
def test_titles_are_the_text_a_reader_sees(fast, title, text):
    feed = parse_feed(one_item(title), fast=fast)
    assert feed.fast is fast
    assert [e.title for e in feed.entries] == [text]


@pytest.mark.parametrize(
    ("title", "text"),
    [
        ("진입<br/>", "진입"),  # an element in the title: feedparser re-serialised it, <br></br>
        ('<b>속보</b> <a href="https://n.test/x">여야</a> 회동', "속보 여야 회동"),
    ],
)
def test_markup_in_a_title_is_stored_as_its_text(title, text):
    feed = parse_feed(one_item(title))
    assert not feed.fast  # the fast reader leaves elements in a title to feedparser
    assert [e.title for e in feed.entries] == [text]


@pytest.mark.parametrize("fast", [True, False], ids=["fast reader", "feedparser"])
@pytest.mark.parametrize(
    "description",
    [
        "수익률 3% &lt; 5% 그리고 7 &gt; 2 전망",
        "<![CDATA[수익률 3% < 5% 그리고 7 > 2 전망]]>",
        "수익률 3% &amp;lt; 5% 그리고 7 &amp;gt; 2 전망",
    ],
)
def test_a_summary_keeps_the_text_between_a_bare_lt_and_gt(fast, description):
    # before: '수익률 3% 2 전망', "< 5% 그리고 7 >" taken for a tag
    feed = parse_feed(one_item("t", description), fast=fast)
    assert [e.summary for e in feed.entries] == ["수익률 3% < 5% 그리고 7 > 2 전망"]


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>본문&nbsp;요약 &amp; <b>굵게</b></p>", "본문 요약 & 굵게"),
        ('<a title="a > b" href=x>링크</a> 끝', "링크 끝"),
        ("앞<script>if (a < b) {}</script>뒤", "앞 뒤"),
        ("앞<STYLE type='text/css'>p > a {}</style >뒤", "앞 뒤"),
        ("앞<!-- 주석 > 안 -->뒤<!-->끝", "앞 뒤 끝"),
        ("앞<!DOCTYPE html><?xml version='1.0'?>뒤", "앞 뒤"),
        ("앞</>가</ 주석>나", "앞 가 나"),
        ("끝나지 않은 <a href='x", "끝나지 않은"),  # markup never closed: dropped, as a browser
        ("끝나지 않은 <script>alert(1)", "끝나지 않은"),
        ("<속보> 가 < 나 > 다 </", "<속보> 가 < 나 > 다 </"),
        ("이모지 &#xD83D;&#xDE00; &#128512;", "이모지 😀 😀"),
    ],
)
def test_summary_text(html, text):
    assert summary_text(html) == text
