"""Canonical article URLs: the key de-duplication uses.

Two links are the same article when they differ only in what does not name a resource: the
scheme (http and https), the case of the scheme and host, an IDNA host spelled in Unicode,
default ports, a fragment, a trailing slash, tracking parameters, the order of the remaining
query parameters, and how percent-encoding is spelled. Everything else — the path's case, any
other query parameter (article ids live there: ``?idxno=``, ``?aid=&oid=``) — keeps them apart.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

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

_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


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
    netloc = host if port in (None, *DEFAULT_PORTS.values()) else f"{host}:{port}"
    path = _path(parts.path)
    query = "&".join(
        f"{quote(name, safe='-._~')}={quote(value, safe='-._~')}"
        for name, value in sorted(parse_qsl(parts.query, keep_blank_values=True))
        if not is_tracking(name)
    )
    # http and https name the same article: the canonical form says https.
    return urlunsplit(("https", netloc, path, query, ""))


def _host(hostname: str) -> str:
    host = hostname.lower().rstrip(".")
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def _path(path: str) -> str:
    normalised = quote(_decode_unreserved(_remove_dot_segments(path)), safe=_PATH_SAFE + "%")
    normalised = _ESCAPE.sub(lambda m: "%" + m.group(1).upper(), normalised)
    return normalised.rstrip("/") or "/"


def _decode_unreserved(text: str) -> str:
    """%41 → A, and so on for unreserved characters only: %2F stays an escaped slash."""

    def decode(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    return _ESCAPE.sub(decode, text)


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
