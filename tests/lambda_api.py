"""A loopback stand-in for AWS Lambda's Invoke API (``POST /2015-03-31/functions/NAME/
invocations``), for the commands that read a deployed stack through its read function: each
invocation runs the handler given, in this process, as a warm container would. botocore's own
Lambda client talks to it (AWS_ENDPOINT_URL), so the request, the answer and a function error
travel as they do from AWS. Only 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.conftest import QuietHandler, serving

Handler = Callable[[dict[str, Any]], Any]


@contextmanager
def lambda_api(functions: dict[str, Handler]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(its URL, the events each invocation was given)."""
    received: list[dict[str, Any]] = []

    class Invoke(QuietHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            parts = self.path.split("/")  # /2015-03-31/functions/NAME/invocations
            handler = functions.get(parts[3]) if len(parts) == 5 else None
            if handler is None:
                error = {"Type": "User", "message": f"Function not found: {self.path}"}
                return self._answer(404, error, {"x-amzn-ErrorType": "ResourceNotFoundException"})
            event = json.loads(body or b"{}")
            received.append(event)
            try:
                return self._answer(200, handler(event))
            except Exception as e:  # as Lambda reports an unhandled error
                failed = {"errorMessage": str(e), "errorType": type(e).__name__}
                return self._answer(200, failed, {"X-Amz-Function-Error": "Unhandled"})

        def _answer(
            self, status: int, document: Any, headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    with serving(Invoke) as url:
        yield url, received
