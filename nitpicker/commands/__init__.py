"""Scrapy commands of the project (``COMMANDS_MODULE``): ``scrapy crawl`` with its spider
arguments checked before the crawl starts."""
