"""Other projects' URL-normalisation test cases, as a measurement of ``canonical_url``.

The cases are input/expected pairs read from the test suites of three projects, kept where
their policy and ours agree (the module docstring of ``newsdesk.collect.urls``); the code of
those projects is not used. tests/test_urls.py requires every case to hold.

- w3lib (BSD-3-Clause, (c) w3lib and Scrapy developers): tests/test_url.py at
  scrapy/w3lib@ed01dc04608336967356417f472a691b82bcfbe4
- url-normalize (MIT, (c) 2020 Nikolay Panov): tests/*.py at
  niksite/url-normalize@9a9a3214c2b3bdab09ba7b19c8f9d22aa4cfee31
- courlan (Apache-2.0, (c) Adrien Barbaresi): tests/unit_tests.py at
  adbar/courlan@61452a437f427296e0cef6432b335fa2db553401

Each case is one of:

- ``same``: the project turns ``left`` into ``right``; both must give one key;
- ``apart``: the project keeps something that, decoded or dropped, would name another resource
  (``%2F``, ``%23``, ``%3F``, a non-UTF-8 escape, a non-default port, a kept parameter), or its
  test gives two different results for two inputs; the two keys must differ;
- ``stable``: a robustness case (a malformed host or escape): the key must not raise.

For every URL of every case the key must also be an ASCII ``https://`` URL (or ``http://`` with
a port other than 80: issue 23) with a host that parses back (a port that reads, brackets round
an IPv6 address) and be its own key (idempotence).

Left out, by rule: cases on userinfo (article links carry none), on relative or schemeless
input (the parser resolves links against the feed first), on bytes input or a page encoding
passed as an argument, on leading C0 controls, HTML entities and markup in links (the parser
removes them first), on options we do not have (``keep_fragments``, ``strict``, a per-site
allowlist), and identities that check nothing. Left out because the policies differ: EXCLUDED.

    .venv/bin/python -m tests.url_cases        # counts per project, then each failure
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from newsdesk.urls import canonical_url

Relation = Literal["same", "apart", "stable"]


@dataclass(frozen=True)
class Case:
    project: str
    test: str  # the file and test function it comes from
    left: str
    right: str = ""
    relation: Relation = "same"

    @property
    def urls(self) -> tuple[str, ...]:
        return (self.left,) if self.relation == "stable" else (self.left, self.right)


def _w3lib(test: str, left: str, right: str = "", relation: Relation = "same") -> Case:
    return Case("w3lib", f"tests/test_url.py::{test}", left, right, relation)


def _un(test: str, left: str, right: str = "", relation: Relation = "same") -> Case:
    return Case("url-normalize", test, left, right, relation)


def _courlan(test: str, left: str, right: str = "", relation: Relation = "same") -> Case:
    return Case("courlan", f"tests/unit_tests.py::{test}", left, right, relation)


E = "http://www.example.com"
CANON = "TestCanonicalizeUrl"
SAFE = "TestUrl"

W3LIB = [
    _w3lib(f"{CANON}::test_append_missing_path", E, E + "/"),
    _w3lib(f"{CANON}::test_typical_usage", E + "/do?c=1&b=2&a=3", E + "/do?a=3&b=2&c=1"),
    _w3lib(f"{CANON}::test_typical_usage", E + "/do?&a=1", E + "/do?a=1"),
    _w3lib(f"{CANON}::test_port_number", "http://www.example.com:/do?a=1", E + "/do?a=1"),
    _w3lib(
        f"{CANON}::test_port_number", "http://www.example.com:8888/do?a=1", E + "/do?a=1", "apart"
    ),
    _w3lib(f"{CANON}::test_sorting", E + "/do?c=3&b=5&b=2&a=50", E + "/do?a=50&b=2&b=5&c=3"),
    _w3lib(f"{CANON}::test_keep_blank_values", E + "/do?b=&a=2", E + "/do?a=2&b="),
    _w3lib(f"{CANON}::test_keep_blank_values", E + "/do?b=&c&a=2", E + "/do?a=2&b=&c="),
    _w3lib(f"{CANON}::test_keep_blank_values", E + "/do?1750,4", E + "/do?1750%2C4="),
    _w3lib(f"{CANON}::test_spaces", E + "/do?q=a space&a=1", E + "/do?a=1&q=a+space"),
    _w3lib(f"{CANON}::test_spaces", E + "/do?q=a+space&a=1", E + "/do?a=1&q=a+space"),
    _w3lib(f"{CANON}::test_spaces", E + "/do?q=a%20space&a=1", E + "/do?a=1&q=a+space"),
    _w3lib(f"{CANON}::test_canonicalize_url_unicode_path", E + "/résumé", E + "/r%C3%A9sum%C3%A9"),
    _w3lib(
        f"{CANON}::test_canonicalize_url_unicode_query_string",
        E + "/résumé?q=résumé",
        E + "/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
    ),
    # one test, two encodings, two results: UTF-8 and latin-1, UTF-8 and cp1251
    _w3lib(
        f"{CANON}::test_canonicalize_url_unicode_query_string",
        E + "/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
        E + "/r%C3%A9sum%C3%A9?q=r%E9sum%E9",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_unicode_query_string",
        E + "/r%C3%A9sum%C3%A9?country=%D0%EE%F1%F1%E8%FF",
        E + "/r%C3%A9sum%C3%A9?country=%D0%A0%D0%BE%D1%81%D1%81%D0%B8%D1%8F",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_unicode_query_string_wrong_encoding",
        E + "/résumé?currency=€",
        E + "/r%C3%A9sum%C3%A9?currency=%E2%82%AC",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_unicode_query_string_wrong_encoding",
        E + "/résumé?country=Россия",
        E + "/r%C3%A9sum%C3%A9?country=%D0%A0%D0%BE%D1%81%D1%81%D0%B8%D1%8F",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_remove_ascii_tab_and_newlines",
        "http://exa\tmple.com/a\r\nb?q=a\tb",
        "http://example.com/ab?q=ab",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_paths",
        E + "/r%c3%a9sum%c3%a9",
        E + "/r%C3%A9sum%C3%A9",
    ),
    # "non-UTF8 encoded sequences: they should be kept untouched, only upper-cased"
    _w3lib(f"{CANON}::test_normalize_percent_encoding_in_paths", E + "/a%a3do", E + "/a%A3do"),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_paths",
        E + "/a%a3do",
        E + "/a%EF%BF%BDdo",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_paths",
        E + "/a%a3do?q=r%c3%a9sum%c3%a9",
        E + "/a%A3do?q=r%C3%A9sum%C3%A9",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_paths",
        E + "/a%a3do?q=r%e9sum%e9",
        E + "/a%A3do?q=r%E9sum%E9",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_paths",
        E + "/a%A3do?q=r%E9sum%E9",
        E + "/a%A3do?q=r%EF%BF%BDsum%EF%BF%BD",
        "apart",
    ),
    # "%23 is not accidentally interpreted as a URL fragment separator"
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_paths",
        "https://example.com/a%23b%2cc#bash",
        "https://example.com/a",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_query_arguments",
        E + "/do?k=b%a3",
        E + "/do?k=b%A3",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_query_arguments",
        E + "/do?k=b%A3",
        E + "/do?k=b%EF%BF%BD",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_normalize_percent_encoding_in_query_arguments",
        E + "/do?k=r%c3%a9sum%c3%a9",
        E + "/do?k=r%C3%A9sum%C3%A9",
    ),
    _w3lib(
        f"{CANON}::test_non_ascii_percent_encoding_in_paths", E + "/a do?a=1", E + "/a%20do?a=1"
    ),
    _w3lib(
        f"{CANON}::test_non_ascii_percent_encoding_in_paths",
        E + "/a %20do?a=1",
        E + "/a%20%20do?a=1",
    ),
    _w3lib(
        f"{CANON}::test_non_ascii_percent_encoding_in_paths",
        E + "/a do£.html?a=1",
        E + "/a%20do%C2%A3.html?a=1",
    ),
    _w3lib(
        f"{CANON}::test_non_ascii_percent_encoding_in_query_arguments",
        E + "/do?price=£500&a=5&z=3",
        E + "/do?a=5&price=%C2%A3500&z=3",
    ),
    _w3lib(
        f"{CANON}::test_remove_fragments",
        "http://user:pass@www.example.com/do?a=1#frag",
        "http://user:pass@www.example.com/do?a=1",
    ),
    _w3lib(
        f"{CANON}::test_remove_fragments_ipv6_host",
        "http://[::1]/do?a=1#frag",
        "http://[::1]/do?a=1",
    ),
    _w3lib(
        f"{CANON}::test_safe_characters_unicode",
        E + "/caf%E9-con-leche.htm",
        E + "/caf%EF%BF%BD-con-leche.htm",
        "apart",
    ),
    _w3lib(f"{CANON}::test_domains_are_case_insensitive", "http://www.EXAMPLE.com/", E + "/"),
    _w3lib(
        f"{CANON}::test_canonicalize_idns",
        "http://www.bücher.de?q=bücher",
        "http://www.xn--bcher-kva.de/?q=b%C3%BCcher",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_idns",
        "http://はじめよう.みんな/?query=サ&maxResults=5",
        "http://xn--p8j9a0d9c9a.xn--q9jyb4c/?maxResults=5&query=%E3%82%B5",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_idns",
        "http://www.bücher.de:8080/?q=bücher",
        "http://www.xn--bcher-kva.de:8080/?q=b%C3%BCcher",
    ),
    _w3lib(
        f"{CANON}::test_quoted_slash_and_question_sign",
        "http://foo.com/AC%2FDC+rocks%3f/?yeah=1",
        "http://foo.com/AC%2FDC+rocks%3F/?yeah=1",
    ),
    _w3lib(
        f"{CANON}::test_quoted_slash_and_question_sign",
        "http://foo.com/AC%2FDC/",
        "http://foo.com/AC/DC/",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_parse_url",
        E + "/path;params?x=1#frag",
        E + "/path;params?x=1",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_non_final_segment_semicolon",
        E + "/dir;x/a%7Eb",
        E + "/dir;x/a~b",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_idna_exceptions",
        "http://.éxamplé.com/résumé?q=résumé",
        "http://.éxamplé.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
    ),
    _w3lib(
        f"{CANON}::test_canonicalize_url_idna_exceptions",
        f"http://www.{'éxamplé' * 11}.com/résumé?q=résumé",
        f"http://www.{'éxamplé' * 11}.com/r%C3%A9sum%C3%A9?q=r%C3%A9sum%C3%A9",
    ),
    _w3lib(
        f"{CANON}::test_preserve_nonfragment_hash",
        E + "/path/to/%23/foo/bar#frag",
        E + "/path/to/%23/foo/bar",
    ),
    _w3lib(
        f"{CANON}::test_preserve_nonfragment_hash",
        E + "/path/to/%23/foo/bar",
        E + "/path/to/",
        "apart",
    ),
    _w3lib(
        f"{CANON}::test_preserve_nonfragment_hash",
        E + "/path/to/%23/foo/bar?url=http%3A%2F%2Fwww.example.com%2F%2Fpath%2Fto%2F%23%2Fbar#frag",
        E + "/path/to/%23/foo/bar?url=http%3A%2F%2Fwww.example.com%2F%2Fpath%2Fto%2F%23%2Fbar",
    ),
    _w3lib(f"{CANON}::test_strip_spaces", " https://example.com", "https://example.com/"),
    _w3lib(f"{CANON}::test_strip_spaces", "https://example.com ", "https://example.com/"),
    _w3lib(f"{CANON}::test_strip_spaces", " https://example.com ", "https://example.com/"),
    # safe_url_string: percent-encoding and IDNA spelled one way
    _w3lib(
        f"{SAFE}::test_safe_url_string_with_query",
        E + "/£?unit=µ",
        E + "/%C2%A3?unit=%C2%B5",
    ),
    _w3lib(
        f"{SAFE}::test_safe_url_string_with_query",
        E + "/%C2%A3?unit=%C2%B5",
        E + "/%C2%A3?unit=%B5",
        "apart",
    ),
    _w3lib(
        f"{SAFE}::test_safe_url_string_with_query",
        E + "/%C2%A3?unit=%C2%B5",
        E + "/%A3?unit=%C2%B5",
        "apart",
    ),
    _w3lib(f"{SAFE}::test_safe_url_string_misc", E + "/£?unit=%C2%B5", E + "/%C2%A3?unit=%C2%B5"),
    _w3lib(f"{SAFE}::test_safe_url_string_misc", E + "/%C2%A3?unit=µ", E + "/%C2%A3?unit=%C2%B5"),
    _w3lib(
        f"{SAFE}::test_safe_url_string_bytes_input_nonutf8",
        E + "/%A3?unit=%B5",
        E + "/%A3?unit=%EF%BF%BD",
        "apart",
    ),
    *(
        _w3lib(f"{SAFE}::test_safe_url_idna", idn, safe)
        for idn, safe in [
            (
                "http://www.färgbolaget.nu/färgbolaget",
                "http://www.xn--frgbolaget-q5a.nu/f%C3%A4rgbolaget",
            ),
            (
                "http://www.räksmörgås.se/?räksmörgås=yes",
                "http://www.xn--rksmrgs-5wao1o.se/?r%C3%A4ksm%C3%B6rg%C3%A5s=yes",
            ),
            (
                "http://www.brændendekærlighed.com/brændende/kærlighed",
                "http://www.xn--brndendekrlighed-vobh.com/br%C3%A6ndende/k%C3%A6rlighed",
            ),
            ("http://www.예비교사.com", "http://www.xn--9d0bm53a3xbzui.com"),
            ("http://理容ナカムラ.com", "http://xn--lck1c3crb1723bpq4a.com"),
            ("http://あーるいん.com", "http://xn--l8je6s7a45b.com"),
            ("http://www.bücher.de/?q=bücher", "http://www.xn--bcher-kva.de/?q=b%C3%BCcher"),
            (
                "http://はじめよう.みんな/?query=サ&maxResults=5",
                "http://xn--p8j9a0d9c9a.xn--q9jyb4c/?query=%E3%82%B5&maxResults=5",
            ),
            ("http://кто.рф/", "http://xn--j1ail.xn--p1ai/"),
            (
                "http://кто.рф/index.php?domain=Что",
                "http://xn--j1ail.xn--p1ai/index.php?domain=%D0%A7%D1%82%D0%BE",
            ),
            ("http://내도메인.한국/", "http://xn--220b31d95hq8o.xn--3e0b707e/"),
            (
                "http://맨체스터시티축구단.한국/",
                "http://xn--2e0b17htvgtvj9haj53ccob62ni8d.xn--3e0b707e/",
            ),
            ("http://nic.شبكة", "http://nic.xn--ngbc5azd"),
            ("https://www.贷款.在线", "https://www.xn--0kwr83e.xn--3ds443g"),
            ("https://www2.xn--0kwr83e.在线", "https://www2.xn--0kwr83e.xn--3ds443g"),
            ("https://www3.贷款.xn--3ds443g", "https://www3.xn--0kwr83e.xn--3ds443g"),
        ]
    ),
    _w3lib(
        f"{SAFE}::test_safe_url_string_encode_idna_domain_with_port",
        "http://新华网.中国:80",
        "http://xn--xkrr14bows.xn--fiqs8s:80",
    ),
    *(
        _w3lib("SAFE_URL_URL_CASES", left, right)
        for left, right in [
            ("https://ñ.example", "https://xn--ida.example"),
            ("https://[2402:4e00:40:40::2:3b6]:443", "https://[2402:4e00:40:40::2:3b6]"),
            ("http://[::1]:8080/p?q=[1]", "http://[::1]:8080/p?q=%5B1%5D"),
            ("https://example.com/ñ", "https://example.com/%C3%B1"),
            ("https://example.com/ñ%C3%B1", "https://example.com/%C3%B1%C3%B1"),
            ("https://example.com?a", "https://example.com/?a"),
            ("https://example.com?ñ", "https://example.com/?%C3%B1"),
            ("https://example.com?ñ%C3%B1", "https://example.com/?%C3%B1%C3%B1"),
            ("https://examplｅ.com", "https://example.com"),
            ("https://example.com/[x]", "https://example.com/%5Bx%5D"),
            ("https://example.com/a]b", "https://example.com/a%5Db"),
            ("http://example.com/search?tags[]=a", "http://example.com/search?tags%5B%5D=a"),
            # every ASCII character a path or a query must escape, raw and escaped
            (
                'https://example.com/"%<>[]^`{|}\x7f',
                "https://example.com/%22%25%3C%3E%5B%5D%5E%60%7B%7C%7D%7F",
            ),
            (
                "https://example.com?\"%'<>[\\]^`{|}\x7f",
                "https://example.com/?%22%25%27%3C%3E%5B%5C%5D%5E%60%7B%7C%7D%7F",
            ),
        ]
    ),
    _w3lib("SAFE_URL_URL_CASES", "http://[2a01:5cc0:1:2::4]", relation="stable"),
]

N = "http://example.com"
URL_NORMALIZE = [
    *(
        _un("tests/test_normalize_host.py", f"https://{host}/", f"https://{expected}/")
        for host, expected in [
            ("SITE.COM", "site.com"),
            ("site.com.", "site.com"),
            ("пример.испытание", "xn--e1afmkfd.xn--80akhbyknj4f"),
            ("ExAmPle.РФ", "example.xn--p1ai"),
            ("faß.de", "xn--fa-hia.de"),  # "IDNA2008 with UTS46"
            ("ドメイン.テスト", "xn--eckwd4c7c.xn--zckzah"),
            ("domain.café", "domain.xn--caf-dma"),
            ("über.example", "xn--ber-goa.example"),
            ("example。com", "example.com"),
        ]
    ),
    _un("tests/test_normalize_host.py", "https://faß.de/", "https://fass.de/", "apart"),
    *(
        _un("tests/test_normalize_path.py", f"{N}{path}", f"{N}{expected}")
        for path, expected in [
            ("", "/"),
            ("/../foo", "/foo"),
            ("/./../foo", "/foo"),
            ("/./foo", "/foo"),
            ("/./foo/.", "/foo/"),
            ("/foo/../bar", "/bar"),
            ("/foo/./bar", "/foo/bar"),
            ("/foo//", "/foo/"),
            ("/foo/bar/..", "/foo/"),
            ("/foo/bar/../..", "/"),
            ("/foo/bar/../../../../baz", "/baz"),
            ("/foo/bar/../../../baz", "/baz"),
            ("/foo/bar/../../", "/"),
            ("/foo/bar/../../baz", "/baz"),
            ("/foo/bar/../", "/foo/"),
            ("/foo/bar/../baz", "/foo/baz"),
            ("/foo/bar/.", "/foo/bar/"),
            ("/foo/bar/./", "/foo/bar/"),
        ]
    ),
    # "Issue #25: we should preserve ? in the path"
    _un(
        "tests/test_normalize_path.py",
        f"{N}/More+Tea+Vicar%3F/discussion",
        f"{N}/More+Tea+Vicar",
        "apart",
    ),
    _un("tests/test_normalize_port.py", "http://example.com:80/", f"{N}/"),
    _un("tests/test_normalize_port.py", "https://example.com:443/", "https://example.com/"),
    _un("tests/test_normalize_scheme.py", "HTTP://example.com/", f"{N}/"),
    _un("tests/test_normalize_query.py", f"{N}/?&&&", f"{N}/"),
    _un("tests/test_normalize_query.py", f"{N}/?Ç=Ç", f"{N}/?%C3%87=%C3%87"),
    # "Preserve encoded # in value, #31"
    _un("tests/test_normalize_query.py", f"{N}/?q=%23test", f"{N}/?q=", "apart"),
    *(
        _un("tests/test_url_normalize.py::test_url_normalize_expected_changes", left, right)
        for left, right in [
            ("http://127.0.0.1:80/", "http://127.0.0.1/"),
            ("http://example.com:081/", "http://example.com:81/"),
            ("http://example.com:80/", "http://example.com/"),
            ("http://example.com", "http://example.com/"),
            ("http://example.com/?q=%5c", "http://example.com/?q=%5C"),
            ("http://EXAMPLE.COM/", "http://example.com/"),
            ("http://example.com/%7Ejane", "http://example.com/~jane"),
            ("http://example.com/a/../a/b", "http://example.com/a/b"),
            ("http://example.com/a/./b", "http://example.com/a/b"),
            ("http://www.example.com./", "http://www.example.com/"),
            ("http://www.foo.com:80/foo", "http://www.foo.com/foo"),
            ("http://www.foo.com.:81/foo", "http://www.foo.com:81/foo"),
            ("http://www.foo.com./foo/bar.html", "http://www.foo.com/foo/bar.html"),
            ("http://www.foo.com/%7Ebar", "http://www.foo.com/~bar"),
            ("http://www.foo.com/%7ebar", "http://www.foo.com/~bar"),
        ]
    ),
    *(
        _un("tests/test_url_humanize.py", humanized, normalized)
        for humanized, normalized in [
            (
                "https://пример.испытание/Служебная:Search/Test",
                "https://xn--e1afmkfd.xn--80akhbyknj4f/"
                "%D0%A1%D0%BB%D1%83%D0%B6%D0%B5%D0%B1%D0%BD%D0%B0%D1%8F:Search/Test",
            ),
            (
                "https://faß.de/über?q=Ç#пример",
                "https://xn--fa-hia.de/%C3%BCber?q=%C3%87#%D0%BF%D1%80%D0%B8%D0%BC%D0%B5%D1%80",
            ),
            (
                "https://example.com/?q=%23test&where=code=123",
                "https://example.com/?q=%23test&where=code%3D123",
            ),
            (
                "https://example.com/?letter=Ç&equals=a=b&ключ=value",
                "https://example.com/?letter=%C3%87&equals=a%3Db&%D0%BA%D0%BB%D1%8E%D1%87=value",
            ),
        ]
    ),
    _un(
        "tests/test_url_humanize.py", "https://example.com/a%3Fb", "https://example.com/a", "apart"
    ),
    _un(
        "tests/test_url_humanize.py",
        "https://example.com/%E0%A4%A?bad=%E0%A4%A#%E0%A4%A",
        relation="stable",
    ),
    _un("tests/test_url_humanize.py", "https://xn--bad-label.com/", relation="stable"),
    _un(
        "tests/test_normalize_query_filters.py",
        "https://example.com/page?",
        "https://example.com/page",
    ),
    *(
        _un("tests/test_normalize_query_filters.py", left, right)
        for left, right in [
            (
                "https://www.google.com/search?q=test&utm_source=test",
                "https://www.google.com/search?q=test",
            ),
            (
                "https://www.youtube.com/watch?v=12345&utm_source=share",
                "https://www.youtube.com/watch?v=12345",
            ),
            (
                "https://www.google.com/search?q=test&utm_source=test&ie=utf8",
                "https://www.google.com/search?q=test&ie=utf8",
            ),
            (
                "https://www.baidu.com/s?wd=test&utm_source=test&ie=utf8",
                "https://www.baidu.com/s?wd=test&ie=utf8",
            ),
            (
                "https://youtube.com/watch?v=12345&utm_source=test&search_query=test",
                "https://youtube.com/watch?v=12345&search_query=test",
            ),
        ]
    ),
    _un("tests/test_cli.py", "http://EXAMPLE.com/./path/../other/", "http://example.com/other/"),
    _un("tests/test_cli.py", "http://пример.рф/path", "http://xn--e1afmkfd.xn--p1ai/path"),
    _un("tests/test_cli.py", "http://google.com?utm_source=test&q=1", "http://google.com/?q=1"),
]

COURLAN = [
    _courlan("test_normalization", "HTTPS://WWW.DWDS.DE/", "https://www.dwds.de/"),
    _courlan("test_normalization", "http://test.net/foo.html#bar", "http://test.net/foo.html"),
    _courlan(
        "test_normalization",
        "http://www.example.org:80/test.html",
        "http://www.example.org/test.html",
    ),
    _courlan(
        "test_normalization", "http://www.example.org:80?p=123", "http://www.example.org/?p=123"
    ),
    _courlan("test_normalization", "http://[::1]:80/", "http://[::1]/"),
    _courlan("test_normalization", "https://[::1]:443/", "https://[::1]/"),
    _courlan("test_normalization", "http://[::1]:8080/", "http://[::1]/", "apart"),
    _courlan("test_normalization", "http://xn--Mnchen-3ya.de", "http://münchen.de"),
    _courlan("test_normalization", "http://Mnchen-3ya.de", "http://mnchen-3ya.de"),
    _courlan("test_normalization", "http://xn--München.de", "http://xn--münchen.de"),
    _courlan("test_normalization", "http://test.org/?fb_ref=0", "http://test.org/"),
    _courlan(
        "test_normalization", "http://test.org/?utm_source=rss&utm_medium=rss", "http://test.org/"
    ),
    _courlan("test_normalization", "http://test.org/#partnerid=123", "http://test.org/"),
    _courlan(
        "test_normalization",
        "http://test.org/#mtm_campaign=documentation&mtm_keyword=demo&catpage=3",
        "http://test.org/#catpage=3",
    ),
    _courlan(
        "test_qelems", "http://test.net/foo.html?utm_source=twitter", "http://test.net/foo.html"
    ),
    _courlan(
        "test_qelems", "http://test.net/foo.html?testid=1", "http://test.net/foo.html", "apart"
    ),
    _courlan(
        "test_qelems",
        "http://test.net/foo.html?testid=1&post=abc&page=2",
        "http://test.net/foo.html?page=2&post=abc&testid=1",
    ),
    _courlan(
        "test_qelems",
        "http://test.net/foo.html?page=2&itemid=10&lang=en",
        "http://test.net/foo.html?itemid=10&lang=en&page=2",
    ),
    _courlan("test_scrub", "https://example.org/\t?p=100", "https://example.org/?p=100"),
    _courlan(
        "test_scrub",
        "https://example.org:443/file.html?p=100&abc=1#frag",
        "https://example.org/file.html?abc=1&p=100#frag",
    ),
    _courlan("test_scrub", "http://test.org/?utm_source=&utm_medium=", "http://test.org"),
    _courlan("test_scrub", "http://test.org/#partnerid=123", "http://test.org"),
    _courlan("test_scrub", "  https://www.dwds.de", "https://www.dwds.de"),
]

CASES = [*W3LIB, *URL_NORMALIZE, *COURLAN]

# Where the policies differ: (project, test, the case, why it is not ours).
EXCLUDED = [
    (
        "url-normalize",
        "tests/test_url_normalize.py",
        "http://example.com/?q=%C7 → ?q=%EF%BF%BD",
        "a non-UTF-8 escape is kept as its byte, not replaced by U+FFFD (issue 12)",
    ),
    (
        "url-normalize",
        "tests/test_url_humanize.py",
        "https://example.com/a%2Fb → /a/b",
        "an escaped slash is part of a segment: a%2Fb and a/b stay apart (the red list)",
    ),
    (
        "url-normalize",
        "tests/test_normalize_query.py, tests/test_url_normalize.py",
        "?q=C%CC%A7 → ?q=%C3%87",
        "no Unicode normalisation (NFC) of the path or query: other code points, another key",
    ),
    (
        "url-normalize, courlan",
        "tests/test_normalize_path.py, tests/unit_tests.py::test_normalization",
        "/foo///bar// → /foo/bar/, https://hanxiao.io//404.html → /404.html",
        "empty path segments are the server's to read; only trailing slashes are dropped",
    ),
    (
        "w3lib, courlan",
        "TestCanonicalizeUrl::test_normalize_percent_encoding_in_paths, test_scrub",
        "/a%23b%2cc → /a%23b,c; /ab'c → /ab%27c",
        "in the path only escapes of unreserved characters are decoded (RFC 3986, 6.2.2.2): a"
        " reserved character and its escape stay apart",
    ),
    (
        "url-normalize, courlan",
        "tests/test_normalize_query_filters.py, tests/unit_tests.py::test_normalization",
        "?ref=test, ?s_cid=123&clickid=1, an allowlist per site",
        "tracking parameters are miniflux's list; other parameters may name the article",
    ),
    (
        "url-normalize",
        "tests/test_url_normalize.py",
        "http://example.com/#!5753509/hello-world → ?_escaped_fragment_=…",
        "the fragment is dropped, not rewritten into the query",
    ),
]


def problems(case: Case) -> list[str]:
    """What is wrong with ``canonical_url`` on ``case``: nothing when the case holds."""
    found: list[str] = []
    keys: list[str] = []
    for url in case.urls:
        try:
            key = canonical_url(url)
        except Exception as error:  # the measurement reports it; the tests fail on it
            found.append(f"{url!r} raises {error!r}")
            continue
        keys.append(key)
        if not well_formed(key):
            found.append(f"{url!r} → {key!r}, not an ASCII https URL with a host")
        elif canonical_url(key) != key:
            found.append(f"{url!r} → {key!r} → {canonical_url(key)!r}: not idempotent")
    if len(keys) == 2 and case.relation == "same" and keys[0] != keys[1]:
        found.append(f"{keys[0]!r} != {keys[1]!r}")
    if len(keys) == 2 and case.relation == "apart" and keys[0] == keys[1]:
        found.append(f"both {keys[0]!r}")
    return found


def well_formed(key: str) -> bool:
    try:
        parts = urlsplit(key)
        parts.port  # noqa: B018 - raises ValueError when the netloc does not read back
    except ValueError:
        return False
    # http keeps its name only on a port of its own: http://h:443/ is not https://h/
    scheme = parts.scheme == "https" or (parts.scheme == "http" and parts.port not in (None, 80))
    return key.isascii() and scheme and bool(parts.hostname)


def main() -> None:
    total: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    failing: list[tuple[Case, list[str]]] = []
    for case in CASES:
        total[case.project] += 1
        found = problems(case)
        if found:
            failing.append((case, found))
        else:
            passed[case.project] += 1
    for project in total:
        print(f"{project:<14} {passed[project]:>4} of {total[project]:>4} hold")
    print(f"{'all':<14} {sum(passed.values()):>4} of {len(CASES):>4} hold")
    for case, found in failing:
        print(f"\n{case.project} {case.test} ({case.relation})")
        for problem in found:
            print(f"  {problem}")


if __name__ == "__main__":
    main()
