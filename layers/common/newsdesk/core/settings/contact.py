"""Who is asking (RFC 9110 10.1.5: a product token, then a comment): newsdesk, whom a webmaster
who finds it in their logs can ask (OPERATOR_CONTACT: "+URL" as crawlers write it, or an e-mail
address), and what it does with what it fetches. Not the library's "python-requests", a
substring web firewalls commonly block."""

from __future__ import annotations

import re

from newsdesk import __version__

# the product name robots.txt groups are matched against (RFC 9309 2.2.1)
PRODUCT = "newsdesk"
WHAT_IT_DOES = "collects news feeds and the article pages they link to"
# The local commands' OPERATOR_CONTACT when none is given: a run on a laptop, which names no
# operator (the template's OperatorContact pattern refuses it, so no deploy sends it).
LOCAL_CONTACT = "local"
MAX_CONTACT_LENGTH = 200
# A contact: an http(s) URL or an e-mail address, printable ASCII with no space and, as it goes
# into the User-Agent's comment, no parenthesis or backslash. The template's OperatorContact
# has this very AllowedPattern (a test holds them equal; Java's regular expressions and
# Python's read it alike).
_DOMAIN = r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
URL_PATTERN = rf"https?://{_DOMAIN}(?::[0-9]+)?(?:[/?#][!-'*-\[\]-~]*)?"
EMAIL_PATTERN = rf"[A-Za-z0-9.!#$%&'*+/=?^_`{{|}}~-]+@{_DOMAIN}"
CONTACT_PATTERN = f"^(?:{URL_PATTERN}|{EMAIL_PATTERN})$"
MAX_USER_AGENT_LENGTH = 512


def is_email(contact: str) -> bool:
    return re.fullmatch(EMAIL_PATTERN, contact) is not None


def user_agent_for(contact: str) -> str:
    """``newsdesk/0.1.0 (+https://ops.example/newsdesk; collects news feeds and …)``, the
    contact an e-mail address as it is, LOCAL_CONTACT as a local run."""
    if contact == LOCAL_CONTACT:
        who = "local run, no operator contact"
    else:
        who = contact if is_email(contact) else f"+{contact}"
    return f"{PRODUCT}/{__version__} ({who}; {WHAT_IT_DOES})"


def contact_problem(value: str) -> str | None:
    """What makes ``value`` no contact, or None: an http(s) URL or an e-mail address (or
    LOCAL_CONTACT), printable ASCII without spaces, at most MAX_CONTACT_LENGTH characters."""
    if len(value) > MAX_CONTACT_LENGTH:
        return f"longer than {MAX_CONTACT_LENGTH} characters ({len(value)})"
    if value == LOCAL_CONTACT or re.fullmatch(CONTACT_PATTERN, value):
        return None
    return (
        f"not a URL or an e-mail address: {value!r} (whom a webmaster can ask about "
        "newsdesk's requests: https://… or name@example.org)"
    )


def user_agent_problem(value: str) -> str | None:
    """What makes ``value`` unfit for a User-Agent header, or None: it must be one line of
    printable ASCII (HTTP header values are bytes; requests refuses a newline), not empty,
    at most MAX_USER_AGENT_LENGTH characters."""
    if not value.strip():
        return "empty"
    if len(value) > MAX_USER_AGENT_LENGTH:
        return f"longer than {MAX_USER_AGENT_LENGTH} characters ({len(value)})"
    bad = next((c for c in value if not " " <= c <= "~"), None)
    if bad is not None:
        return f"not one line of printable ASCII (contains {bad!r})"
    return None
