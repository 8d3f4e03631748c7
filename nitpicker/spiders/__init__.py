"""The spiders of the nitpicker Scrapy project."""
