"""Canonical URLs against the peers' own test cases (issue 23, "URL pairs").

    git --git-dir=/work/.mirror/scrapy+w3lib/repo archive HEAD | tar -x -C /tmp/peers/w3lib
    (likewise niksite/url-normalize and adbar/courlan)
    .venv/bin/python benchmarks/url_peers.py --w3lib /tmp/peers/w3lib \
        --url-normalize /tmp/peers/url-normalize --courlan /tmp/peers/courlan [--list]

Reads the test files of three URL normalisers — w3lib's ``canonicalize_url``, url-normalize's
``url_normalize`` and its ``normalize_*`` parts, courlan's ``normalize_url``, ``clean_url``,
``scrub_url``, ``check_url`` and ``is_known_link`` — and takes their cases as pairs of URLs
with the peer's verdict: an input and its expected output are the same URL; ``is_known_link(a,
{b}) is True`` (or ``False``) says ``a`` and ``b`` are (or are not) the same. Only what the test
files write as literals is read (``ast``; parametrised tables, simple local names, loops over
literal tuples); nothing of theirs runs and nothing is fetched. A ``normalize_*`` part's case is
put into a URL (``normalize_host("SITE.COM") == "site.com"`` is ``http://SITE.COM/`` and
``http://site.com/``).

Each pair is then classified by how its two URLs differ, component by component, with the
standard library's means only (RFC 3986's parts, its percent-encoding and dot-segment rules,
form decoding of the query, punycode, ``ipaddress``), into kinds of difference; and each kind is
given newsdesk's verdict as ``newsdesk.collect.urls`` documents it (the module's and its
functions' docstrings and comments, docs/architecture.md), not as its code behaves:

- the same article (folded): http and https each on its default port, the scheme's and the
  host's case, a default port written or not, an IDNA host in Unicode or punycode (UTS 46
  mapping, full-width stops), the host's trailing dot, an IPv6 address's spelling, the
  fragment, a trailing slash (an empty path is "/"), dot segments, how percent-encoding is
  spelled in the path (an unreserved character escaped or not, the escape's case, a character
  that should have been escaped), the query as an application reads it (``+`` and ``%20``,
  escapes, empty fields), the order of the query's parameters, tracking parameters (newsdesk's
  list), whitespace around the URL;
- kept apart: another port (a scheme off its default port keeps its name), another host, the
  path's case, any other path difference (an escaped reserved character, empty segments,
  characters removed), any other query parameter (a blank value, a byte that is not UTF-8);
- not said by the policy (out): userinfo, an empty port (``h:/``), a port with leading zeros,
  a tab or newline inside the URL, a backslash, and anything not an absolute http(s) URL
  (relative references, ``//host``, ``http:host``, other schemes).

A pair is inside newsdesk's policy when every kind it shows is one the policy speaks to and the
policy's verdict is the peer's: all of its kinds folded and the peer says "the same", or one of
them kept apart and the peer says "different". The rest fall out, counted by reason (the peer
folds what newsdesk keeps apart, the peer keeps apart what newsdesk folds, the policy does not
say, not an absolute http(s) URL, the two strings identical). A pair in the policy is right when
``canonical_url(a) == canonical_url(b)`` exactly when the peer says they are the same. The script
imports ``newsdesk`` from whichever environment runs it: run it with an older checkout's venv to
measure that code.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import ipaddress
import itertools
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, unquote, unquote_to_bytes

import newsdesk
from newsdesk.collect.urls import TRACKING_PARAMETERS, TRACKING_PREFIXES, canonical_url

# The test files read, per peer, and the functions whose cases are URL pairs.
PEERS: dict[str, dict[str, tuple[str, ...]]] = {
    "w3lib": {"tests/test_url.py": ("canonicalize_url",)},
    "url-normalize": {
        "tests/test_url_normalize.py": ("url_normalize",),
        "tests/test_normalize_query_filters.py": ("url_normalize",),
        "tests/test_normalize_host.py": ("normalize_host",),
        "tests/test_normalize_path.py": ("normalize_path",),
        "tests/test_normalize_port.py": ("normalize_port",),
        "tests/test_normalize_query.py": ("normalize_query",),
        "tests/test_normalize_fragment.py": ("normalize_fragment",),
        "tests/test_normalize_scheme.py": ("normalize_scheme",),
        "tests/test_normalize_userinfo.py": ("normalize_userinfo",),
        "tests/test_generic_url_cleanup.py": ("generic_url_cleanup",),
    },
    "courlan": {
        "tests/unit_tests.py": (
            "normalize_url",
            "clean_url",
            "scrub_url",
            "check_url",
            "is_known_link",
        ),
    },
}
# Parsing steps a test wraps its input in; the URL they are given is the input.
PASS_THROUGH = frozenset({"urlparse", "parse_url"})

UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
PATH_CHARACTERS = UNRESERVED | frozenset("!$&'()*+,;=:@/")  # RFC 3986 pchar and "/"
DEFAULT_PORTS = {"http": 80, "https": 443}
RFC3986 = re.compile(r"^(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$", re.S)
ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
FULL_STOPS = {ord(stop): "." for stop in "\u3002\uff0e\uff61"}  # what UTS 46 reads as "."

LINE = "__line__"  # where a parametrised case is written, kept with its names

# Kinds of difference and newsdesk's verdict on each (see the module's docstring).
FOLD = "same article"
KEEP = "kept apart"
UNSTATED = "not said"


class UnknownError(Exception):
    """A node the literal reader does not evaluate."""


@dataclass(frozen=True)
class Call:
    """A call to one of a peer's functions, its arguments evaluated."""

    function: str
    args: tuple[object, ...]
    kwargs: tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class Case:
    """What one assertion says: ``call`` gives ``expected``, or equals ``other``."""

    peer: str
    file: str
    line: int
    call: Call
    expected: object = None
    other: Call | None = None
    same: bool = True


@dataclass(frozen=True)
class Pair:
    peer: str
    source: str  # file:line
    function: str
    a: str
    b: str
    same: bool
    options: str


# ---------------------------------------------------------------------------------------------
# Reading the test files


class Reader:
    """Evaluates the literal parts of one test module."""

    def __init__(self, tree: ast.Module, functions: tuple[str, ...]) -> None:
        self.functions = functions
        self.module_names: dict[str, ast.expr] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    self.module_names[target.id] = node.value
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
            ):
                self.module_names[node.target.id] = node.value

    def evaluate(self, node: ast.expr, env: dict[str, object]) -> object:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in self.module_names:
                return self.evaluate(self.module_names[node.id], {})
            raise UnknownError(node.id)
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.evaluate(element, env) for element in node.elts)
        if isinstance(node, ast.Set):
            return frozenset(self.evaluate(element, env) for element in node.elts)
        if isinstance(node, ast.JoinedStr):
            return "".join(self._formatted(value, env) for value in node.values)
        if isinstance(node, ast.BinOp):
            left, right = self.evaluate(node.left, env), self.evaluate(node.right, env)
            if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(node.op, ast.Mult) and isinstance(left, str) and isinstance(right, int):
                return left * right
            raise UnknownError("operation")
        if isinstance(node, ast.IfExp):
            test = self.evaluate(node.test, env)
            return self.evaluate(node.body if test else node.orelse, env)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left = self.evaluate(node.left, env)
            right = self.evaluate(node.comparators[0], env)
            if isinstance(node.ops[0], ast.Eq):
                return left == right
            if isinstance(node.ops[0], ast.NotEq):
                return left != right
            raise UnknownError("comparison")
        if isinstance(node, ast.Call):
            return self._call(node, env)
        raise UnknownError(type(node).__name__)

    def _formatted(self, value: ast.expr, env: dict[str, object]) -> str:
        if isinstance(value, ast.Constant):
            return str(value.value)
        if isinstance(value, ast.FormattedValue) and value.format_spec is None:
            return str(self.evaluate(value.value, env))
        raise UnknownError("format")

    def _call(self, node: ast.Call, env: dict[str, object]) -> object:
        name = _name(node.func)
        args = tuple(self.evaluate(arg, env) for arg in node.args)
        kwargs = tuple(
            (keyword.arg, self.evaluate(keyword.value, env))
            for keyword in node.keywords
            if keyword.arg is not None
        )
        if name in self.functions:
            return Call(name, args, kwargs)
        if name == "param":  # pytest.param(*values, id=…, marks=…)
            return ("__param__", args)
        if name in PASS_THROUGH and len(args) == 1:
            return args[0]
        raise UnknownError(name)

    def parameter_sets(self, function: ast.FunctionDef) -> Iterator[dict[str, object]]:
        """Every binding of the function's parametrised names (their product); literal
        elements only."""
        grids: list[list[dict[str, object]]] = []
        for decorator in function.decorator_list:
            if not (isinstance(decorator, ast.Call) and _name(decorator.func) == "parametrize"):
                continue
            names_node, values_node = decorator.args[0], decorator.args[1]
            names = self.evaluate(names_node, {})
            if isinstance(names, str):
                names = tuple(name.strip() for name in names.split(","))
            assert isinstance(names, tuple)
            if isinstance(values_node, ast.Name):
                values_node = self.module_names.get(values_node.id, values_node)
            if not isinstance(values_node, ast.List | ast.Tuple):
                grids.append([])
                continue
            grid: list[dict[str, object]] = []
            for element in values_node.elts:
                try:
                    value = self.evaluate(element, {})
                except UnknownError:
                    continue
                if isinstance(value, tuple) and value[:1] == ("__param__",):
                    value = value[1]
                values = value if len(names) > 1 else (value,)
                if isinstance(values, tuple) and len(values) == len(names):
                    grid.append({**dict(zip(names, values, strict=True)), LINE: element.lineno})
            grids.append(grid)
        for combination in itertools.product(*grids):
            binding: dict[str, object] = {}
            for part in combination:
                binding.update(part)
            yield binding


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def read_cases(peer: str, folder: Path) -> list[Case]:
    cases: list[Case] = []
    for relative, functions in PEERS[peer].items():
        path = folder / relative
        tree = ast.parse(path.read_text(encoding="utf-8"))
        reader = Reader(tree, functions)
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                for env in reader.parameter_sets(node):
                    _walk(reader, node.body, dict(env), peer, relative, cases)
    return cases


def _walk(
    reader: Reader,
    statements: list[ast.stmt],
    env: dict[str, object],
    peer: str,
    file: str,
    cases: list[Case],
) -> None:
    for statement in statements:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            _assign(reader, statement.targets[0], statement.value, env)
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            _assign(reader, statement.target, statement.value, env)
        elif isinstance(statement, ast.Assert):
            line = env.get(LINE, statement.lineno)
            assert isinstance(line, int)
            case = _assertion(reader, statement.test, env, peer, file, line)
            if case is not None:
                cases.append(case)
        elif isinstance(statement, ast.For) and isinstance(statement.target, ast.Name):
            try:
                values = reader.evaluate(statement.iter, env)
            except UnknownError:
                continue
            if isinstance(values, tuple | frozenset):
                for value in values:
                    _walk(
                        reader,
                        statement.body,
                        {**env, statement.target.id: value},
                        peer,
                        file,
                        cases,
                    )
        elif isinstance(statement, ast.If):
            _walk(reader, statement.body, dict(env), peer, file, cases)
            _walk(reader, statement.orelse, dict(env), peer, file, cases)
        # with pytest.raises(…) and everything else: no pair


def _assign(reader: Reader, target: ast.expr, value: ast.expr, env: dict[str, object]) -> None:
    if not isinstance(target, ast.Name):
        return
    try:
        env[target.id] = reader.evaluate(value, env)
    except UnknownError:
        env.pop(target.id, None)


def _assertion(
    reader: Reader, test: ast.expr, env: dict[str, object], peer: str, file: str, line: int
) -> Case | None:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    try:
        left = reader.evaluate(test.left, env)
        right = reader.evaluate(test.comparators[0], env)
    except UnknownError:
        return None
    operator = test.ops[0]
    if isinstance(right, Call) and not isinstance(left, Call):
        left, right = right, left
    if not isinstance(left, Call):
        return None
    if isinstance(operator, ast.Is) and isinstance(right, bool):
        return Case(peer, file, line, left, expected=right)
    if isinstance(operator, ast.Eq | ast.NotEq):
        same = isinstance(operator, ast.Eq)
        if isinstance(right, Call):
            return Case(peer, file, line, left, other=right, same=same)
        if same:
            return Case(peer, file, line, left, expected=right)
    return None


# ---------------------------------------------------------------------------------------------
# Cases to pairs of URLs

EMBEDDINGS: dict[str, Callable[[str], str]] = {
    "normalize_host": lambda host: f"http://{host}/",
    "normalize_query": lambda query: f"http://example.com/?{query}",
    "normalize_fragment": lambda fragment: f"http://example.com/#{fragment}",
    "normalize_scheme": lambda scheme: f"{scheme}://example.com/",
    "normalize_userinfo": lambda userinfo: f"http://{userinfo}example.com/",
}


def to_pairs(case: Case) -> Iterator[Pair]:
    call = case.call
    source = f"{case.file}:{case.line}"
    options = ", ".join(f"{name}={value!r}" for name, value in call.kwargs)
    if not call.args:
        return
    first = _text(call.args[0])
    if first is None:
        return
    if call.function == "is_known_link":
        known = call.args[1] if len(call.args) > 1 else None
        if (
            isinstance(known, frozenset)
            and isinstance(case.expected, bool)
            and (len(known) == 1 or case.expected is False)
        ):
            for other in sorted(str(item) for item in known):
                yield Pair(case.peer, source, call.function, first, other, case.expected, "")
        return
    if case.other is not None:
        second = _text(case.other.args[0]) if case.other.args else None
        if second is not None:
            yield Pair(case.peer, source, call.function, first, second, case.same, options)
        return
    expected = case.expected
    if call.function == "check_url":
        expected = expected[0] if isinstance(expected, tuple) and expected else None
    expected_text = _text(expected)
    if expected_text is None:
        return
    if call.function == "normalize_path":
        scheme = str(call.args[1]) if len(call.args) > 1 else "http"
        options = f"scheme={scheme!r}"
        yield Pair(
            case.peer,
            source,
            call.function,
            _path_url(first, scheme),
            _path_url(expected_text, scheme),
            True,
            options,
        )
    elif call.function == "normalize_port":
        scheme = str(call.args[1]) if len(call.args) > 1 else "http"
        a = f"{scheme}://example.com{':' + first if first else ''}/"
        b = f"{scheme}://example.com{':' + expected_text if expected_text else ''}/"
        yield Pair(case.peer, source, call.function, a, b, True, f"scheme={scheme!r}")
    elif call.function in EMBEDDINGS:
        embed = EMBEDDINGS[call.function]
        yield Pair(
            case.peer, source, call.function, embed(first), embed(expected_text), True, options
        )
    else:
        yield Pair(case.peer, source, call.function, first, expected_text, True, options)


def _path_url(path: str, scheme: str) -> str:
    # A path that does not start at the root is no URL's path: left as it is (not a URL).
    return f"{scheme}://example.com{path}" if path == "" or path.startswith("/") else path


def _text(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return None


# ---------------------------------------------------------------------------------------------
# Classifying a pair by how its URLs differ


@dataclass(frozen=True)
class Parts:
    scheme: str
    userinfo: str | None
    host: str
    port: str | None  # as written; "" for "h:/"
    path: str
    query: str | None
    fragment: str | None


def split(url: str) -> Parts | str:
    """RFC 3986's components (appendix B), or the reason this is no absolute http(s) URL."""
    match = RFC3986.match(url)
    if match is None:
        return "not an absolute http(s) URL"
    scheme, authority, path, query, fragment = match.groups()
    if scheme is None or scheme.lower() not in DEFAULT_PORTS or authority is None:
        return "not an absolute http(s) URL"
    userinfo, at, hostport = authority.rpartition("@")
    host, port = hostport, None
    if hostport.startswith("["):
        end = hostport.find("]")
        host, rest = hostport[: end + 1], hostport[end + 1 :]
        if rest.startswith(":"):
            port = rest[1:]
    elif ":" in hostport:
        host, _, port = hostport.rpartition(":")
    if not host:
        return "not an absolute http(s) URL"
    return Parts(scheme, userinfo if at else None, host, port, path, query, fragment)


@dataclass
class Difference:
    kinds: dict[str, str]  # kind -> verdict

    def add(self, kind: str, verdict: str) -> None:
        self.kinds[kind] = verdict


def classify(a: str, b: str) -> Difference | str:
    """The kinds of difference between ``a`` and ``b``, or why the pair is no pair of URLs."""
    if a == b:
        return "the two strings identical"
    difference = Difference({})
    if a != a.strip() or b != b.strip():
        difference.add("whitespace around the URL", FOLD)
        a, b = a.strip(), b.strip()
    for url in (a, b):
        if re.search(r"[\t\r\n]", url):
            difference.add("a tab or newline inside", UNSTATED)
        if "\\" in url:
            difference.add("a backslash", UNSTATED)
    parts_a, parts_b = split(a), split(b)
    if isinstance(parts_a, str):
        return parts_a
    if isinstance(parts_b, str):
        return parts_b
    _scheme_and_port(parts_a, parts_b, difference)
    if parts_a.userinfo != parts_b.userinfo:
        difference.add("userinfo", UNSTATED)
    _host(parts_a.host, parts_b.host, difference)
    _path(parts_a.path, parts_b.path, difference)
    _query(parts_a.query, parts_b.query, difference)
    if parts_a.fragment != parts_b.fragment:
        difference.add("fragment", FOLD)
    return difference


def _scheme_and_port(a: Parts, b: Parts, difference: Difference) -> None:
    if a.scheme != b.scheme and a.scheme.lower() == b.scheme.lower():
        difference.add("scheme's case", FOLD)
    ports: list[int | None] = []
    for parts in (a, b):
        if parts.port == "":
            difference.add("an empty port", UNSTATED)
            ports.append(None)
        elif parts.port is None:
            ports.append(None)
        elif not parts.port.isdigit():
            difference.add("a port that is no number", UNSTATED)
            ports.append(None)
        else:
            if len(parts.port) > 1 and parts.port.startswith("0"):
                difference.add("a port with leading zeros", UNSTATED)
            ports.append(int(parts.port))
    scheme_a, scheme_b = a.scheme.lower(), b.scheme.lower()
    default_a = ports[0] is None or ports[0] == DEFAULT_PORTS[scheme_a]
    default_b = ports[1] is None or ports[1] == DEFAULT_PORTS[scheme_b]
    if default_a and default_b:
        if scheme_a != scheme_b:
            difference.add("http and https", FOLD)
        if (ports[0] is None) != (ports[1] is None) or (
            ports[0] is not None and ports[0] != ports[1]
        ):
            difference.add("a default port written", FOLD)
    elif default_a or default_b or scheme_a != scheme_b or ports[0] != ports[1]:
        difference.add("another port", KEEP)


def _host(a: str, b: str, difference: Difference) -> None:
    if a == b:
        return
    if a.startswith("[") and b.startswith("["):
        try:
            same = ipaddress.IPv6Address(a[1:-1]) == ipaddress.IPv6Address(b[1:-1])
        except ValueError:
            same = a.lower() == b.lower()
        difference.add(
            "IPv6 address's spelling" if same else "another host", FOLD if same else KEEP
        )
        return
    lower_a, lower_b = a.lower(), b.lower()
    if lower_a == lower_b:
        difference.add("host's case", FOLD)
        return
    if lower_a.rstrip(".") == lower_b.rstrip("."):
        difference.add("host's trailing dot", FOLD)
        if a.rstrip(".") != b.rstrip("."):
            difference.add("host's case", FOLD)
        return
    if _unicode_host(a) == _unicode_host(b):
        difference.add("IDNA spelling", FOLD)
        return
    difference.add("another host", KEEP)


def _unicode_host(host: str) -> str:
    """The host as UTS 46 maps it, roughly (NFKC and lower case, the ideographic full stops),
    each punycode label decoded."""
    mapped = unicodedata.normalize("NFKC", host).lower()  # not casefold: ß stays ß
    mapped = mapped.translate(FULL_STOPS).rstrip(".")
    labels = []
    for label in mapped.split("."):
        if label.startswith("xn--"):
            with contextlib.suppress(UnicodeError, ValueError):
                label = label[4:].encode("ascii").decode("punycode")
        labels.append(unicodedata.normalize("NFC", label))
    return ".".join(labels)


def _path(a: str, b: str, difference: Difference) -> None:
    if a == b:
        return
    steps = (
        ("percent-encoding in the path", _path_escapes),
        ("dot segments", _remove_dot_segments),
        ("trailing slash", lambda path: path.rstrip("/")),
    )
    for kind, step in steps:
        if a == b:
            return
        stepped_a, stepped_b = step(a), step(b)
        if (stepped_a, stepped_b) != (a, b):
            difference.add(kind, FOLD)
        a, b = stepped_a, stepped_b
    if a == b:
        return
    if a.lower() == b.lower():
        difference.add("path's case", KEEP)
    elif re.sub("/{2,}", "/", a) == re.sub("/{2,}", "/", b):
        difference.add("empty path segments", KEEP)
    elif unquote(a) == unquote(b):
        difference.add("an escaped reserved character in the path", KEEP)
    else:
        difference.add("another path", KEEP)


def _path_escapes(path: str) -> str:
    """Escapes spelled one way (RFC 3986, 6.2.2.1-2): an unreserved character's decoded, the
    others' hexadecimal in capitals, what should have been escaped escaped as UTF-8."""
    out = []
    index = 0
    while index < len(path):
        escape = ESCAPE.match(path, index)
        if escape:
            char = chr(int(escape.group(1), 16))
            out.append(char if char in UNRESERVED else escape.group(0).upper())
            index += 3
            continue
        char = path[index]
        out.append(
            char if char in PATH_CHARACTERS else quote(char, safe="", errors="surrogatepass")
        )
        index += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986, section 5.2.4, as written there."""
    source, output = path, ""
    while source:
        if source.startswith("../"):
            source = source[3:]
        elif source.startswith(("./", "/./")):
            source = source[2:]
        elif source == "/.":
            source = "/"
        elif source.startswith("/../"):
            source = source[3:]
            output = output[: output.rfind("/")] if "/" in output else ""
        elif source == "/..":
            source = "/"
            output = output[: output.rfind("/")] if "/" in output else ""
        elif source in (".", ".."):
            source = ""
        else:
            start = 1 if source.startswith("/") else 0
            end = source.find("/", start)
            end = len(source) if end < 0 else end
            output, source = output + source[:end], source[end:]
    return output


def _query(a: str | None, b: str | None, difference: Difference) -> None:
    if a == b:
        return
    fields_a, fields_b = _fields(a), _fields(b)
    if fields_a == fields_b:
        difference.add("empty query fields", FOLD)
        return
    read_a, read_b = _read(fields_a), _read(fields_b)
    spelled_a = dict(zip(read_a, fields_a, strict=True))
    spelled_b = dict(zip(read_b, fields_b, strict=True))
    if any(spelled_a[field] != spelled_b[field] for field in spelled_a.keys() & spelled_b.keys()):
        difference.add("the query's escapes and '+'", FOLD)
    if read_a == read_b:
        return
    if sorted(read_a) == sorted(read_b):
        difference.add("the parameters' order", FOLD)
        return
    kept_a = [field for field in read_a if not _tracking(field[0])]
    kept_b = [field for field in read_b if not _tracking(field[0])]
    if sorted(kept_a) == sorted(kept_b):
        difference.add("tracking parameters", FOLD)
        if kept_a != kept_b:
            difference.add("the parameters' order", FOLD)
        return
    if sorted(field for field in kept_a if field[1]) == sorted(
        field for field in kept_b if field[1]
    ):
        difference.add("a blank-valued parameter", KEEP)
    elif sorted(map(_replaced, kept_a)) == sorted(map(_replaced, kept_b)):
        difference.add("a byte that is not UTF-8 in the query", KEEP)
    else:
        difference.add("another query parameter", KEEP)


def _fields(query: str | None) -> list[str]:
    return [field for field in (query or "").split("&") if field]


def _read(fields: list[str]) -> list[tuple[bytes, bytes]]:
    """Each field as an application/x-www-form-urlencoded reader reads it: bytes."""
    read = []
    for field in fields:
        name, _, value = field.partition("=")
        read.append((_form(name), _form(value)))
    return read


def _form(text: str) -> bytes:
    return unquote_to_bytes(text.replace("+", " ").encode("utf-8", "surrogatepass"))


def _tracking(name: bytes) -> bool:
    lowered = name.decode("utf-8", "replace").lower()
    return lowered in TRACKING_PARAMETERS or lowered.startswith(TRACKING_PREFIXES)


def _replaced(field: tuple[bytes, bytes]) -> tuple[str, str]:
    return field[0].decode("utf-8", "replace"), field[1].decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# The verdict and the run


@dataclass(frozen=True)
class Judged:
    pair: Pair
    inside: bool
    reason: str  # why it fell out, or the kinds it shows
    right: bool = False
    keys: tuple[str, str] = ("", "")


def judge(pair: Pair) -> Judged:
    difference = classify(pair.a, pair.b)
    if isinstance(difference, str):
        return Judged(pair, False, difference)
    unstated = sorted(kind for kind, verdict in difference.kinds.items() if verdict == UNSTATED)
    kept = sorted(kind for kind, verdict in difference.kinds.items() if verdict == KEEP)
    folded = sorted(kind for kind, verdict in difference.kinds.items() if verdict == FOLD)
    if unstated:
        return Judged(pair, False, "the policy does not say: " + ", ".join(unstated))
    if pair.same and kept:
        return Judged(pair, False, "the peer folds what newsdesk keeps apart: " + ", ".join(kept))
    if not pair.same and not kept:
        return Judged(pair, False, "the peer keeps apart what newsdesk folds: " + ", ".join(folded))
    keys = (canonical_url(pair.a), canonical_url(pair.b))
    right = (keys[0] == keys[1]) == pair.same
    return Judged(pair, True, ", ".join(kept or folded), right, keys)


def report(judged: list[Judged], listing: bool) -> None:
    print(f"newsdesk from {Path(newsdesk.__file__).parent}")
    for peer in PEERS:
        mine = [item for item in judged if item.pair.peer == peer]
        inside = [item for item in mine if item.inside]
        right = sum(item.right for item in inside)
        print(f"\n{peer}: {len(mine)} pairs read, {len(inside)} inside the policy, {right} right")
        by_function = Counter(item.pair.function for item in mine)
        inside_by_function = Counter(item.pair.function for item in inside)
        for function, count in sorted(by_function.items()):
            print(f"  {function}: {count} read, {inside_by_function[function]} inside")
    inside = [item for item in judged if item.inside]
    right = sum(item.right for item in inside)
    print(f"\nall peers: {len(judged)} pairs read, {len(inside)} inside the policy, {right} right")
    print(
        "  inside, the peer says the same: "
        f"{sum(item.pair.same for item in inside)}; different: "
        f"{sum(not item.pair.same for item in inside)}"
    )
    print("\nfell out, by reason:")
    out = Counter(item.reason for item in judged if not item.inside)
    for reason, count in out.most_common():
        print(f"  {count:4d}  {reason}")
    print("\ninside, by kind of difference (a pair may show several):")
    kinds = Counter(kind for item in inside for kind in item.reason.split(", "))
    for kind, count in kinds.most_common():
        print(f"  {count:4d}  {kind}")
    wrong = [item for item in inside if not item.right]
    print(f"\nwrong ({len(wrong)}):")
    for item in wrong:
        _print_pair(item)
    if listing:
        print("\nevery pair:")
        for item in judged:
            _print_pair(item)


def _print_pair(item: Judged) -> None:
    pair = item.pair
    verdict = "same" if pair.same else "different"
    mark = ("right" if item.right else "WRONG") if item.inside else "out"
    options = f" ({pair.options})" if pair.options else ""
    print(f"  [{mark}] {pair.peer} {pair.source} {pair.function}{options}: peer says {verdict}")
    print(f"      a: {pair.a!r}")
    print(f"      b: {pair.b!r}")
    print(f"      {item.reason}")
    if item.inside:
        print(f"      keys: {item.keys[0]!r} / {item.keys[1]!r}")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--w3lib", type=Path, required=True, help="a checkout of scrapy/w3lib")
    parser.add_argument(
        "--url-normalize", type=Path, required=True, help="a checkout of niksite/url-normalize"
    )
    parser.add_argument("--courlan", type=Path, required=True, help="a checkout of adbar/courlan")
    parser.add_argument("--list", action="store_true", help="print every pair and its class")
    args = parser.parse_args(list(argv) if argv is not None else None)
    folders = {"w3lib": args.w3lib, "url-normalize": args.url_normalize, "courlan": args.courlan}
    pairs = [
        pair
        for peer, folder in folders.items()
        for case in read_cases(peer, folder)
        for pair in to_pairs(case)
    ]
    report([judge(pair) for pair in pairs], args.list)
    return 0


if __name__ == "__main__":
    sys.exit(main())
