"""The argument types the commands share: each refuses a value in words (argparse's exit 2,
``newsdesk COMMAND: error: argument …``) before anything runs."""

from __future__ import annotations

import argparse
import ipaddress
from datetime import UTC, datetime
from typing import TypeAlias

from newsdesk.core.times import parse_time, replay_time

# what each command module's ``add`` adds its parser to: ``newsdesk``'s subcommands
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

JSON_HELP = "print one JSON object"


def whole_number(value: str) -> int:
    """``value`` as a whole number, or argparse's error in words (left to argparse, a type's
    ValueError would name the function: ``invalid positive value: 'x'``)."""
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None


def positive(value: str) -> int:
    number = whole_number(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {number}")
    return number


def port(value: str) -> int:
    number = whole_number(value)
    if not 0 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"a port is from 0 to 65535, not {number}")
    return number


def ipv4(value: str) -> str:
    try:
        return str(ipaddress.IPv4Address(value))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {value!r}") from None


def time(value: str) -> datetime:
    """ISO 8601, UTC if bare."""
    try:
        return parse_time(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {value!r}") from None


def cluster_time(value: str) -> datetime:
    """``cluster --at``, checked as the cluster function checks its event's ``at``."""
    try:
        return replay_time(value, datetime.now(UTC))
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{value} {e}") from None
