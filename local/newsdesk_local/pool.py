"""Lambda containers on one machine: a pool of processes per function, each process one
container — warm between invocations, one invocation at a time, its module state its own —
with the function's environment and its logs and EMF metrics appended to one log file.

Processes come from a fork server that has imported the heavy libraries every handler needs
(``newsdesk_local.preload``) once: a container starts in milliseconds instead of re-importing
them, and shares their pages with its siblings. Nothing of newsdesk is imported there, so each
container still builds its own loggers, clients and connections from its own environment, as
a cold Lambda does.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import time
import uuid
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from newsdesk_local.infrastructure import ACCOUNT, REGION, Function

# Imported once in the fork server (its docstring says what it holds).
PRELOAD = "newsdesk_local.preload"


def _fork_server() -> multiprocessing.context.BaseContext:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([PRELOAD])  # takes effect when the server starts
    return context


@dataclass
class LocalContext:
    """The parts of the Lambda context object that Powertools reads."""

    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    timeout_seconds: int = 900
    started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        left = self.timeout_seconds - (time.monotonic() - self.started)
        return max(0, int(left * 1000))

    @classmethod
    def of(cls, function: Function) -> LocalContext:
        return cls(function.name, function.memory_mb, timeout_seconds=function.timeout_seconds)


def _start_container(env: dict[str, str], log_path: str, module: str) -> None:
    """A container's init phase: its environment, its output, its handler's module."""
    os.environ.clear()
    os.environ.update(env)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    global _init_error
    try:
        importlib.import_module(module)
    except Exception as e:  # as Lambda does, every invocation of this container reports it
        _init_error = e


_init_error: Exception | None = None  # this container's, if its handler failed to import


def _invoke(function: Function, event: dict[str, Any]) -> dict[str, Any]:
    if _init_error is not None:
        raise _init_error
    module = importlib.import_module(function.module)
    result: dict[str, Any] = module.lambda_handler(event, LocalContext.of(function))
    return result


def _ready() -> None:
    """Nothing: the container's start did the work."""


class LambdaPool:
    """Up to ``concurrency`` containers of ``function``, started as invocations need them."""

    def __init__(
        self, function: Function, env: dict[str, str], log_path: str, concurrency: int = 1
    ) -> None:
        self.function = function
        self.concurrency = concurrency
        self._executor = ProcessPoolExecutor(
            max_workers=concurrency,
            mp_context=_fork_server(),
            initializer=_start_container,
            initargs=(env, log_path, function.module),
        )

    def invoke(self, event: dict[str, Any]) -> Future[dict[str, Any]]:
        return self._executor.submit(_invoke, self.function, event)

    def warm(self) -> None:
        """Start containers, up to ``concurrency`` (the executor may reuse one that is free
        already), as provisioned concurrency would: what follows then measures work more
        than cold starts."""
        futures = [self._executor.submit(_ready) for _ in range(self.concurrency)]
        for future in futures:
            future.result()

    def __enter__(self) -> LambdaPool:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
