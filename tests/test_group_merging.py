"""Issue 24: the headline method folds groups of one story found apart (newsdesk.cluster.merging):
a story told two ways at once is one issue, not two."""

import csv
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import newsdesk.cluster.centroid as centroid
from newsdesk.cluster.grouping import assign
from newsdesk.cluster.merging import merge_groups
from newsdesk.cluster.methods import DEFAULT_THRESHOLDS, Standing
from tests.test_cluster_job import cluster, issued, store

# One story told two ways, the ways interleaved: the pass starts a group for each (0, 2, 4 and
# 1, 3, 5), whose members are on average 0.3 similar or more.
STORY = [
    "삼성전자 반도체 호조에 2분기 어닝 서프라이즈",
    "삼성전자 2분기 영업이익 10조원 돌파 사상 최대",
    "삼성전자 2분기 영업익 10조 어닝 서프라이즈",
    "삼성전자 영업이익 10조 돌파 반도체 호조",
    "삼성전자 2분기 어닝 서프라이즈 반도체 호조",
    "삼성전자 2분기 영업이익 10조원 돌파",
]


def headline(database):
    return cluster(database, method="headline", threshold=DEFAULT_THRESHOLDS["headline"])


# A title below the join threshold to either way's group, above it to the two as one
# (0.25 and 0.27 to their centroids, 0.30 to the merged one's): the first run's pass, once
# the groups are merged, runs again with them as one, so that a re-run finds nothing to do.
BESIDE = "시장 전망 실적 삼성전자"


@pytest.mark.parametrize(
    "titles", [STORY, [*STORY, BESIDE]], ids=["story", "story, a title beside"]
)
def test_a_story_found_twice_in_one_run_is_one_issue(database, titles):
    store(database, "경제", titles)
    assert [len(i.article_ids) for i in headline(database).issues] == [len(titles)]
    # WHEN it runs again THEN nothing changes
    before = issued(database)
    assert headline(database).issues == []
    assert issued(database) == before
    with database.transaction() as cursor:
        cursor.execute("SELECT count(*) FROM issue_event")
        (events,) = cursor.fetchone()
    assert events == 1  # created, never grown


def test_without_merging_the_story_is_two_issues(database, monkeypatch):
    """The case above is one for merging: with it off, the titles make two issues."""
    monkeypatch.setattr(centroid, "merge_groups", lambda vectors, members, *rest: members)
    store(database, "경제", STORY)
    assert [len(i.article_ids) for i in headline(database).issues] == [3, 3]


def unit(*rows):
    vectors = np.array(rows, dtype=np.float64)
    return sp.csr_matrix(vectors / np.linalg.norm(vectors, axis=1, keepdims=True))


def merged(vectors, members, issue=None, times=None, idle=100.0, threshold=0.2):
    issue = [-1] * len(members) if issue is None else issue
    live = [True] * len(members)
    return merge_groups(vectors, members, issue, live, times, idle, [threshold] * vectors.shape[0])


def test_groups_fold_into_the_first_members_ascending():
    # two groups along one axis, a third apart
    vectors = unit([1, 0.1, 0], [1, 0, 0.1], [1, 0.2, 0], [1, 0, 0.2], [0, 1, 0], [0, 0.9, 0.1])
    assert merged(vectors, [[0, 2], [1, 3], [4, 5]]) == [[0, 1, 2, 3], [], [4, 5]]


@pytest.mark.parametrize(("cosine", "apart"), [(0.21, False), (0.19, True)])
def test_groups_merge_at_the_join_threshold(cosine, apart):
    # every member of one group this similar to every member of the other
    other = [cosine, (1 - cosine**2) ** 0.5]
    vectors = unit([1, 0], [1, 0], other, other)
    out = merged(vectors, [[0, 1], [2, 3]], threshold=0.2)
    assert out == ([[0, 1], [2, 3]] if apart else [[0, 1, 2, 3], []])


def test_two_issues_never_fold_into_one():
    # a new group close to both issues goes to the closer, the issues stay apart
    vectors = unit([1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [1, 0.8, 0], [1, 0.8, 0])
    out = merged(vectors, [[0, 1], [2, 3], [4, 5]], issue=[7, 8, -1])
    assert out == [[0, 1, 4, 5], [2, 3], []]


def test_a_new_group_keeps_an_issues_place():
    vectors = unit([1, 0], [1, 0.1], [1, 0.2], [1, 0.3])
    assert merged(vectors, [[0, 1], [2, 3]], issue=[-1, 5]) == [[], [0, 1, 2, 3]]


@pytest.mark.parametrize(("gap", "apart"), [(100.0, False), (101.0, True)])
def test_groups_an_idle_window_apart_stay_apart(gap, apart):
    vectors = unit([1, 0], [1, 0], [1, 0], [1, 0])
    times = [0.0, 10.0, 10.0 + gap, 20.0 + gap]
    out = merged(vectors, [[0, 1], [2, 3]], times=times, idle=100.0)
    assert out == ([[0, 1], [2, 3]] if apart else [[0, 1, 2, 3], []])


DATA = next(
    (
        folder
        for folder in (
            Path(__file__).resolve().parents[2] / "shared" / "data",
            Path("/work/shared/data"),
        )
        if folder.is_dir()
    ),
    None,
)


def windows():
    """ko-dev's slices (in row order) and the UCI sample's categories (in time order, with
    their times), as the job's windows: (titles, times or None)."""
    if DATA is None:
        pytest.skip("the labelled sets are not beside the repository")
    found: defaultdict[str, list[tuple[float, str]]] = defaultdict(list)
    with (DATA / "ko-dev" / "ko_dev_headlines.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            found[row["slice"]].append((float(row["row"]), row["title"]))
    out: list[tuple[list[str], list[float] | None]] = [
        ([title for _, title in sorted(rows)], None) for rows in found.values()
    ]
    found.clear()
    with (DATA / "uci_news_5k.csv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            found[row["CATEGORY"]].append((int(row["TIMESTAMP"]) / 1000, row["TITLE"]))
    for rows in found.values():
        rows.sort()
        out.append(([title for _, title in rows], [at for at, _ in rows]))
    return out


def test_a_rerun_over_the_labelled_windows_changes_nothing():
    """The job's re-run over the same window: the first run's groups as issues, the pass
    joins and creates nothing (the settling passes, newsdesk.cluster.centroid)."""
    threshold = DEFAULT_THRESHOLDS["headline"]
    for titles, times in windows():
        first = assign(titles, threshold, 3, method="headline", times=times)
        issue_of = [-1] * len(titles)
        for k, group in enumerate(first.groups):
            for i in group.members:
                issue_of[i] = k
        standing = Standing(issue_of, {k: g.members[0] for k, g in enumerate(first.groups)})
        again = assign(titles, threshold, 3, method="headline", times=times, standing=standing)
        assert (again.groups, again.joins) == ([], {})


def test_a_groups_span_is_its_members_earliest_to_latest_time():
    # the second group's first member is its latest: by index it would seem 150 s apart
    vectors = unit([1, 0], [1, 0], [1, 0], [1, 0])
    out = merged(vectors, [[0, 1], [2, 3]], times=[0.0, 50.0, 200.0, 40.0], idle=100.0)
    assert out == [[0, 1, 2, 3], []]
