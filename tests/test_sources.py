import re
from pathlib import Path

import pytest
import yaml

from newsdesk.core.errors import SourcesError
from newsdesk.core.sources import (
    Feed,
    group_by_outlet,
    load_sources,
    parse_sources,
    read_yaml,
    wire_agencies,
)
from newsdesk_local.cli import main
from tests.test_hostile_feeds import MB, peak_of

DOCS = Path(__file__).resolve().parents[1] / "docs" / "sources.md"


def test_bundled_sources_cover_korean_outlets():
    feeds = load_sources()
    outlets = group_by_outlet(feeds)
    names = {o.name for o in outlets}
    assert {"연합뉴스", "뉴시스"} <= names
    assert len(outlets) >= 20
    assert all(len({f.category for f in o.feeds}) >= 3 for o in outlets)
    assert all(f.url.startswith("https://") for f in feeds)


def test_every_bundled_feed_is_documented_with_its_outlet():
    # docs/sources.md cites the public material that confirms each feed, per outlet
    docs = DOCS.read_text(encoding="utf-8")
    sections = dict(
        (part.split("\n", 1)[0].rsplit(" (", 1)[0], part) for part in docs.split("\n### ")[1:]
    )
    for outlet in group_by_outlet(load_sources()):
        assert outlet.name in sections, outlet.name
        assert sections[outlet.name].split("\n", 1)[0].endswith(f"({len(outlet.feeds)})")
        for feed in outlet.feeds:
            # the whole URL, not a prefix of a longer one (?cate=1 must not match ?cate=13)
            pattern = re.escape(feed.url) + r"(?![\w/?=&%.-]*[\w/=&%-])"
            assert re.search(pattern, sections[outlet.name]), feed.url


def _cited_keys() -> set[str]:
    """The keys of docs/sources.md's "Sources cited" tables (the feeds' and the terms')."""
    docs = DOCS.read_text(encoding="utf-8")
    cited = docs.split("## Sources cited", 1)[1].split("## Terms and extract", 1)[0]
    return set(re.findall(r"^\| ([a-z][a-z0-9#-]*) \|", cited, re.MULTILINE))


def test_every_bundled_feed_is_cited_and_its_row_says_so():
    # each feed names the public material behind it (sources.yaml's cited), docs/sources.md's
    # outlet table gives the same citations, and a feed with one source is marked so
    docs = DOCS.read_text(encoding="utf-8")
    keys = _cited_keys()
    rows = dict(re.findall(r"^\| (https://\S+) \| [^|]+ \| ([^|]+) \|$", docs, re.MULTILINE))
    for feed in load_sources():
        assert feed.cited, feed.url
        assert {c.split(" ")[0] for c in feed.cited} <= keys, feed.url
        row = rows[feed.url]
        assert row.removesuffix(" — **single source**").split(", ") == list(feed.cited), feed.url
        assert row.endswith("**single source**") == (len(feed.cited) == 1), feed.url


def test_every_bundled_outlets_terms_are_cited_and_set_its_extract():
    # terms name their material by the keys of "Sources cited"; an outlet with terms found has
    # its pages not fetched, and "Terms and extract" lists every outlet once, as the file sets it
    docs = DOCS.read_text(encoding="utf-8")
    table = docs.split("## Terms and extract", 1)[1].split("## Outlets and feeds", 1)[0]
    listed = {
        name.strip(): extract
        for names, extract in re.findall(r"^\| ([^|]+) \| [^|]+ \| (true|false)", table, re.M)
        for name in names.split(",")
    }
    keys = _cited_keys()
    outlets = group_by_outlet(load_sources())
    assert set(listed) == {o.name for o in outlets}
    for outlet in outlets:
        feed = outlet.feeds[0]
        assert listed[outlet.name] == str(feed.extract).lower(), outlet.name
        if feed.terms is not None:
            assert feed.extract is False, outlet.name
            # "(KEY)" or "(KEY YYYY-MM-DD)"
            named = set(re.findall(r"\(([a-z][a-z0-9#-]*)(?: \d{4}-\d{2}-\d{2})?\)", feed.terms))
            assert named, outlet.name
            assert named <= keys, outlet.name


def test_the_news_agencies_are_marked():
    assert wire_agencies(load_sources()) == {"연합뉴스", "뉴시스"}


def test_group_keeps_outlet_and_feed_order():
    feeds = parse_sources(
        """
- {source: A, url: "https://a.test/1", category: 정치}
- {source: B, url: "https://b.test/1", category: 경제}
- {source: A, url: "https://a.test/2", category: 사회}
"""
    )
    outlets = group_by_outlet(feeds)
    assert [o.name for o in outlets] == ["A", "B"]
    assert [f.url for f in outlets[0].feeds] == ["https://a.test/1", "https://a.test/2"]
    assert outlets[0].feeds[1] == Feed("A", "https://a.test/2", "사회")


GOOD = '- {source: A, url: "https://a.test/1", category: 정치}\n'
BROWSER = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36"


def test_a_feed_may_name_its_own_user_agent():
    feeds = parse_sources(
        GOOD + f"- {{source: A, url: 'https://a.test/2', category: 경제, "
        f"user_agent: '  {BROWSER} '}}\n"
    )
    assert [f.user_agent for f in feeds] == [None, BROWSER]


def test_an_outlet_may_turn_extraction_off_or_set_its_minimum():
    feeds = parse_sources(
        "- {source: A, url: 'https://a.test/1', category: 정치, extract: false}\n"
        "- {source: A, url: 'https://a.test/2', category: 경제, extract: false}\n"
        "- {source: B, url: 'https://b.test/1', category: 정치, extract_min_chars: 80}\n"
    )
    assert [(f.extract, f.extract_min_chars) for f in feeds] == [
        (False, None),
        (False, None),
        (True, 80),
    ]


def test_an_outlet_may_be_a_news_agency_with_its_terms_and_each_feed_its_citations():
    feeds = parse_sources(
        "- {source: A, url: 'https://a.test/1', category: 정치, wire: true,\n"
        "   terms: &a-terms 'RSS: personal use  only (a-terms 2026-01-02)',\n"
        "   cited: [knews 2022-07-30, 'kite#206 2025-10-01']}\n"
        "- {source: A, url: 'https://a.test/2', category: 경제, wire: true, terms: *a-terms}\n"
        "- {source: B, url: 'https://b.test/1', category: 정치}\n"
    )
    assert [(f.wire, f.terms, f.cited) for f in feeds] == [
        (
            True,
            "RSS: personal use only (a-terms 2026-01-02)",
            ("knews 2022-07-30", "kite#206 2025-10-01"),
        ),
        (True, "RSS: personal use only (a-terms 2026-01-02)", ()),
        (False, None, ()),
    ]
    assert wire_agencies(feeds) == {"A"}


def test_a_file_without_the_new_fields_reads_as_before():
    # an earlier release's file: no outlet is an agency, no terms or citations
    (feed,) = parse_sources(GOOD)
    assert (feed.wire, feed.terms, feed.cited) == (False, None, ())
    assert feed == Feed("A", "https://a.test/1", "정치")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "non-empty list"),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, wire: yes please}\n",
            "entry 2: field 'wire': expected true or false",
        ),
        (
            "- {source: A, url: 'https://a.test/1', category: 정치, wire: true}\n"
            "- {source: A, url: 'https://a.test/2', category: 경제}\n",
            "entry 2: field 'wire': False differs from entry 1's True",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, terms: ''}\n",
            "entry 2: field 'terms': expected a non-empty string",
        ),
        (
            "- {source: A, url: 'https://a.test/1', category: 정치, terms: x}\n"
            "- {source: A, url: 'https://a.test/2', category: 경제, terms: y}\n",
            "entry 2: field 'terms': 'y' differs from entry 1's 'x'",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, cited: knews}\n",
            "entry 2: field 'cited': expected a list",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, cited: []}\n",
            "entry 2: field 'cited': expected a list",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, cited: [knews]}\n",
            "entry 2: field 'cited': 'knews' is not 'KEY YYYY-MM-DD'",
        ),
        (
            GOOD
            + "- {source: A, url: 'https://a.test/2', category: 경제, cited: [knews 2022-13-01]}\n",
            "entry 2: field 'cited': 'knews 2022-13-01' is not",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, extract: no}\n",
            "entry 2: field 'extract': .* differs from entry 1's True",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, extract: 'off'}\n",
            "entry 2: field 'extract': expected true or false",
        ),
        (
            GOOD
            + "- {source: A, url: 'https://a.test/2', category: 경제, extract_min_chars: -1}\n",
            "entry 2: field 'extract_min_chars': expected a whole number",
        ),
        ("source: A\n", "non-empty list"),
        ("- [1, 2]\n", "entry 1: expected a mapping"),
        (GOOD + "- {url: 'https://a.test/2', category: 경제}\n", "entry 2: field 'source'"),
        (GOOD + "- {source: A, category: 경제}\n", "entry 2: field 'url'"),
        (GOOD + "- {source: A, url: 'https://a.test/2'}\n", "entry 2: field 'category'"),
        (GOOD + "- {source: '', url: 'https://a.test/2', category: 경제}\n", "field 'source'"),
        (GOOD + "- {source: A, url: 42, category: 경제}\n", "entry 2: field 'url'"),
        (GOOD + "- {source: A, url: 'ftp://a.test/2', category: 경제}\n", "not an http"),
        (GOOD + "- {source: A, url: 'a.test/2', category: 경제}\n", "entry 2: field 'url'"),
        (GOOD + "- {source: A, url: 'https://a.test/2', catgory: 경제}\n", "field 'catgory'"),
        (GOOD + GOOD, "entry 2: field 'url': .* is already entry 1"),
        ("- {source: A, url: [unclosed\n", "not valid YAML at line"),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, user_agent: ''}\n",
            "entry 2: field 'user_agent': empty",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, user_agent: 5}\n",
            "entry 2: field 'user_agent': not a string",
        ),
        (
            GOOD
            + "- {source: A, url: 'https://a.test/2', category: 경제, user_agent: \"a\\nb\"}\n",
            "entry 2: field 'user_agent': not one line of printable ASCII",
        ),
        (
            GOOD + "- {source: A, url: 'https://a.test/2', category: 경제, user_agent: 브라우저}\n",
            "entry 2: field 'user_agent': not one line of printable ASCII",
        ),
        (
            GOOD
            + "- {source: A, url: 'https://a.test/2', category: 경제, user_agent: "
            + "x" * 513
            + "}\n",
            "entry 2: field 'user_agent': longer than 512",
        ),
    ],
)
def test_bad_files_name_entry_and_field(text, message):
    with pytest.raises(SourcesError, match=message):
        parse_sources(text, name="x.yaml")


def test_unreadable_file_is_named(tmp_path):
    with pytest.raises(SourcesError, match=r"missing\.yaml"):
        load_sources(tmp_path / "missing.yaml")


def test_cli_check_reports_a_good_file(tmp_path, capsys):
    path = tmp_path / "sources.yaml"
    path.write_text(GOOD, encoding="utf-8")
    assert main(["sources", "check", str(path)]) == 0
    assert "ok: 1 feed, 1 outlet" in capsys.readouterr().out


def test_cli_check_fails_on_a_bad_file_naming_entry_and_field(tmp_path, capsys):
    path = tmp_path / "sources.yaml"
    path.write_text(GOOD + "- {source: B, url: 'nope', category: 경제}\n", encoding="utf-8")
    assert main(["sources", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: entry 2: field 'url'" in err


def test_cli_check_names_a_bad_user_agent_in_one_line(tmp_path, capsys):
    path = tmp_path / "sources.yaml"
    path.write_text(
        GOOD + "- {source: B, url: 'https://b.test/1', category: 경제, "
        'user_agent: "Mozilla/5.0\\r\\nX-Evil: 1"}\n',
        encoding="utf-8",
    )
    assert main(["sources", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"newsdesk: {path}: entry 2: field 'user_agent': not one line")
    assert err.count("\n") == 1


# --- hostile files (issue 39, point 6): a one-line error, in bounded time and memory -----------
# pytest-timeout as a guard only: each takes milliseconds; before, some took minutes.
BOUNDED = pytest.mark.timeout(20)


def one_line_error(text: str) -> str:
    with pytest.raises(SourcesError) as raised:
        parse_sources(text, name="x.yaml")
    message = str(raised.value)
    assert "\n" not in message, message[:400]
    assert len(message) < 400, message[:400]
    return message


def test_the_bundled_file_reads_as_pyyaml_reads_it():
    # its anchors and aliases (terms repeated per outlet) stay: the bounded reader builds the
    # same document as yaml.safe_load
    text = (Path(__file__).resolve().parents[1] / "layers/common/newsdesk/sources.yaml").read_text(
        encoding="utf-8"
    )
    assert read_yaml(text, "sources.yaml") == yaml.safe_load(text)
    assert "*kona-terms" in text


@BOUNDED
def test_a_mapping_merged_into_thousands_of_entries_is_refused_in_bounded_memory():
    """The attack: one mapping of 2,000 keys, merged (``<<: *m``) into 2,000 entries, a 40 kB
    file. PyYAML builds every entry its own dict of the 2,000 pairs (4,000,000 pairs: seconds
    and over 100 MB); merges nested level on level multiply the same way."""
    text = "- &m {" + ", ".join(f"k{i}: v" for i in range(2000)) + "}\n" + "- {<<: *m}\n" * 2000
    assert len(text) < 50_000
    parse_sources(GOOD)  # imports first: the attack's own cost is next
    message = ""

    def attack() -> None:
        nonlocal message
        message = one_line_error(text)

    assert peak_of(attack) < 8 * MB
    assert message == "x.yaml: line 25: aliases and merge keys make more than 100,000 nodes"


def alias_bomb(levels: int) -> str:
    """``cited``'s one item a list of lists, each level nine aliases of the one below."""
    lists = ["&l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lists += [f"&l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    cited = f"[[{', '.join(lists)}]]"
    return GOOD + f"- {{source: A, url: 'https://a.test/2', category: 경제, cited: {cited}}}\n"


@BOUNDED
@pytest.mark.parametrize(
    ("levels", "message"),
    [
        # 9^10 "lol"s: printed in the error, 34 to 50 s to a MemoryError at about 1.55 GB;
        # 9^7 (a 33 MB message) fails here sooner
        (7, "x.yaml: line 2: aliases and merge keys make more than 100,000 nodes"),
        # below the bound the value is built, and shown cut short
        (4, "x.yaml: entry 2: field 'cited': [['lol', 'lol', 'lol', 'lol', ...], [[...], [...], "),
    ],
    ids=["past-the-bound", "below-it"],
)
def test_an_alias_bomb_in_cited_is_a_short_error(levels, message):
    """The attack: the billion laughs as YAML aliases in a feed's ``cited``, whose bad item
    the error message printed whole (``{item!r}``)."""
    parse_sources(GOOD)
    found = ""

    def attack() -> None:
        nonlocal found
        found = one_line_error(alias_bomb(levels))

    assert peak_of(attack) < 8 * MB
    assert found.startswith(message)


@BOUNDED
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- " + "[" * 10_000 + "]" * 10_000 + "\n", "x.yaml: line 1: nested deeper than 32 levels"),
        ("- " + "[" * 100_000 + "\n", "x.yaml: line 1: nested deeper than 32 levels"),
        ("- " * 10_000 + "x\n", "x.yaml: line 1: nested deeper than 32 levels"),
        ("- &a [*a]\n", "x.yaml: line 1: an alias inside the node it names"),
        (
            GOOD
            + "- {source: A, url: 'https://a.test/2', category: 경제, extract_min_chars: 1"
            + "0" * 5000
            + "}\n",
            "x.yaml: line 2: a number longer than 100 characters",
        ),
        ("- 2001-02-30\n", "x.yaml: not valid YAML: day is out of range for month"),
        (
            "- {source: A, url: [unclosed\n",
            "x.yaml: not valid YAML at line 2: expected ',' or ']', but got '<stream end>' "
            "(while parsing a flow sequence)",
        ),
    ],
    ids=[
        "flow-10000",
        "flow-100000-unclosed",
        "block-10000",
        "recursive",
        "long-int",
        "date",
        "unclosed",
    ],
)
def test_yaml_nested_deep_or_odd_is_a_one_line_error(text, message):
    """The attack: YAML nested 10,000 or 100,000 deep, where PyYAML's recursive composer
    raised RecursionError (only yaml.YAMLError was caught); a node holding itself; numbers
    and dates Python refuses to build (ValueError); and PyYAML's own message, several lines
    with a copy of the file's line."""
    assert one_line_error(text) == message


def test_values_in_errors_are_cut_short():
    """The attack: a 1 MB URL, echoed whole in its error line."""
    text = f"- {{source: A, url: 'ftp://a.test/{'x' * 1_000_000}', category: 경제}}\n"
    assert one_line_error(text).startswith(
        "x.yaml: entry 1: field 'url': not an http(s) URL: 'ftp://a.test/xx"
    )
