"""``nitpicker diff --format html`` (``nitpicker/cli/diff_html.py``): one self-contained page
with the report's charts and table cells, opened in headless Chromium."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nitpicker.cli.diff_html import CHART_IDS
from nitpicker.render.chromium import find_chromium
from tests.helpers import ROOT, ChangesCrawls, run


def write_html(crawls: ChangesCrawls, out: Path, *extra: str) -> str:
    result = run("diff", "old.nitpicker", "new.nitpicker", "-f", "html", "-o", str(out),
                 *extra, cwd=crawls.dir)
    assert result.returncode == 0, result.stderr
    return out.read_text(encoding="utf-8")


def test_the_page_has_every_item_in_a_table_per_category(analysed_changes: ChangesCrawls,
                                                          tmp_path: Path) -> None:
    html = write_html(analysed_changes, tmp_path / "diff.html", "--limit", "1")
    base = analysed_changes.base
    assert html.startswith("<!doctype html>") and html.endswith("</body></html>\n")
    assert "<script" not in html and "://cdn" not in html
    assert "findings: compared for diff-probe" in html
    sections = dict(re.findall(r'<section id="diff-([a-z_0-9]+)">.*?<p>(\d+) items?</p>',
                               html))
    assert sections["violations_fixed"] == "3" and sections["page_changes"] == "3"  # not --limit
    assert sections["trap_caps_new"] == "0"
    # the report's cells: a red cell for a new broken link, a URL as a link
    assert (f'<td class="error"><a href="{base}/changes/linker">{base}/changes/linker</a></td>'
            in html)
    assert '<td class="error">&lt;img src=&quot;/files/photo.png&quot; alt=&quot;&quot;/&gt;</td>' \
        in html
    assert '<svg class="chart" id="chart-diff-findings" data-bars="3"' in html


needs_chromium = pytest.mark.skipif(find_chromium() is None, reason="no Chromium")


@needs_chromium
def test_the_page_renders_its_charts_in_chromium(analysed_changes: ChangesCrawls,
                                                 tmp_path: Path) -> None:
    out = tmp_path / "diff.html"
    write_html(analysed_changes, out)
    screenshot = tmp_path / "diff.png"
    browser = subprocess.run(
        [sys.executable, "-m", "tests.report_browser.open_report", str(out), str(screenshot),
         str(find_chromium())],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert browser.returncode == 0, browser.stderr
    seen = json.loads(browser.stdout)
    assert seen["requests"] == []  # self-contained: nothing fetched
    assert {chart["id"] for chart in seen["charts"]} == set(CHART_IDS)
    bars = {chart["id"]: chart for chart in seen["charts"]}
    assert bars["chart-diff-findings"]["declared"] == 3  # new, fixed, persisting
    assert bars["chart-diff-categories"]["declared"] == 9  # categories with items, findings apart
    for chart in seen["charts"]:
        assert chart["width"] > 0 and chart["height"] > 0, chart
        assert chart["bars"] == chart["drawn"] == chart["declared"], chart
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unanalysed_comparison_says_so_in_its_empty_chart(changes_crawls: ChangesCrawls,
                                                             tmp_path: Path) -> None:
    html = write_html(changes_crawls, tmp_path / "diff.html")
    assert ('<svg class="chart" id="chart-diff-findings" data-bars="0"' in html)
    assert "No findings compared" in html
