"""Custom extraction: ``nitpicker/policy/extract/custom.py`` (a rule checked, applied to a
page) and ``crawl --extract`` through the command line — the rules of ``nitpicker.toml`` and
of the command line, the values stored per page, shown as columns in ``query pages``, in the
viewer's page list and in the report's Page List; a bad rule is one ``Error:`` line."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any

import pytest
import requests

from nitpicker.policy.extract.custom import ExtractError, compile_rules, extract_values, parse_rule
from tests.helpers import ROOT, run

if TYPE_CHECKING:
    from pathlib import Path

PAGE = """<html><head><title>Widget</title>
<meta property="og:image" content="/widget.png"></head><body>
<p class="price">  9.99 <b>EUR</b> </p><p class="price">5.00</p>
<a href="/a">A</a><a href="/b">B</a>
<script>var product = {"sku": "W-1"};</script></body></html>"""


@pytest.mark.parametrize(("spec", "values"), [
    ("price=css:.price", ["9.99 EUR", "5.00"]),
    ("price=css:.price::text", ["9.99", "5.00"]),
    ("image=css:meta[property='og:image']::attr(content)", ["/widget.png"]),
    ("links=xpath:count(//a)", ["2"]),
    ("hrefs=xpath://a/@href", ["/a", "/b"]),
    ("title=xpath:string(//title)", ["Widget"]),
    ('sku=regex:"sku": "([^"]+)"', ["W-1"]),
    ("prices=regex:\\d+\\.\\d\\d", ["9.99", "5.00"]),
    ("none=css:.nothing", []),
])
def test_a_rule_reads_its_values_in_document_order(spec: str, values: list[str]) -> None:
    rules = compile_rules((spec,))
    assert extract_values(rules, PAGE) == [(rules[0].name, value) for value in values]


@pytest.mark.parametrize(("spec", "message"), [
    ("price", "'price' is not NAME=css:SELECTOR, NAME=xpath:EXPR or NAME=regex:PATTERN"),
    ("price=jq:.price", ("'price=jq:.price' is not NAME=css:SELECTOR, NAME=xpath:EXPR or "
                        "NAME=regex:PATTERN")),
    ("1st=css:p", ("'1st=css:p': the name '1st' must be a letter or _ then letters, digits, _, . "
                  "or - (at most 64)")),
    ("price=css: ", "'price=css: ': the css expression is empty"),
    ("price=css:p[", "'price=css:p[': invalid CSS selector: Expected ident or '*', got <EOF at 2>"),
    ("price=xpath://p[", "'price=xpath://p[': invalid XPath: Invalid expression"),
    ("price=regex:(", ("'price=regex:(': invalid regular expression: missing ), unterminated "
                      "subpattern at position 0")),
])
def test_a_bad_rule_is_refused_naming_it(spec: str, message: str) -> None:
    with pytest.raises(ExtractError) as caught:
        parse_rule(spec)
    assert str(caught.value) == message


def test_a_name_given_twice_is_refused() -> None:
    with pytest.raises(ExtractError, match="the name 'price' is given twice"):
        compile_rules(("price=css:p", "price=regex:x"))


# -- through the command line -------------------------------------------------------------------

CONFIG = """[plugins.analyze]
search = true

[crawl.extract]
price = "css:.price"
sku = "regex:\\"sku\\": \\"([^\\"]+)\\""
"""


@pytest.fixture(scope="module")
def crawled(site: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``/structured/`` crawled with the rules of ``nitpicker.toml``, one replaced and one
    added on the command line."""
    directory = tmp_path_factory.mktemp("extract")
    (directory / "nitpicker.toml").write_text(CONFIG)
    done = run("crawl", site.url("/structured/"), "-o", "extract", "--silent",
               "--extract", "price=css:.price::text", "--extract", "heading=xpath://h1",
               cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory / "extract.nitpicker", site.url("/structured/")


def test_query_pages_shows_each_rule_as_a_column(crawled: tuple[Path, str]) -> None:
    archive, base = crawled
    result = run("query", str(archive), "pages", "--url-pattern", base + "json-ld-%",
                 cwd=archive.parent)
    assert result.returncode == 0, result.stderr
    items = {item["url"].removeprefix(base): item["extracted"]
             for item in json.loads(result.stdout)["items"]}
    assert items == {
        "json-ld-ok": {"price": ["10.00"], "sku": ["SKU-json-ld-ok"], "heading": ["json-ld-ok"]},
        "json-ld-invalid": {"price": ["15.00"], "sku": ["SKU-json-ld-invalid"],
                            "heading": ["json-ld-invalid"]},
        "json-ld-missing": {"price": ["15.00"], "sku": ["SKU-json-ld-missing"],
                            "heading": ["json-ld-missing"]},
    }
    assert list(items["json-ld-ok"]) == ["price", "sku", "heading"]  # the file's, then ours


def test_the_report_page_list_has_the_columns(crawled: tuple[Path, str], tmp_path: Path) -> None:
    archive, base = crawled
    out = tmp_path / "csv"
    result = run("report", str(archive), "--format", "csv", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with (out / "page-list.csv").open(encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    header = table[0]
    for name in ("Link Score", "price", "sku", "heading"):
        assert name in header
    row = next(r for r in table if r[header.index("URL")] == base + "microdata-ok")
    assert [row[header.index(name)] for name in ("price", "sku", "heading")] == [
        "12.00", "SKU-microdata-ok", "microdata-ok"]
    assert float(row[header.index("Link Score")]) > 0


def test_the_viewer_page_list_has_the_columns(crawled: tuple[Path, str]) -> None:
    archive, _base = crawled
    process = subprocess.Popen([sys.executable, "-m", "nitpicker.cli", "view", str(archive),
                                "--port", "0"], env={"PYTHONPATH": str(ROOT), "PATH": ""},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        first: list[str] = []
        reader = threading.Thread(target=lambda: first.append(process.stdout.readline()))
        reader.start()
        reader.join(30)
        url = first[0].split(" at ", 1)[1].split(" ", 1)[0]
        page = requests.get(url + "a/0/pages?q=rdfa-ok", timeout=10).text
    finally:
        process.terminate()
        process.communicate(timeout=20)
    headers = re.findall(r'<th class="extracted">([^<]*)</th>', page)
    assert headers == ["price", "sku", "heading"]
    cells = re.findall(r'<td class="extracted">([^<]*)</td>', page)
    assert cells == ["7.00", "SKU-rdfa-ok", "rdfa-ok"]
    assert "Link score" in page


@pytest.mark.integration
@pytest.mark.parametrize(("args", "config", "message"), [
    (["--extract", "price=css:p["],
     None, ("Error: --extract 'price=css:p[': invalid CSS selector: Expected ident or '*', got "
           "<EOF at 2>")),
    (["--extract", "price"], None,
     "Error: --extract 'price' is not NAME=css:SELECTOR, NAME=xpath:EXPR or NAME=regex:PATTERN"),
    ([], '[crawl.extract]\nprice = 3\n',
     ("Error: {dir}/nitpicker.toml:2: crawl.extract.price must be a string such as \"css:.price\", "
     "not 3")),
    ([], '[crawl.extract]\nprice = "xpath://p["\n',
     "Error: --extract 'price=xpath://p[': invalid XPath: Invalid expression"),
])
def test_a_bad_rule_is_one_error_line(tmp_path: Path, args: list[str], config: str | None,
                                      message: str) -> None:
    if config is not None:
        (tmp_path / "nitpicker.toml").write_text(config)
    result = run("crawl", "http://127.0.0.1:9/", "-o", "never", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == message.format(dir=tmp_path)
    assert not (tmp_path / "never.nitpicker").exists()


def test_scrapy_spider_arguments_give_one_rule_a_line(tmp_path: Path) -> None:
    """``scrapy crawl site -a extract=…``: a selector may hold commas, so rules are lines."""
    from nitpicker.crawl.spider_args import config_from_spider_args

    config = config_from_spider_args({
        "roots": "https://example.com/", "output": str(tmp_path / "site"),
        "extract": "heads=css:h1, h2\nsku=regex:sku-(\\d+)\n"})
    assert config.extract == ("heads=css:h1, h2", "sku=regex:sku-(\\d+)")
