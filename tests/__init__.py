"""The tests run as a Lambda container would: Powertools' service and metric namespace are in
the environment before any newsdesk module is imported, since child loggers take the service
name at import."""

import os

os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "newsdesk-test")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "newsdesk-test")
