"""Korean headlines for the analyser comparison (tests/test_korean_similarity.py and
benchmarks/korean_analyser.py), written for it, not taken from any feed.

``SAME_EVENT``: two headlines about one event, as two outlets might write them, differing by
particles, endings, spacing and word order. ``DIFFERENT_EVENT``: for each of those events, a
headline about another event that shares its most visible word (the same bank, company, city
or player), which must not be taken for it.
"""

from __future__ import annotations

SAME_EVENT: list[tuple[str, str]] = [
    # an abbreviated subject, particles and a verb ending
    ("한은, 기준금리 3.5% 동결", "한국은행이 기준금리를 3.5%로 동결했다"),
    # spacing ("서울 지하철 노조" / "서울지하철노조") and an ending
    ("서울 지하철 노조 내일 총파업 돌입", "서울지하철노조, 내일부터 총파업에 들어간다"),
    # word order and particles
    ("삼성전자 3분기 영업이익 10조 돌파", "3분기 영업이익이 10조를 넘어선 삼성전자"),
    # particles on every noun, a noun phrase against a sentence
    ("수도권 폭설에 출근길 교통 대란", "폭설로 수도권 출근길 교통이 마비됐다"),
    # number and unit spacing ("656조 원" / "656조원"), word order
    ("정부, 내년 예산안 656조 원 편성", "내년도 예산안을 656조원으로 편성한 정부"),
    # spacing inside a compound ("10호 골" / "10호골") and endings
    ("손흥민, 시즌 10호 골 터뜨렸다", "손흥민이 시즌 10호골을 터뜨려"),
    # "앞바다서" / "앞바다에서" and particles
    ("포항 앞바다서 규모 4.5 지진 발생", "포항 앞바다에서 규모 4.5의 지진이 발생했다"),
    # a compound written apart ("국빈방문" / "국빈 방문") and endings
    ("대통령, 미국 국빈방문 마치고 귀국", "대통령이 미국 국빈 방문을 마치고 귀국했다"),
]

DIFFERENT_EVENT: list[tuple[str, str]] = [
    (SAME_EVENT[0][1], "미국 연준, 기준금리 0.25%p 인상"),
    (SAME_EVENT[1][0], "서울 지하철 2호선 열차 고장으로 운행 지연"),
    (SAME_EVENT[2][0], "삼성전자, 새 폴더블폰 공개"),
    (SAME_EVENT[3][1], "폭설 피해 농가에 정부 지원금 지급"),
    (SAME_EVENT[4][0], "국회, 예산안 처리 법정시한 넘겨"),
    (SAME_EVENT[5][1], "손흥민, 허벅지 부상으로 대표팀 제외"),
    (SAME_EVENT[6][1], "포항 스틸러스, 코리아컵 우승"),
    (SAME_EVENT[7][0], "대통령, 국회 시정연설에서 예산안 협조 당부"),
]

# Headlines about none of those events, so that the vectors' IDF is a window's, not a pair's.
BACKGROUND: list[str] = [
    "서울 아파트값 3주 연속 상승",
    "정부, 전기요금 동결 결정",
    "국회 본회의서 민생법안 12건 통과",
    "대법원, 전 장관 상고 기각",
    '기상청 "주말 전국에 비 소식"',
    "프로야구 LG, 한국시리즈 우승",
    "현대차 美 전기차 공장 가동 시작",
    "카카오, 새 대표에 정신아 내정",
    "부산 해운대서 불꽃축제 열려",
    "교육부, 2028 대입 개편안 확정",
    "원·달러 환율 1,400원 돌파",
    "국제유가 배럴당 90달러 넘어",
    "질병청, 독감 유행주의보 발령",
    "경찰, 보이스피싱 조직 40명 검거",
    "대구 도심 아파트 화재로 2명 부상",
    "SK하이닉스, HBM 양산 본격화",
    "외교부 장관, 일본 외무상과 회담",
    "수능 D-30…수험생 막바지 준비",
    "의대 정원 확대에 전공의 반발",
    "네이버, 생성형 AI 검색 서비스 출시",
    "북한, 동해상으로 탄도미사일 발사",
    "전국 미세먼지 '나쁨'…외출 자제",
    "쿠팡, 물류센터 3곳 추가 건립",
    "광주 아시아문화전당 새 전시 개막",
]

# A window as the cluster function would see it: each event's first headline, half the
# background, the other events, the rest of the background, then each event's second headline.
WINDOW: list[str] = (
    [first for first, _ in SAME_EVENT]
    + BACKGROUND[:12]
    + [other for _, other in DIFFERENT_EVENT]
    + BACKGROUND[12:]
    + [second for _, second in SAME_EVENT]
)
