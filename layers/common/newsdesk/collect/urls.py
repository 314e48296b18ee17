"""Canonical article URLs: the key de-duplication uses.

Two links are the same article when they differ only in what does not name a resource: the
scheme (http and https), the case of the scheme and host, an IDNA host spelled in Unicode
(IDNA 2008: faß.de is not fass.de), default ports, a fragment, a trailing slash, tracking
parameters, the order of the remaining query parameters, how percent-encoding is spelled, and
an outlet's mobile host where host_aliases lists it (m.yna.co.kr is www.yna.co.kr). Everything
else — the path's case, any other query parameter (article ids live there: ``?idxno=``,
``?aid=&oid=``), a byte that is not UTF-8 (an EUC-KR ``?sec=%B0%E6%C1%A6``) — keeps them apart.
Any string gives a key without raising, and a key is its own key.
"""

from __future__ import annotations

import functools
import re
from urllib.parse import quote, quote_from_bytes, unquote_to_bytes, urlsplit, urlunsplit

import idna

from newsdesk.collect.host_aliases import HOST_ALIASES

# Tracking parameters (miniflux's list and its sources), compared in lower case.
TRACKING_PARAMETERS = frozenset(
    {
        "fbclid",
        "_openstat",
        "fb_action_ids",
        "fb_action_types",
        "fb_ref",
        "fb_source",
        "fb_comment_id",
        "hmb_campaign",
        "hmb_medium",
        "hmb_source",
        "itm_campaign",
        "itm_medium",
        "itm_source",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "gclsrc",
        "campaign_id",
        "campaign_medium",
        "campaign_name",
        "campaign_source",
        "campaign_term",
        "campaign_content",
        "srsltid",
        "yclid",
        "ysclid",
        "twclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "mc_tc",
        "wickedid",
        "hsa_cam",
        "_hsenc",
        "__hssc",
        "__hstc",
        "__hsfp",
        "_hsmi",
        "hsctatracking",
        "rb_clickid",
        "oly_anon_id",
        "oly_enc_id",
        "vero_id",
        "vero_conv",
        "mkt_tok",
        "sc_cid",
        "_bhlid",
        "_branch_match_id",
        "_branch_referrer",
        "__readwiselocation",
        "igshid",
        "igsh",
        "si",
        "spm",
        "_ga",
        "_gl",
    }
)
TRACKING_PREFIXES = ("utm_", "mtm_", "pk_")
DEFAULT_PORTS = {"http": 80, "https": 443}

# An escape, captured, so that re.split gives text and escapes in turn.
_ESCAPE = re.compile(r"(%[0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_SAFE = "/:@!$&'()*+,;=-._~"
_HOST_SAFE = "!$&'()*+,;=-._~"
# The full stops UTS 46 reads as ".": ideographic, full-width and half-width ideographic.
_FULL_STOPS = str.maketrans(dict.fromkeys("\u3002\uff0e\uff61", "."))


def is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered in TRACKING_PARAMETERS or lowered.startswith(TRACKING_PREFIXES)


def canonical_url(url: str) -> str:
    """The canonical form of ``url``; a string that is not an absolute http(s) URL comes back
    stripped but otherwise as it was."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return text
    host = _host(parts.hostname)
    if not host:  # "http://./": dots only
        return text
    host = HOST_ALIASES.get(host, host)  # an outlet's mobile host, where it is listed
    netloc = host if port in (None, *DEFAULT_PORTS.values()) else f"{host}:{port}"
    path = _path(parts.path)
    query = _query(parts.query)
    # http and https name the same article: the canonical form says https.
    return urlunsplit(("https", netloc, path, query, ""))


@functools.lru_cache(maxsize=1024)
def _host(hostname: str) -> str:
    """``hostname`` (lower case, from urlsplit) as IDNA 2008 with UTS 46 mapping spells it: ß
    stays ß (IDNA 2003 made faß.de fass.de, another domain). A host IDNA 2008 refuses (an
    underscore, an emoji, an empty label) keeps its spelling, its non-ASCII characters escaped,
    so that the key is ASCII. Cached: a run meets a few hosts many times."""
    if ":" in hostname:  # an IPv6 address, which urlsplit gives without its brackets
        return f"[{hostname}]"
    host = hostname.translate(_FULL_STOPS).rstrip(".")  # a trailing 。 is a trailing dot
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except UnicodeError:  # idna.IDNAError is one
        # lower() again: urlsplit lower-cased the escapes, _requote writes them in capitals
        return _requote(host, safe=_HOST_SAFE).lower()


def _path(path: str) -> str:
    # Escapes first: %2E%2E is a ".." segment (RFC 3986, section 6.2.2.3), and removing it
    # before it is decoded would leave a ".." for the next pass to remove.
    normalised = _remove_dot_segments(_requote(path, safe=_PATH_SAFE))
    return normalised.rstrip("/") or "/"


def _requote(text: str, safe: str) -> str:
    """Percent-encoding spelled one way: an escape of an unreserved character decoded (%41 → A),
    any other escape kept, in capitals (%2f → %2F: an escaped slash is not a slash, and %b0 stays
    the byte it is, UTF-8 or not), and what should have been escaped — a space, a non-ASCII
    character, a % that starts no escape — escaped as its UTF-8 bytes."""
    pieces = _ESCAPE.split(text)  # text, escape, text, … : the escapes at the odd places
    return "".join(
        _unreserved(piece) if index % 2 else quote(piece, safe=safe, errors="surrogatepass")
        for index, piece in enumerate(pieces)
    )


def _unreserved(escape: str) -> str:
    char = chr(int(escape[1:], 16))
    return char if char in _UNRESERVED else escape.upper()


def _query(query: str) -> str:
    """The parameters, tracking ones dropped, in order, each name and value read as the bytes an
    application reads (``+`` a space, every escape decoded) and escaped again one way. Bytes, not
    text: an EUC-KR value such as ``%B0%E6%C1%A6`` is not UTF-8 and must not be replaced by
    U+FFFD, or every such value would be one key."""
    fields = []
    for field in query.split("&"):
        if field:
            name, _, value = field.partition("=")
            fields.append((_form_bytes(name), _form_bytes(value)))
    return "&".join(
        f"{quote_from_bytes(name, safe='')}={quote_from_bytes(value, safe='')}"
        for name, value in sorted(fields)  # byte order: code point order for UTF-8
        if not is_tracking(name.decode("utf-8", "replace"))
    )


def _form_bytes(text: str) -> bytes:
    return unquote_to_bytes(text.replace("+", " ").encode("utf-8", "surrogatepass"))


def _remove_dot_segments(path: str) -> str:
    """RFC 3986, section 5.2.4, on whole segments."""
    output: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if len(output) > 1:
                output.pop()
        elif segment != ".":
            output.append(segment)
    result = "/".join(output)
    if path.endswith(("/.", "/..")):
        result += "/"
    return result if result.startswith("/") or not path.startswith("/") else "/" + result
