"""Migrations at deploy time: a CloudFormation custom resource that applies the SQL migrations
on Create and Update (its Revision names the newest migration) and does nothing on Delete."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws import database_from
from newsdesk.custom_resource import respond
from newsdesk.migrate import migrate
from newsdesk.settings import Settings

logger = Logger()
PHYSICAL_ID = "newsdesk-schema"


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event["RequestType"] == "Delete":  # the schema outlives the stack's custom resource
        return respond(event, "SUCCESS", "nothing to do on delete", PHYSICAL_ID)
    try:
        database = database_from(Settings.from_env())
        applied = migrate(database)
        database.close()
    except Exception as e:  # CloudFormation must hear of any failure, or it waits an hour
        logger.exception("migrations failed")
        return respond(event, "FAILED", f"{type(e).__name__}: {e}", PHYSICAL_ID)
    logger.info("migrations applied", extra={"applied": applied})
    return respond(event, "SUCCESS", f"applied: {applied or 'none'}", PHYSICAL_ID)
