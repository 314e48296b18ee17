"""The raw layer (seed 001): every fetched body, gzip-compressed, with its response metadata,
kept in S3 so that a round that stored nothing can be explained and its bodies parsed again.

Keys: ``feeds/<outlet>/<feed hash>/<YYYY-MM-DD>/<body sha-256>.xml.gz`` — an unchanged body is
stored once a day, however often it is fetched. Article pages (the extraction stage) under
``pages/<YYYY-MM-DD>/<article id>-r<revision>.html.gz``, read back by `newsdesk reextract`. Each
writer's IAM policy names its prefix only (the worker ``feeds/``, the extractor ``pages/``).
Bodies stored before the ``feeds/`` prefix (``<outlet>/…``, until they expire) are read too.

The metadata is bounded: S3 refuses an object whose user metadata passes 2 KB (moto does
not), so a kept header is cut to ``HEADER_MAX_CHARS`` and a final URL that would pass the
limit is cut to what fits (``final-url-cut`` says so): a server's 3 kB ETag or a redirect to a
3 kB URL must not make the body unstorable, and its feed or page fail every round.
"""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.errors import RawStoreError
from newsdesk.core.fetched import FetchResult
from newsdesk.core.sources import Feed
from newsdesk.core.times import format_time, parse_time

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

# Response headers worth keeping beside the body (Content-Language: what parse_feed gives
# feedparser beside the Content-Type, so that a body parsed again reads alike).
KEPT_HEADERS = (
    "Content-Type",
    "ETag",
    "Last-Modified",
    "Cache-Control",
    "Content-Encoding",
    "Content-Language",
)
FEEDS = "feeds/"
PAGES = "pages/"
METADATA_MAX_BYTES = 2048  # S3's bound on user metadata: its keys and values, in UTF-8
HEADER_MAX_CHARS = 256  # of a kept header's value, before quoting


def feed_prefix(feed: Feed) -> str:
    digest = hashlib.sha256(feed.url.encode()).hexdigest()[:16]
    return f"{FEEDS}{quote(feed.source, safe='')}/{digest}/"


def _feed_day(key: str) -> str | None:
    """The day of a feed body's key (``feeds/`` or the earlier layout), None for a page's."""
    if key.startswith(PAGES):
        return None
    parts = key.removeprefix(FEEDS).split("/")
    return parts[2] if len(parts) > 3 else None


@dataclass(frozen=True)
class RawBody:
    key: str
    feed: Feed
    fetched_at: datetime
    status: int
    final_url: str
    headers: dict[str, str]
    content: bytes

    @property
    def content_type(self) -> str | None:
        return self.headers.get("Content-Type")


class RawStore:
    def __init__(self, client: S3Client, bucket: str) -> None:
        self._client = client
        self._bucket = bucket

    def put(self, feed: Feed, fetched: FetchResult, fetched_at: datetime) -> tuple[str, bool]:
        """Keep ``fetched``'s body; return its key and whether it was new."""
        digest = hashlib.sha256(fetched.content).hexdigest()
        key = f"{feed_prefix(feed)}{fetched_at:%Y-%m-%d}/{digest}.xml.gz"
        try:
            self._client.head_object(Bucket=self._bucket, Key=key)
            return key, False
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
                raise RawStoreError(f"cannot check {key}: {e}") from e
        except BotoCoreError as e:
            raise RawStoreError(f"cannot check {key}: {e}") from e
        described = {
            "source": quote(feed.source, safe=""),
            "feed-url": quote(feed.url, safe=""),
            "category": quote(feed.category, safe=""),
        }
        self._put(key, fetched, fetched_at, described)
        return key, True

    def put_page(
        self, article_id: int, revision: int, fetched: FetchResult, fetched_at: datetime
    ) -> str:
        """Keep an article page's body (each revision's once: a repeat overwrites it)."""
        key = f"{PAGES}{fetched_at:%Y-%m-%d}/{article_id}-r{revision}.html.gz"
        self._put(key, fetched, fetched_at, {"article-id": str(article_id)})
        return key

    def page(self, key: str) -> RawBody:
        """A page kept by ``put_page`` (its ``feed`` is a placeholder: pages have none)."""
        try:
            response: Any = self._client.get_object(Bucket=self._bucket, Key=key)
            body = gzip.decompress(response["Body"].read())
        except (BotoCoreError, ClientError, OSError) as e:
            raise RawStoreError(f"cannot read {key}: {e}") from e
        meta = {k: unquote(v) for k, v in response["Metadata"].items()}
        return _body(key, Feed("", "", ""), meta, body)

    def _put(
        self, key: str, fetched: FetchResult, fetched_at: datetime, described: dict[str, str]
    ) -> None:
        metadata = {
            **described,
            "fetched-at": format_time(fetched_at),
            "status": str(fetched.status),
            "final-url": quote(fetched.url, safe=""),
            "bytes": str(len(fetched.content)),
            "wire-bytes": str(fetched.wire_bytes),
            "elapsed-ms": str(int(fetched.elapsed_seconds * 1000)),
        }
        for name in KEPT_HEADERS:
            value = fetched.headers.get(name)
            if value:
                metadata[f"h-{name.lower()}"] = quote(value[:HEADER_MAX_CHARS], safe="")
        metadata = _within_bound(metadata)
        try:
            self._client.put_object(
                Bucket=self._bucket,
                Key=key,
                Body=gzip.compress(fetched.content),
                ContentType="application/gzip",
                Metadata=metadata,
            )
        except (BotoCoreError, ClientError) as e:
            raise RawStoreError(f"cannot store {key}: {e}") from e

    def since(self, since: datetime) -> Iterator[RawBody]:
        """The bodies fetched at or after ``since``, oldest first."""
        try:
            keys = [
                item["Key"]
                for page in self._client.get_paginator("list_objects_v2").paginate(
                    Bucket=self._bucket
                )
                for item in page.get("Contents", [])
                if (_feed_day(item["Key"]) or "") >= f"{since:%Y-%m-%d}"
            ]
            bodies = [self._get(key) for key in keys]
        except (BotoCoreError, ClientError) as e:
            raise RawStoreError(f"cannot read the raw bodies: {e}") from e
        yield from sorted(
            (b for b in bodies if b.fetched_at >= since), key=lambda b: (b.fetched_at, b.key)
        )

    def _get(self, key: str) -> RawBody:
        response: Any = self._client.get_object(Bucket=self._bucket, Key=key)
        meta = {k: unquote(v) for k, v in response["Metadata"].items()}
        feed = Feed(meta["source"], meta["feed-url"], meta["category"])
        return _body(key, feed, meta, gzip.decompress(response["Body"].read()))


def _within_bound(metadata: dict[str, str]) -> dict[str, str]:
    """``metadata`` (all ASCII: quoted) within ``METADATA_MAX_BYTES``, its final URL cut to
    what fits when it is what passes the bound, at an escape's boundary."""
    size = sum(len(k) + len(v) for k, v in metadata.items())
    if size <= METADATA_MAX_BYTES:
        return metadata
    flag = ("final-url-cut", "true")
    room = METADATA_MAX_BYTES - (size - len(metadata["final-url"])) - sum(map(len, flag))
    cut = metadata["final-url"][: max(room, 0)]
    cut = cut[: cut.rfind("%")] if "%" in cut[-2:] else cut  # no half of an escape
    return {**metadata, "final-url": cut, flag[0]: flag[1]}


def _body(key: str, feed: Feed, meta: dict[str, str], content: bytes) -> RawBody:
    headers = {
        name: meta[f"h-{name.lower()}"] for name in KEPT_HEADERS if f"h-{name.lower()}" in meta
    }
    return RawBody(
        key=key,
        feed=feed,
        fetched_at=parse_time(meta["fetched-at"]),
        status=int(meta["status"]),
        final_url=meta["final-url"],
        headers=headers,
        content=content,
    )
