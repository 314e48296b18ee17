"""Hostile article pages at the extractor's size cap, one per shape a host could serve to
make the judge path (``newsdesk.extract.extractor.read_page``) burn CPU: for
tests/test_hostile_shapes.py and benchmarks/hostile_pages.py, written for them (issue 39,
point 8).

Each builder repeats its unit until the page is ``size`` bytes at most (the cap, 2 MiB, less a
kilobyte), inside ``shell``: a Korean news page whose article (``ARTICLE``, three paragraphs)
comes *after* the hostile part, so that a shape that cuts the tree short loses it.
"""

from __future__ import annotations

from collections.abc import Callable

SIZE = 2 * 1024 * 1024 - 1024  # EXTRACT_MAX_BYTES (2,097,152), less a kilobyte
SENTENCE = "서울시가 내년부터 시내버스 노선 스물세 개를 새로 고치기로 했다고 1일 밝혔다. "
ARTICLE = [
    "서울시가 내년부터 시내버스 노선 스물세 개를 새로 고치기로 했다고 1일 밝혔다. 출퇴근 시간에"
    " 승객이 몰리는 구간의 배차 간격을 줄이고, 이용객이 적은 심야 노선은 수요응답형 버스로 바꾼다.",
    "시는 지난 6개월 동안 교통카드 이용 기록 1억 건을 분석해 노선별 혼잡도를 따졌다. 분석 결과"
    " 강남과 여의도를 잇는 노선의 아침 혼잡도가 가장 높았고, 외곽 순환 노선은 승객이 절반 이하로"
    " 줄었다.",
    "교통정책과 관계자는 시민 의견을 듣는 공청회를 이달 중순 세 차례 열고, 노선 조정안을 확정해"
    " 내년 3월부터 차례로 시행할 계획이라고 설명했다. 조정 대상 노선은 시 누리집에서 확인할 수"
    " 있다.",
]
URL = "https://news.example.kr/article/20261201000123"


def shell(hostile: str, after: str = "") -> str:
    """A page with ``hostile`` in its body, then ``after`` (the article, unless a shape puts it
    elsewhere)."""
    return (
        '<!DOCTYPE html><html lang="ko"><head><meta charset="utf-8">'
        "<title>시내버스 노선 개편</title></head><body>"
        "<header><nav><a href='/'>한빛일보</a></nav></header>"
        f"{hostile}{after}"
        "<footer>한빛일보 · 무단 전재 및 재배포 금지</footer></body></html>"
    )


def article() -> str:
    return "<article>" + "".join(f"<p>{p}</p>" for p in ARTICLE) + "</article>"


def _room(after: str = "", size: int = SIZE) -> int:
    return size - len(shell("", after).encode())


def repeated(unit: str, size: int = SIZE, before: str = "", close: str = "") -> str:
    """``before`` + ``unit`` as often as fits + ``close``, then the article."""
    after = article()
    room = _room(after, size) - len((before + close).encode())
    return shell(before + unit * (room // len(unit.encode())) + close, after)


def nested(opening: str, closing: str, size: int = SIZE, inner: str = "") -> str:
    """``opening`` … ``inner`` … ``closing``, as deep as fits, then the article."""
    after = article()
    room = _room(after, size) - len(inner.encode())
    levels = room // len((opening + closing).encode())
    return shell(opening * levels + inner + closing * levels, after)


def one_text(text: str, size: int = SIZE, tag: str = "p") -> str:
    """One element of ``text`` (repeated to fill the page), then the article."""
    after = article()
    room = _room(after, size) - len(f"<{tag}></{tag}>".encode())
    count = room // len(text.encode())
    return shell(f"<{tag}>{text * count}</{tag}>", after)


def tables_nested(size: int = SIZE) -> str:
    """Tables 20 deep, each cell a sentence, repeated."""
    unit = "<table><tr><td>" * 20 + SENTENCE + "</td></tr></table>" * 20
    return repeated(unit, size)


def soup(size: int = SIZE) -> str:
    """Tags left open and closed out of order, formatting elements misnested
    (``<b><i></b></i>``), a block opened in a paragraph and never closed, around text."""
    unit = "<b><i>굵은 <u>글씨</b> 기울임</i></u><font><span>열린 " + "<p>문단 <div>"
    return repeated(unit, size)


def deep(size: int = SIZE, levels: int = 100_000) -> str:
    """``levels`` empty <div> in one another (the page's size is theirs, not ``size``)."""
    return shell("<div>" * levels + "</div>" * levels, article())


# Each builds a page of at most ``size`` bytes (the cap, by default).
SHAPES: dict[str, Callable[[int], str]] = {
    "nested <div> 100,000 deep": deep,
    "nested <div> to the cap": lambda size: nested("<div>", "</div>", size),
    "nested <span> with text": lambda size: nested("<span>" + SENTENCE, "</span>", size),
    "nested <div> 250 with text": lambda size: nested("<div>" + SENTENCE * 20, "</div>", size),
    "unclosed <b> to the cap": lambda size: repeated("<b>가", size),
    "tag soup": soup,
    "tables 20 deep": tables_nested,
    "empty <div> siblings": lambda size: repeated("<div></div>", size),
    "<br> alone": lambda size: repeated("<br>", size),
    "<p> of one sentence": lambda size: repeated(f"<p>{SENTENCE}</p>", size),
    "<p> of tiny text": lambda size: repeated("<p>가.</p>", size),
    "Korean in tiny spans": lambda size: repeated(
        "<span>서</span><span>울</span><span>.</span>", size
    ),
    "text<br> runs": lambda size: repeated("가나다.<br>", size),
    "one giant text node": lambda size: one_text(SENTENCE, size),
    "one word, no spaces": lambda size: one_text("가나다라마바사", size),
    "huge attribute": lambda size: repeated('<div data-x="' + "가" * 100_000 + '">글.</div>', size),
    "many attributes": lambda size: repeated('<div a="1" b="2" c="3" d="4" e="5">글.</div>', size),
    "many links": lambda size: repeated(
        "<a href='/article/1234'>오늘의 주요 뉴스 제목입니다</a> ", size
    ),
    "many list items": lambda size: repeated(
        "<li><a href='/a'>제목 하나.</a></li>", size, before="<ul>"
    ),
    "many scripts": lambda size: repeated("<script>var a=1;</script>", size),
    "many styles": lambda size: repeated("<style>.a{color:red}</style>글.", size),
    "many comments": lambda size: repeated("<!-- 광고 -->글.", size),
    "entities": lambda size: repeated("&amp;&lt;&#xAC00;&#44032;&nbsp;", size),
    "figures with captions": lambda size: repeated(
        "<figure><img src='/p.jpg'><figcaption>사진 설명.</figcaption></figure>", size
    ),
    "many headings": lambda size: repeated("<h2>제목.</h2>", size),
    "many sentence-less lines": lambda size: repeated("<div>메뉴 항목</div>", size),
}
