"""``newsdesk.urls``, as docs/architecture.md names it: canonical article URLs
(``newsdesk.collect.urls``)."""

from newsdesk.collect.urls import TRACKING_PARAMETERS, canonical_url, is_tracking

__all__ = ["TRACKING_PARAMETERS", "canonical_url", "is_tracking"]
