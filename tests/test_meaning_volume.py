"""Issue 38, volume: the meaning method's nearest neighbours found without the n × n products
past EXACT_MAX titles, and its graph read a block of rows at a time, never held whole."""

import numpy as np
import pytest
import scipy.sparse as sp

from newsdesk.cluster import neighbours
from newsdesk.cluster.centroid import CANDIDATE_SIMILARITY, _Pass, centroid_pass
from newsdesk.cluster.headline import headline_vectors
from newsdesk.cluster.meaning import meaning_graph
from newsdesk.cluster.neighbours import nearest
from newsdesk.cluster.vectors import (
    Graph,
    Similar,
    between_groups,
    product_rows,
    representatives,
    self_similarity,
)


def clustered(n: int, centres: int, spread: float, seed: int) -> np.ndarray:
    """Unit vectors around ``centres`` random directions."""
    rng = np.random.default_rng(seed)
    around = rng.normal(size=(centres, 64))
    vectors = around[rng.integers(0, centres, n)] + spread * rng.normal(size=(n, 64))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_up_to_exact_max_the_neighbours_are_every_rows_highest_cosines():
    vectors = clustered(300, 12, 0.4, seed=1)
    values, indices = nearest(vectors, 20)
    cosines = vectors @ vectors.T
    assert values.shape == indices.shape == (300, 20)
    assert (indices[:, 0] == np.arange(300)).all()  # each title is its own nearest
    expected = -np.sort(-cosines, axis=1)[:, :20]
    np.testing.assert_allclose(values, expected, atol=1e-6)
    np.testing.assert_allclose(np.take_along_axis(cosines, indices, axis=1), values, atol=1e-6)


@pytest.mark.parametrize("columns", [5, 300, 2500])
def test_a_blocks_highest_values_are_found_as_a_full_sort_finds_them(columns: int):
    # rounded values: many ties, which the full sort breaks by column
    rng = np.random.default_rng(columns)
    block = np.round(rng.normal(size=(200, columns)), 1).astype(np.float32)
    k = min(11, columns)

    values, at = neighbours._top(block, k)

    order = np.lexsort((np.tile(np.arange(columns), (200, 1)), -block), axis=1)[:, :k]
    np.testing.assert_array_equal(at, order)
    np.testing.assert_array_equal(values, np.take_along_axis(block, order, axis=1))


def test_past_exact_max_the_blocks_find_most_neighbours_the_same_way_twice(
    monkeypatch: pytest.MonkeyPatch,
):
    # GIVEN more titles than are compared pair by pair
    monkeypatch.setattr(neighbours, "EXACT_MAX", 500)
    vectors = clustered(3000, 40, 0.5, seed=2)

    values, indices = nearest(vectors, 16)

    # THEN each title finds itself first, its cosines are its true ones, highest first
    cosines = vectors @ vectors.T
    assert (indices[:, 0] == np.arange(3000)).all()
    np.testing.assert_allclose(np.take_along_axis(cosines, indices, axis=1), values, atol=1e-5)
    assert (np.diff(values, axis=1) <= 0).all()
    # most of its ten nearest are found (one side or the other: the graph keeps either's)
    true = np.argsort(-cosines, axis=1)[:, :10]
    found = sp.csr_matrix(
        (np.ones(indices.size), (np.repeat(np.arange(3000), 16), indices.ravel()))
    )
    found = (found + found.T).tocsr()
    recall = np.asarray(found[np.repeat(np.arange(3000), 10), true.ravel()]).astype(bool).mean()
    assert recall >= 0.95
    # and the same vectors give the same neighbours (a replay, the same issues)
    again = nearest(vectors, 16)
    assert (again[1] == indices).all()
    assert (again[0] == values).all()


def mixed_window(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Korean and English titles from a small vocabulary, embeddings around a few events."""
    rng = np.random.default_rng(seed)
    korean = ["한은", "기준금리", "동결", "대통령", "회담", "워싱턴", "태풍", "피해", "선포"]
    english = ["fed", "rates", "hold", "summit", "storm", "damage", "talks", "markets"]
    titles = []
    for i in range(n):
        words = korean if i % 3 else english
        titles.append(" ".join(rng.choice(words, size=int(rng.integers(2, 5)))))
    return titles, clustered(n, 6, 0.15, seed) * 1.0


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_the_mixed_graph_sums_groups_as_its_rows_do(seed: int):
    # GIVEN the meaning method's graph, and the same similarities held whole
    titles, vectors = mixed_window(120, seed)
    mixed = meaning_graph(titles, vectors)
    whole = Graph(mixed.rows(0, 120))
    assert abs(whole.matrix - whole.matrix.T).max() < 1e-9  # symmetric
    groups = [list(range(k, 120, 7)) for k in range(7)]

    # THEN what merging and the representatives read of it (from the groups' summed n-gram
    # vectors) is what its rows add up to
    np.testing.assert_allclose(self_similarity(mixed), whole.matrix.diagonal(), atol=1e-9)
    np.testing.assert_allclose(
        between_groups(mixed, groups).toarray(), between_groups(whole, groups).toarray(), atol=1e-9
    )
    assert representatives(mixed, groups) == representatives(whole, groups)

    # and the pass over either makes the same groups
    rest = (0.25, 3, np.zeros(120, dtype=bool), None, None)
    by_rows = centroid_pass(mixed, *rest, block_rows=32, step_rows=8, merge=True)
    by_whole = centroid_pass(whole, *rest, block_rows=32, step_rows=8, merge=True)
    assert by_rows.groups == by_whole.groups


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_a_title_read_alone_is_its_row_of_the_graph(seed: int):
    # GIVEN the meaning method's graph
    titles, vectors = mixed_window(120, seed)
    mixed = meaning_graph(titles, vectors)

    # THEN a title's entries read alone (as a settling pass reads them) add up to its row, to
    # the last bit
    for i in range(120):
        columns, values = mixed.entries(i)
        alone = sp.csr_matrix((values, (np.zeros_like(columns), columns)), shape=(1, 120))
        np.testing.assert_array_equal(alone.toarray(), mixed.rows(i, i + 1).toarray())


def test_settling_over_the_graph_is_the_whole_pass_again():
    # GIVEN a window of the meaning method whose pass merges groups (seed 4)
    titles, vectors = mixed_window(120, 4)
    mixed = meaning_graph(titles, vectors)
    rest = (0.25, 3, np.zeros(120, dtype=bool), None, None)
    unmerged = centroid_pass(mixed, *rest, block_rows=32, step_rows=8)

    # WHEN the pass merges, then compares again only the titles the merges changed, or all
    changed = centroid_pass(mixed, *rest, block_rows=32, step_rows=8, merge=True)
    whole = centroid_pass(mixed, *rest, block_rows=32, step_rows=8, merge=True, settle="whole")

    # THEN both leave the same groups, and the merges changed some
    assert changed.groups == whole.groups
    assert changed.groups != unmerged.groups


def similarities(kind: str) -> Similar:
    """A window's similarities as title vectors, a graph held whole, or the meaning graph."""
    titles, vectors = mixed_window(120, 5)
    mixed = meaning_graph(titles, vectors)
    return {
        "vectors": headline_vectors(titles),
        "graph": Graph(mixed.rows(0, 120)),
        "meaning": mixed,
    }[kind]


@pytest.mark.parametrize("kind", ["vectors", "graph", "meaning"])
def test_a_blocks_products_with_the_titles_before_its_end_are_its_rows_cut_there(kind: str):
    rows = product_rows(similarities(kind))
    for start, stop in [(0, 32), (32, 64), (40, 41), (96, 120)]:
        earlier = rows.earlier(start, stop)
        assert earlier.shape == (stop - start, stop)
        np.testing.assert_array_equal(earlier.toarray(), rows.rows(start, stop).toarray()[:, :stop])


@pytest.mark.parametrize("kind", ["vectors", "graph", "meaning"])
def test_a_title_compared_again_sees_each_groups_sum_and_its_candidates(kind: str):
    # GIVEN a pass over a window (title vectors, a graph held whole, or the meaning graph),
    # every title placed
    similar = similarities(kind)
    rows = product_rows(similar)
    state = _Pass(similar, 0.25, 0.0, [-1] * 120, [False] * 120, None, 3600.0)
    state.run({}, rows, 32, 8)
    assert len(state.members) > 5

    for i in range(120):
        # WHEN a title is compared again with the titles before it (a settling pass's way)
        candidates, dot = state._compared(i, rows)

        # THEN each group's sum is its members' before the title, from the title's whole row,
        # and its candidates are the groups with such a member at least CANDIDATE_SIMILARITY
        row = rows.rows(i, i + 1).toarray().ravel()
        earlier = np.arange(120) < i
        for g, members in enumerate(state.members):
            before = [m for m in members if earlier[m]]
            assert dot(g) == pytest.approx(row[before].sum(), abs=1e-12)
        expected = {int(state.group_of[j]) for j in range(i) if row[j] >= CANDIDATE_SIMILARITY}
        assert candidates == expected
