"""What the Lambda pool's fork server imports once, for every container to inherit: the heavy
libraries the handlers import, and boto3's default session with the service models and
endpoint rules of the services the functions call already parsed (about 0.1 s of CPU a
container, otherwise), all of it frozen out of the garbage collector's reach. The warm-up
clients get fixed fake credentials, the region and a loopback endpoint, and make no call: no
credentials, region or endpoint are resolved here, so each container takes those from its
own environment. What the session does read early (the profile's name and the shared config
file) is the command's own, which every container's environment starts from.
"""

import gc

import aws_lambda_powertools.logging
import aws_lambda_powertools.metrics
import aws_lambda_powertools.utilities.batch
import aws_lambda_powertools.utilities.parameters
import boto3
import feedparser
import psycopg2.extras
import requests
import yaml

from newsdesk_local.infrastructure import REGION

SERVICES = ("sqs", "dynamodb", "s3", "secretsmanager")

boto3.setup_default_session()
for _service in SERVICES:
    boto3.client(
        _service,  # type: ignore[call-overload]
        region_name=REGION,
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="preload",
        aws_secret_access_key="preload",  # noqa: S106  (a stand-in; nothing is sent)
    )

# What is here now is kept by every container: out of the collector's sight, a collection
# does not touch (and so copy) the pages it lives on.
gc.freeze()

__all__ = ["aws_lambda_powertools", "feedparser", "psycopg2", "requests", "yaml"]
