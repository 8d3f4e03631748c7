"""Open an HTML report in headless Chromium (Playwright), measure its charts, screenshot it.

Run as a script (``python -m tests.report_browser.open_report REPORT SCREENSHOT CHROMIUM``) so
Playwright's own event loop never meets the test session's reactor. Prints one JSON object:
every chart's id, its ``data-bars``, the bars drawn and its rendered size, and every request
the page made that is not the report file itself.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from nitpicker.render.chromium import CHROMIUM_ARGS

_MEASURE = """() => [...document.querySelectorAll('svg.chart')].map(svg => {
    const box = svg.getBoundingClientRect();
    const bars = [...svg.querySelectorAll('rect')];
    return {id: svg.id, declared: Number(svg.dataset.bars), bars: bars.length,
            drawn: bars.filter(r => r.getBoundingClientRect().width > 0).length,
            width: box.width, height: box.height};
})"""


def main(report: str, screenshot: str, chromium: str) -> None:
    requests: list[str] = []
    page_url = Path(report).resolve().as_uri()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.on("request", lambda r: requests.append(r.url) if r.url != page_url else None)
        page.goto(page_url)
        charts = page.evaluate(_MEASURE)
        page.screenshot(path=screenshot, full_page=False)
        browser.close()
    print(json.dumps({"charts": charts, "requests": requests}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
