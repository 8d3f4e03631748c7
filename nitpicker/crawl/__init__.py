"""The crawl runtime: what one crawl is while it runs.

Its options (``config``, built once by ``config_builder``), its live state (``session``:
policies, archive writer, counters), the archive-backed scheduler (``frontier``), adaptive
concurrency (``throttle``), the sitemap seeder (``sitemaps``), ``--append`` (``append``),
the closed vocabularies of fetch errors and run failures (``errors``, ``failure``) and the
request meta keys (``meta``).
"""
