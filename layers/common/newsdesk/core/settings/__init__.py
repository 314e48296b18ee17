"""One typed settings object, read from the environment once at the edge.

Every variable is declared once, as a row of its stage's table (``storage``, ``collect``,
``extract``, ``cluster``, ``local``: a settings dataclass each, one field a row, made by
``table.setting``), with its kind, default, bounds, one line of doc and the functions that read
it; ``Settings`` is those tables in one and ``from_env`` reads each row as it says. The
policies take their values (and their defaults) from here, the template's environment blocks,
``infra/env.example.json`` and docs/configuring.md are checked against it (the last is
generated: ``make docs``).

A new setting is a field in its stage's table; the function that reads it gets it in the
template (or ``in_template=False``), and ``make docs`` writes it into docs/configuring.md.

Library code below the handlers and the CLI takes plain values from this object and never reads
``os.environ`` itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from newsdesk.core.errors import SettingsError
from newsdesk.core.settings.cluster import CLUSTER_METHODS, METHOD_THRESHOLDS, ClusterSettings
from newsdesk.core.settings.collect import (
    DEFAULT_PHOTO_TITLE_PATTERNS,
    RETIRED,
    CollectSettings,
)
from newsdesk.core.settings.contact import (
    CONTACT_PATTERN,
    EMAIL_PATTERN,
    LOCAL_CONTACT,
    MAX_CONTACT_LENGTH,
    MAX_USER_AGENT_LENGTH,
    PRODUCT,
    URL_PATTERN,
    WHAT_IT_DOES,
    contact_problem,
    is_email,
    user_agent_for,
    user_agent_problem,
)
from newsdesk.core.settings.extract import ExtractSettings
from newsdesk.core.settings.local import DEFAULT_TIMEZONE, LocalSettings
from newsdesk.core.settings.others import AWS_ENDPOINT_URL, AWS_SAM_LOCAL, OTHERS
from newsdesk.core.settings.storage import StorageSettings
from newsdesk.core.settings.table import Variable, rows, zone

__all__ = [
    "CLUSTER_METHODS",
    "CONTACT_PATTERN",
    "DEFAULT_PHOTO_TITLE_PATTERNS",
    "DEFAULT_TIMEZONE",
    "EMAIL_PATTERN",
    "LOCAL_CONTACT",
    "MAX_CONTACT_LENGTH",
    "MAX_USER_AGENT_LENGTH",
    "METHOD_THRESHOLDS",
    "PRODUCT",
    "RETIRED",
    "TABLES",
    "URL_PATTERN",
    "WHAT_IT_DOES",
    "ClusterSettings",
    "CollectSettings",
    "ExtractSettings",
    "LocalSettings",
    "Settings",
    "StorageSettings",
    "Variable",
    "contact_problem",
    "is_email",
    "user_agent_for",
    "user_agent_problem",
    "variables",
]

# The tables by stage, in the order the docs list them.
TABLES: dict[str, type] = {
    "storage": StorageSettings,
    "collect": CollectSettings,
    "extract": ExtractSettings,
    "cluster": ClusterSettings,
    "local": LocalSettings,
}


# The stages' tables in one; a base's fields come after those of the bases it lists after it
# (dataclasses collect them along the reversed MRO), so they are listed last to first.
@dataclass(frozen=True)
class Settings(LocalSettings, ClusterSettings, ExtractSettings, CollectSettings, StorageSettings):
    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Every row of the tables read from ``environ`` (``os.environ`` when None)."""
        env = os.environ if environ is None else environ
        # Under `sam local invoke` (which sets AWS_SAM_LOCAL) the template's empty
        # AWS_ENDPOINT_URL would send every call to real AWS with the developer's credentials.
        if AWS_SAM_LOCAL.read(env) and AWS_ENDPOINT_URL.read(env) is None:
            raise SettingsError(
                "AWS_ENDPOINT_URL is not set under sam local: pass --env-vars env.json "
                "(`newsdesk stack` writes one), or every AWS call would go to AWS"
            )
        for name, instead in RETIRED.items():
            if env.get(name, "").strip():
                raise SettingsError(f"{name} is no longer read: {instead}")
        return cls(**{v.attribute: v.read(env) for v in rows(cls) if v.attribute})

    @property
    def user_agent(self) -> str:
        """The User-Agent of every request but those of a feed with its own (sources.yaml's
        ``user_agent``): newsdesk, OPERATOR_CONTACT, what it does."""
        return user_agent_for(self.operator_contact or LOCAL_CONTACT)

    @property
    def from_address(self) -> str | None:
        """The ``From`` header of every request (RFC 9110 10.1.2: a robot SHOULD send one):
        OPERATOR_CONTACT when it is an e-mail address."""
        contact = self.operator_contact
        return contact if contact is not None and is_email(contact) else None

    def require_operator_contact(self) -> str:
        """OPERATOR_CONTACT, which a function that fetches cannot start without."""
        if self.operator_contact is None:
            raise SettingsError(
                "OPERATOR_CONTACT is not set: every request names whom a webmaster can ask "
                "(a URL or an e-mail address; the template's OperatorContact parameter)"
            )
        return self.operator_contact

    @property
    def zone(self) -> ZoneInfo:
        """NEWSDESK_TIMEZONE's zone (checked by ``from_env`` when it is set)."""
        return zone(self.timezone, "NEWSDESK_TIMEZONE")

    @property
    def extraction_queue(self) -> str | None:
        """Where new articles are queued for extraction: ARTICLE_QUEUE_URL, unless extraction
        is off (EXTRACT_ENABLED=false) or there is no queue."""
        return self.article_queue_url if self.extract_enabled else None

    def require_queue_url(self) -> str:
        if not self.outlet_queue_url:
            raise SettingsError("OUTLET_QUEUE_URL is not set")
        return self.outlet_queue_url


def variables() -> dict[str, tuple[Variable, ...]]:
    """Every variable, by table (``others``: those read by boto3, Powertools and SAM CLI)."""
    return {**{name: rows(table) for name, table in TABLES.items()}, "others": OTHERS}
