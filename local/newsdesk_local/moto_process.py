"""moto's server as a process of its own (``newsdesk_local.services`` starts it): it serves on
the listening socket it is handed (its file descriptor is the one argument), prints "ready",
and stops when its standard input closes. It imports moto and nothing of newsdesk, to start
as fast as moto allows (a save imports the kept objects' format, when asked).

With ``--cloudformation-responses`` it also accepts what a custom resource sends to its
pre-signed response URL: a PUT to ``RESPONSE_PATH`` (a path no S3 bucket name can take) is
answered 200 and its body printed as one line, ``cloudformation-response <body>``, for
``newsdesk stack`` to read.

A line ``save-bucket {"bucket", "folder"}`` on its standard input writes the bucket's objects
not yet in the folder there, read from moto's own store (``<key>`` the body, ``<key>.meta.json``
what GetObject would say of it, in ``newsdesk_local.saved_state``'s format), and is
answered ``saved-bucket {"saved": <count>}`` or ``saved-bucket {"error": <one line>}``."""

import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from moto import backends
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import make_server

# moto's dispatcher asks for its backends' names twice a request, and each time lists its
# package's folder and stats every entry (0.8 ms of CPU: about 1.3 s in a round of 40 outlets'
# 850 requests): they do not change while it runs.
_MODULES = tuple(backends.list_of_moto_modules())
backends.list_of_moto_modules = lambda: _MODULES

RESPONSE_PATH = "/_newsdesk/cloudformation-response"
RESPONSE_LINE = "cloudformation-response "
SAVE_COMMAND, SAVED_LINE = "save-bucket ", "saved-bucket "
USER_METADATA = "x-amz-meta-"  # a user metadata key's prefix in moto's FakeKey.metadata

_printing = threading.Lock()  # one line at a time on stdout, from any thread


def say(line: str) -> None:
    with _printing:
        print(line, flush=True)


WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def accepting_responses(app: WsgiApp) -> WsgiApp:
    """``app``, but for PUTs under RESPONSE_PATH, which are printed (one line each)."""

    def dispatch(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if environ["REQUEST_METHOD"] != "PUT" or not path.startswith(RESPONSE_PATH):
            return app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        line = json.dumps({"path": path, "body": body.decode("utf-8", "replace")})
        say(RESPONSE_LINE + line)
        start_response("200 OK", [("Content-Length", "0")])
        return [b""]

    return dispatch


def save_bucket(bucket: str, folder: Path) -> int:
    """The bucket's objects not yet in ``folder`` written there, as the runtime saved them
    through GetObject (its body; its user metadata and content type as boto3 gives them);
    how many were written."""
    # loaded when asked, not at every start
    from moto.s3.models import FakeKey, s3_backends

    from newsdesk_local.saved_state import keep_object, object_path

    if bucket not in s3_backends.bucket_accounts:
        raise LookupError(f"no bucket {bucket}")
    partition, account_id = s3_backends.bucket_accounts[bucket]
    keys = s3_backends[account_id][partition].get_bucket(bucket).keys.items()
    saved = 0
    for name, key in keys:
        target = object_path(folder, name)
        if not isinstance(key, FakeKey) or target is None:  # a delete marker, or kept
            continue
        fields = {field.lower(): value for field, value in key.metadata.items()}
        metadata = {
            field.removeprefix(USER_METADATA): value
            for field, value in fields.items()
            if field.startswith(USER_METADATA)
        }
        keep_object(target, name, key.value, metadata, fields.get("content-type"))
        saved += 1
    return saved


def answer(command: str) -> str:
    """The answer line to a line of standard input."""
    try:
        if not command.startswith(SAVE_COMMAND):
            raise ValueError(f"unknown command {command.split(' ', 1)[0]!r}")
        asked = json.loads(command.removeprefix(SAVE_COMMAND))
        result: dict[str, Any] = {"saved": save_bucket(asked["bucket"], Path(asked["folder"]))}
    except Exception as e:  # the runtime reports it; the server serves on
        result = {"error": " ".join(f"{type(e).__name__}: {e}".split())}
    return SAVED_LINE + json.dumps(result)


def serve() -> None:
    """Serve on the socket of file descriptor ``sys.argv[1]``, answering the commands on
    stdin, until stdin closes."""

    class Handler(MotoRequestHandler):  # type: ignore[misc]
        # Each answer is written in two parts; with Nagle's algorithm the second waits for
        # the client's delayed ACK, 40 ms on Linux, on every call.
        disable_nagle_algorithm = True

        def log_request(self, *args: Any, **kwargs: Any) -> None:
            pass

    app: WsgiApp = DomainDispatcherApplication(create_backend_app)
    if "--cloudformation-responses" in sys.argv[2:]:
        app = accepting_responses(app)
    fd = int(sys.argv[1])
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=Handler, fd=fd)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("ready", flush=True)
    for command in sys.stdin:
        say(answer(command.rstrip("\n")))
    os._exit(0)  # the runtime has saved what it keeps; nothing here needs a graceful end


if __name__ == "__main__":
    serve()
