"""Cluster function (container image): one clustering pass over the recent articles."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from newsdesk.aws import database_from
from newsdesk.cluster_job import run_clustering
from newsdesk.clustering import DEFAULT_THRESHOLDS
from newsdesk.metrics import add_cluster_metrics
from newsdesk.settings import Settings

logger = Logger()
metrics = Metrics()
settings = Settings.from_env()
database = database_from(settings)


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    method = settings.cluster_method
    threshold = settings.cluster_threshold
    run = run_clustering(
        database,
        method=method,
        threshold=DEFAULT_THRESHOLDS[method] if threshold is None else threshold,
        min_size=settings.cluster_min_size,
        window_hours=settings.cluster_window_hours,
    )
    add_cluster_metrics(metrics, run)
    return run.as_dict()
