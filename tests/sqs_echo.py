"""A function for the event-source driver's tests (run in the Lambda pool's processes): it
reports failed every record whose body is "fail", raises on a body "crash", returns nothing
for "none", ends its container for "die", and for "import NAME" imports NAME and says from
where (the container's isolation)."""

import importlib
import os
from typing import Any


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any] | None:
    bodies = [record["body"] for record in event["Records"]]
    if bodies and bodies[0].startswith("import "):
        return {"imported": importlib.import_module(bodies[0].split()[1]).__file__}
    if "crash" in bodies:
        raise RuntimeError("crashed")
    if "none" in bodies:
        return None
    if "die" in bodies:
        os._exit(1)
    return {
        "bodies": bodies,
        "batchItemFailures": [
            {"itemIdentifier": r["messageId"]} for r in event["Records"] if r["body"] == "fail"
        ],
    }
