"""Scrapy components that apply nitpicker's crawl policies; the add-on registers them."""
