"""Extraction again, from the pages the raw layer keeps, without fetching (`newsdesk
reextract`): to apply a fixed extractor, judge or copy rule to pages already had, as
``newsdesk.collect.reparse`` does for feed bodies. Each page is judged, keyed and recorded as
the extractor does a page it fetched (``PageExtractor.judge``); an article waiting in the outbox
(a newer revision, a retry) is left to the extractor, and a page no longer kept (expired with
its text, ArticleTextRetentionDays, or removed) is counted."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from newsdesk.aws.raw import RawStore
from newsdesk.core.errors import RawStoreError
from newsdesk.extract.extractor import ArticleReport, PageExtractor
from newsdesk.storage.extractions import ExtractionStore


@dataclass
class Reextracted:
    was: str  # the outcome before
    report: ArticleReport  # the outcome now

    @property
    def changed(self) -> bool:
        return self.was != self.report.status


@dataclass
class ReextractRun:
    pages: list[Reextracted] = field(default_factory=list)
    gone: int = 0  # pages the raw layer no longer keeps

    def changed(self) -> int:
        return sum(page.changed for page in self.pages)


def reextract(
    extractor: PageExtractor, store: ExtractionStore, raw: RawStore, since: datetime
) -> ReextractRun:
    """The kept pages of the articles extracted since ``since``, extracted again."""
    run = ReextractRun()
    for article, key, before in store.raw_pages(since):
        try:
            page = raw.page(key)
        except RawStoreError:  # expired or removed
            run.gone += 1
            continue
        report = ArticleReport(article.id, article.revision, article.url, "", "")
        report.source, report.title = article.source, article.title
        extractor.judge(
            article, report, page.content, page.content_type, page.final_url, page.status, key
        )
        run.pages.append(Reextracted(before.status, report))
    return run
