"""Feed bytes to what a parser can trust: the encoding the evidence supports, not the one a
header or an XML declaration claims.

The order (issue 12): a byte order mark; then a body that is valid UTF-8 is UTF-8 whatever its
label says (a UTF-8 feed labelled EUC-KR is common, and legacy Korean text is almost never
valid UTF-8); then a declared encoding of the EUC-KR family, read as CP949, its superset (the
8,822 syllables EUC-KR lacks); then, for a body labelled UTF-8 (or not labelled, which means
UTF-8) that is not valid UTF-8, CP949 when it is wholly valid CP949 (a mislabelled Korean feed),
else UTF-8 with the bad bytes replaced. Everything else — other declared encodings, bodies whose
first bytes say UTF-16, UTF-32 or EBCDIC — is left to feedparser, which reads those right.
"""

from __future__ import annotations

import codecs
import functools
import re
from dataclasses import dataclass

_XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*?encoding=[\"']([A-Za-z0-9._-]+)[\"'][^>]*\?>")
_DECLARED = re.compile(rb"^(\s*<\?xml[^>]*?encoding=[\"'])[A-Za-z0-9._-]+")
_CHARSET = re.compile(r"charset=[\"']?([A-Za-z0-9._-]+)", re.IGNORECASE)
_BOMS = (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)
# XML 1.0, appendix F: how "<?xml" begins in encodings that are not ASCII-compatible.
_WIDE_STARTS = (
    b"\x00\x00\x00\x3c",  # UTF-32 BE
    b"\x3c\x00\x00\x00",  # UTF-32 LE
    b"\x00\x3c\x00\x3f",  # UTF-16 BE
    b"\x3c\x00\x3f\x00",  # UTF-16 LE
    b"\x4c\x6f\xa7\x94",  # EBCDIC
)
_KOREAN_LEGACY = {"euc_kr", "cp949"}  # Python's names for ks_c_5601-1987, korean, uhc, …
_ASCII = bytes(range(128))
UTF8_REPLACED = "utf-8 (invalid bytes replaced)"


@dataclass(frozen=True)
class Decoded:
    content: bytes
    headers: dict[str, str]  # the response headers to give feedparser
    encoding: str | None  # what was decided here; None: what the document says
    utf8: bool  # content is UTF-8 and labelled so (what the fast parser reads)


def declared_encoding(content: bytes, content_type: str | None) -> str | None:
    """The charset the HTTP header names, else the XML declaration's (RFC 7303 order)."""
    header = _CHARSET.search(content_type) if content_type else None
    if header:
        return header.group(1)
    declaration = _XML_DECLARATION.match(content[:200])
    return declaration.group(1).decode("ascii") if declaration else None


def decode_feed(content: bytes, content_type: str | None) -> Decoded:
    as_is = {"content-type": content_type} if content_type else {}
    if content.startswith(_BOMS):
        return Decoded(content, as_is, None, utf8=False)
    if content.startswith(codecs.BOM_UTF8):
        body = content[len(codecs.BOM_UTF8) :]
        if _is_utf8(body):
            return _relabelled(body, content_type, "utf-8")
        return Decoded(content, as_is, None, utf8=False)  # feedparser's own BOM handling
    if content.startswith(_WIDE_STARTS):
        return Decoded(content, as_is, None, utf8=False)
    label = declared_encoding(content, content_type)
    codec = _codec(label) if label else "utf-8"
    if content.isascii():  # every label but a wide one reads it alike: feedparser reads it
        return Decoded(content, as_is, None, utf8=_ascii_compatible(codec))
    if _is_utf8(content):
        return _relabelled(content, content_type, "utf-8", already=codec == "utf-8")
    if codec in _KOREAN_LEGACY:
        text = content.decode("cp949", errors="replace")
        return _relabelled(text.encode("utf-8"), content_type, "cp949")
    if codec != "utf-8":
        return Decoded(content, as_is, None, utf8=False)  # a declared encoding feedparser reads
    try:
        text, encoding = content.decode("cp949"), "cp949"
    except UnicodeDecodeError:
        text, encoding = content.decode("utf-8", errors="replace"), UTF8_REPLACED
    return _relabelled(text.encode("utf-8"), content_type, encoding)


def _is_utf8(content: bytes) -> bool:
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _relabelled(
    utf8: bytes, content_type: str | None, encoding: str, already: bool = False
) -> Decoded:
    """UTF-8 bytes with a header and an XML declaration that say so."""
    if already:
        headers = {"content-type": content_type} if content_type else {}
        return Decoded(utf8, headers, encoding, utf8=True)
    media_type = (content_type or "").partition(";")[0].strip() or "application/xml"
    utf8 = _DECLARED.sub(rb"\g<1>utf-8", utf8[:200], count=1) + utf8[200:]
    return Decoded(utf8, {"content-type": f"{media_type}; charset=utf-8"}, encoding, utf8=True)


@functools.cache
def _ascii_compatible(codec: str | None) -> bool:
    try:
        return codec is not None and _ASCII.decode(codec) == _ASCII.decode("ascii")
    except (UnicodeDecodeError, LookupError):
        return False


def _codec(label: str) -> str | None:
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None
