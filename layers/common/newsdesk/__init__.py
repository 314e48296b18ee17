"""newsdesk: collect news feeds, fold articles into issues."""

__version__ = "0.1.0"
# Where a webmaster who finds newsdesk in their logs reads what it is and whom to ask; the
# User-Agent names it. pyproject.toml's [project.urls] Homepage is the same (a test checks).
PROJECT_URL = "https://github.com/newsdesk/newsdesk"
