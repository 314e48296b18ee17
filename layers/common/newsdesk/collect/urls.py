"""Canonical article URLs: the key de-duplication uses.

Two links are the same article when they differ only in what does not name a resource: the
scheme (http and https, each on its default port), the case of the scheme and host, an IDNA
host spelled in Unicode (IDNA 2008: faß.de is not fass.de), an IPv6 address's spelling
(``[2001:db8:0:0::1]`` is ``[2001:db8::1]``), a port that is its scheme's default (80 for http,
443 for https), a fragment, a trailing slash, tracking parameters, the order of the remaining
query parameters, how percent-encoding is spelled, and an outlet's mobile host where
host_aliases lists it (m.yna.co.kr is www.yna.co.kr). Everything else — another port
(``https://h:80/`` is not ``https://h/``; on a port other than its default a scheme keeps its
name, ``http://h:443/`` is not ``https://h/``), the path's case, any other query parameter
(article ids live there: ``?idxno=``, ``?aid=&oid=``), a byte that is not UTF-8 (an EUC-KR
``?sec=%B0%E6%C1%A6``) — keeps them apart. Any string gives a key without raising, and a key is
its own key: an ``https://`` URL, or an ``http://`` one with its port.

Issue 23 changed the ports and IPv6 addresses (before, any default port was dropped whatever
the scheme and every key said https; IPv6 addresses kept their spelling); migration
0010_canonical_ports_ipv6 re-keyed the articles stored before, 0012_page_keys_event_refusals the
pages' copy keys.
"""

from __future__ import annotations

import functools
import ipaddress
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
    path = _path(parts.path)
    query = _query(parts.query)
    if port is None or port == DEFAULT_PORTS[scheme]:
        # http and https on their default ports name the same article: the key says https.
        return urlunsplit(("https", host, path, query, ""))
    # Another port is another server, which speaks the scheme's protocol there.
    return urlunsplit((scheme, f"{host}:{port}", path, query, ""))


@functools.lru_cache(maxsize=1024)
def _host(hostname: str) -> str:
    """``hostname`` (lower case, from urlsplit) as IDNA 2008 with UTS 46 mapping spells it: ß
    stays ß (IDNA 2003 made faß.de fass.de, another domain). A host IDNA 2008 refuses (an
    underscore, an emoji, an empty label) keeps its spelling, its non-ASCII characters escaped,
    so that the key is ASCII. Cached: a run meets a few hosts many times."""
    if ":" in hostname:  # an IPv6 address, which urlsplit gives without its brackets
        return f"[{_ipv6(hostname)}]"
    host = hostname.translate(_FULL_STOPS).rstrip(".")  # a trailing 。 is a trailing dot
    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except UnicodeError:  # idna.IDNAError is one
        # lower() again: urlsplit lower-cased the escapes, _requote writes them in capitals
        return _requote(host, safe=_HOST_SAFE).lower()


def _ipv6(hostname: str) -> str:
    """An IPv6 address as RFC 5952 (section 4) writes it: lower-case hexadecimal without leading
    zeros, the longest run of two or more zero groups (the first of equal ones) as "::". Written
    from the address's 128 bits, not by ipaddress's str, which Python 3.13 changed for IPv4-mapped
    addresses: a key must not depend on the interpreter. A zone (``%25eth0``) is kept as it is;
    what is no address keeps its spelling."""
    address, percent, zone = hostname.partition("%")
    try:
        value = int(ipaddress.IPv6Address(address))
    except ValueError:
        return hostname
    groups = [(value >> shift) & 0xFFFF for shift in range(112, -16, -16)]
    start, length = _longest_zero_run(groups)
    written = [f"{group:x}" for group in groups]
    if length >= 2:
        head, tail = ":".join(written[:start]), ":".join(written[start + length :])
        return f"{head}::{tail}{percent}{zone}"
    return ":".join(written) + percent + zone


def _longest_zero_run(groups: list[int]) -> tuple[int, int]:
    best_start, best_length, start = 0, 0, None
    for index, group in enumerate([*groups, 1]):  # the sentinel ends a final run
        if group == 0 and start is None:
            start = index
        elif group != 0 and start is not None:
            if index - start > best_length:
                best_start, best_length = start, index - start
            start = None
    return best_start, best_length


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
