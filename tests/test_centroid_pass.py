"""Issue 24: the centroid pass sums similarities per group in blocks and steps (numpy), the
headline n-grams are counted for all titles at once; both against the plain way, one title at
a time, on small random windows."""

import math
from functools import partial

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

import newsdesk.cluster.centroid as centroid
from benchmarks.headline_sets import small_vocabulary, varied
from newsdesk.cluster.centroid import CANDIDATE_SIMILARITY, centroid_pass
from newsdesk.cluster.grouping import assign
from newsdesk.cluster.headline import gram_counts, headline_vectors, ngrams, normalise
from newsdesk.cluster.methods import Standing
from newsdesk.cluster.vectors import Graph, without_common
from tests.test_group_merging import windows

WORDS = ["금리", "동결", "한국은행", "北", "미사일", "발사", "서울", "지하철", "노조", "파업"]
WORDS += ["fed", "rates", "3,500억", "10%", "a", "가", "총파업", "[속보]", "“인상”"]


def reference(vectors, threshold, min_size, taken, times, standing, idle, mean_floor):
    """The pass as issue 15 wrote it: a dense similarity matrix, one title at a time."""
    similarity = (vectors @ vectors.T).toarray()
    n = similarity.shape[0]
    groups: list[list[int]] = []
    issue_of_group: list[int] = []
    last: list[float] = []
    norm2: list[float] = []
    by_issue: dict[int, int] = {}
    for i in range(n):
        issue = standing.issue_of[i]
        if issue < 0 and taken[i]:
            continue
        now = times[i]
        dot = [float(sum(similarity[i, m] for m in g)) for g in groups]
        if issue >= 0:
            best = by_issue.get(issue, -1)
            if best < 0:
                best = by_issue[issue] = len(groups)
                groups.append([])
                issue_of_group.append(issue)
                last.append(-math.inf)
                norm2.append(0.0)
                dot.append(0.0)
        else:
            best, best_similarity = -1, threshold
            for g, members in enumerate(groups):
                closed = issue_of_group[g] >= 0 and issue_of_group[g] not in standing.open
                if closed or now - last[g] > idle:
                    continue
                if max(similarity[i, m] for m in members) < CANDIDATE_SIMILARITY:
                    continue
                if dot[g] < mean_floor * len(members):
                    continue
                s = dot[g] / math.sqrt(norm2[g]) if norm2[g] > 0 else 0.0
                if s >= best_similarity and (best < 0 or s > best_similarity + 1e-12):
                    best, best_similarity = g, s
            if best < 0:
                best = len(groups)
                groups.append([])
                issue_of_group.append(-1)
                last.append(-math.inf)
                norm2.append(0.0)
                dot.append(0.0)
        groups[best].append(i)
        norm2[best] += similarity[i, i] + 2 * dot[best]
        last[best] = max(last[best], now)
    joins = {
        issue_of_group[g]: [i for i in members if standing.issue_of[i] < 0]
        for g, members in enumerate(groups)
        if issue_of_group[g] in standing.open
    }
    new = [m for g, m in enumerate(groups) if issue_of_group[g] < 0 and len(m) >= min_size]
    return new, {k: v for k, v in joins.items() if v}


titles = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=5).map(" ".join),
    min_size=1,
    max_size=40,
)


@settings(max_examples=40, deadline=None)
@given(titles=titles, data=st.data())
def test_the_pass_in_steps_is_the_pass_one_title_at_a_time(titles, data):
    n = len(titles)
    taken = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    issue_of = data.draw(st.lists(st.sampled_from([-1, -1, -1, 7, 8]), min_size=n, max_size=n))
    standing = Standing(issue_of, {7: -1})  # 8 is closed
    times = sorted(data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    vectors = headline_vectors(titles)
    # small blocks and steps, so that a window of 40 crosses both
    got = centroid_pass(
        vectors, 0.3, 2, taken, times, standing, 20, 0.2, block_rows=16, step_rows=4
    )
    expected_groups, expected_joins = reference(vectors, 0.3, 2, taken, times, standing, 20, 0.2)
    assert [g.members for g in got.groups] == expected_groups
    assert got.joins == expected_joins


@settings(max_examples=60, deadline=None)
@given(titles=titles)
def test_gram_counts_are_the_ngrams_of_each_title(titles):
    texts = [normalise(t) for t in titles]
    counts = gram_counts(texts)
    expected = CountVectorizer(analyzer=ngrams, lowercase=False).fit([*texts, "."])
    plain = expected.transform(texts)
    # the same counts per title, whatever the columns' numbering: equal rows' multisets and
    # equal products between every two titles (integers, exactly)
    assert counts.shape[0] == plain.shape[0] == len(texts)
    for row in range(len(texts)):
        assert sorted(counts[row].data.tolist()) == sorted(plain[row].data.tolist())
    assert ((counts @ counts.T).toarray() == (plain @ plain.T).toarray()).all()


def test_the_commonest_ngrams_are_left_out_only_past_the_budget():
    vectors = headline_vectors(["금리 동결"] * 6 + ["금리 인상 발표"] * 2 + ["수능 성적"])
    assert (without_common(vectors, budget=1e9) != vectors).nnz == 0
    # "금리"'s n-grams are in 8 titles (28 pairs); "동결"'s in 6 (15); the rest in 2 or 1
    kept = without_common(vectors, budget=20)
    assert set(np.bincount(kept.indices, minlength=vectors.shape[1]).tolist()) <= {0, 1, 2, 6}
    assert kept[8].nnz == vectors[8].nnz  # the rare title untouched


def drawn_window(n: int, data: st.DataObject) -> tuple[np.ndarray, Standing, list[int]]:
    """A window of ``n`` titles drawn: taken flags, issue 7 open and 8 closed, ascending times."""
    taken = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    issue_of = data.draw(st.lists(st.sampled_from([-1, -1, -1, -1, 7, 8]), min_size=n, max_size=n))
    times = sorted(data.draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    return taken, Standing(issue_of, {7: -1}), times


@settings(max_examples=60, deadline=None)
@given(titles=titles, data=st.data())
def test_the_settling_pass_over_changed_titles_is_the_whole_pass_again(titles, data):
    # GIVEN a window with issues open and closed, taken titles, in small blocks and steps
    taken, standing, times = drawn_window(len(titles), data)
    vectors = headline_vectors(titles)
    args = (vectors, 0.3, 2, taken, times, standing, 20, 0.2)

    # WHEN the pass merges and settles, placing again only what the merges changed, or all
    changed = centroid_pass(*args, block_rows=16, step_rows=4, merge=True)
    whole = centroid_pass(*args, block_rows=16, step_rows=4, merge=True, settle="whole")

    # THEN both leave the same groups and joins
    assert [g.members for g in changed.groups] == [g.members for g in whole.groups]
    assert changed.joins == whole.joins


def test_the_settling_pass_is_the_whole_pass_on_windows_that_merge(monkeypatch):
    # GIVEN generated windows and the labelled ones (the UCI sample's categories merge)
    generated = [(w.titles, w.times) for w in (varied(2000), small_vocabulary(2000))]
    merged = 0
    for titles, times in [*generated, *windows()]:
        # WHEN the headline method clusters each, settling by the changed titles or by all
        changed = assign(titles, 0.3, 3, method="headline", times=times)
        with monkeypatch.context() as patch:
            patch.setattr(centroid, "centroid_pass", partial(centroid_pass, settle="whole"))
            whole = assign(titles, 0.3, 3, method="headline", times=times)
            patch.setattr(centroid, "merge_groups", lambda vectors, members, *rest: members)
            unmerged = assign(titles, 0.3, 3, method="headline", times=times)
        # THEN the groups are the same
        assert changed.groups == whole.groups
        merged += changed.groups != unmerged.groups
    assert merged >= 3  # the generated windows and a UCI category at least: settling ran


@settings(max_examples=60, deadline=None)
@given(titles=titles, data=st.data())
def test_the_pass_over_a_graph_of_the_similarities_is_the_pass_over_the_vectors(titles, data):
    # GIVEN a window with issues open and closed and taken titles, and its similarities given
    # outright (the meaning method's Graph) as the vectors' products
    taken, standing, times = drawn_window(len(titles), data)
    vectors = headline_vectors(titles)
    rest = (0.3, 2, taken, times, standing, 20, 0.2)

    # WHEN the pass, merging, settling and representatives run over either
    by_vectors = centroid_pass(vectors, *rest, block_rows=16, step_rows=4, merge=True)
    by_graph = centroid_pass(
        Graph(vectors @ vectors.T), *rest, block_rows=16, step_rows=4, merge=True
    )

    # THEN they leave the same groups, representatives and joins
    assert by_graph.groups == by_vectors.groups
    assert by_graph.joins == by_vectors.joins
