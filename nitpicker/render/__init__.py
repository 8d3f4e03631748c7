"""The render wing: in-scope HTML pages rendered in headless Chromium through scrapy-playwright.

- :mod:`~nitpicker.render.settings`: :class:`RenderSettings`, whether and how a crawl renders,
  parsed once; it sets scrapy-playwright up (``DOWNLOAD_HANDLERS``, ``PLAYWRIGHT_*``);
- :mod:`~nitpicker.render.chromium`: where Chromium is, its launch arguments;
- :mod:`~nitpicker.render.choice`: the downloader middleware that decides which requests
  render (an HTTP preflight first, a browser request for in-scope HTML);
- :mod:`~nitpicker.render.page`: the rendering steps run in a page, and what they record;
- :mod:`~nitpicker.render.devtools`: the page's DevTools session (device presets, scripts
  stopped, the crawl's request headers added to the page's requests);
- :mod:`~nitpicker.render.pool`: the browser pages kept open from URL to URL;
- :mod:`~nitpicker.render.browser`: the download handler, one browser for http and https;
- :mod:`~nitpicker.render.retry`: a failed browser request's second try.

Import the modules themselves: this package's face imports nothing, so that the CLI can ask
``chromium`` whether a browser is there without loading Scrapy. ``pool`` and ``browser``
import Playwright, and are loaded only by a crawl that renders.
"""

