from datetime import UTC, datetime

import pytest

from newsdesk.collect.photo import PhotoFilter
from newsdesk.core.breaker import BREAKER_OPEN, Breaker, BreakerPolicy
from newsdesk.core.settings import DEFAULT_PHOTO_TITLE_PATTERNS


@pytest.mark.parametrize(
    ("title", "is_photo"),
    [
        ("[포토] 본회의장 들어서는 의원들", True),
        ("[사진] 국회 앞 기자회견", True),
        ("(포토) 눈 치우는 시민들", True),
        ("[포토뉴스] 통화정책방향 회의", True),
        ("[경향포토] 첫눈", True),
        ("[포토 종합] 오늘의 사진", True),
        ("[포토에세이] 겨울 바다", True),
        ("  [포토] 앞에 공백", True),
        ("국회 [포토] 가운데는 사진 기사가 아니다", False),
        ("[포토라인] 검찰 출석", False),
        ("(사진) 괄호는 패턴에 없다", False),
        ("[속보] 기준금리 동결", False),
        ("", False),
    ],
)
def test_seed_patterns_match_only_at_the_start(title, is_photo):
    assert PhotoFilter(DEFAULT_PHOTO_TITLE_PATTERNS).is_photo(title) is is_photo


def test_patterns_are_configurable():
    photo = PhotoFilter([r"\[화보\]"])
    assert photo.is_photo("[화보] 가을 단풍")
    assert not photo.is_photo("[포토] 본회의장")


def test_no_patterns_filters_nothing():
    assert not PhotoFilter([]).is_photo("[포토] 본회의장")


@pytest.mark.parametrize(
    ("max_failures", "failures", "is_open"),
    [(2, 0, False), (2, 1, False), (2, 2, True), (2, 3, True), (1, 1, True), (3, 2, False)],
)
def test_breaker_opens_after_max_failures(max_failures, failures, is_open):
    at, breaker = datetime(2026, 12, 1, tzinfo=UTC), Breaker()
    for _ in range(failures):
        breaker.failed(at, max_failures, BreakerPolicy())
    assert (breaker.state_at(at) == BREAKER_OPEN) is is_open
