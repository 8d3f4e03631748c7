"""The crawl policy: pure rules with table-driven tests.

URL normalisation and keys (``urls``), scope (``scope``), excludes (``excludes``), follow
rules (``follow``), link resolution (``links``), the meta signature and the trap cap
(``signature``, ``trapcap``), the private-network rules (``netguard``) and page extraction
(``extract``). Nothing here imports Scrapy: the components in ``middlewares/`` and
``spiders/`` are thin adapters around these functions.
"""
