"""Hanja that Korean headlines use as one-character abbreviations, and the Hangul word each
stands for, so that "北 미사일" and "북한 미사일" share their n-grams (issue 24). Only characters
that headlines use alone for a country, a party, an office or a president's surname are
listed; a reader of the news reads them so."""

from __future__ import annotations

HANJA_ABBREVIATIONS: dict[str, str] = {
    # countries
    "北": "북한",
    "南": "남한",
    "韓": "한국",
    "美": "미국",
    "中": "중국",
    "日": "일본",
    "英": "영국",
    "獨": "독일",
    "佛": "프랑스",
    "露": "러시아",
    "印": "인도",
    "伊": "이탈리아",
    "濠": "호주",
    "臺": "대만",
    # parties and offices
    "與": "여당",
    "野": "야당",
    "靑": "청와대",
    "檢": "검찰",
    "軍": "군",
    "警": "경찰",
    # surnames, as headlines write a president's or a leader's
    "李": "이",
    "尹": "윤",
    "文": "문",
    "朴": "박",
    "金": "김",
    "吳": "오",
    "張": "장",
    "鄭": "정",
    "崔": "최",
    "洪": "홍",
    "安": "안",
    "曺": "조",
    "趙": "조",
    "黃": "황",
}
