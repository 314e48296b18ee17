"""What a command runs against: its environment (this machine's, with the operator contact a
local run gives), the sources it collects and the local runtime it starts."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from newsdesk.core.settings import LOCAL_CONTACT, Settings
from newsdesk.core.sources import Outlet, group_by_outlet, load_sources

if TYPE_CHECKING:
    from newsdesk_local.services import LocalServices


def environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``environ`` (default: this process's) in which OPERATOR_CONTACT is set."""
    env = dict(os.environ if environ is None else environ)
    if not env.get("OPERATOR_CONTACT", "").strip():
        # a run on this machine: its requests say so (the functions refuse an unset contact)
        env["OPERATOR_CONTACT"] = LOCAL_CONTACT
    return env


def zone(env: dict[str, str]) -> ZoneInfo:
    """NEWSDESK_TIMEZONE's zone: the one the output prints in and time options are read in."""
    return Settings.from_env(env).zone


def deployed(env: dict[str, str]) -> dict[str, str | None]:
    """boto3's options for a deployed stack's clients (``operator_client``): its region as the
    AWS CLI reads it (AWS_REGION, else AWS_DEFAULT_REGION, else the profile's) and
    AWS_ENDPOINT_URL, both from ``env``; credentials are boto3's own."""
    return {
        "region_name": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
        "endpoint_url": env.get("AWS_ENDPOINT_URL") or None,
    }


def runtime(env: dict[str, str]) -> LocalServices:
    """PostgreSQL (migrated) and AWS for local runs of the functions, to enter."""
    from newsdesk_local.services import LocalServices

    return LocalServices(Settings.from_env(env), env)


def outlets(env: dict[str, str]) -> list[Outlet]:
    """The outlets of the environment's sources file: a broken file (or setting) fails here,
    before anything is started or sent."""
    return group_by_outlet(load_sources(Settings.from_env(env).sources_path))
