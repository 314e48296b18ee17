"""What the dossiers cost (issue 40), whole runs on the local services (moto's S3 and
EventBridge, the embedded PostgreSQL): N issues of 4 articles each (short Korean texts, their
length printed, sentences repeated across an issue's articles as wire rewrites repeat them) are
created as the cluster job creates them, each in its transaction with its event and dossier;
then the outbox is relayed to the local bus, each dossier written to the local dossier bucket
first. The same events are then relayed again without dossiers (as an earlier release wrote
them), for the relay's own time. Prints the seconds and what a dossier adds per event and per
1,000 events.

    .venv/bin/python -m benchmarks.dossier_relay [--issues 1000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from newsdesk.aws.dossiers import DossierBucket
from newsdesk.aws.issue_bus import IssueBus
from newsdesk.cluster.events import relay_events
from newsdesk.core import dossier
from newsdesk.core.entry import Entry
from newsdesk.core.settings import Settings
from newsdesk.storage.articles import Article, ArticleStore
from newsdesk.storage.extractions import Extraction, ExtractionStore
from newsdesk.storage.issue_events import SOURCE, IssueEventStore
from newsdesk.storage.issues import create_issue, window
from newsdesk_local.services import LocalServices

T0 = datetime(2026, 12, 1, tzinfo=UTC)
FACTS = [
    "{n}번 사안에 대해 정부는 {k}일 관계부처 회의를 열고 대응 방안을 논의했다.",
    "회의에는 장관과 차관 등 {k}명이 참석해 {n}개 과제를 점검했다.",
    "정부는 다음 달까지 세부 계획을 마련해 발표할 예정이라고 밝혔다.",
    "전문가들은 이번 조치가 시장에 미칠 영향이 크지 않을 것으로 내다봤다.",
    "야당은 대책이 늦었다며 국회 차원의 점검이 필요하다고 주장했다.",
    "관련 예산 {k}{n}억원은 내년 상반기에 먼저 집행된다.",
    "현장에서는 인력과 장비가 부족하다는 지적이 이어졌다.",
    "담당 부서는 {n}개 지역에서 설명회를 열겠다고 했다.",
]


def text(n: int, k: int) -> str:
    """An article of issue ``n``: most facts shared with the issue's others, one of its own."""
    facts = [f.format(n=n, k=3 + (k % 2)) for f in FACTS]
    own = f"{k}번째 기사만 전하는 사실로, 피해 규모는 {n * 10 + k}건으로 집계됐다."
    paragraphs = [" ".join(facts[i : i + 2]) for i in range(0, len(facts), 2)]
    return "\n".join([*paragraphs[k % 2 :], own] * 2)


def build(services: LocalServices, issues: int) -> tuple[float, int]:
    """The issues created, each with its dossier; (seconds, characters of text)."""
    database = services.database()
    store, extractions = ArticleStore(database), ExtractionStore(database)
    chars = 0
    for n in range(issues):
        for k in range(4):
            link = f"https://news.example/{n}/{k}"
            entry = Entry(f"{n}번 사안 정부 대응 {k}", link, "", None, T0)
            store.insert_articles(f"매체{k}", "경제", [Article(entry, link)], T0)
    ids = [a.id for a in window(database, T0 - timedelta(days=1))]
    for article_id in ids:
        n, k = divmod(article_id - ids[0], 4)
        body = text(n, k)
        chars += len(body)
        extractions.record(Extraction(article_id, 1, "extract_ok", None, len(body), T0, body))
    articles = window(database, T0 - timedelta(days=1))
    started = time.perf_counter()
    for n in range(issues):
        members = articles[4 * n : 4 * n + 4]
        create_issue(database, members, members[0], members[0], T0 + timedelta(hours=1))
    seconds = time.perf_counter() - started
    database.close()
    return seconds, chars


def dossiers_alone(issues: int) -> float:
    """The dossiers' own share of the transactions: each built in memory from the same texts."""
    started = time.perf_counter()
    for n in range(issues):
        members = [
            dossier.Article(4 * n + k, f"매체{k}", "t", "u", T0, T0, "extract_ok", None, text(n, k))
            for k in range(4)
        ]
        issue = dossier.Issue(n, 1, "open", "경제", T0, T0, 4)
        dossier.build(issue, members, at=T0, centrality={}, read_before={})
    return time.perf_counter() - started


def relayed(services: LocalServices, with_dossiers: bool) -> tuple[float, int]:
    database = services.database()
    env = services.function_env("ClusterFunction")
    bucket = DossierBucket(services.client("s3"), env["DOSSIER_BUCKET"])
    bus = IssueBus(services.client("events"), env["EVENT_BUS_NAME"], SOURCE)
    if not with_dossiers:  # the same events as an earlier release wrote them
        with database.transaction() as cursor:
            cursor.execute(
                "UPDATE issue_event SET published_at = NULL, attempts = 0, dossier = NULL, "
                "detail = detail - 'dossier'"
            )
    started = time.perf_counter()
    published, _ = relay_events(IssueEventStore(database), bus, bucket, datetime.now(UTC))
    seconds = time.perf_counter() - started
    database.close()
    return seconds, published


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--issues", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="newsdesk-bench-") as name:
        os.chmod(name, 0o755)  # pgserver runs PostgreSQL as its own user when run as root
        env = dict(
            os.environ, NEWSDESK_DATA_DIR=str(Path(name) / "data"), POWERTOOLS_LOG_LEVEL="ERROR"
        )
        env.pop("AWS_ENDPOINT_URL", None)
        env.pop("DATABASE_URL", None)
        with LocalServices(Settings.from_env(env), env) as services:
            built, chars = build(services, args.issues)
            alone = dossiers_alone(args.issues)
            with_d, published = relayed(services, True)
            without, again = relayed(services, False)
            s3 = services.client("s3")
            bucket = services.function_env("ClusterFunction")["DOSSIER_BUCKET"]
            stored = sum(
                o["Size"]
                for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                for o in page.get("Contents", [])
            )
    n = args.issues
    print(f"{n} issues of 4 articles ({chars / (4 * n):,.0f} characters of text each)")
    each = built / n * 1000
    print(f"  created, each with its event and dossier: {built:.1f} s ({each:.1f} ms an issue)")
    print(f"  of which building the dossiers: {alone:.1f} s ({alone / n * 1000:.1f} ms a dossier)")
    print(f"  dossiers in the bucket: {stored / n:,.0f} bytes each")
    print(f"  relay with dossiers: {with_d:.1f} s for {published} events")
    print(f"  relay without (the same events, no dossier): {without:.1f} s for {again} events")
    added = (with_d - without) / n
    print(
        f"  a dossier adds {added * 1000:.1f} ms an event to the relay, "
        f"{added * 1000:.1f} s per 1,000 events"
    )


if __name__ == "__main__":
    main()
