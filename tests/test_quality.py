import pytest
from sklearn.metrics import adjusted_rand_score

from newsdesk_local.quality import score

GOLD = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "c"}


def test_perfect_clustering():
    s = score(GOLD, [[1, 2, 3], [4, 5]])
    assert (s.pairwise_precision, s.pairwise_recall, s.pairwise_f1) == (1.0, 1.0, 1.0)
    assert (s.bcubed_precision, s.bcubed_recall, s.bcubed_f1) == (1.0, 1.0, 1.0)
    assert s.adjusted_rand == pytest.approx(1.0)
    assert (s.placed_share, s.issues) == (5 / 6, 2)


def test_nothing_grouped():
    s = score(GOLD, [])
    assert (s.pairwise_precision, s.pairwise_recall, s.pairwise_f1) == (1.0, 0.0, 0.0)
    assert s.bcubed_precision == 1.0
    assert s.bcubed_recall == pytest.approx((3 * (1 / 3) + 2 * (1 / 2) + 1) / 6)
    assert (s.placed_share, s.issues) == (0.0, 0)


def test_a_merged_and_a_split_story():
    # predicted: {1,2,4} and {3,5}; gold pairs: (1,2),(1,3),(2,3),(4,5) = 4
    s = score(GOLD, [[1, 2, 4], [3, 5]])
    # predicted pairs: (1,2),(1,4),(2,4),(3,5) = 4, of which true: (1,2)
    assert (s.pairwise_precision, s.pairwise_recall) == (1 / 4, 1 / 4)
    # B-cubed precision per item: 1:2/3 2:2/3 4:1/3 3:1/2 5:1/2 6:1
    assert s.bcubed_precision == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1 / 2 + 1 / 2 + 1) / 6)
    # recall per item: 1:2/3 2:2/3 3:1/3 4:1/2 5:1/2 6:1
    assert s.bcubed_recall == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1 / 2 + 1 / 2 + 1) / 6)


@pytest.mark.parametrize("groups", [[[1, 2, 3], [4, 5]], [[1, 2, 4], [3, 5]], [[1, 4, 6]], []])
def test_adjusted_rand_agrees_with_sklearn(groups):
    labels = {item: ("s", item) for item in GOLD}
    for n, group in enumerate(groups):
        for item in group:
            labels[item] = ("g", n)
    predicted = [str(labels[item]) for item in GOLD]
    assert score(GOLD, groups).adjusted_rand == pytest.approx(
        adjusted_rand_score(list(GOLD.values()), predicted)
    )


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([[1, 2, 3], [4, 5]], 1.0),  # one issue a story
        ([[1, 2], [3], [4, 5]], 3 / 2),  # story a split in two issues, b whole
        ([[1, 2, 4], [3, 5]], 2.0),  # both count for a: 2 of 3, and a tie (a listed first)
        ([[4, 1], [5, 2], [6, 3]], 3 / 2),  # ties: the story listed first, so b, b and c
        ([[4, 1, 2]], 1.0),  # the majority, not the first item
        ([], 0.0),
    ],
)
def test_issues_per_story(groups, expected):
    assert score(GOLD, groups).issues_per_story == pytest.approx(expected)


def test_pairs_are_pooled_over_categories():
    # GIVEN two categories' items and issues (neither crosses a category)
    politics = {"p1": "x", "p2": "x", "p3": "x", "p4": "y"}
    sports = {"s1": "z", "s2": "z", "s3": "w", "s4": "w"}
    politics_issues, sports_issues = [["p1", "p2", "p4"]], [["s1", "s2", "s3", "s4"]]
    # WHEN they are scored at once
    s = score(politics | sports, politics_issues + sports_issues)
    # THEN the pairs of each category add up: true 1 + 2 of predicted 3 + 6, of gold 3 + 2
    assert (s.pairwise_precision, s.pairwise_recall) == (3 / 9, 3 / 5)
    assert s.issues == 2
