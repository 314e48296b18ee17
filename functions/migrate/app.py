"""Migrations at deploy time: a CloudFormation custom resource that applies the SQL migrations
on Create and Update (its Revision names the newest migration) and does nothing on Delete. After
the migrations each function's database role gets the password of its secret (the resource's
``RoleSecrets``, the secrets' ARNs: a new secret is an Update, so its password is set)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws.custom_resource import respond
from newsdesk.core.settings import Settings
from newsdesk.storage.database import Database, database_from, read_secret
from newsdesk.storage.migrate import migrate
from newsdesk.storage.roles import set_passwords

logger = Logger()
PHYSICAL_ID = "newsdesk-schema"


def default_database() -> Database:
    return database_from(Settings.from_env())


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, context, default_database)


@logger.inject_lambda_context(clear_state=True)
def handle(
    event: dict[str, Any],
    context: LambdaContext,
    database: Callable[[], Database],
    send: Callable[[str, bytes], None] | None = None,
) -> dict[str, Any]:
    """``database`` is called inside the error handling: a bad setting is a FAILED response.
    ``send`` delivers the response (default: a PUT to the event's pre-signed URL)."""
    if event["RequestType"] == "Delete":  # the schema outlives the stack's custom resource
        return respond(event, "SUCCESS", "nothing to do on delete", PHYSICAL_ID, send)
    try:
        db = database()
        applied = migrate(db)
        secrets = event.get("ResourceProperties", {}).get("RoleSecrets", [])
        roles = set_passwords(db, [read_secret(str(arn)) for arn in secrets])
        db.close()
    except Exception as e:  # CloudFormation must hear of any failure, or it waits an hour
        logger.exception("migrations failed")
        return respond(event, "FAILED", f"{type(e).__name__}: {e}", PHYSICAL_ID, send)
    logger.info("migrations applied", extra={"applied": applied, "roles": roles})
    reason = f"applied: {applied or 'none'}" + (f"; passwords set: {roles}" if roles else "")
    return respond(event, "SUCCESS", reason, PHYSICAL_ID, send)
