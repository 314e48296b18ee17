"""The clustering job: per category, the articles collected in the last window, grouped by the
configured method, each group stored as an issue in its own transaction.

Articles already in an issue stay in the window's vectors (so a re-run sees the same IDF and
finds nothing new: every group it could form was formed the first time) but cannot be gathered
again. A PostgreSQL advisory lock lets one run at a time work; another exits at once.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aws_lambda_powertools import Logger

from newsdesk.cluster.grouping import find_groups
from newsdesk.cluster.methods import threshold_for
from newsdesk.core.settings import Settings
from newsdesk.core.times import utc_now
from newsdesk.storage.database import Database
from newsdesk.storage.issues import (
    WindowArticle,
    attach_copies,
    clustering_lock,
    store_issue,
    window,
)

logger = Logger(child=True)


@dataclass(frozen=True)
class ClusterPolicy:
    method: str = "seed"
    threshold: float = 0.60
    min_size: int = 3
    window_hours: float = 24.0
    # Copies (of an article's text, issue 14) take part as any article, counting toward the
    # minimum size; by default they only join their original's issue.
    copies_count: bool = False
    # How long an article waits for its extraction before it is clustered without (None:
    # never waits).
    pending_wait: timedelta | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> ClusterPolicy:
        """An unset ``CLUSTER_THRESHOLD`` is the method's recommended one."""
        method = settings.cluster_method
        return cls(
            method=method,
            threshold=threshold_for(method, settings.cluster_threshold),
            min_size=settings.cluster_min_size,
            window_hours=settings.cluster_window_hours,
            copies_count=settings.cluster_copies_count,
            pending_wait=timedelta(minutes=settings.cluster_pending_wait_minutes),
        )


@dataclass(frozen=True)
class IssueRecord:
    id: int
    category: str
    title: str
    article_ids: list[int]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "article_ids": self.article_ids,
        }


@dataclass
class ClusterRun:
    issues: list[IssueRecord] = field(default_factory=list)
    articles_considered: int = 0
    copies_attached: int = 0
    locked_out: bool = False

    @property
    def articles_clustered(self) -> int:
        return sum(len(issue.article_ids) for issue in self.issues)

    @property
    def articles_left_single(self) -> int:
        return self.articles_considered - self.articles_clustered

    def as_dict(self) -> dict[str, Any]:
        return {
            "issues_created": len(self.issues),
            "articles_clustered": self.articles_clustered,
            "articles_left_single": self.articles_left_single,
            "copies_attached": self.copies_attached,
            "locked_out": self.locked_out,
            "issues": [issue.as_dict() for issue in self.issues],
        }

    def metric_counts(self) -> dict[str, int]:
        """The run's EMF metrics by name."""
        return {
            "IssuesCreated": len(self.issues),
            "ArticlesClustered": self.articles_clustered,
            "ArticlesLeftSingle": self.articles_left_single,
            "CopiesAttached": self.copies_attached,
            "ClusterRunsLockedOut": int(self.locked_out),
        }


def run_clustering(
    database: Database, policy: ClusterPolicy, clock: Callable[[], datetime] = utc_now
) -> ClusterRun:
    run = ClusterRun()
    with clustering_lock(database) as held:
        if not held:
            logger.info("another clustering run holds the lock; nothing to do")
            run.locked_out = True
            return run
        now = clock()
        wait = policy.pending_wait
        # the window ends at the run's time: a replay (``clock`` in the past) sees no later
        # article
        articles = window(
            database,
            now - timedelta(hours=policy.window_hours),
            pending_before=None if wait is None else now - wait,
            copies=policy.copies_count,
            until=now,
        )
        for _, group in itertools.groupby(articles, key=lambda a: a.category_id):
            _cluster_category(database, list(group), policy, run)
        run.copies_attached = attach_copies(database, until=now)
    logger.info(
        "clustering run finished",
        extra={
            "issues_created": len(run.issues),
            "articles_clustered": run.articles_clustered,
            "articles_left_single": run.articles_left_single,
        },
    )
    return run


def _cluster_category(
    database: Database, articles: list[WindowArticle], policy: ClusterPolicy, run: ClusterRun
) -> None:
    taken = [a.issued for a in articles]
    run.articles_considered += taken.count(False)
    groups = find_groups(
        [a.title for a in articles],
        policy.threshold,
        policy.min_size,
        taken=taken,
        method=policy.method,
        times=[a.collected_at.timestamp() for a in articles],
    )
    for group in groups:
        members = [articles[i] for i in group.members]
        representative = articles[group.representative]
        issue_id = store_issue(database, members, representative)
        run.issues.append(
            IssueRecord(
                issue_id, representative.category, representative.title, [a.id for a in members]
            )
        )
        logger.info(
            "issue created",
            extra={
                "issue_id": issue_id,
                "category": representative.category,
                "size": len(members),
                "title": representative.title,
            },
        )
