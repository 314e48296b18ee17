"""Page preparation's cost as a hostile page grows (issue 22, point 5): linear, or not.

    .venv/bin/python benchmarks/page_preparation.py
    .venv/bin/python benchmarks/page_preparation.py --sizes 39,78,156 --extract

The extractor prepares each page's tree before trafilatura reads it
(``newsdesk.extract.text``: empty elements before text removed, a container's own text in
paragraphs). Each shape below is one element's content repeated to the size asked, inside
``<html><body><div>…</div></body></html>``:

- ``text<br>``: text beside line breaks in one element (an XPath's preceding-sibling step
  made this quadratic: 39, 78 and 156 kB took 0.21, 0.84 and 3.1 s);
- ``<span></span>word``: empty elements, each before text (removed one by one, each removal
  copied the growing text before it again);
- ``<div><script>…</script></div>word``: the ad slot the preparation is for;
- ``<p>…</p>``: an ordinary article's paragraphs, for comparison.

Printed: per shape and size, the CPU seconds of the preparation (the least of ``--rounds``) and
the CPU microseconds per kB; a linear cost keeps the second column flat as the size doubles.
``--extract`` adds the whole of ``extract_text`` (trafilatura's own passes included).
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable

from newsdesk.extract.text import _parse, extract_text

SHAPES: dict[str, str] = {
    "text<br>": "text<br>",
    "<span></span>word": "<span></span>word ",
    "<div><script/></div>word": "<div><script>ad()</script></div>word ",
    "<p>…</p>": "<p>기사 본문의 한 문단입니다.</p>",
}


def page(unit: str, kilobytes: int) -> str:
    count = kilobytes * 1024 // len(unit.encode())
    return f"<html><body><div>{unit * count}</div></body></html>"


def cpu(call: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        call()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes", default="128,256,512,1024,2048", help="kB, comma-separated (doubling)"
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--extract", action="store_true", help="also time extract_text")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"{'shape':<26} {'kB':>6} {'prepare s':>10} {'µs/kB':>8}", end="")
    print(f" {'extract s':>10} {'µs/kB':>8}" if args.extract else "")
    for name, unit in SHAPES.items():
        for kilobytes in sizes:
            html = page(unit, kilobytes)
            prepared = cpu(functools.partial(_parse, html), args.rounds)
            line = f"{name:<26} {kilobytes:>6} {prepared:>10.3f} {prepared / kilobytes * 1e6:>8.0f}"
            if args.extract:
                whole = cpu(functools.partial(extract_text, html), args.rounds)
                line += f" {whole:>10.3f} {whole / kilobytes * 1e6:>8.0f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
