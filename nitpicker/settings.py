"""Scrapy project settings. Short on purpose: the add-on (nitpicker.addon.Addon) does the wiring."""

BOT_NAME = "nitpicker"
SPIDER_MODULES = ["nitpicker.spiders"]
NEWSPIDER_MODULE = "nitpicker.spiders"
COMMANDS_MODULE = "nitpicker.commands"  # `scrapy crawl` refusing bad -a arguments in one line
ADDONS = {"nitpicker.addon.Addon": 0}
