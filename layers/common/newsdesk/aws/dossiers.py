"""The dossier bucket (issue 40): each issue version's dossier, written by the relay before its
event is published, at the key the event names (``storage.issue_events.dossier_key``), with
the bytes the clustering transaction kept: writing it again, after a relay that died before
publishing, writes the same object. S3 checks the body against its SHA-256."""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from newsdesk.core.errors import DossierStoreError

if TYPE_CHECKING:
    from mypy_boto3_s3 import S3Client

CONTENT_TYPE = "application/json; charset=utf-8"


class DossierBucket:
    def __init__(self, client: S3Client, bucket: str) -> None:
        self._client = client
        self.name = bucket

    def put(self, key: str, body: bytes) -> None:
        """Write ``body`` at ``key``; a DossierStoreError when S3 does not take it."""
        digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
        try:
            self._client.put_object(
                Bucket=self.name,
                Key=key,
                Body=body,
                ContentType=CONTENT_TYPE,
                ChecksumSHA256=digest,
            )
        except (BotoCoreError, ClientError) as e:
            raise DossierStoreError(f"cannot write the dossier s3://{self.name}/{key}: {e}") from e

    def get(self, key: str) -> bytes:
        try:
            return self._client.get_object(Bucket=self.name, Key=key)["Body"].read()
        except (BotoCoreError, ClientError) as e:
            raise DossierStoreError(f"cannot read the dossier s3://{self.name}/{key}: {e}") from e
