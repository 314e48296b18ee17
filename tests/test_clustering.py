"""cluster_titles gives the seed's groups, exactly, without the dense matrix."""

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from newsdesk.cluster import vectors
from newsdesk.cluster.centroid import strip_tags
from newsdesk.cluster.grouping import assign
from newsdesk.cluster.methods import Standing
from newsdesk.clustering import DEFAULT_THRESHOLDS, METHODS, cluster_titles, find_groups
from newsdesk.core.settings import CLUSTER_METHODS
from newsdesk_local.seed_reference import seed_clusters

CENTROID = DEFAULT_THRESHOLDS["centroid"]


@contextmanager
def block_entries(limit: int) -> Iterator[None]:
    saved = vectors.BLOCK_PRODUCT_ENTRIES
    vectors.BLOCK_PRODUCT_ENTRIES = limit
    try:
        yield
    finally:
        vectors.BLOCK_PRODUCT_ENTRIES = saved


KOREAN = [
    "국회",
    "예산안",
    "본회의",
    "통과",
    "법정시한",
    "대통령",
    "순방",
    "귀국",
    "한국은행",
    "기준금리",
    "동결",
    "물가",
    "코스피",
    "외국인",
    "매수",
    "폭설",
    "출근길",
    "지하철",
    "파업",
    "수능",
    "속보",
    "단독",
    "종합",
    "서울",
    "정부",
]
PARTICLES = ["", "", "", "은", "는", "이", "가", "을", "를", "에", "서", "의"]
ENGLISH = [
    "fed",
    "rates",
    "the",
    "to",
    "of",
    "in",
    "stocks",
    "fall",
    "apple",
    "iphone",
    "launch",
    "new",
    "says",
    "bank",
    "china",
    "growth",
    "a",
    "i",
    "us",
]
PUNCTUATION = ["…", ",", "·", "[포토]", "(종합)", "'", "2,700", "1", "%"]

korean_word = st.builds(lambda w, p: w + p, st.sampled_from(KOREAN), st.sampled_from(PARTICLES))
word = st.one_of(korean_word, st.sampled_from(ENGLISH), st.sampled_from(PUNCTUATION))
title = st.lists(word, min_size=0, max_size=8).map(" ".join)


@st.composite
def headline_sets(draw):
    """Stories of near-paraphrases among singletons, duplicates and token-less titles."""
    base = draw(st.lists(title, min_size=0, max_size=25))
    titles = list(base)
    for source in draw(st.lists(st.sampled_from(base), max_size=10)) if base else []:
        words = source.split()
        if words and draw(st.booleans()):
            words[draw(st.integers(0, len(words) - 1))] = draw(word)
        titles.insert(draw(st.integers(0, len(titles))), " ".join(words))
    return titles


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    titles=headline_sets(),
    threshold=st.one_of(
        st.sampled_from([0.6, 1.0, 0.0, 0.5, 0.3, 1e-9]),
        st.floats(min_value=-0.2, max_value=1.2, allow_nan=False),
    ),
    min_size=st.integers(1, 5),
    block=st.sampled_from([1, 7, 10_000_000]),
)
@example(titles=["a b", "a b", "a b"], threshold=1.0, min_size=3, block=1)
@example(titles=["", "…", "1"], threshold=0.6, min_size=1, block=1)
def test_same_groups_as_the_seed(titles, threshold, min_size, block):
    with block_entries(block):
        assert cluster_titles(titles, threshold, min_size) == seed_clusters(
            titles, threshold, min_size
        )


@pytest.mark.parametrize(
    ("titles", "threshold", "min_size", "expected"),
    [
        ([], 0.6, 3, []),
        (["", "!!", "가"], 0.6, 1, []),  # no token anywhere
        (["", "!!", "가"], 0.0, 3, [[0, 1, 2]]),
        (["국회 예산안 통과"] * 3, 0.6, 3, [[0, 1, 2]]),
        (["국회 예산안 통과"] * 2, 0.6, 3, []),
        (
            ["국회 예산안 통과", "코스피 반등", "국회 예산안 통과", "국회 예산안 통과"],
            0.6,
            3,
            [[0, 2, 3]],
        ),
        (["ab cd", "xy zw"], 0.6, 1, [[0], [1]]),
        (["a b c", "x y z"], 0.6, 1, []),  # one-letter words are no tokens
    ],
)
def test_fixed_cases(titles, threshold, min_size, expected):
    assert cluster_titles(titles, threshold, min_size) == expected
    assert seed_clusters(titles, threshold, min_size) == expected


def test_taken_titles_shape_the_vectors_but_are_not_gathered():
    titles = ["국회 예산안 통과"] * 4 + ["코스피 반등"]
    groups = find_groups(titles, 0.6, 3, taken=[True, False, False, False, False])
    assert [g.members for g in groups] == [[1, 2, 3]]


def test_representative_is_the_member_closest_to_the_others():
    titles = [
        "한국은행 기준금리 동결 물가",
        "한국은행 기준금리 동결",
        "한국은행 기준금리 동결 결정",
        "기준금리 동결 한국은행 발표",
    ]
    (group,) = find_groups(titles, 0.5, 3)
    sims = cosine_similarity(TfidfVectorizer(token_pattern=r"(?u)\b\w\w+\b").fit_transform(titles))
    closest = max(group.members, key=lambda m: sum(sims[m][j] for j in group.members))
    assert group.representative == closest


@pytest.mark.parametrize("bad", [{"min_size": 0}, {"taken": [True]}])
def test_bad_arguments(bad):
    with pytest.raises(ValueError, match=r"min_size|taken"):
        find_groups(["a b", "c d"], **bad)


# --- the centroid method -----------------------------------------------------------------

KOREAN_DAY = [
    "[속보] 한국은행, 기준금리 연 2.50% 동결",
    "수도권 첫 폭설에 출근길 교통 혼잡",
    "한은 기준금리 2.50%로 동결…물가 안정 우선(종합)",
    "코스피, 외국인 매수에 2,700선 회복",
    "첫 폭설로 수도권 출근길 교통 대란",
    "[단독] 한국은행 기준금리 동결 결정, 연 2.50% 유지",
    "수도권 폭설 출근길 교통 혼잡 이어져",
    "프로야구 개막전 매진",
]


def test_centroid_groups_korean_paraphrases_across_particles_and_tags():
    groups = cluster_titles(KOREAN_DAY, DEFAULT_THRESHOLDS["centroid"], 3, method="centroid")
    assert groups == [[0, 2, 5], [1, 4, 6]]
    # the seed's word tokens see "폭설에" and "폭설로" as different words
    assert cluster_titles(KOREAN_DAY) == []


def test_centroid_representative_and_taken():
    rate, _ = find_groups(KOREAN_DAY, CENTROID, 3, method="centroid")
    assert rate.representative in rate.members
    taken = [i in (1, 4) for i in range(len(KOREAN_DAY))]
    groups = find_groups(KOREAN_DAY, CENTROID, 3, method="centroid", taken=taken)
    assert [g.members for g in groups] == [[0, 2, 5]]  # snow lost two members to an issue


def test_centroid_window_keeps_yesterdays_event_apart():
    titles = ["한국은행 기준금리 동결"] * 3 + ["한국은행 기준금리 동결"] * 3
    hour = 3600.0
    same_day = [0, 1, 2, 3, 4, 5]
    next_day = [0, 1, 2, 30 * hour, 30 * hour + 1, 30 * hour + 2]
    assert len(find_groups(titles, CENTROID, 3, method="centroid", times=same_day)) == 1
    assert [
        g.members for g in find_groups(titles, CENTROID, 3, method="centroid", times=next_day)
    ] == [
        [0, 1, 2],
        [3, 4, 5],
    ]


@pytest.mark.parametrize(
    ("title", "stripped"),
    [
        ("[속보] 기준금리 동결", "기준금리 동결"),
        ("[단독][종합] 기준금리 동결(종합2보)", "기준금리 동결"),
        ("<속보> 기준금리 동결", "기준금리 동결"),
        ("[포토]", "[포토]"),
        ("기준금리 [동결] 결정", "기준금리 [동결] 결정"),
    ],
)
def test_news_tags_are_removed(title, stripped):
    assert strip_tags(title) == stripped


def test_methods_and_their_thresholds():
    assert METHODS == ("seed", "centroid", "headline", "meaning") == CLUSTER_METHODS
    assert set(DEFAULT_THRESHOLDS) == set(METHODS)
    assert DEFAULT_THRESHOLDS["seed"] == 0.6
    with pytest.raises(ValueError, match="unknown clustering method"):
        cluster_titles(["a b"], method="kmeans")


def test_centroid_handles_empty_and_blank_titles():
    assert cluster_titles([], method="centroid") == []
    assert cluster_titles(["", " ", "  "], 0.15, 3, method="centroid") == []


def test_seed_free_titles_join_an_open_issue_before_the_greedy_pass():
    titles = ["금리 동결 발표", "금리 동결 발표 오늘", "수능 성적 공개", "금리 동결 발표 속보"]
    standing = Standing([7, -1, -1, -1], {7: 0})  # title 0 leads open issue 7
    joined = assign(titles, 0.6, 3, standing=standing)
    assert (joined.joins, joined.groups) == ({7: [1, 3]}, [])
    # at threshold 0 the joins are kept beside the group of what is left
    everything = assign(titles, 0.0, 1, standing=standing)
    assert everything.joins == {7: [1, 3]}
    assert [g.members for g in everything.groups] == [[2]]
