"""A function for the event-source driver's tests (run in the Lambda pool's processes): it
reports failed every record whose body is "fail", and raises on a body "crash"."""

from typing import Any


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    bodies = [record["body"] for record in event["Records"]]
    if "crash" in bodies:
        raise RuntimeError("crashed")
    return {
        "bodies": bodies,
        "batchItemFailures": [
            {"itemIdentifier": r["messageId"]} for r in event["Records"] if r["body"] == "fail"
        ],
    }
