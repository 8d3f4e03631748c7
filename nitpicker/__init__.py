"""nitpicker: crawl a website into one SQLite archive, then audit, query and report on it."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
