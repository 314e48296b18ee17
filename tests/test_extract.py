"""newsdesk.extract.text (an article page's text) and the benchmark's metric (issue 14)."""

from __future__ import annotations

import json
import os

import pytest

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


def test_extract_text_says_why_a_page_could_not_be_fetched(serve, capsys):
    url = serve("/gone.html", status=404, body=b"", content_type="text/html")
    strict = {**os.environ, "FETCH_ALLOW_PRIVATE_NETWORKS": "false"}
    assert main(["extract-text", url], strict) == 1  # the private-network guard first
    assert "FETCH_ALLOW_PRIVATE_NETWORKS" in capsys.readouterr().err
    env = {**os.environ, "FETCH_ALLOW_PRIVATE_NETWORKS": "true"}
    assert main(["extract-text", url], env) == 1
    assert capsys.readouterr().err.strip() == f"newsdesk: {url}: HTTP 404"
    assert main(["extract-text", "/no/such/page.html"], env) == 2
