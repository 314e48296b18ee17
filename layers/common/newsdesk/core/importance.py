"""How big a story is, as one number (issue 40): what an issue's dossier reports and
`newsdesk issues --top` ranks the open issues by. The newsrooms that cover it count most, and
how much of it is fresh: ``ln(1 + outlets) + ln(1 + articles in the last 6 hours) + ln(1 +
articles in the last hour)`` (docs/clustering.md, "The dossier")."""

from __future__ import annotations

import math


def importance(outlets: int, last_6_hours: int, last_hour: int) -> float:
    return round(math.log1p(outlets) + math.log1p(last_6_hours) + math.log1p(last_hour), 4)
