"""``newsdesk.clustering``, as docs/architecture.md names it: the clustering stage's public
functions (``newsdesk.cluster``). Importing it loads scikit-learn."""

from newsdesk.cluster.grouping import cluster_titles, find_groups
from newsdesk.cluster.methods import DEFAULT_THRESHOLDS, METHODS, Group

__all__ = ["DEFAULT_THRESHOLDS", "METHODS", "Group", "cluster_titles", "find_groups"]
