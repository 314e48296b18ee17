"""Extraction again from the raw layer (newsdesk.extract.reextract, `newsdesk reextract`): each
kept page judged anew with nothing fetched, a page no longer kept counted, a changed outcome
said."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from newsdesk.aws.raw import RawStore
from newsdesk.aws.state_table import StateTable
from newsdesk.core.settings import Settings
from newsdesk.extract.extractor import ExtractPolicy, PageExtractor
from newsdesk.extract.reextract import reextract
from newsdesk.storage.extractions import ExtractionStore
from tests.conftest import article_page, extract_all
from tests.test_extraction import collect, extraction

EXTRACTOR = "ExtractorFunction"


def extractor_of(aws_env: Any, database: Any) -> tuple[PageExtractor, ExtractionStore, RawStore]:
    """The extractor as the extractor function builds it, over the tests' services."""
    env = aws_env.function_env(EXTRACTOR)
    settings = Settings.from_env({**env, "OPERATOR_CONTACT": "tests@example.org"})
    store = ExtractionStore(database)
    raw = RawStore(aws_env.client("s3"), env["RAW_BUCKET"])
    states = StateTable(aws_env.client("dynamodb"), settings.state_table_name)
    return PageExtractor(ExtractPolicy.from_settings(settings), store, states, raw), store, raw


def test_kept_pages_are_judged_again_without_fetching_and_lost_ones_counted(
    aws_env, database, serve, feed_server
):
    # GIVEN two articles whose pages were extracted and kept, one of them since expired
    kept = serve("/view/1", body=article_page("국회 예산안 통과"), content_type="text/html")
    lost = serve("/view/2", body=article_page("대통령 귀국"), content_type="text/html")
    collect(serve, [("국회 예산안 통과", kept), ("대통령 귀국", lost)])
    reports = {r["url"]: r for r in extract_all(aws_env)}
    expired = extraction(database, reports[lost]["article_id"])["raw_key"]
    bucket = aws_env.function_env(EXTRACTOR)["RAW_BUCKET"]
    aws_env.client("s3").delete_object(Bucket=bucket, Key=expired)
    asked = dict(feed_server.requests)
    # WHEN the pages extracted since then are extracted again
    page_extractor, store, raw = extractor_of(aws_env, database)
    run = reextract(page_extractor, store, raw, datetime(2000, 1, 1, tzinfo=UTC))
    # THEN the kept page is judged again, as it was, and the lost one counted; nothing fetched
    assert [(p.was, p.report.status, p.changed) for p in run.pages] == [
        ("extract_ok", "extract_ok", False)
    ]
    (page,) = run.pages
    assert (page.report.article_id, page.report.title) == (
        reports[kept]["article_id"],
        "국회 예산안 통과",
    )
    assert (run.gone, run.changed()) == (1, 0)
    assert dict(feed_server.requests) == asked
