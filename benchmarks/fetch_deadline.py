"""One deadline from the first DNS query to the last byte (issue 22, point 6): how long a fetch
with a 2 s deadline takes where a network is hostile, on 127.0.0.1 only.

    .venv/bin/python benchmarks/fetch_deadline.py
    .venv/bin/python benchmarks/fetch_deadline.py --timeout 2 --rounds 3

The cases (the issue's), each played on loopback:

- **five unreachable addresses**: a name with five A records, each a loopback port whose
  listener's queue is full (its SYNs go unanswered);
- **slow answer, then a redirect**: a server that answers after 1.5 s with a redirect to such
  an address;
- **slow DNS**: a name whose answer comes after 6 s (a stand-in for the system resolver, which
  the fetcher asks through ``socket.getaddrinfo``), then a server that answers at once.

Printed: per case, the wall-clock seconds of the fetch (the least of ``--rounds``) and how it
ended. A fetch that keeps its deadline ends at about ``--timeout`` in every case.
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from newsdesk.collect.fetch import FetchPolicy, fetch
from newsdesk.core.errors import FeedError
from newsdesk.core.settings import LOCAL_CONTACT, user_agent_for
from newsdesk_local.feedserver import FeedServer, Route, unreachable_port


@contextlib.contextmanager
def names(answers: dict[str, tuple[float, list[str]]]) -> Iterator[None]:
    """The system resolver, but each name in ``answers`` answered (after its delay) with its
    loopback addresses."""
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in answers:
            return real(host, port, *args, **kwargs)
        delay, addresses = answers[host]
        time.sleep(delay)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, int(port))) for a in addresses]

    socket.getaddrinfo = getaddrinfo
    try:
        yield
    finally:
        socket.getaddrinfo = real


def timed(call: Callable[[], object], rounds: int) -> tuple[float, str]:
    best, outcome = float("inf"), ""
    for _ in range(rounds):
        started = time.monotonic()
        try:
            call()
            outcome = "fetched"
        except FeedError as e:
            outcome = f"{type(e).__name__}: {e}"
        best = min(best, time.monotonic() - started)
    return best, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    policy = FetchPolicy(
        timeout_seconds=args.timeout,
        max_bytes=1_000_000,
        user_agent=user_agent_for(LOCAL_CONTACT),
        allow_private_networks=True,
    )
    results: list[tuple[str, float, str]] = []
    with unreachable_port() as port, FeedServer() as server:
        slow = server.add(
            "/slow",
            Route(status=302, delay=1.5, headers=(("Location", f"http://127.0.0.1:{port}/"),)),
        )
        fine = server.add("/feed.xml", Route(body=b"<rss/>"))
        answers = {"five.test": (0.0, ["127.0.0.1"] * 5), "slow-dns.test": (6.0, ["127.0.0.1"])}
        with names(answers):
            cases: list[tuple[str, Callable[[], object]]] = [
                ("five unreachable addresses", lambda: fetch(f"http://five.test:{port}/", policy)),
                ("slow answer, then a redirect", lambda: fetch(slow, policy)),
                (
                    "slow DNS (6 s)",
                    lambda: fetch(fine.replace("127.0.0.1", "slow-dns.test"), policy),
                ),
            ]
            for name, call in cases:
                seconds, outcome = timed(call, args.rounds)
                results.append((name, seconds, outcome))
    print(f"deadline {args.timeout:g} s (FETCH_TIMEOUT_SECONDS), best of {args.rounds}")
    for name, seconds, outcome in results:
        print(f"  {name:<30} {seconds:6.2f} s  {outcome}")
    # the resolver threads the fetcher stopped waiting for end on their own
    for thread in threading.enumerate():
        if thread.name == "newsdesk-resolve":
            thread.join(10)


if __name__ == "__main__":
    main()
