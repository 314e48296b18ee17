"""The exceptions newsdesk raises.

NewsdeskError
├── ConfigError            bad configuration: fix the file or variable, then run again
│   ├── SettingsError      an environment variable (named in the message)
│   └── SourcesError       sources.yaml (file, entry number and field in the message)
├── FeedError              one feed failed: recorded and counted, never fails an SQS record
│   ├── FetchError         the HTTP side
│   │   ├── FetchTimeoutError      the whole download took longer than FETCH_TIMEOUT_SECONDS
│   │   ├── BlockedAddressError    the feed resolves to a private, loopback or metadata address
│   │   ├── ResponseTooLargeError  the body is over FETCH_MAX_BYTES
│   │   └── HTTPStatusError        an answer other than 2xx
│   ├── FeedParseError     the bytes are not a feed
│   └── FeedReadError      reading the feed failed unexpectedly (a bug or a poison entry)
├── InfrastructureError    our own backing services failed: the SQS record fails and is retried
│   ├── StoreError         PostgreSQL
│   │   └── StoreDataError PostgreSQL refused the data itself (a limit, a value it cannot
│   │                      hold): the same statement fails every time, so it is the item's
│   │                      outcome (refused, unstorable), never a retry
│   ├── StateError         DynamoDB
│   ├── RawStoreError      S3 (the raw layer)
│   ├── FanOutError        SQS refused messages even after retries
│   └── QueueError         the article queue refused a send (the outbox keeps the rows)
└── MessageError           an SQS message body that is not an outlet (or article) message (goes
                           to the DLQ)
    └── MessageRefusedError    a message of a version the contract does not name, or dated
                               ahead of the clock: refused, counted and deleted, never retried
"""

from __future__ import annotations

from newsdesk.core.times import delta_seconds


class NewsdeskError(Exception):
    """Base of every error newsdesk raises on purpose."""


class ConfigError(NewsdeskError):
    """Configuration that cannot be used."""


class SettingsError(ConfigError):
    """An environment variable is missing or malformed."""


class SourcesError(ConfigError):
    """sources.yaml is malformed; the message names the file, entry and field."""


class FeedError(NewsdeskError):
    """One feed could not be collected. The message is short and in words (what a terminal
    line, the report and the feed's state record carry); ``detail`` is the whole story for the
    log (the exception chain), and ``kind`` names what happened, finer than ``reason`` (a
    connection failure's ``dns``, ``refused``, ``reset``, ``tls`` …). ``reason`` is a short
    machine-readable tag. A fetch's ``steps`` are what it did, each with the seconds of its
    deadline left when it began (``("resolve news.example", 9.998)``, ``("connect …", …)``)."""

    reason = "error"

    def __init__(
        self,
        message: str,
        *,
        kind: str = "",
        detail: str = "",
        steps: tuple[tuple[str, float], ...] = (),
    ) -> None:
        super().__init__(message)
        self.kind = kind or self.reason
        self.detail = detail
        self.steps = steps


class FetchError(FeedError):
    reason = "fetch"


class FetchTimeoutError(FetchError):
    reason = "timeout"


class BlockedAddressError(FetchError):
    reason = "blocked_address"


class ResponseTooLargeError(FetchError):
    reason = "too_large"


class HTTPStatusError(FetchError):
    reason = "http_status"

    def __init__(self, status: int, url: str, retry_after: str = "") -> None:
        retry = retry_after.strip()
        seconds = delta_seconds(retry)
        if seconds is not None:
            retry = f" (retry after {seconds} s)"
        elif retry and len(retry) <= 40 and retry.isprintable():  # an HTTP date, as sent
            retry = f" (retry after {retry})"
        else:
            retry = ""
        super().__init__(f"HTTP {status}{retry}")
        self.status = status
        self.url = url
        self.retry_after = retry_after  # the raw Retry-After header, if any


class FeedParseError(FeedError):
    reason = "not_a_feed"


class FeedReadError(FeedError):
    """Something raised that no one expected while fetching, decoding or parsing one feed:
    that feed's failure (its traceback logged), never the outlet's."""

    reason = "parse_error"


class InfrastructureError(NewsdeskError):
    """A backing service failed; the unit of work must be retried."""


class StoreError(InfrastructureError):
    pass


class StoreDataError(StoreError):
    """PostgreSQL refused what it was given (an index row over its limit, a value out of
    range): deterministic, so the item is refused with this reason, not retried."""


class StateError(InfrastructureError):
    pass


class RawStoreError(InfrastructureError):
    pass


class FanOutError(InfrastructureError):
    pass


class QueueError(InfrastructureError):
    """SQS refused the article queue's messages; the outbox rows stay unsent."""


class MessageError(NewsdeskError):
    pass


class MessageRefusedError(MessageError):
    """A message read but refused (issue 39): its version is not one the contract names, or
    its time is ahead of the clock. Never processed, and not a failed record either (SQS
    would deliver it again, to be refused again): the handler counts and logs it with
    ``reason`` (a word) and ``fields`` (what the log line adds)."""

    def __init__(self, message: str, reason: str, **fields: object) -> None:
        super().__init__(message)
        self.reason = reason
        self.fields = fields


class DossierStoreError(InfrastructureError):
    """The dossier bucket did not take (or give) a dossier: its event waits for the next run."""


class EventBusError(InfrastructureError):
    """The event bus failed a publishing call; ``published`` has each event the calls before
    it published (None) or had refused (the error)."""

    published: dict[str, str | None]

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.published = {}
