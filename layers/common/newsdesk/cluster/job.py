"""The clustering job: per category, the articles collected in the last window (and every
article of the issues open then), grouped by the configured method. Free articles join the
open issue they belong to or form new issues; each change (an issue created, grown, or closed
after ``ISSUE_IDLE_HOURS`` without a new article) is stored with its event in its own
transaction, and the events are then published (``newsdesk.cluster.events``).

Articles already in an issue stay in the window's vectors (so a re-run sees the same IDF and
makes every choice it made before: it creates and changes nothing). Categories are clustered
apart, each under a PostgreSQL advisory lock of its own (issue 24): a run that finds a
category's lock held leaves that category to the run holding it. The cluster function runs one
category an invocation, from its queue (functions/cluster/app.py); a run over every category
in turn makes the same issues, versions and events.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from aws_lambda_powertools import Logger

from newsdesk.cluster.embedding import DIMENSION, model_name, shared
from newsdesk.cluster.grouping import assign
from newsdesk.cluster.methods import (
    DEFAULT_MIN_SIZE,
    DEFAULT_THRESHOLDS,
    Group,
    Standing,
    threshold_for,
)
from newsdesk.core.settings import ClusterSettings, Settings
from newsdesk.core.times import utc_now
from newsdesk.storage import embeddings
from newsdesk.storage.database import Database
from newsdesk.storage.issue_versions import DossierPolicy
from newsdesk.storage.issues import (
    WindowArticle,
    attach_copies,
    categories,
    close_idle,
    clustering_lock,
    create_issue,
    grow_issue,
    window,
)

logger = Logger(child=True)

# Titles a run of the meaning method embeds at most (about 150 s of the function's 300 at 30 ms
# a title): a first run over a big window, or one after the model changed, leaves the rest
# unclustered until the next run (issue 38; `newsdesk embed` embeds them all at once).
EMBED_PER_RUN = 5000


@dataclass(frozen=True)
class ClusterPolicy:
    """The cluster stage's settings as the job takes them; unset, each is its setting's default
    (core.settings.cluster), but ``pending_wait``."""

    method: str = ClusterSettings.cluster_method
    threshold: float = DEFAULT_THRESHOLDS[ClusterSettings.cluster_method]
    min_size: int = DEFAULT_MIN_SIZE
    window_hours: float = ClusterSettings.cluster_window_hours
    # Copies (of an article's text, issue 14) take part as any article, counting toward the
    # minimum size; by default they only join their original's issue.
    copies_count: bool = ClusterSettings.cluster_copies_count
    # How long an article waits for its extraction before it is clustered without (None:
    # never waits).
    pending_wait: timedelta | None = None
    # An issue without a new article for this long closes (and takes no more).
    idle: timedelta = timedelta(hours=ClusterSettings.issue_idle_hours)
    # The characters of text an issue version's dossier carries at most (issue 40).
    dossier_max_chars: int = ClusterSettings.dossier_max_chars

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
            idle=timedelta(hours=settings.issue_idle_hours),
            dossier_max_chars=settings.dossier_max_chars,
        )


@dataclass(frozen=True)
class IssueRecord:
    """An issue a run created or grew: the articles it added and the version they made."""

    id: int
    category: str
    title: str
    article_ids: list[int]
    version: int = 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "article_ids": self.article_ids,
            "version": self.version,
        }


@dataclass
class ClusterRun:
    issues: list[IssueRecord] = field(default_factory=list)  # created
    updated: list[IssueRecord] = field(default_factory=list)  # grown (the articles added)
    closed: list[int] = field(default_factory=list)
    articles_considered: int = 0
    copies_attached: int = 0
    locked_out: bool = False  # every category asked for was held by another run
    categories_done: list[str] = field(default_factory=list)
    categories_locked_out: list[str] = field(default_factory=list)
    events_published: int = 0
    events_failed: int = 0
    # the meaning method's (issue 38): titles embedded by this run (the others' vectors were
    # stored), and the time that took
    articles_embedded: int = 0
    embedding_milliseconds: int = 0
    articles_awaiting_embedding: int = 0  # past EMBED_PER_RUN: not clustered in this run

    @property
    def articles_joined(self) -> int:
        return sum(len(issue.article_ids) for issue in self.updated)

    @property
    def articles_clustered(self) -> int:
        """Free articles this run put in an issue, new or open."""
        return sum(len(issue.article_ids) for issue in self.issues) + self.articles_joined

    @property
    def articles_left_single(self) -> int:
        return self.articles_considered - self.articles_clustered

    def as_dict(self) -> dict[str, Any]:
        return {
            "issues_created": len(self.issues),
            "issues_updated": len(self.updated),
            "issues_closed": len(self.closed),
            "articles_clustered": self.articles_clustered,
            "articles_joined": self.articles_joined,
            "articles_left_single": self.articles_left_single,
            "copies_attached": self.copies_attached,
            "locked_out": self.locked_out,
            "categories_done": self.categories_done,
            "categories_locked_out": self.categories_locked_out,
            "events_published": self.events_published,
            "events_failed": self.events_failed,
            "articles_embedded": self.articles_embedded,
            "embedding_milliseconds": self.embedding_milliseconds,
            "articles_awaiting_embedding": self.articles_awaiting_embedding,
            "issues": [issue.as_dict() for issue in self.issues],
            "updated": [issue.as_dict() for issue in self.updated],
            "closed": self.closed,
        }

    def metric_counts(self) -> dict[str, int]:
        """The run's EMF metrics by name."""
        return {
            "IssuesCreated": len(self.issues),
            "IssuesUpdated": len(self.updated),
            "IssuesClosed": len(self.closed),
            "ArticlesClustered": self.articles_clustered,
            "ArticlesJoined": self.articles_joined,
            "ArticlesLeftSingle": self.articles_left_single,
            "CopiesAttached": self.copies_attached,
            "ClusterRunsLockedOut": len(self.categories_locked_out),
            "IssueEventsPublished": self.events_published,
            "IssueEventsFailed": self.events_failed,
            "ArticlesEmbedded": self.articles_embedded,
            "EmbeddingMilliseconds": self.embedding_milliseconds,
            "ArticlesAwaitingEmbedding": self.articles_awaiting_embedding,
        }


def run_clustering(
    database: Database,
    policy: ClusterPolicy,
    clock: Callable[[], datetime] = utc_now,
    publish: Callable[[ClusterRun], None] | None = None,
    category_ids: list[int] | None = None,
) -> ClusterRun:
    """One run over ``category_ids`` (None: every category), one after another, each under its
    lock: its window clustered, the copies of its issues' articles attached, its idle issues
    closed. ``publish`` (the event relay) runs after the changes are committed."""
    run = ClusterRun()
    now = clock()
    known = dict(categories(database))
    for category_id in known if category_ids is None else category_ids:
        name = known.get(category_id, str(category_id))
        with clustering_lock(database, category_id) as held:
            if not held:
                logger.info(
                    "another clustering run holds the category; left to it",
                    extra={"category": name},
                )
                run.categories_locked_out.append(name)
                continue
            _run_category(database, policy, run, now, category_id)
            run.categories_done.append(name)
    run.locked_out = bool(run.categories_locked_out) and not run.categories_done
    if publish is not None:
        publish(run)
    logger.info(
        "clustering run finished",
        extra={
            "categories": run.categories_done,
            "issues_created": len(run.issues),
            "issues_updated": len(run.updated),
            "issues_closed": len(run.closed),
            "articles_clustered": run.articles_clustered,
            "articles_left_single": run.articles_left_single,
        },
    )
    return run


def _run_category(
    database: Database, policy: ClusterPolicy, run: ClusterRun, now: datetime, category_id: int
) -> None:
    wait = policy.pending_wait
    # the window ends at the run's time: a replay (``clock`` in the past) sees no later article
    articles = window(
        database,
        now - timedelta(hours=policy.window_hours),
        pending_before=None if wait is None else now - wait,
        copies=policy.copies_count,
        until=now,
        category_id=category_id,
    )
    if articles:
        _cluster_category(database, articles, policy, run, now)
    run.copies_attached += attach_copies(database, until=now, category_id=category_id)
    run.closed += close_idle(database, now - policy.idle, now, category_id=category_id)


def _cluster_category(
    database: Database,
    articles: list[WindowArticle],
    policy: ClusterPolicy,
    run: ClusterRun,
    now: datetime,
) -> None:
    vectors = None
    if policy.method == "meaning":
        articles, vectors = _embedded(database, articles, run)
    run.articles_considered += sum(not a.issued for a in articles)
    assignment = assign(
        [a.title for a in articles],
        policy.threshold,
        policy.min_size,
        method=policy.method,
        times=[a.collected_at.timestamp() for a in articles],
        standing=_standing(articles),
        idle_seconds=policy.idle.total_seconds(),
        embeddings=vectors,
    )
    dossier = DossierPolicy(
        policy.dossier_max_chars,
        {articles[i].id: value for i, value in assignment.centrality.items()},
    )
    for issue_id, indices in sorted(assignment.joins.items()):
        _grow(database, issue_id, [articles[i] for i in indices], run, now, dossier)
    for group in assignment.groups:
        _create(database, articles, group, run, now, dossier)


def _embedded(
    database: Database, articles: list[WindowArticle], run: ClusterRun
) -> tuple[list[WindowArticle], np.ndarray]:
    """The window's articles that have a title vector, and their vectors (issue 38): those
    stored for the titles as they are, and the others embedded now and stored, so that a later
    run, or a replay, reads them; at most EMBED_PER_RUN a run (issues' members first, then by
    id), the rest left to the next run (``articles_awaiting_embedding``)."""
    model = model_name()
    vectors = embeddings.stored(database, [a.id for a in articles], model)
    missing = sorted((a for a in articles if a.id not in vectors), key=lambda a: not a.issued)
    now_embedded = missing[:EMBED_PER_RUN]
    if now_embedded:
        started = time.perf_counter()
        made = dict(zip(now_embedded, shared().embed([a.title for a in now_embedded]), strict=True))
        run.embedding_milliseconds += round((time.perf_counter() - started) * 1000)
        embeddings.store(database, model, ((a.id, a.title, v) for a, v in made.items()))
        vectors.update((a.id, v) for a, v in made.items())
        run.articles_embedded += len(made)
        logger.info("titles embedded", extra={"articles": len(made), "model": model})
    if len(missing) > len(now_embedded):
        run.articles_awaiting_embedding += len(missing) - len(now_embedded)
        logger.info(
            "titles left to the next run to embed",
            extra={"articles": len(missing) - len(now_embedded), "most": EMBED_PER_RUN},
        )
    kept = [a for a in articles if a.id in vectors]
    rows = [vectors[a.id] for a in kept]
    return kept, np.stack(rows) if rows else np.zeros((0, DIMENSION), dtype=np.float32)


def _standing(articles: list[WindowArticle]) -> Standing:
    """The window's issues: each article's (-1: none), and the open ones with their leader's
    index in the window (-1 when it is not in it)."""
    open_issues = {a.issue_id: -1 for a in articles if a.issue_id is not None and a.issue_open}
    for i, a in enumerate(articles):
        if a.leads and a.issue_id in open_issues:
            open_issues[a.issue_id] = i
    return Standing([-1 if a.issue_id is None else a.issue_id for a in articles], open_issues)


def _grow(
    database: Database,
    issue_id: int,
    members: list[WindowArticle],
    run: ClusterRun,
    now: datetime,
    dossier: DossierPolicy,
) -> None:
    grown = grow_issue(database, issue_id, members, now, dossier)
    if grown is None:  # closed by an earlier run at this same time
        return
    version, title = grown
    run.updated.append(
        IssueRecord(issue_id, members[0].category, title, [a.id for a in members], version)
    )
    logger.info(
        "issue grew",
        extra={"issue_id": issue_id, "added": len(members), "version": version},
    )


def _create(
    database: Database,
    articles: list[WindowArticle],
    group: Group,
    run: ClusterRun,
    now: datetime,
    dossier: DossierPolicy,
) -> None:
    members = [articles[i] for i in group.members]
    representative = articles[group.representative]
    leader = articles[group.leader if group.leader is not None else group.members[0]]
    issue_id = create_issue(database, members, representative, leader, now, dossier)
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
