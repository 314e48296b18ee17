"""What runs inside a local Lambda container, and nothing else: the standard library only, so
that a container holds what its function's artifact holds and no more.

A container's import path is its function's artifact as Lambda lays it out: the function's
code folder (/var/task), its layers' content and installed packages (/opt/python), the
runtime's boto3 (/var/runtime), the standard library. Everything the process had imported
from elsewhere (this environment's site-packages, the editable install's finders) is dropped
before the handler's module is imported, so a handler that reaches past its layers fails
here as it would in AWS: `ModuleNotFoundError` at its init.

The fork server calls ``preload`` once (``newsdesk_local.forkserver``): the heavy libraries
every zip function's common layer and the runtime hold, from those folders, and the extract
layer's. Each container starts from a fork that has them already, instead of importing them
again (about a second each on two cores). A container whose path does not hold them drops
them and imports its own.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import sysconfig
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

PRELOAD = (
    "aws_lambda_powertools.logging",
    "aws_lambda_powertools.metrics",
    "aws_lambda_powertools.utilities.batch",
    "aws_lambda_powertools.utilities.parameters",
    "boto3",
    "feedparser",
    "psycopg2.extras",
    "requests",
    "yaml",
)
# and the extract layer's (a round runs several extractor containers at once), each from the
# first folder that holds it: a container whose folders hold none of a package drops it. Not
# the cluster image's numeric stack (numpy, scipy, scikit-learn: about 3 s of CPU on two
# cores): one cluster container runs at a time and imports it itself, as a cold one does in
# AWS, and every other container would pay to start beside it and to drop it.
MORE = (
    "lxml.html",
    "protego",
    "trafilatura",
)
SERVICES = ("sqs", "dynamodb", "s3", "secretsmanager")  # their models parsed once, in the server
STDLIB = tuple(
    os.path.realpath(p) for p in {sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")}
)
_PACKAGE = __name__.rpartition(".")[0]
# kept through isolation: this module, the fork server's preload, their package (unpickling)
KEEP = (__name__, f"{_PACKAGE}.forkserver", _PACKAGE)


@dataclass
class LocalContext:
    """The parts of the Lambda context object that Powertools reads."""

    function_name: str
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    timeout_seconds: int = 900
    region: str = "ap-northeast-2"
    account: str = "123456789012"
    started: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{self.account}:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        left = self.timeout_seconds - (time.monotonic() - self.started)
        return max(0, int(left * 1000))


# Each module file's real path, found once: the fork server finds its preloaded modules' before
# it forks (``preload``), so that a container's ``isolate`` resolves no link of theirs again.
_REAL: dict[str, str] = {}


def _real(file: str) -> str:
    real = _REAL.get(file)
    if real is None:
        real = _REAL[file] = os.path.realpath(file)
    return real


def _under(file: str, folders: tuple[str, ...]) -> bool:
    real = _real(file)
    return any(real == f or real.startswith(f + os.sep) for f in folders)


def _stdlib(file: str) -> bool:
    return _under(file, STDLIB) and "site-packages" not in file.split(os.sep)


def _module_of(finder: object) -> str:
    """The module a finder (a class, as the interpreter's own are, or an object) is from."""
    return str(getattr(finder, "__module__", None) or type(finder).__module__)


def _provided(top: str, folders: tuple[str, ...]) -> bool:
    """Whether a top-level package or module of that name is in one of the folders."""
    for folder in folders:
        if os.path.isdir(os.path.join(folder, top)) or os.path.isfile(
            os.path.join(folder, top + ".py")
        ):
            return True
        if any(n.startswith(top + ".") and n.endswith(".so") for n in os.listdir(folder)):
            return True
    return False


def isolate(path: list[str]) -> None:
    """This process's imports from ``path`` and the standard library only. A module already
    loaded from elsewhere is dropped unless ``path`` holds its package too: the preloaded
    common libraries, which an image holds at the same versions (the locks agree), are kept,
    since an extension module cannot be loaded a second time from another file."""
    folders = tuple(os.path.realpath(p) for p in path if os.path.isdir(p))
    sys.path[:] = [*path, *(p for p in sys.path if p and _stdlib(p))]
    # the finders `site` added (an editable install's) go; the interpreter's own stay
    sys.meta_path[:] = [f for f in sys.meta_path if _module_of(f).startswith("_frozen_importlib")]
    sys.path_importer_cache.clear()
    provided: dict[str, bool] = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if name in KEEP or file is None or _stdlib(file) or _under(file, folders):
            continue
        top = name.partition(".")[0]
        if top not in provided:
            provided[top] = _provided(top, folders)
        if not provided[top]:
            del sys.modules[name]
    package = sys.modules.get(_PACKAGE)
    if package is not None:
        package.__path__ = []  # nothing more of the local package can be imported from here


def preload(path: list[str], more: list[str]) -> None:
    """In the fork server: the common libraries, from ``path`` (the folders every zip
    function's path holds), found there first; then the other artifacts' libraries, with
    ``more`` (their folders) after ``path``. Nothing else of the server's environment is taken
    away: each child re-runs the command's main module (multiprocessing's spawn preparation)
    before its container starts, and isolates itself then."""
    sys.path[:0] = path
    try:
        for name in PRELOAD:
            importlib.import_module(name)
    except ImportError:  # the folders are not all there: each container reports it at its start
        return
    sys.path[len(path) : len(path)] = more
    for name in MORE:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    boto3 = sys.modules["boto3"]
    boto3.setup_default_session()
    for service in SERVICES:
        boto3.client(
            service,
            region_name="ap-northeast-2",
            endpoint_url="http://127.0.0.1:9",
            aws_access_key_id="preload",
            aws_secret_access_key="preload",  # noqa: S106  (a stand-in; nothing is sent)
        )
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if file is not None:
            _real(file)
    # kept by every container: out of the collector's sight, a collection does not touch
    # (and so copy) the pages it lives on
    gc.freeze()


_init_error: Exception | None = None  # this container's, if its handler failed to import


def start(env: dict[str, str], log_path: str, path: list[str], module: str) -> None:
    """A container's init phase: its environment, its output, its path, its handler's module."""
    os.environ.clear()
    os.environ.update(env)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    isolate(path)
    global _init_error
    try:
        importlib.import_module(module)
    except Exception as e:  # as Lambda does, every invocation of this container reports it
        _init_error = e


def invoke(handler: str, context: dict[str, Any], event: dict[str, Any]) -> dict[str, Any]:
    """``handler`` ("worker.lambda_handler") called as Lambda calls it."""
    if _init_error is not None:
        raise _init_error
    module, function = handler.rsplit(".", 1)
    result: dict[str, Any] = getattr(importlib.import_module(module), function)(
        event, LocalContext(**context)
    )
    return result


def ready() -> None:
    """Nothing: the container's start did the work."""
