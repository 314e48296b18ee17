"""newsdesk.extract.text (an article page's text) and the benchmark's metric (issue 14)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import trafilatura

from newsdesk.extract.text import decode_html, extract_text
from newsdesk_local.cli import main
from newsdesk_local.extraction_metric import quality, score_page, shingles

PARAGRAPHS = [
    "서울시가 내년부터 시내버스 노선 스물세 개를 새로 고치기로 했다고 1일 밝혔다. 출퇴근 시간에"
    " 승객이 몰리는 구간의 배차 간격을 줄이고, 이용객이 적은 심야 노선은 수요응답형 버스로 바꾼다.",
    "시는 지난 6개월 동안 교통카드 이용 기록 1억 건을 분석해 노선별 혼잡도를 따졌다. 분석 결과"
    " 강남과 여의도를 잇는 노선의 아침 혼잡도가 가장 높았고,"
    " 외곽 순환 노선은 승객이 절반 이하로 줄었다.",
    "교통정책과 관계자는 시민 의견을 듣는 공청회를 이달 중순 세 차례 열고, 노선 조정안을 확정해"
    " 내년 3월부터 차례로 시행할 계획이라고 설명했다."
    " 조정 대상 노선은 시 누리집에서 확인할 수 있다.",
]
BOILERPLATE = [
    "로그인",
    "회원가입",
    "전체메뉴",
    "많이 본 뉴스",
    "관련기사 더보기",
    "댓글 쓰기",
    "개인정보처리방침",
    "무단 전재 및 재배포 금지",
]


def korean_page(charset: str = "utf-8") -> str:
    body = "\n".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return f"""<!DOCTYPE html>
<html lang="ko"><head><meta charset="{charset}">
<title>서울 시내버스 노선 23개 개편 | 한빛일보</title>
<link rel="canonical" href="https://news.example.kr/article/2026/12/01/123">
<meta property="og:title" content="서울 시내버스 노선 23개 내년 개편">
<meta name="author" content="김기자">
<meta property="article:published_time" content="2026-12-01T09:30:00+09:00">
</head><body>
<header class="site-header"><a href="/">한빛일보</a>
  <nav class="gnb"><ul><li><a href="/politics">정치</a></li><li><a href="/society">사회</a></li>
  <li><a href="/login">로그인</a></li><li><a href="/join">회원가입</a></li>
  <li><a href="/menu">전체메뉴</a></li></ul></nav></header>
<main><article class="article">
  <h1>서울 시내버스 노선 23개 내년 개편</h1>
  <div class="byline">김기자 기자 · 입력 2026.12.01 09:30</div>
  <div class="article-body" itemprop="articleBody">
{body}
  </div>
</article>
<aside class="related"><h3>관련기사 더보기</h3><ul>
  <li><a href="/a/1">지하철 요금 내년 인상 검토</a></li>
  <li><a href="/a/2">마을버스 기사 구인난 심각</a></li>
  <li><a href="/a/3">많이 본 뉴스: 한파 특보 발령</a></li></ul></aside>
<section id="comments" class="comments"><h3>댓글 쓰기</h3>
  <div class="comment"><p>배차 간격 좀 줄여 주세요 진짜 출근길 지옥입니다</p></div>
  <div class="comment"><p>심야버스 없어지면 택시 타라는 건가요</p></div></section>
</main>
<footer class="site-footer"><p>한빛일보 · 서울특별시 중구 세종대로 1</p>
  <p><a href="/privacy">개인정보처리방침</a> 무단 전재 및 재배포 금지</p></footer>
</body></html>"""


# The benchmark's metric, on hand-made pairs


def test_identical_texts_score_one():
    page = score_page("the quick brown fox jumps over", "the quick, brown fox; jumps over")
    assert page.precision == page.recall == 1.0
    # tokens keep their case, as the benchmark's do
    assert score_page("The quick brown fox", "the quick brown fox").tp == 0
    assert quality([("a b c d e", "a b c d e")]).f1 == 1.0


def test_disjoint_texts_score_zero():
    page = score_page("one two three four five", "six seven eight nine ten")
    assert page.tp == 0
    assert page.precision == page.recall == 0.0
    assert quality([("one two three four five", "")]).f1 == 0.0


def test_both_empty_is_a_perfect_page():
    page = score_page("", "  ...  ")
    assert (page.tp, page.fp, page.fn) == (0, 0, 0)
    assert page.precision == page.recall == 1.0


def test_a_short_text_is_one_shingle():
    assert shingles("hello, world!") == {"hello world": 1}
    assert shingles("a b c d") == {"a b c d": 1}
    assert shingles("a b c d e") == {"a b c d": 1, "b c d e": 1}
    page = score_page("hello world", "hello world again")
    assert page.tp == 0  # "hello world" and "hello world again" are different shingles


def test_counts_with_repeats_and_normalises():
    # true: "a b c d" twice; predicted: once, plus one shingle of its own
    true = "a b c d x a b c d"
    predicted = "a b c d y"
    assert shingles(true)["a b c d"] == 2
    page = score_page(true, predicted)
    # true shingles: abcd×2, bcdx, cdxa, dxab, xabc (6); predicted: abcd, bcdy (2); tp = 1
    assert page.tp + page.fp + page.fn == pytest.approx(1.0)
    assert page.tp == pytest.approx(1 / 7)
    assert page.fp == pytest.approx(1 / 7)
    assert page.fn == pytest.approx(5 / 7)
    assert page.precision == pytest.approx(0.5)
    assert page.recall == pytest.approx(1 / 6)


def test_quality_means_over_pages_then_f1():
    scores = quality([("a b c d", "a b c d"), ("a b c d e", "a b c d")])
    # page 2: tp=1, fn=1, fp=0 → P=1, R=0.5
    assert scores.precision == pytest.approx(1.0)
    assert scores.recall == pytest.approx(0.75)
    assert scores.f1 == pytest.approx(2 * 0.75 / 1.75)
    assert scores.pages == 2


# extract_text


def test_a_korean_article_without_its_boilerplate():
    extracted = extract_text(korean_page().encode("utf-8"), url="https://news.example.kr/a")
    for paragraph in PARAGRAPHS:
        assert paragraph in extracted.text
    for chrome in BOILERPLATE:
        assert chrome not in extracted.text
    assert "출근길 지옥" not in extracted.text  # a comment
    assert "지하철 요금" not in extracted.text  # a related article
    assert extracted.canonical_url == "https://news.example.kr/article/2026/12/01/123"
    assert extracted.og_title == "서울 시내버스 노선 23개 내년 개편"
    assert extracted.language == "ko"
    assert extracted.title
    assert extracted.published == "2026-12-01"


def test_str_and_bytes_give_the_same_text():
    page = korean_page()
    assert extract_text(page).text == extract_text(page.encode("utf-8")).text


@pytest.mark.parametrize(
    "page",
    [
        b"",
        b"   \n",
        "",
        b"<html><head><script>window.location='/app'</script></head><body></body></html>",
        b'<html><body><div id="root"></div><script src="/bundle.js"></script>'
        b"<noscript>JavaScript</noscript></body></html>",
        b"\x00\x01\x02\xff\xfe garbage",
        b"<<<>>>",
    ],
)
def test_empty_or_script_only_pages_give_empty_text(page):
    extracted = extract_text(page)
    assert isinstance(extracted.text, str)
    assert len(extracted.text) < 40


def test_euc_kr_bytes_with_a_meta_charset():
    # "똠방각하" and "숢" are in CP949 but not in EUC-KR proper
    page = korean_page("euc-kr").replace(PARAGRAPHS[0], PARAGRAPHS[0] + " 똠방각하 숢")
    extracted = extract_text(page.encode("cp949"))
    assert PARAGRAPHS[1] in extracted.text
    assert "똠방각하 숢" in extracted.text
    assert "\ufffd" not in extracted.text
    assert extracted.og_title == "서울 시내버스 노선 23개 내년 개편"


def test_ks_c_5601_label_and_an_undeclared_legacy_page():
    labelled = korean_page("ks_c_5601-1987").encode("cp949")
    assert PARAGRAPHS[2] in decode_html(labelled)
    unlabelled = korean_page("").replace('<meta charset="">', "").encode("cp949")
    assert PARAGRAPHS[2] in decode_html(unlabelled)


def test_a_utf8_page_labelled_euc_kr_is_read_as_utf8():
    assert PARAGRAPHS[0] in decode_html(korean_page("euc-kr").encode("utf-8"))


def test_malformed_utf8_is_replaced_not_garbled():
    page = korean_page().encode("utf-8").replace(b"<main>", b"<main>\xff\xfe\xc3")
    extracted = extract_text(page)
    for paragraph in PARAGRAPHS:
        assert paragraph in extracted.text


# Page shapes trafilatura cuts short, as small pages: the chrome around the text (navigation,
# related headlines, comments, footer), then the text in the shape that loses it.

CHROME = [
    "정치",
    "로그인",
    "전체메뉴",
    "관련기사",
    "지하철 요금",
    "출근길 지옥",
    "후원하기",
    "대표전화",
]
NAVIGATION = """<header><a href="/">한빛일보</a><nav><ul>
  <li><a href="/politics">정치</a></li><li><a href="/economy">경제</a></li>
  <li><a href="/society">사회</a></li><li><a href="/world">국제</a></li>
  <li><a href="/login">로그인</a></li><li><a href="/menu">전체메뉴</a></li></ul></nav></header>"""
AROUND = """<div class="related"><h3>관련기사</h3><ul>
  <li><a href="/a/1">지하철 요금 내년 인상 검토</a></li>
  <li><a href="/a/2">마을버스 기사 구인난</a></li>
  <li><a href="/a/3">심야 택시 호출 두 배로</a></li>
  <li><a href="/a/4">광역버스 입석 금지 한 달</a></li>
</ul></div>
<div class="comments"><h3>댓글 2</h3>
  <p>배차 간격 좀 줄여 주세요 진짜 출근길 지옥입니다 매일 아침 버스 세 대를 그냥 보내요</p>
  <p>심야버스 없어지면 택시 타라는 건가요 수요응답형이 제대로 될지 모르겠네요</p></div>"""
FOOTER = """<footer><p>(주)한빛일보 · 서울특별시 중구 세종대로 1 · 대표전화 02-000-0000</p>
  <p>한빛일보의 모든 콘텐츠는 저작권법의 보호를 받습니다. 무단 전재 및 재배포 금지</p></footer>"""
CAPTION = "1일 오전 서울 중구 세종대로에서 시민들이 새로 바뀐 버스 노선도를 살펴보고 있다."


def shaped_page(main: str, title: str = "서울 시내버스 노선 23개 내년 개편") -> str:
    return f"""<!DOCTYPE html>
<html lang="ko"><head><meta charset="utf-8"><title>{title} | 한빛일보</title></head><body>
{NAVIGATION}
<div id="content">
{main}
{AROUND}
</div>
{FOOTER}
</body></html>"""


def test_text_separated_by_br_inside_an_article_keeps_its_first_run():
    # 뉴시스's shape: bare text between <br>s inside <article>, the title block beside it;
    # trafilatura dropped the text before the first <br> (the dateline and the lead)
    page = shaped_page(
        """<div class="top"><p class="section">사회</p><h1>서울 시내버스 노선 23개 내년 개편</h1>
  <p class="info">김기자 기자 · 등록 2026.12.01 09:30</p></div>
<article>
"""
        + "<br><br>\n".join(PARAGRAPHS)
        + "<br><br>\n김기자 kim@hanbit.example\n</article>"
    )
    extracted = extract_text(page)
    assert extracted.text.split("\n")[:3] == PARAGRAPHS
    assert "김기자 kim@hanbit.example" in extracted.text
    assert "등록 2026.12.01" not in extracted.text  # the title block is not the article
    assert not [chrome for chrome in CHROME if chrome in extracted.text]


@pytest.mark.parametrize(
    "slot",
    [
        '<div class="ad" id="ad-middle"><script>/* slot */</script></div>',
        '<div id="banner-2"><ins class="slot"></ins><style>#banner-2{height:250px}</style></div>',
    ],
)
def test_the_text_after_an_empty_ad_slot_is_kept(slot):
    # 매일경제's shape: <br>-separated text with an ad slot after its second paragraph;
    # trafilatura's precision mode deleted the emptied slot and the text after it with it
    body = "<br><br>\n".join(PARAGRAPHS[:2]) + f"<br><br>\n{slot}\n{PARAGRAPHS[2]}"
    page = shaped_page(
        f"""<h1>서울 시내버스 노선 23개 내년 개편</h1>
<div id="articleBody" itemprop="articleBody">
{body}<br><br>
[김기자 kim@hanbit.example]
</div>"""
    )
    extracted = extract_text(page)
    assert extracted.text.split("\n")[:3] == PARAGRAPHS
    assert not [chrome for chrome in CHROME if chrome in extracted.text]


def test_the_text_after_an_empty_marker_between_paragraphs_is_kept():
    # an empty inline marker (a blog's "read more" anchor) followed by bare text
    first, second, third = PARAGRAPHS
    body = f'<p>{first}</p>\n<span id="more-5129"></span>{second}\n<p>{third}</p>'
    page = shaped_page(
        f'<article><h1>노선 개편</h1><div class="entry-content">{body}</div></article>'
    )
    assert extract_text(page).text.split("\n")[:3] == PARAGRAPHS


@pytest.mark.parametrize(
    ("photo", "mode"),
    [
        (
            f'<div class="photo"><img src="/p/1.jpg" alt="노선도"><div>{CAPTION}</div></div>',
            "precision",
        ),
        (
            f'<figure><img src="/p/1.jpg" alt="노선도"><figcaption class="photo-caption">{CAPTION}'
            "</figcaption></figure>",
            "captions",  # trafilatura drops a figure: the captions are read in a pass of their own
        ),
    ],
    ids=["caption-in-a-div", "figcaption"],
)
def test_a_photo_page_is_its_caption_not_padded_with_the_chrome(photo, mode):
    # a photo article: one caption and no text; recall mode read the navigation, the related
    # headlines and the support box, over twice as long, and was taken
    page = shaped_page(
        f"""<h1>새 버스 노선도 살펴보는 시민들</h1>
<div class="article-body">{photo}</div>
<div class="support"><strong>한빛일보를 응원해 주세요</strong>
  <a href="/support">후원하기</a></div>""",
        title="새 버스 노선도 살펴보는 시민들",
    )
    extracted = extract_text(page)
    assert (extracted.text, extracted.mode) == (CAPTION, mode)


def test_an_articles_figure_caption_stays_out_of_its_text():
    photo = f"<figure><img src='/p/1.jpg' alt=''><figcaption>{CAPTION}</figcaption></figure>"
    page = korean_page().replace(
        '<div class="article-body" itemprop="articleBody">',
        f'<div class="article-body" itemprop="articleBody">{photo}',
    )
    assert photo in page
    extracted = extract_text(page)
    assert extracted.text.split("\n") == PARAGRAPHS
    assert extracted.mode == "precision"


def test_recall_mode_is_taken_when_it_adds_an_article_not_the_chrome(monkeypatch):
    # precision mode keeping a fragment (a reprint notice) of a page whose article recall finds
    bare_extraction = trafilatura.bare_extraction
    fragment = "이 기사는 개인적인 용도로만 볼 수 있습니다."

    def precision_drops_the_article(tree, **options):
        document = bare_extraction(tree, **options)
        if not options.get("favor_precision"):
            return document
        kept: Any = SimpleNamespace() if document is None else document
        kept.text = fragment
        return kept

    monkeypatch.setattr(trafilatura, "bare_extraction", precision_drops_the_article)
    extracted = extract_text(korean_page())
    assert extracted.mode == "recall"
    assert all(paragraph in extracted.text for paragraph in PARAGRAPHS)
    assert extracted.og_title == "서울 시내버스 노선 23개 내년 개편"
    assert extracted.published == "2026-12-01"  # the metadata of the first pass
    # the same fragment on a page with no article: recall mode adds only the chrome
    extracted = extract_text(shaped_page("<h1>노선 개편</h1><div class='article-body'></div>"))
    assert (extracted.mode, extracted.text) == ("precision", fragment)


# ---- newsdesk extract-text ------------------------------------------------------------------


def test_extract_text_prints_a_loopback_pages_text_and_facts(serve, capsys):
    url = serve("/article/1.html", body=korean_page().encode(), content_type="text/html")
    env = {**os.environ, "FETCH_ALLOW_PRIVATE_NETWORKS": "true"}
    assert main(["extract-text", url], env) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"url: {url}\n")
    assert all(paragraph in out for paragraph in PARAGRAPHS)
    assert not any(line in out for line in BOILERPLATE)


def test_extract_text_reads_a_saved_page_as_json(tmp_path, capsys):
    page = tmp_path / "page.html"
    page.write_bytes(korean_page("euc-kr").encode("cp949"))
    assert main(["extract-text", str(page), "--json"], dict(os.environ)) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["text"].split("\n") == PARAGRAPHS
    assert document["chars"] == len(document["text"])


def test_extract_text_on_a_saved_consent_wall_says_why_not_the_walls_text(capsys):
    # GIVEN a saved page that is a cookie-consent wall, its words all the text there is
    page = Path(__file__).parent / "pages" / "consent_wall.html"
    # WHEN extract-text reads it
    assert main(["extract-text", str(page)], dict(os.environ)) == 0
    lines = capsys.readouterr().out.splitlines()
    # THEN it is empty for that reason, and the text is what the extractor keeps: none
    assert "outcome: empty (consent_wall)" in lines
    assert lines[-1] == "(no main text: consent_wall)"
    assert not any("847" in line for line in lines)  # the wall's "847 partners"
    # AND a saved page has no url: line (the manual says so)
    assert not any(line.startswith("url:") for line in lines)
    assert main(["extract-text", str(page), "--json"], dict(os.environ)) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["url"], document["text"], document["chars"]) == (None, "", 0)


@pytest.mark.parametrize(
    ("name", "outcome"),
    [("article_utf8", "ok"), ("photo_caption", "thin"), ("section_politics", "list page")],
)
def test_a_saved_page_is_judged_at_the_address_it_names_not_as_the_sites_root(
    name, outcome, capsys
):
    # GIVEN a saved article, a photo article and a section page, each naming its address
    page = Path(__file__).parent / "pages" / f"{name}.html"
    # WHEN extract-text reads it THEN it is judged as served from there: not the site's root
    assert main(["extract-text", str(page)], dict(os.environ)) == 0
    out = capsys.readouterr().out
    (judged,) = (line for line in out.splitlines() if line.startswith("outcome: "))
    assert judged.removeprefix("outcome: ").startswith(outcome)
    assert "site_root" not in judged


def test_extract_text_says_why_a_page_could_not_be_fetched(serve, capsys):
    url = serve("/gone.html", status=404, body=b"", content_type="text/html")
    strict = {**os.environ, "FETCH_ALLOW_PRIVATE_NETWORKS": "false"}
    assert main(["extract-text", url], strict) == 1  # the private-network guard first
    assert "FETCH_ALLOW_PRIVATE_NETWORKS" in capsys.readouterr().err
    env = {**os.environ, "FETCH_ALLOW_PRIVATE_NETWORKS": "true"}
    assert main(["extract-text", url], env) == 1
    assert capsys.readouterr().err.strip() == f"newsdesk: {url}: HTTP 404"
    assert main(["extract-text", "/no/such/page.html"], env) == 2
