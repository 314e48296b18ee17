"""Feed bytes to what a parser can trust: the encoding the evidence supports, not the one a
header or an XML declaration claims.

The order (issue 12; issue 23 changed the last step, a contract change): a byte order mark;
then a body that is valid UTF-8 is UTF-8 whatever its label says (a UTF-8 feed labelled EUC-KR
is common, and legacy Korean text is almost never valid UTF-8). A declared encoding other than
UTF-8 and the EUC-KR family is left to feedparser. Bodies whose first bytes say UTF-16, UTF-32 or
EBCDIC (a byte order mark, or "<?xml" as XML 1.0's appendix F spells it in them) are read here
into UTF-8 as those bytes say (EBCDIC in the code page its declaration names), so that what
reads bytes next (the references XML refuses, the entity declarations, the fast reader) reads
them as it reads any other feed. The EUC-KR family is every label WHATWG's Encoding
Standard gives it (``windows-949``, ``cseuckr``, ``ks_c_5601-1989``, … and Java's
``x-windows-949``; Python knows only some of them), read as CP949, its superset (the 8,822
syllables EUC-KR lacks): a body of the family that is wholly valid CP949 is CP949.

What is left, a body labelled UTF-8 (or not labelled, which means UTF-8) or of the EUC-KR family
that neither codec decodes cleanly, is read by evidence: UTF-8 and CP949 are each scored by
their errors (the bytes they cannot decode) and by what they do decode (characters beyond ASCII
for UTF-8, Hangul for CP949). A reading counts only when it decodes more than it breaks, and,
under a label of the EUC-KR family, only when its text has Hangul, the script that label
implies; of those that count the fewest errors wins (the label's codec on a tie), its bad bytes
replaced. When neither counts, the bytes go to feedparser as they are. Its last resort,
windows-1252, is never a candidate here: it decodes nearly any bytes without an error, so an
error count alone would always pick it.

Before issue 23 a label of the family meant CP949 as soon as the body was not valid UTF-8 (a
UTF-8 feed with one bad byte became mojibake in every title), and a UTF-8 label meant UTF-8
with its bad bytes replaced unless the body was wholly valid CP949 (a CP949 feed with one bad
byte lost all its Hangul; a Latin-1 one lost its accents, which feedparser alone reads).
"""

from __future__ import annotations

import codecs
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass

_XML_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*?encoding=[\"']([A-Za-z0-9._-]+)[\"'][^>]*\?>")
_DECLARED = re.compile(rb"^(\s*<\?xml[^>]*?encoding=[\"'])[A-Za-z0-9._-]+")
_CHARSET = re.compile(r"charset=[\"']?([A-Za-z0-9._-]+)", re.IGNORECASE)
# Encodings that are not ASCII-compatible, by how a body in them begins: (the first bytes, the
# bytes of the mark to skip, the codec in feedparser's name for it). A byte order mark (UTF-32's
# first: UTF-16 LE's is the start of UTF-32 LE's), then XML 1.0, appendix F: "<?xml" in them.
_WIDE = (
    (codecs.BOM_UTF32_BE, 4, "utf-32be"),
    (codecs.BOM_UTF32_LE, 4, "utf-32le"),
    (codecs.BOM_UTF16_BE, 2, "utf-16be"),
    (codecs.BOM_UTF16_LE, 2, "utf-16le"),
    (b"\x00\x00\x00\x3c", 0, "utf-32be"),
    (b"\x3c\x00\x00\x00", 0, "utf-32le"),
    (b"\x00\x3c\x00\x3f", 0, "utf-16be"),
    (b"\x3c\x00\x3f\x00", 0, "utf-16le"),
    (b"\x4c\x6f\xa7\x94", 0, "cp037"),  # EBCDIC: its declaration names the code page
)
EBCDIC = "cp037"
# WHATWG Encoding Standard, "EUC-KR" (https://encoding.spec.whatwg.org/#names-and-labels), and
# Java's name for CP949; Python knows some of them (as euc_kr), not windows-949 and five others.
EUC_KR_LABELS = frozenset(
    {
        "cseuckr",
        "csksc56011987",
        "euc-kr",
        "iso-ir-149",
        "korean",
        "ks_c_5601-1987",
        "ks_c_5601-1989",
        "ksc5601",
        "ksc_5601",
        "windows-949",
        "x-windows-949",
    }
)
_HANGUL = re.compile("[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]+")
_ASCII = bytes(range(128))
UTF8_REPLACED = "utf-8 (invalid bytes replaced)"
CP949_REPLACED = "cp949 (invalid bytes replaced)"


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


def decode_feed(
    content: bytes, content_type: str | None, passed: Mapping[str, str] | None = None
) -> Decoded:
    """What feedparser (or the fast reader) should read. ``passed``: the response's headers,
    which reach feedparser as they came (Content-Location, the base of relative URIs, is the
    caller's to give: parse_feed gives the feed's own URL; Content-Language is the text's
    language) but Content-Type, which says what was decided."""
    kept = {
        name.lower(): value
        for name, value in (passed or {}).items()
        if name.lower() != "content-type" and value
    }
    as_is = {"content-type": content_type, **kept} if content_type else kept
    wide = _wide(content)
    if wide is not None:
        return _relabelled(wide.text.encode("utf-8"), content_type, wide.encoding, kept)
    if content.startswith(codecs.BOM_UTF8):
        body = content[len(codecs.BOM_UTF8) :]
        if _is_utf8(body):
            return _relabelled(body, content_type, "utf-8", kept)
        return Decoded(content, as_is, None, utf8=False)  # feedparser's own BOM handling
    label = declared_encoding(content, content_type)
    codec = _codec(label) if label else "utf-8"
    if content.isascii():  # every label but a wide one reads it alike: feedparser reads it
        return Decoded(content, as_is, None, utf8=_ascii_compatible(codec))
    if _is_utf8(content):
        return _relabelled(content, content_type, "utf-8", kept, already=codec == "utf-8")
    korean = codec == "cp949"
    if not korean and codec != "utf-8":
        return Decoded(content, as_is, None, utf8=False)  # a declared encoding feedparser reads
    reading = by_evidence(content, korean)
    if reading is None:
        return Decoded(content, as_is, None, utf8=False)  # no evidence: feedparser's reading
    return _relabelled(reading.text.encode("utf-8"), content_type, reading.encoding, kept)


@dataclass(frozen=True)
class Reading:
    codec: str  # "utf-8" or "cp949"; for a wide body, what its first bytes say
    text: str  # bad bytes replaced by U+FFFD
    errors: int
    evidence: int  # characters beyond ASCII for UTF-8, Hangul for CP949
    hangul: int

    @property
    def counts(self) -> bool:
        return self.evidence > self.errors

    @property
    def encoding(self) -> str:
        return f"{self.codec} (invalid bytes replaced)" if self.errors else self.codec


def by_evidence(content: bytes, korean: bool) -> Reading | None:
    """The reading of a body that is not valid UTF-8 that the evidence supports, or None
    (module docstring); ``korean``: the label is of the EUC-KR family."""
    cp949 = _reading(content, "cp949")
    if korean and not cp949.errors:
        return cp949
    utf8 = _reading(content, "utf-8")
    order = (cp949, utf8) if korean else (utf8, cp949)  # the label's codec first: it wins ties
    counting = [r for r in order if r.counts and (r.hangul or not korean)]
    return min(counting, key=lambda r: r.errors) if counting else None


def _reading(content: bytes, codec: str) -> Reading:
    text = content.decode(codec, errors="replace")
    replaced = text.count("\ufffd")
    if codec == "utf-8":  # a U+FFFD the body spells out is no error
        replaced -= content.count("\ufffd".encode())
    hangul = len(text) - len(_HANGUL.sub("", text))
    beyond_ascii = len(text) - len(text.encode("ascii", errors="ignore")) - replaced
    evidence = hangul if codec == "cp949" else beyond_ascii
    return Reading(codec, text, replaced, evidence, hangul)


def _wide(content: bytes) -> Reading | None:
    """A body in an encoding that is not ASCII-compatible, by its first bytes, as text; None
    for any other. The first bytes decide, whatever a header or the declaration says (feedparser
    reads them alike, but that it lets a header's charset win): bytes that begin "<?xml" in
    UTF-16 BE are no UTF-8. EBCDIC is in the code page the declaration names, read in cp037 as
    feedparser reads it, when Python knows that code page and it reads "<?xml" so too."""
    found = next((wide for wide in _WIDE if content.startswith(wide[0])), None)
    if found is None:
        return None
    _, skip, codec = found
    body = content[skip:]
    if codec == EBCDIC:
        codec = _code_page(body)
    try:
        return Reading(codec, body.decode(codec), 0, 0, 0)
    except UnicodeDecodeError:  # a lone surrogate, a cut last character: that much lost
        text = body.decode(codec, errors="replace")
        return Reading(codec, text, text.count("\ufffd"), 0, 0)


def _code_page(body: bytes) -> str:
    """The EBCDIC code page a body's declaration names, else cp037."""
    head = body[:200].decode(EBCDIC).encode("ascii", errors="replace")
    declaration = _XML_DECLARATION.match(head)
    if declaration is None:
        return EBCDIC
    label = declaration.group(1).decode("ascii").lower()
    try:
        same_start = body[:5].decode(label) == "<?xml"
    except (LookupError, UnicodeDecodeError):
        return EBCDIC
    return label if same_start else EBCDIC


def _is_utf8(content: bytes) -> bool:
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _relabelled(
    utf8: bytes,
    content_type: str | None,
    encoding: str,
    kept: dict[str, str],
    already: bool = False,
) -> Decoded:
    """UTF-8 bytes with a header and an XML declaration that say so."""
    if already:
        headers = {"content-type": content_type, **kept} if content_type else kept
        return Decoded(utf8, headers, encoding, utf8=True)
    media_type = (content_type or "").partition(";")[0].strip() or "application/xml"
    utf8 = _DECLARED.sub(rb"\g<1>utf-8", utf8[:200], count=1) + utf8[200:]
    headers = {"content-type": f"{media_type}; charset=utf-8", **kept}
    return Decoded(utf8, headers, encoding, utf8=True)


@functools.cache
def _ascii_compatible(codec: str | None) -> bool:
    try:
        return codec is not None and _ASCII.decode(codec) == _ASCII.decode("ascii")
    except (UnicodeDecodeError, LookupError):
        return False


def _codec(label: str) -> str | None:
    """Python's name for ``label``; the EUC-KR family, whatever its spelling, is CP949."""
    if label.lower() in EUC_KR_LABELS:
        return "cp949"
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return "cp949" if name == "euc_kr" else name
