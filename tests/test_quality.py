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
