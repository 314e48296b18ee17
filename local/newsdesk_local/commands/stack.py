"""`newsdesk stack`: the emulated AWS and PostgreSQL in the foreground, for `sam local invoke`,
until Ctrl-C (exit 130): ``newsdesk_local.stack``, which prints the addresses, the resources,
the ``env.json`` and each custom resource's response as it comes."""

from __future__ import annotations

import argparse
from typing import TextIO

from newsdesk_local.commands import arguments


def add(commands: arguments.Commands) -> None:
    stack = commands.add_parser(
        "stack",
        help="run the emulated AWS and PostgreSQL for `sam local invoke` until Ctrl-C",
    )
    stack.add_argument(
        "--bind",
        type=arguments.ipv4,
        default="127.0.0.1",
        help="the IPv4 address to listen on: loopback (default 127.0.0.1) or the Docker "
        "bridge's (Linux: 172.17.0.1); any other needs --expose-without-password",
    )
    stack.add_argument(
        "--aws-port",
        type=arguments.port,
        default=4566,
        help="the AWS emulator's port (4566; 0: any)",
    )
    stack.add_argument(
        "--postgres-port",
        type=arguments.port,
        default=55432,
        help="PostgreSQL's port (55432; 0: any)",
    )
    stack.add_argument(
        "--expose-without-password",
        action="store_true",
        help="allow a --bind other than loopback and the Docker bridge (0.0.0.0 included): "
        "the stack has no password, whoever reaches the address has its database",
    )
    stack.set_defaults(run=run)


def run(args: argparse.Namespace, env: dict[str, str], out: TextIO) -> int:
    from newsdesk_local.stack import run_stack

    return run_stack(
        env, args.bind, args.aws_port, args.postgres_port, out, args.expose_without_password
    )
