"""newsdesk: collect news feeds, fold articles into issues."""

__version__ = "0.1.0"
