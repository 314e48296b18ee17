"""Variables newsdesk declares but does not keep in ``Settings``: read by boto3, Powertools
and SAM CLI. ``Settings.from_env`` reads two of them, to refuse what would call real AWS from
``sam local``."""

from __future__ import annotations

from newsdesk.core.settings.table import FLAG, FUNCTIONS, TEXT, Variable

AWS_ENDPOINT_URL = Variable(
    "AWS_ENDPOINT_URL",
    "an AWS emulator for every client (boto3 reads it); the template declares it empty for "
    "every function so that `sam local invoke --env-vars` can set it; under `sam local "
    "invoke` it must be set",
    FUNCTIONS,
    TEXT,
    shown="unset: AWS itself",
)
AWS_SAM_LOCAL = Variable(
    "AWS_SAM_LOCAL",
    "set by `sam local invoke`: `AWS_ENDPOINT_URL` must then be set too",
    kind=FLAG,
    default=False,
    shown="set by SAM CLI",
)
POWERTOOLS_SERVICE_NAME = Variable(
    "POWERTOOLS_SERVICE_NAME",
    "the service of every log line and metric (Powertools)",
    FUNCTIONS,
    TEXT,
    shown="`newsdesk` (the template's; the local runtime's too)",
)
POWERTOOLS_METRICS_NAMESPACE = Variable(
    "POWERTOOLS_METRICS_NAMESPACE",
    "the metrics' namespace (Powertools)",
    FUNCTIONS,
    TEXT,
    shown="`newsdesk-STAGE` (the template's; locally its default stage's, `newsdesk-dev`)",
)
OTHERS = (AWS_ENDPOINT_URL, AWS_SAM_LOCAL, POWERTOOLS_SERVICE_NAME, POWERTOOLS_METRICS_NAMESPACE)
