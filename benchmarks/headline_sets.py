"""Generated headline sets with their stories, for benchmarks/cluster_quality.py and
benchmarks/cluster_scale.py: ``varied`` (events of 3–30 near-paraphrases among singletons,
made of random syllable words and 30 common words, as cluster_scale.py has generated since
issue 10) and ``small_vocabulary`` (issue 24: Korean headlines from 30 entities, 34 actions,
20 endings and 25 common words; 35 % of titles in events of 3–30 paraphrases sharing entity,
action, ending and an amount, the rest singletons from the same words). Each returns the
titles in time order, each one's story and its time in seconds over one day."""

from __future__ import annotations

import random
from dataclasses import dataclass

DAY_SECONDS = 24 * 3600.0

COMMON = [
    "정부",
    "대통령",
    "국회",
    "서울",
    "오늘",
    "속보",
    "발표",
    "예정",
    "관련",
    "논란",
    "확대",
    "지원",
    "추진",
    "결정",
    "검토",
    "전망",
    "우려",
    "사고",
    "경찰",
    "시장",
    "기업",
    "경제",
    "한국",
    "미국",
    "중국",
    "올해",
    "내년",
    "최대",
    "첫",
    "사실상",
]
PARTICLES = ["", "", "", "은", "는", "이", "가", "을", "를", "에", "서", "의", "로"]
SYLLABLES = [chr(c) for c in range(0xAC00, 0xAC00 + 2000, 7)]

ENTITIES = [
    "삼성전자",
    "SK하이닉스",
    "현대차",
    "LG에너지솔루션",
    "카카오",
    "네이버",
    "한국은행",
    "금융위",
    "국토부",
    "기재부",
    "산업부",
    "서울시",
    "부산시",
    "경기도",
    "국민의힘",
    "민주당",
    "검찰",
    "법원",
    "공정위",
    "국세청",
    "포스코",
    "한화",
    "롯데",
    "신세계",
    "쿠팡",
    "대한항공",
    "셀트리온",
    "KB금융",
    "신한은행",
    "코스피",
]
ACTIONS = [
    "투자",
    "인수",
    "합병",
    "매각",
    "상장",
    "증자",
    "감자",
    "배당",
    "수주",
    "계약",
    "출시",
    "공개",
    "발표",
    "승인",
    "허가",
    "제재",
    "조사",
    "압수수색",
    "기소",
    "판결",
    "인상",
    "인하",
    "동결",
    "감산",
    "증산",
    "채용",
    "감원",
    "파업",
    "협상",
    "합의",
    "철회",
    "연기",
    "확정",
    "검토",
    "추진",
]
ENDINGS = [
    "나선다",
    "밝혀",
    "예고",
    "착수",
    "본격화",
    "가속",
    "속도",
    "마무리",
    "눈앞",
    "임박",
    "논란",
    "제동",
    "급물살",
    "난항",
    "재검토",
    "돌입",
    "단행",
    "결론",
    "가시화",
    "공식화",
]
SMALL_COMMON = [
    "올해",
    "내년",
    "상반기",
    "하반기",
    "역대",
    "최대",
    "사상",
    "첫",
    "업계",
    "시장",
    "정부",
    "당국",
    "관계자",
    "전망",
    "우려",
    "기대",
    "사실상",
    "결국",
    "또",
    "다시",
    "이번",
    "주",
    "오늘",
    "내달",
    "연내",
]
UNITS = ["억", "조", "%", "명", "곳", "건"]
KO_PARTICLES = ["", "", "은", "는", "이", "가", "을", "를", "의", "에", "도"]


@dataclass(frozen=True)
class HeadlineSet:
    name: str
    titles: list[str]
    stories: list[str]
    times: list[float]


def _spread(rng: random.Random, titles: list[str], stories: list[str], name: str) -> HeadlineSet:
    """Events unfold over the day: the titles interleaved with everything else, then given
    times evenly over one day."""
    n = len(titles)
    order = sorted(range(n), key=lambda i: i + rng.gauss(0, n / 20))
    times = [DAY_SECONDS * k / max(n, 1) for k in range(n)]
    return HeadlineSet(name, [titles[i] for i in order], [stories[i] for i in order], times)


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def varied(n: int, seed: int = 20261201) -> HeadlineSet:
    """About 40 % of titles in events of 3–30, the rest singletons."""
    rng = random.Random(seed)
    titles: list[str] = []
    stories: list[str] = []
    while len(titles) < n:
        story = f"s{len(titles)}"
        if rng.random() < 0.08:
            keys = [_word(rng) for _ in range(rng.randint(3, 5))]
            for _ in range(rng.randint(3, 30)):
                words = rng.sample(keys, k=len(keys) - rng.choice([0, 0, 1]))
                words += rng.sample(COMMON, k=rng.randint(1, 2))
                rng.shuffle(words)
                titles.append(
                    " ".join(
                        w + (rng.choice(PARTICLES) if rng.random() < 0.2 else "") for w in words
                    )
                )
                stories.append(story)
        else:
            words = [_word(rng) for _ in range(rng.randint(2, 4))]
            words += rng.sample(COMMON, k=rng.randint(1, 3))
            rng.shuffle(words)
            titles.append(" ".join(w + rng.choice(PARTICLES) for w in words))
            stories.append(story)
    return _spread(rng, titles[:n], stories[:n], f"varied {n:,}")


def _amount(rng: random.Random) -> str:
    unit = rng.choice(UNITS)
    value = rng.randint(1, 999) if unit != "%" else round(rng.uniform(0.1, 30.0), 1)
    return f"{value}{unit}"


def _small_title(rng: random.Random, entity: str, action: str, ending: str, amount: str) -> str:
    words = [entity + rng.choice(KO_PARTICLES), amount, action + rng.choice(["", "", "에", "을"])]
    words += rng.sample(SMALL_COMMON, k=rng.randint(1, 3))
    head, tail = words[:1], words[1:]
    rng.shuffle(tail)
    return (
        " ".join([*head, *tail, ending]) if rng.random() < 0.8 else " ".join([*tail, *head, ending])
    )


def small_vocabulary(n: int, seed: int = 20261224) -> HeadlineSet:
    """35 % of titles in events of 3–30 near-paraphrases (one entity, action, ending and
    amount; the common words, particles and order vary), the rest singletons drawn from the
    same words with an amount of their own."""
    rng = random.Random(seed)
    titles: list[str] = []
    stories: list[str] = []
    in_events = 0
    while len(titles) < n:
        story = f"s{len(titles)}"
        entity, action, ending = rng.choice(ENTITIES), rng.choice(ACTIONS), rng.choice(ENDINGS)
        amount = _amount(rng)
        if in_events < 0.35 * len(titles) + 1:
            size = rng.randint(3, 30)
            in_events += size
        else:
            size = 1
        for _ in range(size):
            titles.append(_small_title(rng, entity, action, ending, amount))
            stories.append(story)
    return _spread(rng, titles[:n], stories[:n], f"small vocabulary {n:,}")


GENERATORS = {"varied": varied, "small-vocabulary": small_vocabulary}
