"""The data behind EXTRACT_MIN_CHARS and the list-page rule (docs/extraction.md, "Judging a page").

    .venv/bin/python benchmarks/thin_threshold.py
    .venv/bin/python benchmarks/thin_threshold.py --data PATH

Prints the distribution (min, 5th percentile, median, max) of ``text_chars`` — the count
``judge_page`` uses — over the article-extraction benchmark's true texts and newsdesk's
extractions of its pages (English), and over the Korean fixture pages' extracted texts
(tests/pages: ``article_*`` and ``brief_*`` are articles, ``photo_*`` photo captions); then each
Korean page with its count and verdict; then the measures the link_list rule reads (headline
links in the element the main text comes from, and the share of link text there) on the
benchmark's pages and the fixture section page. Percentiles are nearest-rank.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
from collections.abc import Sequence
from pathlib import Path

from newsdesk.extract.facts import PageFacts
from newsdesk.extract.page import judge_page, text_chars
from newsdesk.extract.text import decode_html, extract_text
from newsdesk.extract.vocabulary import (
    DEFAULT_MIN_CHARS,
    LIST_LINK_DENSITY,
    LIST_MIN_LINKS,
    LIST_TEXT_PER_LINK,
)

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "tests" / "pages"
CANDIDATES = (
    ROOT.parent / "shared" / "data" / "article-extraction",
    Path("/work/shared/data/article-extraction"),
)
FIXTURE_URL = "https://www.hanbitnews.co.kr/view/HBN20260312000101"  # an article's address


def default_data() -> Path:
    return next((p for p in CANDIDATES if (p / "ground-truth.json").is_file()), CANDIDATES[0])


def percentile(values: Sequence[int], share: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def row(name: str, values: Sequence[int]) -> str:
    return (
        f"{name:44s} {len(values):5d} {min(values):6d} {percentile(values, 0.05):6d}"
        f" {percentile(values, 0.5):7d} {max(values):7d}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=None, help="the benchmark's folder")
    args = parser.parse_args()
    data = args.data or default_data()
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    benchmark: list[tuple[str, str, str, str]] = []  # key, url, page, extracted text
    for key, item in sorted(truth.items()):
        page = decode_html(gzip.decompress((data / "html" / f"{key}.html.gz").read_bytes()))
        benchmark.append((key, item["url"], page, extract_text(page, url=item["url"]).text))
    korean: dict[str, tuple[str, str]] = {}
    for path in sorted(PAGES.glob("*.html")):
        if path.name.startswith(("article_", "brief_", "photo_")):
            page = decode_html(path.read_bytes())
            korean[path.name] = (page, extract_text(page, url=FIXTURE_URL).text)

    print("text_chars: non-whitespace characters of the lines that hold a sentence end")
    print(f"{'':44s} {'pages':>5s} {'min':>6s} {'p5':>6s} {'median':>7s} {'max':>7s}")
    true_texts = [text_chars(truth[key]["articleBody"] or "") for key, *_ in benchmark]
    print(row("benchmark, true texts", true_texts))
    print(row("benchmark, newsdesk's extractions", [text_chars(t) for *_, t in benchmark]))
    articles = [text_chars(t) for n, (_, t) in korean.items() if not n.startswith("photo_")]
    captions = [text_chars(t) for n, (_, t) in korean.items() if n.startswith("photo_")]
    print(row("Korean fixtures, articles and briefs", articles))
    print(row("Korean fixtures, photo captions", captions))

    print(f"\nKorean fixture pages (DEFAULT_MIN_CHARS = {DEFAULT_MIN_CHARS})")
    print(f"{'page':34s} {'text_chars':>10s} {'non-space':>9s}  verdict")
    for name, (page, text) in korean.items():
        verdict = judge_page(page, extract_text(page, url=FIXTURE_URL), FIXTURE_URL)
        plain = sum(len(word) for word in text.split())
        print(f"{name:34s} {text_chars(text):10d} {plain:9d}  {verdict.status}")

    print(
        f"\nlink_list: >= {LIST_MIN_LINKS} headline links in the main text's element, link"
        f" share >= {LIST_LINK_DENSITY}, <= {LIST_TEXT_PER_LINK} text_chars a link"
    )
    measured = []
    for _, url, page, text in benchmark:
        links, density = PageFacts(page, text).container_links()
        measured.append((links, density, text_chars(text) / max(links, 1), url))
    many = [m for m in measured if m[0] >= LIST_MIN_LINKS]
    print(f"benchmark pages with >= {LIST_MIN_LINKS} headline links there: {len(many)} of 90")
    for links, density, per_link, url in sorted(many, key=lambda m: -m[1]):
        print(f"  {links:3d} links  share {density:.3f}  {per_link:6.0f} chars a link  {url[:60]}")
    page = decode_html((PAGES / "section_politics.html").read_bytes())
    text = extract_text(page, url=FIXTURE_URL).text
    links, density = PageFacts(page, text).container_links()
    print(
        f"fixture section page: {links} links  share {density:.3f}"
        f"  {text_chars(text) / max(links, 1):.0f} chars a link"
    )


if __name__ == "__main__":
    main()
