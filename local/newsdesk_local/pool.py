"""Lambda containers on one machine: a pool of processes per function, each process one
container — warm between invocations, one invocation at a time, its module state its own —
with the function's environment, its artifact's import path (``newsdesk_local.container``:
its code and layers as the locks installed them, nothing of this environment's), and its logs
and EMF metrics appended to one log file.

Processes come from a fork server that has imported the libraries every function's common
layer holds once (``newsdesk_local.forkserver``): a container starts in milliseconds instead of
re-importing them, and shares their pages with its siblings. Nothing of newsdesk is imported
there, so each container still builds its own loggers, clients and connections from its own
environment, as a cold Lambda does.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.spawn
import os
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any

from newsdesk.core.errors import ConfigError
from newsdesk_local import container, forkserver
from newsdesk_local.container import LocalContext
from newsdesk_local.infrastructure import ACCOUNT, REGION, Function, Infrastructure
from newsdesk_local.signals import INTERRUPTIONS

__all__ = ["LambdaPool", "LocalContext", "context_of", "start_fork_server"]


def _fork_server() -> multiprocessing.context.BaseContext:
    """The one fork server, started here, preloading from the folders every zip function's path
    holds (the common layer's content and installed lock, the runtime's), then the other
    artifacts' libraries from their folders. The folders reach it in its environment, which
    nothing else inherits, and so does the command's main module, which its children then
    need not run again (``newsdesk_local.forkserver``)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([forkserver.__name__])
    functions = Infrastructure.packaged().functions.values()
    paths = [f.artifact.path() for f in functions]
    zips = [f.artifact.path() for f in functions if not f.artifact.image]
    shared = [folder for folder in zips[0] if all(folder in path for path in zips)]
    more = list(dict.fromkeys(f for path in paths for f in path if f not in shared))
    preparation = multiprocessing.spawn.get_preparation_data("ignore")
    main = [
        f"{kind}:{preparation[key]}"
        for kind, key in (("name", "init_main_from_name"), ("path", "init_main_from_path"))
        if key in preparation
    ]
    os.environ[forkserver.PRELOAD_PATH] = os.pathsep.join(shared)
    os.environ[forkserver.MORE_PATH] = os.pathsep.join(more)
    os.environ[forkserver.MAIN] = main[0] if main else ""
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        for name in (forkserver.PRELOAD_PATH, forkserver.MORE_PATH, forkserver.MAIN):
            del os.environ[name]
    return context


def start_fork_server() -> None:
    """The fork server started now, if it is not yet: it preloads while the caller goes on, and
    the first container waits only for what is left of that. Not when the functions' packages
    are not installed: the first pool says so."""
    with contextlib.suppress(ConfigError):
        _fork_server()


def _context(function: Function) -> dict[str, Any]:
    """What a container's context is made of (it starts its own clock and request id)."""
    return {
        "function_name": function.name,
        "memory_limit_in_mb": function.memory_mb,
        "timeout_seconds": function.timeout_seconds,
        "region": REGION,
        "account": ACCOUNT,
    }


def context_of(function: Function) -> LocalContext:
    return LocalContext(**_context(function))


class LambdaPool:
    """Up to ``concurrency`` containers of ``function``, started as invocations need them."""

    def __init__(
        self, function: Function, env: dict[str, str], log_path: str, concurrency: int = 1
    ) -> None:
        self.function = function
        self.concurrency = concurrency
        path = function.artifact.path()
        handler = function.artifact.handler
        self._executor = ProcessPoolExecutor(
            max_workers=concurrency,
            mp_context=_fork_server(),
            initializer=container.start,
            initargs=(env, log_path, path, handler.rsplit(".", 1)[0]),
        )

    def invoke(self, event: dict[str, Any]) -> Future[dict[str, Any]]:
        handler = self.function.artifact.handler
        return self._executor.submit(container.invoke, handler, _context(self.function), event)

    def start(self, containers: int | None = None) -> None:
        """Containers started now, up to ``containers`` (default and at most: ``concurrency``),
        ahead of the invocations that will need them, as the event source mapping scales up to
        its messages; it returns once their processes are forked, their init phases running.
        An invocation waits for one of them rather than start another while one is free."""
        wanted = min(self.concurrency, containers or self.concurrency)
        executor: Any = self._executor
        while True:
            # one at a time, so that invocations submitted meanwhile wait for one fork, not all
            with executor._shutdown_lock:
                if executor._shutdown_thread or len(executor._processes) >= wanted:
                    return
                executor._spawn_process()
                # the executor starts a process for a submission unless its semaphore counts
                # one idle (a process counts once it has run a task): this one counts at once
                executor._idle_worker_semaphore.release()
                # what ends it at shutdown, as a submission would have started it
                executor._start_executor_manager_thread()

    def warm(self) -> None:
        """Start containers, up to ``concurrency`` (the executor may reuse one that is free
        already), as provisioned concurrency would: what follows then measures work more
        than cold starts."""
        futures = [self._executor.submit(container.ready) for _ in range(self.concurrency)]
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
        if isinstance(exc, INTERRUPTIONS):
            self.stop_containers()
        self._executor.shutdown(wait=True, cancel_futures=True)

    def stop_containers(self) -> None:
        """The containers ended now, their invocations cut off, as Lambda ends a container at
        a shutdown: a command stopped from outside (Ctrl-C reaches them itself, SIGTERM sent to
        the command alone does not) waits for no fetch to finish. Their messages stay on the
        queue (``invocations.drain``)."""
        processes = getattr(self._executor, "_processes", None) or {}
        for process in list(processes.values()):
            if process.is_alive():
                process.terminate()
